// mediaupload: upload files from a web page with Google's media upload protocol.
//
// The public entry of the package (dist/mediaupload.js, and window.MediaUpload in
// dist/mediaupload.classic.js). Each concern lives in a file of its own:
//
//   loader.js        load(): the module once per page, on the page or in a Worker
//   module.js        Go's runtime glue, the wasm and the host, started; an upload handed over
//   worker.js        the Worker of worker mode (dist/mediaupload.worker.js)
//   worker-engine.js the page's side of worker mode: relays each upload by message
//   host.js          holds each upload's Blob or stream, sink and requests by id, for Go
//   file-watch.js    a File changed on disk while it uploads: seen, in every engine
//   stream.js        a ReadableStream source: chunks kept until the server confirms them
//   stream-relay.js  worker mode's stream where none can be transferred: the page reads it
//   go-runtime.js    Go's wasm_exec.js, bundled in, kept off the page's globals
//   upload.js        the Upload object: an EventTarget and a thenable
//   events.js        handler properties, event copies and safe calls, for every event target
//   queue.js         mu.queue
//   xhr.js           mu.XMLHttpRequest, for widgets that make their own
//   uppy.js          the Uppy uploader plugin (dist/uppy.js)
//   resume-store.js  where `resume: true` remembers sessions (IndexedDB), and its lock
//   wasm.js          finding and compiling mediaupload.wasm
//   errors.js        MediaUploadError
//
// web/js/build.mjs bundles them with esbuild; the contract with the Go side (api, host,
// sink) is written down in jsbridge/doc.go.

export { load } from "./loader.js";
export { MediaUploadError } from "./errors.js";
