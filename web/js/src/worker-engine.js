// Worker mode's engine, on the page (load({ worker: true })): the module runs in a dedicated
// Worker (worker.js) and this relays the engine's calls to it, and each upload's reports and
// getHeaders back. The Upload objects on the page are the same as in page mode (upload.js talks
// only to an engine), so events, promise, pause/resume/abort, the queue and the XMLHttpRequest
// facade behave alike.

import { packageFileURL } from "./wasm.js";

/** The worker's script: beside this one (the way bundlers understand), or `workerURL`. */
export function workerURLFor(workerURL) {
  return packageFileURL(workerURL, "workerURL", "mediaupload.worker.js", () => new URL("./mediaupload.worker.js", import.meta.url));
}

/**
 * Starts the Worker and the module in it; resolves to { version, engine } once it is ready.
 * A Worker that cannot start (a Content-Security-Policy without worker-src for it, a browser
 * without module workers, a wrong workerURL) rejects with an error that says so: there is no
 * silent fall-back to the main thread, which the page chose against.
 */
export async function startWorker(workerURL, wasmURL, givenWasm) {
  const why =
    "worker mode could not start its Worker: the page's Content-Security-Policy may not allow it (worker-src), " +
    "the browser may lack module workers, or mediaupload.worker.js is not beside mediaupload.js (pass load({ workerURL })); " +
    "load() without { worker: true } runs the module on the page";
  let worker;
  try {
    worker = new Worker(workerURL, { type: "module", name: "mediaupload" });
  } catch (err) {
    throw new Error(`mediaupload: ${why} (${err?.name ?? "Error"}: ${err?.message ?? err})`, { cause: err });
  }
  const version = await new Promise((resolve, reject) => {
    const fail = (message, cause) => {
      worker.terminate();
      reject(new Error(`mediaupload: ${message}`, cause === undefined ? undefined : { cause }));
    };
    worker.onerror = (e) => {
      e.preventDefault?.();
      fail(`${why} (${e.message || "the Worker's script failed to load"})`);
    };
    worker.onmessage = ({ data: m }) => {
      if (m.t === "ready") resolve(m.version);
      else if (m.t === "error") fail(m.message.replace(/^mediaupload: /, ""));
    };
    worker.postMessage({ t: "init", wasmURL, given: givenWasm });
  });
  return { version, engine: workerEngine(worker) };
}

function workerEngine(worker) {
  let last = 0;
  const entries = new Map(); // id -> { sink, getHeaders }, until the upload's end is reported
  // A Worker that dies (an error it did not catch, a crash) ends every upload in flight, so
  // that none waits for ever: each fails with a message saying so.
  worker.onerror = (e) => {
    e.preventDefault?.();
    const message = `the module's Worker stopped (${e.message || "an error in the Worker"})`;
    for (const [id, { sink }] of entries) {
      entries.delete(id);
      sink.fail?.("network_error", message, 0, "", "");
    }
  };
  worker.onmessage = ({ data: m }) => {
    const e = entries.get(m.id);
    if (!e) return;
    if (m.t === "sink") {
      if (m.type === "done" || m.type === "fail") entries.delete(m.id);
      try {
        e.sink[m.type]?.(...m.args);
      } catch (err) {
        globalThis.reportError?.(err);
      }
    } else if (m.t === "getHeaders") {
      // The page's getHeaders, asked by the Go side in the worker; its answer goes back.
      Promise.resolve()
        .then(() => e.getHeaders())
        .then(
          (value) => reply(m.req, { ok: true, value }),
          (error) => reply(m.req, { ok: false, error }),
        );
    }
  };
  const reply = (req, answer) => {
    try {
      worker.postMessage({ t: "headers", req, ...answer });
    } catch (err) {
      // Not cloneable: what getHeaders returned or threw goes as a plain error.
      const error = answer.ok ? new TypeError("getHeaders returned something that cannot be sent to the worker") : err;
      worker.postMessage({ t: "headers", req, ok: false, error: { name: error.name, message: String(error.message) } });
    }
  };
  return {
    start(source, options, { sink, getHeaders }) {
      const id = ++last;
      entries.set(id, { sink, getHeaders });
      // A Blob or File is cloned (its bytes are not copied); a stream is transferred.
      worker.postMessage({ t: "start", id, source, options, getHeaders: !!getHeaders }, source instanceof Blob ? [] : [source]);
      return id;
    },
    pause: (id) => worker.postMessage({ t: "pause", id }),
    resume: (id) => worker.postMessage({ t: "resume", id }),
    abort: (id) => worker.postMessage({ t: "abort", id }),
  };
}
