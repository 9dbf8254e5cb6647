// The queue of docs/api.md ("Many files: a queue"): at most `concurrency` uploads run at
// once, the others wait in state "queued"; progress over every file, and "idle". An upload
// paused by the page gives up its slot to the next one waiting; resumed, it goes on at once (the
// queue starts no other until fewer than `concurrency` run again).
//
// Built on the Upload object's public surface only: a queued upload is a QueuedUpload that
// starts a real Upload (through `start`) when the queue gives it a slot, and from then on
// passes on the real one's events and answers with its state.
//
// The queue's progress (loaded, total, and its "progress" events) keeps these invariants,
// whatever is paused, aborted or fails (docs/api.md, "Many files: a queue"):
//   - loaded, the bytes sent by every upload added, never goes backwards (an aborted upload
//     keeps counting what it had sent);
//   - total is what the queue sends if nothing more fails: each upload's size, except that an
//     aborted upload (and a stream that ended without telling its length) counts only what it
//     had sent; it changes at once on abort(), as `state` does;
//   - lengthComputable is total > 0 with every length known; while a stream's length is not,
//     or a Blob's size has not been read yet (the task after add(), #sizeSome), total is 0 (as
//     on XMLHttpRequest), otherwise loaded <= total;
//   - an event fires only when loaded or total has changed, and q.abort() fires one, after
//     every upload in it has been aborted, not one per upload.
//
// Its cost per event does not grow with the number of files added (300 files had made each
// event walk every upload, several times per file): loaded and total are sums kept up to date
// as each upload reports, or is aborted; the slots are counted over the uploads started and
// not settled; the next upload to start is found from where the last search ended.
//
// A queue keeps every upload added to it (q.uploads) for as long as the page keeps the queue,
// so an upload lets go of all but what it still answers once its last event (loadend) is out:
// its File or Blob, its options and their callbacks, the Upload that ran it, its signal, and
// the listeners and handler properties set on it (nothing fires after loadend). It still
// answers its state, sessionURL and settled promise (docs/api.md, "Many files: a queue"). The
// queue hears of each upload through one function it gives it (`heard`), not through
// listeners: a thousand uploads' listeners are tens of thousands of the browser's objects for
// its collector to trace, and held Chromium's page 50-85 ms at a time.
//
// Hashing ahead (hash-ahead.js): a file sent in one request states its checksum in it, so its
// hash comes before its bytes. The next AHEAD_FILES files waiting have their hashes started
// while the files before them upload (each of at most AHEAD_FILE_BYTES, AHEAD_BYTES in all), and
// each upload takes its file's hashing over when it starts. One paused before its turn, aborted
// or ended lets go of it.

import { MediaUploadError } from "./errors.js";
import { UPLOAD_EVENTS, copyEvent, defineHandlers, dropHandlers } from "./events.js";

const FORWARDED = ["progress", "load", "error", "abort", "loadend", "retry", "statechange"];
// How long one task reads the sizes of the Blobs added (#sizeSome), at most: a sixth of the
// 50 ms a task of the page may take, so that what the page does in the same task still fits.
const SIZE_BUDGET_MS = 8;
// Hashing ahead: how many of the files waiting next, the largest file, the bytes in all. Small
// files are the ones sent in one request; a larger file's hash runs beside its chunks anyway.
const AHEAD_FILES = 3;
const AHEAD_FILE_BYTES = 8 << 20;
const AHEAD_BYTES = 16 << 20;

const capture = (options) => (typeof options === "boolean" ? options : Boolean(options?.capture));

/**
 * An upload waiting for its turn, then the running Upload's stand-in. Same members as Upload:
 * promise/then/catch/finally, pause/resume/abort, state, sessionURL, and its events. Once its
 * last event is out it lets go of everything but its state, sessionURL and promise.
 */
