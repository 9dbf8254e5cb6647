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
//   - the conversions between the JS options, results and errors of shared/API.md and core's
//     types, with every bad argument found before any request (options.go, result.go);
//   - [API], the object handed to the loader, web/mediaupload.js (api.go).
//
// # A 308 that carries a Location (PROTOCOL.md section 6)
//
// fetch's redirect mode "manual" makes every 308 opaque, so the protocol's 308 answers (with
// their Range header) would be lost: it is never used. Mode "follow" would follow a 308 with a
// Location and re-send the chunk to the new URL, so the 308's Range is never seen. Every
// request is therefore sent with redirect mode "error", where fetch rejects instead.
//
// Measured in Chromium 156: that rejection cannot be told apart from a network failure. Both
// are the same TypeError "Failed to fetch" with no cause, and both leave a Resource Timing
// entry with responseStatus 0. The difference only shows on the DevTools console
// (net::ERR_FAILED against net::ERR_EMPTY_RESPONSE and the like), which script cannot read.
// Re-sending in "follow" mode to find out would re-send the body, which is the very thing to
// avoid, and a probe request (a status query) would carry the caller's headers to the
// redirect's target. So such an answer is reported honestly as what the browser lets us see:
// a failed fetch (core retries it as a lost connection and finally reports
// "network_error"), with a message that names the redirect as one possible cause. The chunk
// is never delivered anywhere else.
//
// # Ownership of js.Func values
//
// The api's functions (upload, and the pause, resume and abort functions shared by every
// handle through Function.prototype.bind) live as long as the module. The only per-call
// functions are the two callbacks of each [Await], released by whichever of them fires.
// Every function handed to JS recovers panics: a panic never crosses into JS, it ends the
// upload with sink.fail instead. Nothing here logs.
package jsbridge
