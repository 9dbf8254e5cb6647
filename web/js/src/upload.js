// The Upload object of docs/api.md ("One upload"): an EventTarget that fires the events of
// XMLHttpRequest.upload, and a thenable, driven by what the Go side reports through its sink.

import { MediaUploadError, errorCode } from "./errors.js";
import { UPLOAD_EVENTS, callSafely, defineHandlers } from "./events.js";
import { EXPECTED_FILE, differs, fileOf, isFileHandle } from "./file-handle.js";
import { checkArguments, wireOptions } from "./options.js";
import { dropRecord, sessionMemo } from "./resume-store.js";

const FINAL = new Set(["done", "failed", "aborted"]);
// The failures a later try can get past: the record of resume: true stays for it.
const KEEPS_RECORD = new Set(["network_error", "retries_exhausted"]);
// The failures that a page on its way out causes too, whatever the upload: WebKit fails reads
// of the File as it unloads (a source_error), and a getHeaders that fetches its token fails
// then (an auth_error). Their record is deleted a moment later, unless the page hides first
// (resume-store.js); every other ending deletes it at once.
const PAGE_MAY_CAUSE = new Set(["source_error", "auth_error"]);
const EMPTY = Object.freeze({});

/**
 * One upload. Created by `mu.upload`; starts at once.
 *
 * Everything the Go side reports is queued and dispatched later, in order, from a microtask, so
 * listeners added right after `mu.upload` returns see every event.
 *
 * Invariants (each kept by the methods named):
 *   1. Events: exactly one `loadstart`, then `progress` events, then one of `load`, `error` or
 *      `abort`, then `loadend` (XMLHttpRequest.upload's order); `retry`, `statechange` and
 *      `request` come in between. The promise settles after `loadend`. (#enqueue, #done, #fail)
 *   2. `loaded` never goes backwards, and never exceeds the total once it is known; the last
 *      progress of a finished upload is total/total. (#dispatchProgress, #done)
 *   3. `state` answers at once: pause(), resume() and abort() set it before they return, as
 *      XMLHttpRequest.readyState does; the Go side's own state reports follow later.
 *      (#setStateNow)
 *   4. After pause(), the Go side's reports of any state but "paused" are stale (they were on
 *      their way before it): `state` shows "paused" until resume(). After resume(), a late
 *      "paused" is stale, until the Go side reports anything else. (#want, #reported)
 *   5. A final state (done, failed, aborted) is never left, and abort() shows "aborted" at
 *      once even though the Go side's end comes later. (#stale)
 *   6. A `statechange` event is fired for each state shown, in order, never twice in a row for
 *      the same one. (#announce)
 *   7. Once settled, nothing the Go side says reaches the page; once the last event is out,
 *      nothing of the caller's (options, callbacks, signal) stays reachable from here. (#sink,
 *      #letGo)
 */
export class Upload extends EventTarget {
  #options; // the caller's options, until the upload has settled and its last event is out
  #total; // the blob's size; a stream's once it has ended (0 before)
  #lengthKnown; // false for a stream until its end is read
  #engine = null;
  #id = 0; // the engine's id of this upload; 0 before it started
  #state = "starting"; // what up.state says: pause(), resume() and abort() change it at once
  #announced = "starting"; // the state of the last statechange event
  #want = null; // "paused" after pause(), "running" after resume(): Go's stale reports are dropped
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

  #ahead; // the key of its Blob's hashing ahead (a queue's: hash-ahead.js), or undefined

