// The demo's state: one record (an "entry") per upload of this page, in the order added, and
// the totals over them that the overall line shows. What the module reports is written here
// (uploads.js); what the page shows is drawn from here (list.js, rows.js), a few times a
// second at most, never once per event. Nothing in this file touches the DOM.
//
// An entry: every field it ever has is made by newEntry, and written down here (uploads.js
// writes what the module reports, list.js and rows.js read it; a field written elsewhere says
// so).
//   id              its number on this page (its row's data-id)
//   file            the File, until the upload has ended; then (and for what is not a File) what
//                   its row shows of it: { name, size, type, lastModified, plain } (`plain`:
//                   the File a gzip stream compresses; once ended, only its size)
//   from            where the bytes come from when not from `file` itself: { stream, handle,
//                   unfinished, picked } (uploads.js), and `held`: paused before it was handed
//                   to the module
//   settings        the page's settings when the file was added (controls.js, settings())
//   up              the module's upload object while the upload runs, else null
//   state           the upload's state (docs/api.md, "The upload object")
//   loaded, confirmed, total   the last progress report (total is 0 for a stream until its
//                   end is read)
//   progress        the last report's rate and time left: { bytesPerSecond, secondsLeft }
//   counted         its part of the totals below: { sent, bytes } (state.js)
//   t0              when it was added (performance.now()): its log's times count from it
//   requests, retries, restarts, kept   counts for the row's summary
//   log, logEdits   the request log's lines, { cells: [[text, class]], cls, title, tr }, and
//                   those edited since the row was drawn (a partial keep)
//   firstRequest, lastRequest, lastChunk   the request log's state: whether no request has
//                   been seen yet, the last one ({ method, url }), and the last chunk answered
//                   ({ first, last, line }), whose keep the next progress report tells
//   resumedPending, resumedAt   a remembered session's first request was a status query, and
//                   where the server's answer put the upload (null before)
//   lastSessionURL  the session of its last try, for Retry
//   error, notice, md5, md5Text, meta   what the row says once the upload has ended
//   open            the user opened its request log or metadata (list.js): it stays expanded
//   row, stale      its row, once made (rows.js), and whether it changed while out of the page
//                   (list.js)

/** The states in which an upload is under way (or waits its turn). */
export const LIVE = new Set(["queued", "starting", "uploading", "retrying", "offline"]);
/** The states an upload ends in. */
export const FINISHED = new Set(["done", "failed", "aborted"]);

/** Every upload of this page, in the order added. */
export const entries = [];

/**
 * The overall line's figures: files by state, and bytes. `bytes` is what every upload sends if
 * nothing more fails (a cancelled one counts what it had sent, a stream what it has read so
 * far); `sent` is how much of that has gone (a finished upload: all of it).
 */
export const totals = { files: 0, bytes: 0, sent: 0, byState: new Map() };

/** Entries changed since they were last drawn (list.js draws them, in this order). */
export const dirty = new Set();
let onChange = () => {};

/** Tells the drawing side that something changed (list.js). */
export function watchChanges(fn) {
  onChange = fn;
}

/** Marks an entry to be drawn again (soon: at once, for a new one). */
export function touch(entry, soon = false) {
  dirty.add(entry);
  onChange(soon);
}

let nextID = 1;

/** A new entry, counted in the totals and to be drawn. */
export function newEntry(file, from, settings) {
  const entry = {
    id: nextID++,
    file, from: { stream: null, handle: null, unfinished: null, picked: null, held: false, ...from }, settings,
    up: null,
    state: "queued",
    loaded: 0, confirmed: 0,
    total: from.stream ? 0 : file.size,
    progress: null,
    counted: { sent: 0, bytes: 0 },
    t0: performance.now(),
    requests: 0, retries: 0, restarts: 0, kept: 0,
    log: [], logEdits: [],
    firstRequest: true, lastRequest: null, lastChunk: null,
    resumedPending: false, resumedAt: null,
    lastSessionURL: null,
    error: null, notice: "", md5: "", md5Text: "", meta: null,
    open: false,
    row: null, stale: false,
  };
  entries.push(entry);
  totals.files++;
  if (liveCount() === 0) rate.restart(); // a batch begins
  count(entry.state, +1);
  recount(entry);
  touch(entry, true);
  return entry;
}

/** Takes finished entries away (the page's "Clear finished"); returns those taken. */
export function removeFinished() {
  const gone = entries.filter((e) => FINISHED.has(e.state));
  for (const e of gone) {
    totals.files--;
    count(e.state, -1);
    totals.sent -= e.counted.sent;
    totals.bytes -= e.counted.bytes;
    dirty.delete(e);
  }
  const kept = entries.filter((e) => !FINISHED.has(e.state));
  entries.splice(0, entries.length, ...kept);
  onChange();
  return gone;
}

export function setState(entry, state) {
  if (entry.state === state) return;
  const wasLive = liveCount() > 0;
  count(entry.state, -1);
  count(state, +1);
  entry.state = state;
  recount(entry);
  const live = liveCount() > 0;
  if (!wasLive && live) rate.restart(); // a batch begins (a paused upload resumed, a retry)
  if (wasLive && !live) rate.sample(); // and ends: its last sample is its end
  touch(entry);
}

/** Records a progress report. */
export function setProgress(entry, loaded, confirmed, total) {
  if (total > 0) entry.total = total; // a stream's, once it has ended
  entry.loaded = Math.max(entry.loaded, loaded || 0);
  entry.confirmed = confirmed || 0;
  recount(entry);
  touch(entry);
}

/** How many entries are in `state`. */
export const inState = (state) => totals.byState.get(state) ?? 0;

/** How many uploads are under way or waiting their turn. */
export function liveCount() {
  let n = 0;
  for (const s of LIVE) n += inState(s);
  return n;
}

function count(state, d) {
  totals.byState.set(state, inState(state) + d);
}

// Keeps the totals' bytes in step with one entry's.
function recount(entry) {
  const bytes = entry.state === "aborted" || entry.total === 0 ? entry.loaded : entry.total;
  const sent = entry.state === "done" ? bytes : Math.min(entry.loaded, bytes);
  totals.bytes += bytes - entry.counted.bytes;
  totals.sent += sent - entry.counted.sent;
  entry.counted = { sent, bytes };
}

/**
 * The overall rate: the bytes sent over the last few seconds, sampled twice a second while
 * uploads run, and the time since they began (since the page had none running).
 */
export const rate = {
  samples: [], // [time ms, totals.sent]
  began: 0,
  restart() {
    this.samples = [[performance.now(), totals.sent]];
    this.began = performance.now();
  },
  sample(now = performance.now()) {
    this.samples.push([now, totals.sent]);
    while (this.samples.length > 2 && now - this.samples[1][0] >= 5000) this.samples.shift();
  },
  /** Bytes a second over the samples kept, or 0 before there are two a second apart. */
  bytesPerSecond() {
    const [t0, b0] = this.samples[0] ?? [0, 0];
    const [t1, b1] = this.samples.at(-1) ?? [0, 0];
    return t1 - t0 >= 1000 ? ((b1 - b0) * 1000) / (t1 - t0) : 0;
  },
};
