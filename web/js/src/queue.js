// The queue of docs/api.md ("Many files: a queue"): at most `concurrency` uploads run at
// once, the others wait in state "queued"; progress over every file, and "idle". An upload
// paused by the page gives up its slot to the next one waiting; resumed, it goes on at once (the
// queue starts no other until fewer than `concurrency` run again).
//
// Built on the Upload object's public surface only: a queued upload is a QueuedUpload that
// starts a real Upload (through `start`) when the queue gives it a slot, and from then on
// passes on the real one's events and answers with its state.

import { MediaUploadError } from "./errors.js";

const FORWARDED = ["progress", "load", "error", "abort", "loadend", "retry", "statechange", "request"];

/** A copy of `e` that can be dispatched again (an event cannot be dispatched while it is). */
export function copyEvent(e) {
  const copy =
    e instanceof ProgressEvent
      ? new ProgressEvent(e.type, { loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable })
      : new Event(e.type);
  // The fields the Upload put on it (confirmed, error, result, …); isTrusted is the event's own.
  for (const k of Object.keys(e)) if (k !== "isTrusted") copy[k] = e[k];
  return copy;
}

/**
 * An upload waiting for its turn, then the running Upload's stand-in. Same members as Upload:
 * promise/then/catch/finally, pause/resume/abort, state, sessionURL, and its events.
 */
export class QueuedUpload extends EventTarget {
  #start; // () => Upload
  #inner = null;
  #state = "queued";
  #size;
  #signal;
  #onSignalAbort = () => this.abort();
  #resolve;
  #reject;

  constructor(start, blob, options) {
    super();
    this.#start = start;
    this.#size = blob instanceof Blob ? blob.size : 0;
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.promise.catch(() => {}); // as Upload: listening to events only is fine
    this.#signal = options?.signal;
    this.#signal?.addEventListener?.("abort", this.#onSignalAbort);
  }

  get state() {
    return this.#inner ? this.#inner.state : this.#state;
  }

  get sessionURL() {
    return this.#inner ? this.#inner.sessionURL : null;
  }

  /** The size known so far: the blob's, or a stream's once it has ended (0 before). */
  get size() {
    return this.#size;
  }

  /** True while waiting (not paused, not aborted): the queue may start it. */
  get waiting() {
    return !this.#inner && this.#state === "queued";
  }

  get started() {
    return this.#inner !== null;
  }

