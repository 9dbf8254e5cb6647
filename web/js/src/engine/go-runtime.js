// Go's runtime glue: the wasm_exec.js of the toolchain that built mediaupload.wasm, bundled
// into this package so that a page has no second script to place (docs/api.md, "What
// ./build.sh produces"). The bundler (web/js/build.mjs) resolves "go:wasm_exec" to
// $(go env GOROOT)/lib/wasm/wasm_exec.js, wrapped in a function: nothing of it runs until
// the module is loaded.
import defineGo from "go:wasm_exec";

let Go = null;

/**
 * Returns the Go class of the bundled wasm_exec.js. The glue assigns globalThis.Go; the page's
 * own Go (another Go module on the same page, perhaps of another version) is put back, so the
 * two never mix. (The glue also adds globalThis.fs, process and path where a page has none:
 * the Go runtime writes its output through them.)
 */
export function goClass() {
  if (Go) return Go;
  const had = Object.prototype.hasOwnProperty.call(globalThis, "Go");
  const theirs = globalThis.Go;
  defineGo();
  Go = globalThis.Go;
  if (had) globalThis.Go = theirs;
  else delete globalThis.Go;
  return Go;
}