export class QueuedUpload extends EventTarget {
  #start; // () => Upload, until it runs (it holds the source and the options)
  #heard; // (what, event) => void: the queue's, told of what it counts; null once ended
  #inner = null; // the running Upload, until it ends
  #ran = false;
  #ended = false; // its last event is out: let go of all but what it answers
  #state = "queued"; // before it runs, and once it has ended
  #sessionURL = null; // once it has ended
  #size; // the Blob until its size is read (#sized), then the size; 0 for a stream until told
  #signal;
  #onSignalAbort = () => this.abort();
  #resolve;
  #reject;
  #wantRequests = false; // a "request" listener was added: the running upload's are forwarded
  #listeners = []; // [type, listener, capture] of the page's listeners, removed at the end

  constructor(start, blob, options, heard) {
    super();
    this.#start = start;
    this.#heard = heard;
    // Its size is read when its own events need it (not at add, for a thousand files).
    this.#size = blob instanceof Blob ? blob : 0;
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
    return this.#inner ? this.#inner.sessionURL : this.#sessionURL;
  }

  // The page's listeners are kept track of, to be removed at the end. Once ended, none is
  // added: nothing fires any more.
  //
  // "request" events are forwarded only once someone listens: the Go side reports each
  // request only when the Upload has a listener (a report per request, its URL among the
  // fields), and a queue of many small files makes many requests.
  addEventListener(type, listener, options) {
    if (this.#ended || listener == null) return;
    super.addEventListener(type, listener, options);
    const c = capture(options);
    if (!this.#listeners.some(([t, l, cc]) => t === type && l === listener && cc === c)) this.#listeners.push([type, listener, c]);
    if (type === "request" && !this.#wantRequests) {
      this.#wantRequests = true;
      if (this.#inner) this.#forward("request");
    }
  }

  removeEventListener(type, listener, options) {
    super.removeEventListener(type, listener, options);
    const c = capture(options);
    const i = this.#listeners.findIndex(([t, l, cc]) => t === type && l === listener && cc === c);
    if (i >= 0) this.#listeners.splice(i, 1);
  }

  #forward(type) {
    this.#inner.addEventListener(type, (e) => {
      if (type === "progress" && e.lengthComputable) this.#size = e.total;
      this.#fire(copyEvent(e));
      if (type === "loadend") this.#letGo();
    });
  }

