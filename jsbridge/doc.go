//go:build js && wasm

// Package jsbridge is the only package that touches syscall/js: it connects core to the
// browser (shared/STYLE.md, "At the JS boundary").
//
// It owns:
//
//   - the conn of each upload (host.go): core's Transport, Source, getHeaders and session over the host,
//     a JS object of the package's (web/js/src/engine/host.js) that does the browser's part;
//   - [Clock], core's clock on performance.now(), Date.now() and setTimeout, so that the wasm
//     does without package time (clock.go);
//   - the conversion of the options of docs/api.md into core's: JS values into Go types, each
//     value then checked by core, before any request (options.go); and the reports (result.go);
//   - [API], the object handed to the module's starter, web/js/src/engine/module.js (api.go).
//
// # The contract with the host
//
// Before it runs the module, module.js sets globalThis.__mediauploadInit; the wasm main calls
// it once with the api, and it answers with the host:
//
//	api = { version, upload(id, size, type, options), check(id, size, options), pause(id), resume(id), abort(id) }
//
// An upload is known by a number the page chose; before api.upload, module.js opens the
// host's entry for it (the Blob or stream, the sink, getHeaders). options is a fresh plain
// copy of the options of docs/api.md that the Go side reads, made by the page (upload.js,
// wireOptions), structured-clonable so that a Worker can receive it. What the Go side then
// asks of the host (send, read, pull, headers, session, whenOnline, abort, wantRequests), how the host
// answers (one callback per upload, {kind, ...named fields}) and what the Go side reports
// (report: a type and its fields, positional, which the host makes the sink's {type, ...named
// fields}; exactly one "done" or "fail" ending every upload, and one
// "checked" or "fail" every check of a session (api.check, core's Upload.Check), possibly
// inside api.upload itself) is written down once, in the opening comment of
// web/js/src/engine/host.js.
//
// # Ownership: how each reference ends
//
// syscall/js keeps every JS object or string that Go holds as a js.Value (and every argument
// of a call into a js.Func) reachable until Go's collector finalizes the js.Value, which may
// be never: the module allocates little, so its collector seldom runs. A Blob reachable that
// way keeps its bytes in the page's Blob store, which is bounded (docs/protocol.md section 6): an
// earlier version that held each upload's Blob, slices and RequestInit from Go made a page's
// uploads fail after about 500 MB. So the rule is that Go holds no JS object that belongs to
// an upload, and whatever it holds ends as follows:
//
//   - The Blob, its slices, the request bodies, the RequestInit, the AbortController, the
//     Response: only the host has them, in the upload's entry or in the closure of the one
//     request in flight. The entry is deleted on the upload's done or fail report; a
//     request's objects go when its fetch settles. Go passes byte ranges and small strings.
//   - The sink, getHeaders, the caller's options and callbacks: the host's entry and the
//     Upload object hold them; the entry goes as above, and the Upload drops the options,
//     callbacks, signal listener and engine once its last event is dispatched.
//   - What Go receives: the host's answers arrive as arguments of a callback, and Go turns
//     them into Go strings and numbers inside the call (conn.deliver; a request's answer is
//     one string, one value to cross instead of an object of seven). No byte of the file enters
//     Go: for a checksum the host hashes the source beside the upload and answers with the
//     hashes (docs/protocol.md section 9). The options copy is Go's to keep: it holds no Blob
//     and nothing of the caller's.
//   - js.Func values: the api's five functions live as long as the module. Each upload has one
//     callback, which every answer of the host comes through, released when its end has been
//     reported (conn.close); by then no call is pending, except a getHeaders that never
//     settled, whose late answer the host drops because the entry is gone. Each [Clock] wait
//     has a setTimeout callback, released when it fires or is stopped.
//
// Every function handed to JS recovers panics: a panic never crosses into JS, it ends the
// upload with a fail report instead. Nothing here logs.
//
// # Redirects and the protocol's 308 (docs/protocol.md section 6)
//
// A request to a session URI is marked core.Request.Session: there a 308 without Location is
// the protocol's answer. The host picks fetch's redirect mode for each request from that
// mark, from whether it has a body and asks for no 308, and from what the engine has shown it
// does with a 3xx in mode "error" (Firefox rejects one, Chromium and WebKit hand it over);
// web/js/src/engine/host.js writes the rules down. Whatever the mode, a redirect is never followed
// with a body, nor with a header of the caller's but Authorization. The host's answers that
// come of it: "redirect" (a *core.RedirectError: final) and "hidden" (a 3xx to a session
// request that the engine hides in mode "manual": a *core.HiddenRedirectError, on which core
// asks the session what it holds at once). By default every session request carries
// X-GUploader-No-308 (Options: noRedirect308 is true unless the caller says false), so a
// server that honours it sends no 3xx at all.
//
// # The cost of a chunk
//
// At small chunk sizes the page's main thread is the bottleneck, for the module and for a
// plain fetch loop alike: the browser's own fetch() and Blob.slice cost it a few tenths of a
// millisecond to over a millisecond per request. Everything Go does per chunk adds to that:
// waking Go from a promise callback (about 0.07 ms, the runtime's scheduler included), every
// JS call (1-7 µs), every JS object reference Go receives (a finalizer each). So a chunk is
// one call to host.send with primitives (the session URL's JS string is kept from one chunk
// to the next), one callback with primitives back, and positional reports. The host drains
// a 308's body after it has answered, since core reads nothing of it, and so an empty body's
// (Content-Length 0: a session start's answer), whose end would cost a wait for one more
// task of the main thread, 5-6 ms with six uploads at a time. A File sent whole goes as it
// is, not sliced to drop its type (core sets each body's Content-Type), and each upload runs
// in a goroutine whose stack an earlier upload grew (api.go, workers). Measured with
// Chromium's profiler at
// 256 KiB chunks, the module's own main-thread time was about 0.8 ms per chunk. For scale,
// ./build.sh bench also runs web/bench/goloop, a Go program that does nothing but the same
// fetches: on the 2-core test machine it reached 0.89 of a plain JS loop's throughput at
// 256 KiB chunks, the module 0.875 (medians of 11 rounds). Most of the gap is Go's, not the
// module's.
//
// Tried and dropped: slicing the next chunk while the current one is in flight (Blob.slice
// then competes with the upload under way: slower overall).
package jsbridge
