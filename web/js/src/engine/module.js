// The module itself, wherever it runs (the page, or the Worker of worker mode): Go's runtime
// glue, mediaupload.wasm and the host it talks to, started once; and how an upload is handed
// to them. loader.js uses it on the page, worker.js in a Worker.

import { goClass } from "./go-runtime.js";
import { createHost } from "./host.js";
import { StreamSource } from "./stream.js";
import { instantiateWasm } from "./wasm.js";

/**
 * Instantiates the wasm at `wasmURL` (absolute; `given`: the caller's, for the advice of an
 * error) and resolves to { api, host } once the Go main has handed over its API. worker: this
 * realm is the module's Worker; online: what the page tells it of being online (createHost).
 */
export async function startModule(wasmURL, given, { worker = false, online } = {}) {
  const Go = goClass();
  const go = new Go();
  const { instance } = await instantiateWasm(wasmURL, go.importObject, given);

  // The Go main hands its API to this hook once, takes the host in return, then blocks for
  // the realm's lifetime.
  const host = createHost({ worker, online });
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
  return { api, host };
}

/**
 * Starts upload `id` of `source` (a Blob; a ReadableStream, read by the host: stream.js; or a
 * source of a stream read elsewhere, with StreamSource's interface: stream-relay.js) with
 * `options` (the plain copy: wireOptions), reporting to sink.report (host.js lists the
 * reports); ahead: the key of the Blob's hashing ahead (host.ahead), if a queue started one. The Go side ends every upload with a "done" or "fail" report, possibly at once (a
 * bad argument); the host drops the entry then. Throws only when the Go side could not take
 * the call at all.
 */
export function startUpload({ api, host }, id, source, options, sink, getHeaders, ahead) {
  const stream = source instanceof Blob ? null : source instanceof ReadableStream ? new StreamSource(source) : source;
  host.open(id, stream ? { stream, sink, getHeaders } : { blob: source, sink, getHeaders, ahead });
  try {
    api.upload(id, stream ? -1 : source.size, stream ? "" : source.type, options);
  } catch (err) {
    host.close(id);
    throw err;
  }
}

/**
 * Starts check `id`: asks the session options.sessionURL names what it holds (core's
 * Upload.Check), for a file of `size` bytes, reporting to sink.report: one "checked" report
 * ({held, complete}) or one "fail". Throws only when the Go side could not take the call.
 */
export function startCheck({ api, host }, id, size, options, sink, getHeaders) {
  host.open(id, { sink, getHeaders });
  try {
    api.check(id, size, options);
  } catch (err) {
    host.close(id);
    throw err;
  }
}