  constructor(engine, blob, options, ahead) {
    super();
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Users who only listen to events must not see "unhandled rejection"; `await up` and
    // `up.then` get their own derived promise and still see the rejection.
    this.promise.catch(() => {});
    this.#options = options ?? {};
    this.#ahead = ahead;
    this.#total = blob instanceof Blob ? blob.size : 0;
    this.#lengthKnown = blob instanceof Blob;
    this.#enqueue(() => this.#dispatchProgress("loadstart"));

    const bad = checkArguments(blob, options);
    if (bad) return void this.#fail({ code: "invalid_argument", message: bad });
    // The options are checked now, whatever the resume store says later: a bad call fails at
    // once, before any request.
    const copy = wireOptions(this.#options, this.#options.sessionURL);
    if (copy.bad) return void this.#fail({ code: "invalid_argument", message: copy.bad });
    const { signal } = this.#options;
    if (signal?.aborted) return void this.abort();
    signal?.addEventListener("abort", this.#onSignalAbort);
    this.#engine = engine;
    if (isFileHandle(blob)) {
      // A FileSystemFileHandle: its File, once the browser lets it be read (file-handle.js).
      this.#lengthKnown = false;
      fileOf(blob).then(
        (file) => this.#settled || this.#prepare(file, copy, blob),
        (err) => this.#fail({ code: "source_error", message: err.message, cause: err.cause ?? err }),
      );
      return;
    }
    this.#prepare(blob, copy, null);
  }

  // Starts the upload of blob (a Blob, a File or a stream; handle: the FileSystemFileHandle the
  // File came from) with the checked copy of the options.
  #prepare(blob, copy, handle) {
    if (blob instanceof Blob) [this.#total, this.#lengthKnown] = [blob.size, true];
    // Resuming an unfinished upload (unfinished.js): the file must be the one it began with.
    const expected = this.#options[EXPECTED_FILE];
    const changed = differs(expected, blob);
    if (changed) {
      // The record's own handle, its file changed: what the session holds can never be
      // finished, and the record goes. A file picked again may just be the wrong one: it stays.
      if (expected.key) dropRecord(expected.key);
      return void this.#fail({ code: "source_error", message: changed });
    }
    let memo = null;
    if (this.#options.resume) {
      memo = sessionMemo(blob, this.#options, handle);
      if (typeof memo === "string") return void this.#fail({ code: "invalid_argument", message: memo });
      this.#memo = memo;
    }
    if (!memo) return void this.#begin(blob, copy.options);
    // resume: true. One tab at a time uploads a given file (a Web Lock on the record's key):
    // while another holds it, this one waits in "queued", showing that tab's progress. Then
    // the remembered session, if any, is the Go side's sessionURL (the store is asynchronous:
    // IndexedDB).
    const heard = (p) => this.#enqueue(() => this.#state === "queued" && this.#dispatchProgress("progress", p));
    memo.lock(() => this.#setStateNow("queued"), heard).then(async ({ release, waited }) => {
      this.#unlock = release;
      if (this.#settled) return void release();
      if (waited && this.#want !== "paused") this.#setStateNow("starting");
      const remembered = this.#options.sessionURL ?? (await memo.load(waited));
      if (this.#settled) return void release();
      const again = remembered ? wireOptions(this.#options, remembered) : copy;
      this.#begin(blob, again.bad ? copy.options : again.options);
    });
  }

  #unlock = () => {}; // releases the resume lock (resume: true)

  // Hands the upload to the engine (the Go side).
  #begin(blob, options) {
    try {
      this.#id = this.#engine.start(blob, options, {
        ahead: this.#ahead,
        sink: this.#sink(),
        getHeaders: typeof this.#options.getHeaders === "function" ? this.#options.getHeaders.bind(this.#options) : null,
      });
      // pause() came before the engine had the upload: it starts paused.
      if (this.#want === "paused" && this.#id) this.#engine.pause(this.#id);
    } catch (err) {
      // The Go side validates the options it reads; whatever it throws is a bad argument. An
      // engine that knows better throws a MediaUploadError (worker-engine.js: a source that
      // cannot be handed to the Worker is a source_error). Any other code of a thrown value
      // is not ours (a DOMException's is a number: a DataCloneError's is 25).
      const own = err instanceof MediaUploadError;
      this.#fail({ code: errorCode(err, "invalid_argument"), message: String(err?.message ?? err), cause: own ? err.cause : err });
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

  /**
   * Stops after the request in flight; `resume` goes on from the server's offset. `state` is
   * "paused" at once; the statechange event follows.
   */
  pause() {
    if (this.#settled || this.#state === "paused") return;
    this.#want = "paused";
    this.#resumeTo = this.#state === "starting" || this.#state === "queued" ? this.#state : "uploading";
    this.#setStateNow("paused");
    if (this.#id) this.#engine.pause(this.#id);
  }

  /** Goes on after `pause`: `state` is "uploading" (or "starting") at once. */
  resume() {
    if (this.#settled || this.#want !== "paused") return;
    this.#want = "running";
    this.#setStateNow(this.#resumeTo);
    if (this.#id) this.#engine.resume(this.#id);
  }

  /** Stops for good: `state` is "aborted" at once; the promise rejects with code "aborted". */
  abort() {
    if (this.#settled) return;
    if (this.#id) this.#engine.abort(this.#id);
    this.#fail({ code: "aborted", message: "the upload was aborted" });
  }

  #resumeTo = "uploading";

  // The sink the Go side reports through (engine/host.js lists the reports). Nothing it says
  // after the upload is settled (an abort here races its own reports) reaches the user. It
  // carries the caller's session function too, which the host calls (host.js, session).
  #sink() {
    const self = this;
    const { session } = this.#options;
    return {
      session: typeof session === "function" ? session.bind(this.#options) : undefined,
      // The Go side reports each request only when someone listens (it costs an object per
      // chunk): an onRequest option, or a "request" listener, added now or later.
      get wantRequests() {
        return self.#wantRequests || typeof self.#options.onRequest === "function";
      },
      report: (r) => {
        if (!this.#settled) this.#report(r);
      },
    };
  }

  // One report of the Go side, queued as the events it makes (or settling the upload).
  #report(r) {
    switch (r.type) {
      case "state":
        return this.#enqueue(() => this.#reported(r.state));
      case "progress":
        this.#memo?.touch({ loaded: r.loaded, total: r.total, confirmed: r.confirmed }); // other tabs hear it
        return this.#enqueue(() => {
          // A stream's total is told once its end has been read.
          if (!this.#lengthKnown && r.total > 0) [this.#total, this.#lengthKnown] = [r.total, true];
          this.#dispatchProgress("progress", r);
        });
      case "retry": {
        const { attempt, delayMs, status, error, restart } = r;
        return this.#enqueue(() => this.#fire("retry", "onRetry", { attempt, delayMs, status, error, restart: Boolean(restart) }));
      }
      case "session":
        this.#sessionURL = r.url;
        return this.#memo?.save(r.url);
      case "request": {
        const { method, url, contentRange, status, ms, error } = r;
        if (status) this.#lastStatus = status;
        return this.#enqueue(() => this.#fire("request", "onRequest", { method, url, contentRange, status, ms, error }));
      }
      case "done":
        return this.#done({ status: r.status, metadata: parseJSON(r.body), body: r.body, sessionURL: r.sessionURL || null });
      case "fail":
        // cause: the JS error behind a network_error or an auth_error, kept by the host; the
        // code is the Go side's (core.Code), which errorCode only guards.
        return this.#fail({ ...r, code: errorCode(r.code, "protocol_error"), sessionURL: r.sessionURL || null });
    }
  }

  #done(result) {
    this.#settled = true;
    this.#cleanup();
    this.#memo?.finished(result.sessionURL); // marked done (resume-store.js)
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
      this.#letGo();
    });
  }

  #fail(info) {
    this.#settled = true;
    this.#cleanup();
    const err = new MediaUploadError(info.code, info.message, {
      status: info.status ?? this.#lastStatus,
      responseText: info.responseText ?? "",
      sessionURL: info.sessionURL ?? this.#sessionURL,
      reason: info.reason || "",
      serverMessage: info.serverMessage || "",
      cause: info.cause,
    });
    const aborted = err.code === "aborted";
    // With resume: true, the record goes with the upload (docs/api.md, "Unfinished uploads"),
    // unless a later try could get past the failure.
    if (!KEEPS_RECORD.has(err.code)) this.#memo?.forget(PAGE_MAY_CAUSE.has(err.code));
    if (aborted) this.#state = "aborted"; // at once, like XMLHttpRequest.readyState
    this.#enqueue(() => {
      this.#setState(aborted ? "aborted" : "failed");
      this.#dispatchProgress(aborted ? "abort" : "error", undefined, { error: err });
      this.#dispatchProgress("loadend");
      this.#reject(err);
      this.#letGo();
    });
  }

  #cleanup() {
    this.#options.signal?.removeEventListener?.("abort", this.#onSignalAbort);
    this.#memo?.cancel();
    this.#unlock();
  }

  // Once the last event is out, nothing of the caller's stays reachable from here but what
  // the page reads (state, sessionURL, the promise's result): not the options, the callbacks,
  // the signal or the engine. The Go side and the host let go of the rest when the Go side
  // reports the end (jsbridge/doc.go, "Ownership").
  #letGo() {
    this.#options = EMPTY;
    this.#memo = null;
    this.#engine = null;
  }

  // A state the Go side reported. After pause() only "paused" gets through (the reports
  // queued before it are stale); after resume(), anything but a stale "paused"; after
  // abort(), nothing.
  #reported(s) {
    if (this.#stale(s)) return;
    if (this.#want === "paused" && s !== "paused") return;
    if (this.#want === "running") {
      if (s === "paused") return;
      this.#want = null;
    }
    this.#setState(s);
  }

  // pause() and resume(): up.state changes now, the event follows in order.
  #setStateNow(s) {
    this.#state = s;
    this.#enqueue(() => this.#announce(s));
  }

  #setState(s) {
    this.#state = s;
    this.#announce(s);
  }

  // Whether s, queued before, would contradict a final state up.state already shows (abort()
  // shows "aborted" at once).
  #stale(s) {
    return FINAL.has(this.#state) && !FINAL.has(s);
  }

  #announce(s) {
    if (s === this.#announced || this.#stale(s)) return;
    this.#announced = s;
    this.#fire("statechange", "onStateChange", { state: s }, s);
  }

  // Fires a ProgressEvent (type progress, or one of XHR's other events) carrying the fields
  // of docs/api.md. Only "progress" events move the numbers; `loaded` never goes backwards.
  #dispatchProgress(type, report, extra) {
    let p = this.#progress ?? { loaded: 0, confirmed: 0, bytesPerSecond: 0, secondsLeft: null };
    if (report) {
      const total = this.#total;
      const cap = this.#lengthKnown ? total : Infinity; // a stream's length is not known yet
      p = {
        loaded: Math.min(Math.max(report.loaded ?? 0, p.loaded), cap),
        total,
        lengthComputable: total > 0,
        confirmed: Math.min(report.confirmed ?? 0, cap),
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
  #fire(type, callback, fields, arg = fields) {
    this.#call(callback, arg);
    this.dispatchEvent(Object.assign(new Event(type), fields));
  }

  #call(name, arg) {
    const fn = this.#options[name];
    // Like an event listener's exception: reported, and the upload goes on.
    if (typeof fn === "function") callSafely(fn, arg);
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

// The handler properties of XMLHttpRequest.upload (docs/api.md): onloadstart, onprogress, …,
// plus onretry and onstatechange.
defineHandlers(Upload, UPLOAD_EVENTS);

// The final answer's body parsed as JSON, or null.
function parseJSON(body) {
  if (!body) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}