  pause() {
    if (this.#inner) return this.#inner.pause();
    if (this.#state === "queued") this.#setState("paused");
  }

  resume() {
    if (this.#inner) return this.#inner.resume();
    if (this.#state === "paused") {
      this.#setState("queued");
      this.dispatchEvent(new Event("requeue")); // the queue starts it when a slot is free
    }
  }

  abort() {
    if (this.#inner) return this.#inner.abort();
    if (this.#state === "aborted") return;
    this.#signal?.removeEventListener?.("abort", this.#onSignalAbort);
    // Never started: the events an aborted Upload fires, in the same order.
    const err = new MediaUploadError("aborted", "upload aborted");
    this.#setState("aborted");
    for (const type of ["loadstart", "abort", "loadend"]) {
      const e = new ProgressEvent(type, { loaded: 0, total: this.#size, lengthComputable: this.#size > 0 });
      if (type === "abort") e.error = err;
      this.dispatchEvent(e);
    }
    this.#reject(err);
  }

  /** Called by the queue: starts the real upload. */
  run() {
    this.#signal?.removeEventListener?.("abort", this.#onSignalAbort);
    const up = this.#start();
    this.#inner = up;
    this.dispatchEvent(new ProgressEvent("loadstart", { loaded: 0, total: this.#size, lengthComputable: this.#size > 0 }));
    for (const type of FORWARDED) {
      up.addEventListener(type, (e) => {
        if (type === "progress" && e.lengthComputable) this.#size = e.total;
        this.dispatchEvent(copyEvent(e));
      });
    }
    up.promise.then(this.#resolve, this.#reject);
    return up;
  }

  #setState(s) {
    this.#state = s;
    this.dispatchEvent(Object.assign(new Event("statechange"), { state: s }));
  }
}

// A thenable, as Upload: then, catch and finally are the promise's.
for (const name of ["then", "catch", "finally"]) {
  QueuedUpload.prototype[name] = function (...args) {
    return this.promise[name](...args);
  };
}

/**
 * mu.queue({ concurrency }): at most `concurrency` (default 3) uploads run at once.
 * Fires "progress" (loaded/total over every file not aborted) and "idle" (every upload added
 * so far has settled).
 */
export class UploadQueue extends EventTarget {
  #upload; // (blob, options) => Upload
  #concurrency;
  #entries = []; // { up: QueuedUpload, loaded, settled, aborted }
  #paused = false;

  constructor(upload, options = {}) {
    super();
    const c = options?.concurrency ?? 3;
    if (!Number.isInteger(c) || c < 1) {
      throw new MediaUploadError("invalid_argument", `queue concurrency must be a positive integer, not ${c}`);
    }
    this.#upload = upload;
    this.#concurrency = c;
  }

  get concurrency() {
    return this.#concurrency;
  }

  /** The uploads, in the order added. */
  get uploads() {
    return this.#entries.map((e) => e.up);
  }

  get loaded() {
    return this.#sum((e) => e.loaded);
  }

  get total() {
    return this.#sum((e) => e.up.size);
  }

  /** Adds an upload: it starts when a slot is free, in state "queued" until then. */
  add(blob, options) {
    const up = new QueuedUpload(() => this.#upload(blob, options), blob, options);
    const entry = { up, loaded: 0, settled: false, aborted: false };
    this.#entries.push(entry);
    up.addEventListener("progress", (e) => {
      entry.loaded = e.loaded;
      this.#progress();
    });
    up.addEventListener("requeue", () => this.#pump());
    // A running upload paused by the page frees its slot (statechange comes after the state).
    up.addEventListener("statechange", () => {
      if (up.started && up.state === "paused") this.#pump();
    });
    up.addEventListener("loadend", () => {
      entry.settled = true;
      entry.aborted = up.state === "aborted";
      this.#progress();
      this.#pump();
      if (this.#entries.every((e) => e.settled)) this.dispatchEvent(new Event("idle"));
    });
    // Started from a microtask, so that listeners added right after add() see every event.
    queueMicrotask(() => this.#pump());
    return up;
  }

  /** Pauses every running upload and starts no new one until resume(). */
  pause() {
    this.#paused = true;
    for (const { up } of this.#entries) up.pause();
  }

  resume() {
    this.#paused = false;
    for (const { up } of this.#entries) if (up.state === "paused") up.resume();
    this.#pump();
  }

  /** Aborts every upload in the queue, waiting ones first (so none starts meanwhile). */
  abort() {
    const waiting = this.#entries.filter((e) => !e.up.started);
    const running = this.#entries.filter((e) => e.up.started);
    for (const { up } of [...waiting, ...running]) up.abort();
  }

  /** Uploads started, not settled and not paused: the slots taken. */
  #running() {
    let n = 0;
    for (const { up, settled } of this.#entries) if (up.started && !settled && up.state !== "paused") n++;
    return n;
  }

  #pump() {
    if (this.#paused) return;
    let running = this.#running();
    for (const { up } of this.#entries) {
      if (running >= this.#concurrency) return;
      if (!up.waiting) continue;
      running++;
      up.run();
    }
  }

  #progress() {
    const loaded = this.loaded;
    const total = this.total;
    this.dispatchEvent(new ProgressEvent("progress", { loaded, total, lengthComputable: total > 0 }));
  }

  #sum(f) {
    let n = 0;
    for (const e of this.#entries) if (!e.aborted) n += f(e);
    return n;
  }
}
