// Loading: instantiates Go's runtime glue and mediaupload.wasm once per page (or worker) and
// returns the module object, `mu`, of docs/api.md ("Loading").

import { MediaUploadError } from "./errors.js";
import { startCheck, startModule, startUpload } from "./engine/module.js";
import { hashAhead } from "./hash-ahead.js";
import { UploadQueue } from "./queue.js";
import { unfinished } from "./unfinished.js";
import { Upload } from "./upload.js";
import { xhrClass } from "./xhr.js";
import { wasmURLFor } from "./engine/wasm.js";
import { startWorker, workerURLFor } from "./worker-engine.js";

let loading = null; // the promise of the one instance, shared by every call of load

/**
 * Instantiates the module once and resolves to `{ version, mode, upload(blob, options), … }`.
 * Every call, concurrent ones included, gets the same object; the options of the first call win.
 * A failed load is forgotten, so a later call tries again.
 */
export async function load(options = {}) {
  loading ??= instantiate(options ?? {}).catch((err) => {
    loading = null;
    // Whatever went wrong (the wasm not there, a Content-Security-Policy, a Worker that cannot
    // start), a MediaUploadError "load_error" saying so; what was thrown is its cause.
    throw err instanceof MediaUploadError
      ? err
      : new MediaUploadError("load_error", String(err?.message ?? err), { cause: err?.cause ?? err });
  });
  return loading;
}

// Where the module runs (docs/api.md, "Where the module runs"): by default in a Worker, off the
// page's main thread, so that no task of the module's holds the page (Go's runtime, its
// collector, the hashing of a checksum, the engine's compiling of the wasm); on the page where
// a Worker cannot start (a Content-Security-Policy that forbids it, a browser without module
// workers, mediaupload.worker.js not where it was looked for). worker: true asks for the
// Worker and fails where it cannot start; worker: false runs on the page.
async function instantiate({ wasmURL, worker, workerURL }) {
  const url = wasmURLFor(wasmURL);
  let version, engine, mode;
  if (worker !== false) {
    try {
      ({ version, engine } = await startWorker(workerURLFor(workerURL), url, wasmURL != null));
      mode = "worker";
    } catch (err) {
      // The default falls back to the page only where the Worker could not start at all: a
      // module that failed to load in it (its wasm not there) would fail on the page too.
      if (worker === true || !err?.workerNotStarted) throw err;
    }
  }
  if (!engine) {
    const mod = await startModule(url, wasmURL != null);
    version = mod.api.version;
    engine = mainThreadEngine(mod);
    mode = "page";
  }
  const upload = (source, options, ahead) => new Upload(engine, source, options, ahead);
  return Object.freeze({
    version,
    mode,
    upload,
    unfinished: (options) => unfinished(engine, upload, options),
    queue: (options) => new UploadQueue(upload, options, hashAhead(engine)),
    XMLHttpRequest: xhrClass(upload),
  });
}

/**
 * The engine: what an Upload asks of the module, by upload id. Here the host and the Go side
 * run in the page; in worker mode (worker-engine.js) both run in a Worker and these calls are
 * relayed (the options are a structured-clonable copy, a Blob is cloned, a stream is
 * transferred or, where the browser cannot transfer one, read on the page for the Worker:
 * stream-relay.js; the sink and getHeaders are relayed by message).
 *
 *   start(source, options, { sink, getHeaders }) -> id   source: a Blob or a ReadableStream;
 *                                                         options: the plain copy (wireOptions)
 *   check(size, options, { sink, getHeaders }) -> id     asks options.sessionURL what it holds
 *   pause(id), resume(id), abort(id)
 *   ahead(key, blob, kinds), dropAhead(key)             a queue's hashing ahead (host.js); start's
 *                                                        { ahead: key } hands it to the upload
 *
 * The Go side reports through sink.report (engine/host.js lists the reports) and ends every
 * upload with a "done" or a "fail" report, every check with "checked" or "fail", possibly
 * inside start itself (a bad argument); the host drops the entry then.
 */
function mainThreadEngine(mod) {
  let last = 0;
  return {
    start(source, options, { sink, getHeaders, ahead }) {
      const id = ++last;
      startUpload(mod, id, source, options, sink, getHeaders, ahead);
      return id;
    },
    check(size, options, { sink, getHeaders }) {
      const id = ++last;
      startCheck(mod, id, size, options, sink, getHeaders);
      return id;
    },
    ahead: (key, blob, kinds) => mod.host.ahead(key, blob, kinds),
    dropAhead: (key) => mod.host.dropAhead(key),
    pause: (id) => mod.api.pause(id),
    resume: (id) => mod.api.resume(id),
    abort: (id) => mod.api.abort(id),
  };
}
