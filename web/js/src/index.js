// mediaupload: upload files from a web page with Google's media upload protocol.
//
// The public entry of the package (dist/mediaupload.js, and window.MediaUpload in
// dist/mediaupload.classic.js). Each concern lives in a file of its own:
//
//   loader.js        instantiates Go's runtime glue and the module, once per page
//   host.js          holds each upload's Blob, sink and requests by id, for the Go side
//   go-runtime.js    Go's wasm_exec.js, bundled in, kept off the page's globals
//   upload.js        the Upload object: an EventTarget and a thenable
//   resume-store.js  where `resume: true` remembers sessions
//   errors.js        MediaUploadError
//
// web/js/build.mjs bundles them with esbuild; the contract with the Go side (api, host,
// sink) is written down in jsbridge/doc.go.

export { load } from "./loader.js";
export { MediaUploadError } from "./errors.js";
