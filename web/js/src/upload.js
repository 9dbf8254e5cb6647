// The Upload object of shared/API.md ("One upload"): an EventTarget that fires the events of
// XMLHttpRequest.upload, and a thenable, driven by what the Go side reports through its sink.

import { MediaUploadError } from "./errors.js";
import { sessionMemo } from "./resume-store.js";

/**
 * One upload. Created by `mu.upload`; starts at once.
 *
 * Everything the Go side reports is queued and dispatched later, in order, from a microtask, so
 * listeners added right after `mu.upload` returns see every event. Each upload fires exactly one
 * `loadstart`, then `progress` events, then one of `load`, `error` or `abort`, then `loadend`
 * (the order of XMLHttpRequest.upload); `retry`, `statechange` and `request` come in between.
 * The promise settles after `loadend`.
 */
export class Upload extends EventTarget {
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