  // Fires e: the queue hears of it first, then the page's listeners.
  #fire(e) {
    this.#heard?.(e.type, e);
    this.dispatchEvent(e);
  }

  /** True while waiting (not paused, not aborted): the queue may start it. */
  get waiting() {
    return !this.#ran && this.#state === "queued";
  }

  get started() {
    return this.#ran;
  }

  pause() {
    if (this.#inner) return this.#inner.pause();
    if (!this.#ran && this.#state === "queued") this.#setState("paused");
  }

  resume() {
    if (this.#inner) return this.#inner.resume();
    if (!this.#ran && this.#state === "paused") {
      this.#setState("queued");
      this.#heard("requeue"); // the queue starts it when a slot is free
    }
  }

  abort() {
    if (this.#ended) return;
    if (this.#inner) {
      this.#inner.abort();
      return void this.#heard("aborted");
    }
    // Never started: the events an aborted Upload fires, in the same order.
    const err = new MediaUploadError("aborted", "upload aborted");
    this.#setState("aborted");
    this.#heard("aborted");
    const size = this.#sized();
    for (const type of ["loadstart", "abort", "loadend"]) {
      const e = new ProgressEvent(type, { loaded: 0, total: size, lengthComputable: size > 0 });
      if (type === "abort") e.error = err;
      this.#fire(e);
    }
    this.#reject(err);
    this.#letGo();
  }

  /** Called by the queue: starts the real upload. */
  run() {
    const up = this.#start();
    this.#start = null; // the Upload holds the source and the options now
    this.#inner = up;
    this.#ran = true;
    const size = this.#sized();
    this.#fire(new ProgressEvent("loadstart", { loaded: 0, total: size, lengthComputable: size > 0 }));
    for (const type of FORWARDED) this.#forward(type);
    if (this.#wantRequests) this.#forward("request");
    up.promise.then(this.#resolve, this.#reject);
    // Its signal was aborted already. (A later abort of the signal comes here first: this
    // listener was added before the Upload's own, so that the queue hears of it at once.)
    if (up.state === "aborted") this.#heard("aborted");
    return up;
  }

  // The size, read from the Blob the first time it is needed.
  #sized() {
    if (this.#size instanceof Blob) this.#size = this.#size.size;
    return this.#size;
  }

  #setState(s) {
    this.#state = s;
    this.#fire(Object.assign(new Event("statechange"), { state: s }));
  }

  // Its last event is out: all but its state, sessionURL and promise goes (the promise of a
  // running upload settles from the Upload's own, which holds what it needs).
  #letGo() {
    if (this.#inner) [this.#state, this.#sessionURL] = [this.#inner.state, this.#inner.sessionURL];
    this.#ended = true;
    this.#inner = this.#start = this.#heard = this.#resolve = this.#reject = null;
    this.#signal?.removeEventListener?.("abort", this.#onSignalAbort);
    this.#signal = null;
    for (const [type, listener, c] of this.#listeners) super.removeEventListener(type, listener, c);
    this.#listeners = [];
    dropHandlers(this);
  }
}

// Every handler property of an upload (onprogress, onload, …, onstatechange).
defineHandlers(QueuedUpload, UPLOAD_EVENTS);

// A thenable, as Upload: then, catch and finally are the promise's.
for (const name of ["then", "catch", "finally"]) {
  QueuedUpload.prototype[name] = function (...args) {
    return this.promise[name](...args);
  };
}

/**
 * mu.queue({ concurrency }): at most `concurrency` (default 6: the connections an HTTP/1.1 browser opens
 * to one host) uploads run at once.
 * Fires "progress" (loaded/total over every file not aborted) and "idle" (every upload added
 * so far has settled).
 */
export class UploadQueue extends EventTarget {
  #upload; // (blob, options, ahead) => Upload
  #ahead; // { start(blob, options) -> key | null, drop(key) } (hash-ahead.js), or null
  #concurrency;
  // { up: QueuedUpload, index, loaded, size, known, blob, settled, part, unknown, source, options, ahead }
  // (source and options: until it runs or ends, for hashing ahead; ahead: its key)
  #entries = [];
  #loaded = 0; // the sum of every entry's loaded
  #sum = 0; // the sum of every entry's part of total (#count)
  #unknowns = 0; // entries whose length is not known yet: total is 0 while there are any
  #unsettled = 0;
  #live = new Set(); // the entries started and not settled
  #next = 0; // no entry before this index is waiting to start
  #paused = false;
  #holding = false; // inside abort(): no upload starts, and its one progress event comes at the end
  #endedWhileHolding = false;
  #reported = null; // [loaded, total] of the last progress event
  #unsized = []; // entries whose Blob's size is not read yet, oldest first, from #unsizedFrom on (#sizeSome)
  #unsizedFrom = 0;
  #sizing = false; // a #sizeSome is scheduled
  #pumping = false; // a #pump is scheduled (add)

  constructor(upload, options = {}, ahead = null) {
    super();
    const c = options?.concurrency ?? 6;
    if (!Number.isInteger(c) || c < 1) {
      throw new MediaUploadError("invalid_argument", `queue concurrency must be a positive integer, not ${c}`);
    }
    this.#upload = upload;
    this.#ahead = ahead;
    this.#concurrency = c;
  }

  get concurrency() {
    return this.#concurrency;
  }

  /** The uploads, in the order added. */
  get uploads() {
    return this.#entries.map((e) => e.up);
  }

  /** The bytes sent by every upload added (an aborted one's included): never goes backwards. */
  get loaded() {
    return this.#loaded;
  }

  /**
   * What the queue sends if nothing more fails: each upload's size, but an aborted upload's (or
   * an ended stream's of untold length) is what it had sent. 0 while a stream's length is
   * unknown.
   */
  get total() {
    return this.#unknowns > 0 ? 0 : this.#sum; // a stream still being read: not computable
  }

  // Brings entry's part of loaded and total up to date, after it reported or was aborted.
  #count(entry, loaded = entry.loaded) {
    this.#loaded += loaded - entry.loaded;
    entry.loaded = loaded;
    const sentOnly = entry.up.state === "aborted" || (entry.settled && !entry.known);
    const unknown = !sentOnly && !entry.known;
    const part = sentOnly ? entry.loaded : unknown ? 0 : entry.size;
    this.#sum += part - entry.part;
    this.#unknowns += unknown - entry.unknown;
    [entry.part, entry.unknown] = [part, unknown];
  }

  /** Adds an upload: it starts when a slot is free, in state "queued" until then. */
  add(blob, options) {
    const isBlob = blob instanceof Blob;
    // A Blob's size is read a little later (#sizeSome): until then it counts as a length not
    // known yet, as a stream's does.
    const entry = {
      up: null, index: this.#entries.length, loaded: 0, size: 0, known: false, blob: isBlob ? blob : null, settled: false, part: 0, unknown: false,
      source: isBlob ? blob : null, options, ahead: null,
    };
    const start = () => {
      entry.source = entry.options = null;
      return this.#upload(blob, options, entry.ahead ?? undefined);
    };
    entry.up = new QueuedUpload(start, blob, options, (what, e) => this.#heard(entry, what, e));
    this.#entries.push(entry);
    this.#unsettled++;
    this.#count(entry);
    if (isBlob) {
      this.#unsized.push(entry);
      if (!this.#sizing) {
        this.#sizing = true;
        setTimeout(() => this.#sizeSome(), 0);
      }
    }
    // Started from a microtask (one for every add() of the task), so that listeners added
    // right after add() see every event.
    if (!this.#pumping) {
      this.#pumping = true;
      queueMicrotask(() => {
        this.#pumping = false;
        this.#pump();
      });
    }
    return entry.up;
  }

  // What an upload of entry tells the queue, before its own listeners hear of it: one of its
  // events (progress, statechange, loadend; the others are not counted), "aborted" (its
  // abort(), whose events may come later) or "requeue" (resumed before its turn).
  #heard(entry, what, e) {
    switch (what) {
      case "progress":
        this.#seen(entry, e);
        return this.#progress();
      case "aborted":
        if (!entry.up.started) this.#dropAhead(entry);
        return this.#count(entry);
      case "requeue":
        this.#next = Math.min(this.#next, entry.index);
        return this.#pump();
      case "statechange":
        // A running upload paused by the page frees its slot (statechange comes after the state).
        if (entry.up.started && entry.up.state === "paused") this.#pump();
        else if (!entry.up.started && entry.up.state === "paused") this.#dropAhead(entry);
        return;
      case "loadend":
        entry.settled = true;
        this.#dropAhead(entry); // a hashing its Upload did not take (it ended before the engine had it)
        entry.source = entry.options = null;
        this.#unsettled--;
        this.#live.delete(entry);
        // A stream that ended tells its length in its last events (0 for an empty one).
        if (entry.up.state === "done") [entry.size, entry.known] = [e.total, true];
        this.#seen(entry, e);
        if (this.#holding) this.#endedWhileHolding = true;
        else this.#ended();
    }
  }

  // An event of entry's upload: its length once known, and what it has sent.
  #seen(entry, e) {
    if (e.lengthComputable) [entry.size, entry.known] = [e.total, true]; // a stream's, once it has ended
    this.#count(entry, Math.max(entry.loaded, e.loaded)); // an upload's loaded never goes back, nor does the queue's
  }

  // Reads the sizes of the Blobs added, for about SIZE_BUDGET_MS a task (16 at least), then in
  // the next task: WebKit reads each from another process (0.1-0.4 ms a Blob or File), and a
  // thousand files added at once had the queue hold the page's thread for 110-350 ms reading
  // them in add(). Until its Blob's size is read, an upload's length counts as not known
  // (total 0, lengthComputable false, as while a stream's is not known); one progress event
  // follows the sizes read.
  #sizeSome() {
    const until = performance.now() + SIZE_BUDGET_MS;
    const list = this.#unsized;
    for (let n = 0; this.#unsizedFrom < list.length && (n < 16 || performance.now() < until); n++) {
      const entry = list[this.#unsizedFrom];
      list[this.#unsizedFrom++] = null;
      if (!entry.known) [entry.size, entry.known] = [entry.blob.size, true];
      entry.blob = null;
      this.#count(entry);
    }
    this.#sizing = this.#unsizedFrom < list.length;
    if (this.#sizing) setTimeout(() => this.#sizeSome(), 0);
    else [this.#unsized, this.#unsizedFrom] = [[], 0];
    this.#progress();
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

  /**
   * Aborts every upload in the queue, waiting ones first (so none starts meanwhile). total
   * drops to what was sent at once; one progress event says so (the uploads' own abort and
   * loadend events follow, asynchronously for the running ones).
   */
  abort() {
    const waiting = this.#entries.filter((e) => !e.up.started);
    const running = this.#entries.filter((e) => e.up.started);
    this.#holding = true;
    try {
      for (const { up } of [...waiting, ...running]) up.abort();
    } finally {
      this.#holding = false;
    }
    // The waiting ones ended inside the loop (a never-started upload ends at once).
    if (this.#endedWhileHolding) {
      this.#endedWhileHolding = false;
      this.#ended();
    } else {
      this.#progress();
    }
  }

  // An upload has ended: the numbers, the next upload, and "idle" if it was the last.
  #ended() {
    this.#progress();
    this.#pump();
    if (this.#unsettled === 0) this.dispatchEvent(new Event("idle"));
  }

  /** Uploads started, not settled and not paused: the slots taken. */
  #running() {
    let n = 0;
    for (const { up } of this.#live) if (up.state !== "paused") n++;
    return n;
  }

  // Starts the uploads waiting, in the order added, while a slot is free. An upload that waits
  // again (paused before its turn, then resumed) moves #next back to it ("requeue").
  #pump() {
    if (this.#paused) return;
    while (this.#next < this.#entries.length && this.#running() < this.#concurrency) {
      const entry = this.#entries[this.#next++];
      if (!entry.up.waiting) continue;
      this.#live.add(entry); // before run(): a pump from one of its listeners counts it
      try {
        entry.up.run();
      } catch (err) {
        this.#live.delete(entry);
        throw err;
      }
    }
    this.#hashAhead();
  }

  // Starts the hashing of the next AHEAD_FILES files waiting (see the file's comment).
  #hashAhead() {
    if (!this.#ahead) return;
    let bytes = 0;
    for (let i = this.#next, files = 0; i < this.#entries.length && files < AHEAD_FILES; i++) {
      const entry = this.#entries[i];
      if (!entry.up.waiting || !entry.source) continue;
      files++;
      const size = entry.source.size;
      if (size > AHEAD_FILE_BYTES || bytes + size > AHEAD_BYTES) continue;
      bytes += size;
      entry.ahead ??= this.#ahead.start(entry.source, entry.options);
    }
  }

  // Ends entry's hashing ahead, if it has one its upload has not taken.
  #dropAhead(entry) {
    if (entry.ahead == null) return;
    this.#ahead.drop(entry.ahead);
    entry.ahead = null;
  }

  // Fires "progress" if loaded or total has changed since the last one.
  #progress() {
    if (this.#holding) return;
    const loaded = this.loaded;
    const total = this.total;
    if (this.#reported && this.#reported[0] === loaded && this.#reported[1] === total) return;
    this.#reported = [loaded, total];
    this.dispatchEvent(new ProgressEvent("progress", { loaded, total, lengthComputable: total > 0 }));
  }
}
