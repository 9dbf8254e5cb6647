// Loading: instantiates Go's runtime glue and mediaupload.wasm once per page (or worker) and
// returns the module object, `mu`, of shared/API.md ("Loading").

import { goClass } from "./go-runtime.js";
import { UploadQueue } from "./queue.js";
import { Upload } from "./upload.js";
import { xhrClass } from "./xhr.js";
import { instantiateWasm, wasmURLFor } from "./wasm.js";

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
  const Go = goClass();
  const go = new Go();
  const { instance } = await instantiateWasm(wasmURLFor(wasmURL), go.importObject, wasmURL != null);

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
  const upload = (blob, options) => new Upload(api, blob, options);
  return Object.freeze({
    version: api.version,
    upload,
    queue: (options) => new UploadQueue(upload, options),
    XMLHttpRequest: xhrClass(upload),
  });
}
