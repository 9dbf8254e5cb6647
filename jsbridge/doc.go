//go:build js && wasm

// Package jsbridge is the only package that touches syscall/js: it connects core to the
// browser (shared/STYLE.md, "At the JS boundary").
//
// It owns:
//
//   - [Await], the one helper that waits for a JS Promise from a goroutine without ever
//     blocking the JS event loop (await.go);
//   - [BlobSource], a core.Source over a Blob or File that hands out Blob.slice pieces and
//     never reads a byte of them (blob.go);
//   - [Fetch], a core.Transport over the browser's fetch that sends those slices as the body,
//     aborts through an AbortController and never follows a redirect (fetch.go);
//   - [Clock], core's clock on performance.now(), Date.now() and setTimeout, so that the wasm
//     does without package time (clock.go);
//   - the conversions between the JS options, results and errors of shared/API.md and core's
//     types, with every bad argument found before any request (options.go, result.go);
//   - [API], the object handed to the loader, web/js/src/loader.js (api.go).
//
// # The contract with the loader (web/js/src/loader.js and upload.js)
//
// Before it runs the module, the loader sets globalThis.__mediauploadInit(api); the wasm main
// calls it once with
//
//	api = { version, upload(blob, options, sink) -> handle }
//	handle = { pause(), resume(), abort() }
//
// options is the caller's object as given: the Go side reads and checks the protocol's options
// (url, method, uploadType, metadata, contentType, chunkSize, headers, getHeaders, sessionURL,
// retry, queryStatusEachChunk, noRedirect308, checksum) and leaves signal, resume and the
// callbacks to the loader. The Go side reports through sink, possibly inside upload() itself
// (a bad argument), so the loader queues what it is told and dispatches it later:
//
//	sink.state(state)                 "starting", "uploading", "paused", "retrying", "done", …
//	sink.progress(loaded, total, confirmed, bytesPerSecond, secondsLeft)  secondsLeft may be null
//	sink.retry({attempt, delayMs, status, error})
//	sink.session(url)                 the session URI, once known
//	sink.request(method, url, contentRange, status, ms, error)  only while sink.wantRequests
//	sink.done({status, metadata, body, sessionURL})
//	sink.fail({code, message, status, responseText, sessionURL})  code as in shared/API.md
//
// progress and request come with every chunk, so they are positional (one call from Go, not
// one per field), and request reports are sent only while sink.wantRequests is true (the
// loader sets it when there is an onRequest option or a "request" listener).
//
// # A 308 that carries a Location (PROTOCOL.md section 6)
//
// fetch's redirect mode "manual" makes every 308 opaque, so the protocol's 308 answers (with
// their Range header) would be lost: it is never used. Mode "follow" follows a 308 with a
// Location and re-sends the body to the new URL, hiding the 308's Range, so every request
// with a body (a chunk, a session start with metadata, a media upload) goes in mode "error",
// where fetch rejects instead.
//
// Measured in Chromium 156: that rejection cannot be told apart from a network failure. Both
// are the same TypeError "Failed to fetch" with no cause and a Resource Timing entry with
// responseStatus 0; only the DevTools console (net::ERR_FAILED against ERR_EMPTY_RESPONSE)
// differs, and script cannot read it. So the chunk's failure is taken for a lost connection,
// and core asks the session what it holds, with a status query (section 4). A status query
// has no body, so nothing is re-sent by following a redirect: it goes in mode "follow", and
// when response.redirected says the server redirected it, Do returns a [RedirectError]
// ("protocol_error"), which core reports at once. The chunk is never delivered elsewhere.
//
// One limit: a body-less request that carries a header of the caller's other than
// Authorization (which fetch drops on a cross-origin redirect) stays in mode "error", lest
// the header reach another host; then the redirect shows as "network_error" after the
// retries, with a message that names a redirect as one possible cause.
//
// # The cost of a chunk
//
// At small chunk sizes the page's main thread is the bottleneck, for the module and for a
// plain fetch loop alike: the browser's own fetch() and Blob.slice cost it a few tenths of a
// millisecond to over a millisecond per request. Everything Go does per chunk adds to that:
// waking Go from a promise callback (about 0.07 ms, the runtime's scheduler included), every
// JS call (1-7 µs), every JS object reference Go receives (a finalizer each). So Do keeps
// what it can from one request to the next (fetch.go), reads only the headers core uses,
// and the sink's per-chunk reports are positional. Measured with Chromium's profiler at
// 256 KiB chunks, the module's own main-thread time is about 0.8 ms per chunk. For scale,
// ./build.sh bench also runs web/bench/goloop, a Go program that does nothing but the same
// fetches: on the 2-core test machine it reached 0.89 of a plain JS loop's throughput at
// 256 KiB chunks, the module 0.875 (medians of 11 rounds). Most of the gap is Go's, not the
// module's.
//
// Tried and dropped: slicing the next chunk while the current one is in flight (Blob.slice
// then competes with the upload under way: slower overall).
//
// # Ownership of js.Func values
//
// The api's functions (upload, and the pause, resume and abort functions shared by every
// handle through Function.prototype.bind) live as long as the module. The others are the two
// callbacks of each [Await], released by whichever of them fires; the two of each [Fetch],
// one pair for all the requests of an upload, released by Fetch.Close when the upload ends;
// and the setTimeout callback of each [Clock] wait, released when it fires or is stopped.
// Every function handed to JS recovers panics: a panic never crosses into JS, it ends the
// upload with sink.fail instead. Nothing here logs.
package jsbridge
