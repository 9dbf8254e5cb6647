// Loading: instantiates Go's runtime glue and mediaupload.wasm once per page (or worker) and
// returns the module object, `mu`, of shared/API.md ("Loading").

import { goClass } from "./go-runtime.js";
import { Upload } from "./upload.js";

// In the classic build (a plain <script>), the script's own URL, taken while it runs
// (document.currentScript is null later); null in the ES module, where import.meta.url is
// the base. web/js/build.mjs sets __MEDIAUPLOAD_CLASSIC__.
const CLASSIC_BASE =
  typeof __MEDIAUPLOAD_CLASSIC__ !== "undefined" && __MEDIAUPLOAD_CLASSIC__
    ? (globalThis.document?.currentScript?.src ?? globalThis.location?.href ?? null)
    : null;

// Where mediaupload.wasm is unless `wasmURL` says otherwise: beside this file. Written as
// `new URL("./…", import.meta.url)` in the ES module, the form that bundlers (Vite, webpack 5)
// recognise and copy the file for.
function defaultWasmURL() {
  return CLASSIC_BASE ? new URL("mediaupload.wasm", CLASSIC_BASE) : new URL("./mediaupload.wasm", import.meta.url);
}

let loading = null; // the promise of the one instance, shared by every call of load

/**
 * Instantiates the module once and resolves to `{ version, upload(blob, options) }`.
 * Every call, concurrent ones included, gets the same object; the options of the first call win.
 * A failed load is forgotten, so a later call tries again.
 */
export async function load(options = {}) {
  loading ??= instantiate(options ?? {}).catch((err) => {
    loading = null;
    throw err;
  });
  return loading;
}

async function instantiate({ wasmURL }) {
  const url = (wasmURL === undefined || wasmURL === null
    ? defaultWasmURL()
    : new URL(String(wasmURL), globalThis.document?.baseURI ?? globalThis.location?.href)).href;
  const Go = goClass();
  const go = new Go();

  const res = await fetch(url);
  if (!res.ok) throw new Error(`mediaupload: fetching ${url}: HTTP ${res.status}`);
  // instantiateStreaming insists on the application/wasm MIME type; many static servers send
  // something else, so read the bytes in that case rather than fail.
  const type = (res.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  const { instance } =
    type === "application/wasm" && WebAssembly.instantiateStreaming
      ? await WebAssembly.instantiateStreaming(res, go.importObject)
      : await WebAssembly.instantiate(await res.arrayBuffer(), go.importObject);

  // The Go main hands its API to this hook once, then blocks for the page's lifetime.
  const api = await new Promise((resolve, reject) => {
    globalThis.__mediauploadInit = (api) => {
      delete globalThis.__mediauploadInit;
      resolve(api);
    };
    go.run(instance).then(
      () => reject(new Error("mediaupload: the Go module exited before it started")),
      reject,
    );
  });
  return Object.freeze({
    version: api.version,
    upload: (blob, options) => new Upload(api, blob, options),
  });
}
