// The page's side of the browser tests: window.T, the helpers a test's page.evaluate uses
// (served by the harness's page origin as /test/helpers.js; web/test/harness.mjs). A module:
// the blank test page loads it; the bytes it makes come from random.mjs, which Node uses too,
// so Node knows what a page uploaded without transferring it.

import { POOL_SEED, POOL_SIZE, pseudoRandomBytes } from "/test/random.mjs";
import { failReads } from "/test/read-faults.js";


const EVENTS = ["loadstart", "progress", "load", "error", "abort", "loadend", "retry", "statechange", "request"];

// A MediaUploadError (or anything thrown) as plain data for page.evaluate.
function errorData(e, MediaUploadError) {
  return {
    isMediaUploadError: MediaUploadError ? e instanceof MediaUploadError : undefined,
    isError: e instanceof Error,
    name: e?.name, code: e?.code, message: String(e?.message ?? e), status: e?.status,
    responseText: e?.responseText, sessionURL: e?.sessionURL, reason: e?.reason, serverMessage: e?.serverMessage,
    cause: e?.cause === undefined ? undefined : { name: e.cause?.name, message: String(e.cause?.message ?? e.cause) },
  };
}

// One event as plain data.
function eventData(e) {
  const d = { type: e.type, isProgressEvent: e instanceof ProgressEvent, t: performance.now() };
  for (const k of ["loaded", "total", "lengthComputable", "confirmed", "bytesPerSecond", "secondsLeft",
                   "state", "attempt", "delayMs", "status", "error", "restart", "method", "url", "contentRange", "ms"]) {
    if (k in e) d[k] = e[k];
  }
  if (e.error && typeof e.error === "object") d.error = { code: e.error.code, message: e.error.message };
  if (e.result) d.result = { status: e.result.status };
  return d;
}

const T = {
  dist: "/dist/mediaupload.js",
  bytes: pseudoRandomBytes,
  blob: (size, seed, type = "") => new Blob([pseudoRandomBytes(size, seed)], { type }),
  // A new Blob of pooledBytes(offset, size) (see harness.mjs); the pool is made on first use.
  pooled(offset, size) {
    T.pool ??= pseudoRandomBytes(POOL_SIZE, POOL_SEED);
    return new Blob([T.pool.subarray(offset, offset + size)]);
  },
  file: (size, seed, name, opts = {}) =>
    new File([pseudoRandomBytes(size, seed)], name, { lastModified: 1700000000000, ...opts }),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  module: null,
  async load(options) {
    T.module ??= await import(T.dist);
    return T.module.load(options);
  },
  // Loads the module in a Worker with a test's hooks (the module's own worker script behind
  // /test/worker-hooks.js): then T.workerCounts() resolves to { slices, streams } since it was
  // last called, and T.failReads reaches the Worker.
  async loadHooked() {
    const Native = Worker;
    let worker = null;
    window.Worker = class extends Native {
      constructor(...args) {
        super(...args);
        worker ??= this;
      }
    };
    try {
      await T.load({ worker: true, workerURL: "/test/hooked-worker.js" });
    } finally {
      window.Worker = Native;
    }
    const ask = (msg) =>
      new Promise((resolve) => {
        const on = ({ data }) => {
          if (data?.t !== msg.t) return;
          worker.removeEventListener("message", on);
          resolve(data);
        };
        worker.addEventListener("message", on);
        worker.postMessage(msg);
      });
    T.workerCounts = async () => {
      const { slices, streams } = await ask({ t: "test:counts" });
      return { slices, streams };
    };
    T.hookedWorker = { ask };
  },
  // Makes Blob reads fail where the module runs (read-faults.js): in its Worker where it was
  // loaded by loadHooked, else on the page.
  async failReads(how, after) {
    if (T.hookedWorker) return void (await T.hookedWorker.ask({ t: "test:failReads", how, after }));
    failReads(how, after);
  },
  errorData: (e) => errorData(e, T.module?.MediaUploadError),
  eventData,
  // Records every event of an upload, in order.
  record(up) {
    const events = [];
    for (const type of EVENTS) up.addEventListener(type, (e) => events.push(eventData(e)));
    return events;
  },
  // Starts an upload with recording callbacks and listeners, waits for it to settle, and
  // returns { ok, result, error, events, calls, state, sessionURL }. 'hooks.onStart(up)' runs
  // right after mu.upload returns; options' own callbacks still run.
  async run(blob, options = {}, hooks = {}) {
    const mu = await T.load();
    const calls = [];
    let inside = false; // true while mu.upload runs: no callback may come then
    const wrap = (name) => (arg) => {
      calls.push({ name, arg: structuredClone(arg), inside });
      return options[name]?.(arg);
    };
    const opts = { ...options };
    for (const name of ["onProgress", "onRetry", "onStateChange", "onRequest"]) opts[name] = wrap(name);
    inside = true;
    const up = mu.upload(blob, opts);
    inside = false;
    const events = T.record(up);
    hooks.onStart?.(up);
    const out = { events, calls };
    try {
      const r = await up;
      out.ok = true;
      out.result = { status: r.status, metadata: r.metadata, body: r.body, sessionURL: r.sessionURL };
    } catch (e) {
      out.ok = false;
      out.error = T.errorData(e);
    }
    out.state = up.state;
    out.sessionURL = up.sessionURL;
    return out;
  },
  // Whether the engine's fetch takes a ReadableStream as a request body, by the Fetch
  // standard's test (as a page detects it, independently of the module's counted.js): it reads
  // the init's `duplex`, and sets no Content-Type (else it takes the stream for text).
  streamBodies() {
    let duplexRead = false;
    const typed = new Request("https://example.invalid/", {
      method: "PUT",
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return "half";
      },
    }).headers.has("Content-Type");
    return duplexRead && !typed;
  },
  // Resolves when cond() holds (polled), or rejects after ms.
  async until(cond, ms = 10000, what = "condition") {
    const end = performance.now() + ms;
    while (!cond()) {
      if (performance.now() > end) throw new Error("timed out waiting for " + what);
      await T.sleep(10);
    }
  },
};
window.T = T;
