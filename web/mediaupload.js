// mediaupload: upload files from a web page with Google's media upload protocol.
//
// This module is the JS half of the package. It loads Go's runtime glue (wasm_exec.js) and the
// Go module (mediaupload.wasm), both beside this file unless told otherwise, and wraps the
// bridge's callbacks (the `sink` that the Go side reports through) into the public Upload
// object of shared/API.md: an EventTarget that is also a thenable. The contract between the
// two halves (api, handle, sink) is written down in jsbridge/doc.go.
//
// web/tools/build-classic.mjs turns this file into mediaupload.classic.js for a plain <script>
// tag. Keep it compatible with that script: exactly two `export` declarations (load and
// MediaUploadError), no import statements, and `import.meta.url` only as the base URL.

// The base URL that mediaupload.wasm and wasm_exec.js are found beside. (The classic build
// replaces import.meta.url with the script's own URL.)
const BASE_URL = import.meta.url;

const XHR_EVENTS = ["loadstart", "progress", "load", "error", "abort", "loadend"];

/** The error every failed upload rejects with. `code` is one of the codes in shared/API.md. */
export class MediaUploadError extends Error {
  constructor(code, message, { status = 0, responseText = "", sessionURL = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "MediaUploadError";
    this.code = code;
    this.status = status;
    this.responseText = responseText;
    this.sessionURL = sessionURL;
  }
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
  const url = new URL(wasmURL ?? "mediaupload.wasm", BASE_URL).href;
  await loadGoRuntime(new URL("wasm_exec.js", BASE_URL).href);
  const go = new globalThis.Go();

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

// Loads wasm_exec.js, which defines globalThis.Go, unless the page already did. A dynamic
// import runs the file in module and classic scripts and in module workers without needing
// eval; classic workers that cannot import() fall back to importScripts.
async function loadGoRuntime(url) {
  if (typeof globalThis.Go === "function") return;
  try {
    await import(/* webpackIgnore: true */ /* @vite-ignore */ url);
  } catch (err) {
    if (typeof globalThis.importScripts !== "function") throw err;
    globalThis.importScripts(url);
  }
  if (typeof globalThis.Go !== "function") {
    throw new Error(`mediaupload: ${url} did not define Go`);
  }
}

/**
 * One upload. Created by `mu.upload`; starts at once.
 *
 * Everything the Go side reports is queued and dispatched later, in order, from a microtask, so
 * listeners added right after `mu.upload` returns see every event. Each upload fires exactly one
 * `loadstart`, then `progress` events, then one of `load`, `error` or `abort`, then `loadend`
 * (the order of XMLHttpRequest.upload); `retry`, `statechange` and `request` come in between.
 * The promise settles after `loadend`.
 */
class Upload extends EventTarget {
  #options;
  #total; // the blob's size
  #handle = null;
  #state = "starting";
  #sessionURL = null;
  #progress = null; // the last progress dispatched
  #lastStatus = 0; // the last HTTP status seen, for a MediaUploadError raised here
  #settled = false; // done, fail or abort has been received (its events may still be queued)
  #queue = [];
  #resolve;
  #reject;
  #onSignalAbort = () => this.abort();
  #memo = null; // with resume: true, where the session is remembered
  #wantRequests = false; // a "request" listener was added

  constructor(api, blob, options) {
    super();
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Users who only listen to events must not see "unhandled rejection"; `await up` and
    // `up.then` get their own derived promise and still see the rejection.
    this.promise.catch(() => {});
    this.#options = options ?? {};
    this.#total = blob instanceof Blob ? blob.size : 0;
    this.#enqueue(() => this.#dispatchProgress("loadstart"));

    const bad = checkArguments(blob, options);
    if (bad) return void this.#fail({ code: "invalid_argument", message: bad });
    let goOptions = this.#options;
    if (this.#options.resume) {
      const memo = sessionMemo(blob, this.#options);
      if (typeof memo === "string") return void this.#fail({ code: "invalid_argument", message: memo });
      this.#memo = memo;
      // The Go side sees the remembered session as sessionURL; the caller's object is not
      // changed (its getters, inherited ones too, still answer through the prototype).
      goOptions = Object.create(this.#options, {
        resume: { value: false },
        sessionURL: { value: this.#options.sessionURL ?? memo.load() ?? undefined },
      });
    }
    const { signal } = this.#options;
    if (signal?.aborted) return void this.abort();
    signal?.addEventListener("abort", this.#onSignalAbort);
    try {
      this.#handle = api.upload(blob, goOptions, this.#sink());
    } catch (err) {
      // The Go side validates the options it reads; whatever it throws is a bad argument.
      this.#fail({ code: err?.code ?? "invalid_argument", message: String(err?.message ?? err) });
    }
  }

  addEventListener(type, listener, options) {
    if (type === "request") this.#wantRequests = true;
    super.addEventListener(type, listener, options);
  }

  get state() {
    return this.#state;
  }

  get sessionURL() {
    return this.#sessionURL;
  }

  then(onFulfilled, onRejected) {
    return this.promise.then(onFulfilled, onRejected);
  }

  catch(onRejected) {
    return this.promise.catch(onRejected);
  }

  finally(onFinally) {
    return this.promise.finally(onFinally);
  }

  /** Stops after the request in flight; `resume` goes on from the server's offset. */
  pause() {
    if (!this.#settled) this.#handle?.pause();
  }

  resume() {
    if (!this.#settled) this.#handle?.resume();
  }

  /** Stops for good: the promise rejects with code "aborted". */
  abort() {
    if (this.#settled) return;
    this.#handle?.abort();
    this.#fail({ code: "aborted", message: "mediaupload: upload aborted" });
  }

  // The callbacks the Go side reports through. Nothing it says after the upload is settled
  // (an abort here races its own reports) reaches the user.
  #sink() {
    const live = (fn) => (...args) => {
      if (!this.#settled) fn(...args);
    };
    const self = this;
    return {
      // The Go side reports each request only when someone listens (it costs a call per
      // chunk): an onRequest option, or a "request" listener, added now or later.
      get wantRequests() {
        return self.#wantRequests || typeof self.#options.onRequest === "function";
      },
      state: live((s) => this.#enqueue(() => this.#setState(s))),
      // progress and request come as positional arguments (one JS call from Go, not one per
      // field: they come with every chunk).
      progress: live((loaded, total, confirmed, bytesPerSecond, secondsLeft) =>
        this.#enqueue(() => this.#dispatchProgress("progress", { loaded, confirmed, bytesPerSecond, secondsLeft })),
      ),
      retry: live((r) => this.#enqueue(() => this.#emit("retry", "onRetry", { ...r }))),
      session: live((url) => {
        this.#sessionURL = url;
        this.#memo?.save(url);
      }),
      request: live((method, url, contentRange, status, ms, error) => {
        if (status) this.#lastStatus = status;
        this.#enqueue(() => this.#emit("request", "onRequest", { method, url, contentRange, status, ms, error }));
      }),
      done: live((result) => this.#done(result)),
      fail: live((info) => this.#fail(info)),
    };
  }

  #done(result) {
    this.#settled = true;
    this.#cleanup();
    this.#memo?.forget();
    this.#enqueue(() => {
      // A widget drawing a bar must end at 100%, even if the last report was short of it.
      const p = this.#progress;
      if (!p || p.loaded < this.#total || p.confirmed < this.#total) {
        this.#dispatchProgress("progress", {
          loaded: this.#total,
          confirmed: this.#total,
          bytesPerSecond: p?.bytesPerSecond ?? 0,
          secondsLeft: 0,
        });
      }
      this.#setState("done");
      this.#dispatchProgress("load", undefined, { result });
      this.#dispatchProgress("loadend");
      this.#resolve(result);
    });
  }

  #fail(info) {
    this.#settled = true;
    this.#cleanup();
    const err = new MediaUploadError(info.code, info.message, {
      status: info.status ?? this.#lastStatus,
      responseText: info.responseText ?? "",
      sessionURL: info.sessionURL ?? this.#sessionURL,
    });
    const aborted = err.code === "aborted";
    // Only a failure that a later try could get past keeps the session for resume: true.
    if (err.code !== "network_error" && err.code !== "retries_exhausted") this.#memo?.forget();
    this.#enqueue(() => {
      this.#setState(aborted ? "aborted" : "failed");
      this.#dispatchProgress(aborted ? "abort" : "error", undefined, { error: err });
      this.#dispatchProgress("loadend");
      this.#reject(err);
    });
  }

  #cleanup() {
    this.#options.signal?.removeEventListener?.("abort", this.#onSignalAbort);
  }

  #setState(s) {
    if (s === this.#state) return;
    this.#state = s;
    this.#emit("statechange", "onStateChange", { state: s }, s);
  }

  // Fires a ProgressEvent (type progress, or one of XHR's other events) carrying the fields
  // of shared/API.md. Only "progress" events move the numbers; `loaded` never goes backwards.
  #dispatchProgress(type, report, extra) {
    let p = this.#progress ?? { loaded: 0, confirmed: 0, bytesPerSecond: 0, secondsLeft: null };
    if (report) {
      const total = this.#total;
      p = {
        loaded: Math.min(Math.max(report.loaded ?? 0, p.loaded), total),
        total,
        lengthComputable: total > 0,
        confirmed: Math.min(report.confirmed ?? 0, total),
        bytesPerSecond: report.bytesPerSecond ?? 0,
        secondsLeft: report.secondsLeft ?? null,
      };
      this.#progress = p;
    }
    const total = this.#total;
    const event = new ProgressEvent(type, { loaded: p.loaded, total, lengthComputable: total > 0 });
    Object.assign(event, {
      confirmed: p.confirmed,
      bytesPerSecond: p.bytesPerSecond,
      secondsLeft: p.secondsLeft,
      ...extra,
    });
    if (type === "progress") {
      this.#call("onProgress", { ...p });
    }
    this.dispatchEvent(event);
  }

  // Fires a plain Event of `type` carrying `fields`, after calling the option `callback`.
  #emit(type, callback, fields, arg = fields) {
    this.#call(callback, arg);
    this.dispatchEvent(Object.assign(new Event(type), fields));
  }

