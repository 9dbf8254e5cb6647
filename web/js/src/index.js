// mediaupload: upload files from a web page with Google's media upload protocol.
//
// The public entry of the package (dist/mediaupload.js, and window.MediaUpload in
// dist/mediaupload.classic.js). Each concern lives in a file of its own. On the page:
//
//   loader.js        load(): the module once per page, on the page or in a Worker
//   upload.js        the Upload object: an EventTarget and a thenable
//   options.js       what the page checks of the caller's arguments, and the copy the Go side reads
//   queue.js         mu.queue
//   hash-ahead.js    the queue's next files hashed while earlier ones upload
//   xhr.js           mu.XMLHttpRequest, for widgets that make their own
//   uppy.js          the Uppy uploader plugin (dist/uppy.js)
//   events.js        handler properties, event copies and safe calls, for every event target
//   resume-store.js  where `resume: true` remembers sessions (IndexedDB), and its lock
//   unfinished.js    mu.unfinished(): the uploads left unfinished, and going on with them
//   file-handle.js   a FileSystemFileHandle as a source: its File, and the file a resume expects
//   worker-engine.js the page's side of worker mode: relays each upload by message, and reads
//                    a stream for the Worker where none can be transferred
//   errors.js        MediaUploadError and its codes
//
// In engine/, what runs beside the Go module, on the page or in the Worker of worker mode:
//
//   engine/module.js       Go's runtime glue, the wasm and the host, started; an upload handed over
//   engine/host.js         holds each upload's Blob or stream, sink and requests by id, for Go;
//                          its opening comment is the contract between the Go side and the host
//   engine/file-watch.js   a File changed on disk while it uploads: seen, in every engine
//   engine/stream.js       a ReadableStream source: chunks kept until the server confirms them
//   engine/stream-relay.js the Worker's source of a stream the page reads for it
//   engine/wasm.js         finding and compiling mediaupload.wasm
//   engine/go-runtime.js   Go's wasm_exec.js, bundled in, kept off the page's globals
//   engine/worker.js       the Worker of worker mode (dist/mediaupload.worker.js)
//
// web/js/build.mjs bundles them with esbuild.

export { load } from "./loader.js";
export { MediaUploadError } from "./errors.js";
