// Loading: instantiates Go's runtime glue and mediaupload.wasm once per page (or worker) and
// returns the module object, `mu`, of shared/API.md ("Loading").

import { goClass } from "./go-runtime.js";
import { createHost } from "./host.js";
import { StreamSource } from "./stream.js";
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

  // The Go main hands its API to this hook once, takes the host in return, then blocks for
  // the page's lifetime.
  const host = createHost();
  const api = await new Promise((resolve, reject) => {
    globalThis.__mediauploadInit = (api) => {
      delete globalThis.__mediauploadInit;
      resolve(api);
      return host;
    };
    go.run(instance).then(
      () => reject(new Error("mediaupload: the Go module exited before it started")),
      reject,
    );
  });
  const engine = mainThreadEngine(api, host);
  const upload = (blob, options) => new Upload(engine, blob, options);
  return Object.freeze({
    version: api.version,
    upload,
    queue: (options) => new UploadQueue(upload, options),
    XMLHttpRequest: xhrClass(upload),
  });
}

/**
 * The engine: what an Upload asks of the module, by upload id. Here the host and the Go side
 * run in the page; a worker mode can put both in a Worker and relay these four calls (the
 * options are a structured-clonable copy, the entry's Blob is clonable, its sink and
 * getHeaders would be relayed by message).
 *
 *   start(source, options, { sink, getHeaders }) -> id   source: a Blob or a ReadableStream;
 *                                                         options: the plain copy (wireOptions)
 *   pause(id), resume(id), abort(id)
 *
 * The Go side reports through entry.sink and ends every upload with sink.done or sink.fail,
 * possibly inside start itself (a bad argument); the host drops the entry then.
 */
function mainThreadEngine(api, host) {
  let last = 0;
  return {
    start(source, options, { sink, getHeaders }) {
      const id = ++last;
      // A ReadableStream is read by the host as the Go side asks for chunks (stream.js); its
      // length is unknown (-1) until it ends.
      const stream = source instanceof Blob ? null : new StreamSource(source);
      host.open(id, stream ? { stream, sink, getHeaders } : { blob: source, sink, getHeaders });
      try {
        api.upload(id, stream ? -1 : source.size, stream ? "" : source.type, options);
      } catch (err) {
        host.close(id);
        throw err;
      }
      return id;
    },
    pause: (id) => api.pause(id),
    resume: (id) => api.resume(id),
    abort: (id) => api.abort(id),
  };
}