  #call(name, arg) {
    const fn = this.#options[name];
    if (typeof fn !== "function") return;
    try {
      fn(arg);
    } catch (err) {
      // Like an event listener's exception: reported, and the upload goes on.
      globalThis.reportError ? globalThis.reportError(err) : setTimeout(() => { throw err; });
    }
  }

  #enqueue(fn) {
    if (this.#queue.push(fn) === 1) queueMicrotask(() => this.#flush());
  }

  #flush() {
    // Entries queued while flushing (a listener calling abort, say) get the next microtask.
    const queue = this.#queue;
    this.#queue = [];
    for (const fn of queue) fn();
  }
}

// The checks the Go side cannot make: what the loader itself uses. The Go side validates url,
// method, uploadType, chunkSize and the other protocol options.
function checkArguments(blob, options) {
  if (!(blob instanceof Blob)) return "mediaupload: the first argument must be a Blob or File";
  if (options == null || typeof options !== "object") {
    return "mediaupload: the options must be an object with at least a url";
  }
  for (const name of ["onProgress", "onRetry", "onStateChange", "onRequest", "getHeaders"]) {
    if (options[name] != null && typeof options[name] !== "function") {
      return `mediaupload: ${name} must be a function`;
    }
  }
  const { signal } = options;
  if (signal != null && (typeof signal.addEventListener !== "function" || !("aborted" in signal))) {
    return "mediaupload: signal must be an AbortSignal";
  }
  return "";
}

// How long a remembered session is tried again: a session URI lasts about a week, an unused
// one may go within a day (PROTOCOL.md section 2); an expired one costs a 404 and a new session.
const MEMO_MAX_AGE_MS = 6 * 24 * 3600 * 1000;

// With resume: true, the session of an upload is kept in localStorage under a key made of the
// upload (url, method) and the file's identity (name, size, lastModified, type), so that the
// same file offered again, after a reload say, goes on from what the server holds. It returns
// an error message for a call that cannot be resumed. Where storage is unavailable (a worker,
// a privacy mode), nothing is remembered and the upload simply starts anew.
function sessionMemo(blob, options) {
  if (!(blob instanceof File)) {
    return "mediaupload: resume: true needs a File: its name, size and lastModified tell it again after a reload";
  }
  const type = options.uploadType ?? "resumable";
  if (type !== "resumable" && type !== "auto") {
    return `mediaupload: resume: true needs a resumable upload, not uploadType "${type}"`;
  }
  const key = "mediaupload:" + JSON.stringify([options.url ?? "", String(options.method ?? "POST").toUpperCase(),
    blob.name, blob.size, blob.lastModified, blob.type]);
  const storage = () => {
    try {
      return globalThis.localStorage ?? null;
    } catch {
      return null; // access denied
    }
  };
  const quietly = (fn) => {
    try {
      return fn(storage());
    } catch {
      return null; // full, or denied: resuming is best effort
    }
  };
  return {
    load: () =>
      quietly((s) => {
        const saved = JSON.parse(s?.getItem(key) ?? "null");
        return saved && Date.now() - saved.savedAt < MEMO_MAX_AGE_MS ? saved.sessionURL : null;
      }),
    save: (sessionURL) => quietly((s) => s?.setItem(key, JSON.stringify({ sessionURL, savedAt: Date.now() }))),
    forget: () => quietly((s) => s?.removeItem(key)),
  };
}
