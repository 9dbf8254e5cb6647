// Starting uploads, and writing what the module reports into state.js (list.js and rows.js
// draw it).
//
// Files go through one mu.queue, six at a time (docs/api.md, "Many files: a queue"): a
// thousand uploads started at once would each wait inside the browser with their timers
// running. The queue lets go of each upload's File, options and listeners once it has ended
// (and this file of the entry's: letGo), so a page that keeps it holds little per file. Files
// added are made entries and handed to the queue SLICE_MS at a time (page.js), so that a
// thousand dropped at once never hold the page: WebKit's first read of a File's size (a row
// shows it) takes a third of a millisecond. A stream (a recording, a file gzipped on the fly)
// and an unfinished upload picked up again start at once, outside the queue: someone is
// waiting for that one.
//
// The module's verdict is the md5 check a row shows: every upload asks for checksum "md5" (or
// "both"), so the module hashes what it sends and compares it with the md5Hash the server
// answers; a difference fails the upload with checksum_mismatch.

import { fmtBytes, fmtDuration, fmtError, describeRange, withoutQuery } from "./format.js";
import { announce } from "./list.js";
import { sliced } from "./page.js";
import { liveCount, newEntry, setProgress, setState, touch } from "./state.js";
import { sessionEndpoint, uploadURL } from "./controls.js";

let mu = null;
let queue = null; // the page's mu.queue, once the module is loaded
const pending = []; // entries made before the module was loaded, in order: started once it is
let hooks = { started() {}, settled() {} };

/** Wires the hooks: started(entry) when an upload starts, settled(entry) when it ends. */
export function initUploads(h) {
  hooks = h;
}

/** The module is loaded: what was added meanwhile starts. */
export function moduleLoaded(m) {
  mu = m;
  queue = mu.queue();
  starting.add(pending.splice(0));
}

/**
 * Adds files (and handles) to upload, with the settings of the moment. `items`: { file, handle }
 * where handle is the FileSystemFileHandle the file was read from (the module keeps it with the
 * session: after a reload the upload goes on without a picker), or null.
 */
export function addFiles(items, s) {
  adding.add(items.map((item) => ({ ...item, s })));
}

// Files added, made entries a slice at a time (each started at once, or once the module is
// loaded).
const adding = sliced(({ file, handle, s }) => {
  let stream = null;
  if (s.gzip) {
    // Compressed as it is read: the upload's length is known only at the end.
    const plain = file;
    file = { name: `${plain.name}.gz`, size: 0, type: "application/gzip", plain };
    stream = { make: () => plain.stream().pipeThrough(new CompressionStream("gzip")), again: true };
    handle = null;
  }
  const entry = newEntry(file, { stream, handle }, s);
  if (mu) start(entry);
  else pending.push(entry);
});

// Entries made before the module was loaded, started a slice at a time once it is.
const starting = sliced((entry) => {
  if (entry.state === "queued") start(entry); // not paused or cancelled meanwhile
});

/** Adds a stream being made now (a recording): it starts at once (or once the module is loaded). */
export function addStream(file, stream, s) {
  startNow(newEntry(file, { stream }, s));
}

/** Goes on with an unfinished upload (mu.unfinished()); picked: the file picked again, or null. */
export function addUnfinished(u, picked, s) {
  startNow(newEntry({ name: u.name, size: u.size, type: u.type }, { unfinished: u, picked }, s));
}

function startNow(entry) {
  if (mu) start(entry);
  else pending.unshift(entry);
}

function start(entry, sessionURL) {
  const s = { ...entry.settings };
  const { file, from } = entry;
  Object.assign(entry, { firstRequest: true, lastRequest: null, lastChunk: null, error: null, notice: "", md5: "", md5Text: "" });
  from.held = false;
  setState(entry, from.stream || from.unfinished ? "starting" : "queued");
  hooks.started(entry); // an unfinished upload this one goes on with gives way to its row

  if (s.target === "custom" && !s.customURL) {
    fail(entry, { code: "invalid_argument", message: "enter the custom target's upload URL first", status: 0 });
    return;
  }
  // A stream goes resumable whatever the setting (its length is not known up front), and is
  // not remembered for a reload (it cannot be read again from the start). An unfinished upload
  // is a resumable one by nature, and so is one whose session the demo's backend starts.
  const backend = sessionEndpoint(s);
  if (from.stream || from.unfinished || backend) s.uploadType = "resumable";
  const resumable = (s.uploadType === "resumable" || s.uploadType === "auto") && !from.stream;
  const opts = {
    // The Cloud Storage target: the demo's backend starts each session (POST { name, size,
    // type, metadata }) for this page's origin, in the bucket and under the name it decides,
    // and again if the session is lost; the page holds no credential. A Retry goes on with the
    // session it had (sessionURL), which excludes asking for another.
    ...(backend ? (sessionURL ? {} : { session: backend }) : { url: uploadURL(s, file.name) }),
    method: "POST",
    uploadType: s.uploadType,
    queryStatusEachChunk: s.statusEachChunk,
    noRedirect308: s.no308,
    // A reload (or a closed tab) does not lose the work: the session is remembered in the
    // browser, and the same file picked again goes on from what the server holds.
    resume: resumable && !sessionURL,
    // The module hashes what it sends and compares with the server's hashes: the row's md5
    // check is its verdict.
    checksum: s.checksum === "both" ? "both" : "md5",
    // Callbacks rather than listeners: a thousand uploads waiting in the queue with listeners
    // are tens of thousands of the browser's objects for its collector to trace.
    onStateChange: (state) => stateChanged(entry, state),
    onProgress: (p) => progress(entry, p),
    onRetry: (r) => retryLine(entry, r),
    onRequest: (r) => requestLine(entry, r),
  };
  if (s.chunkSize !== undefined && !(from.stream && s.chunkSize === 0)) opts.chunkSize = s.chunkSize;
  // A media upload has no room for metadata: its name travels in the URL. To the demo's
  // backend, the name is the page's wish: the backend decides the object's name and metadata.
  if (s.uploadType !== "media") opts.metadata = { name: file.name };
  if (file.type) opts.contentType = file.type;
  if (s.fastRetry) opts.retry = { retries: 8, initialDelayMs: 200, maxDelayMs: 3000, jitterMs: 200 };
  if (s.target === "custom" && s.token) {
    // getHeaders is asked again after a 401: a real page would refresh its token here.
    opts.getHeaders = async () => ({ Authorization: `Bearer ${s.token}` });
  }
  if (sessionURL) opts.sessionURL = sessionURL;

  let up;
  try {
    if (from.unfinished) {
      // Where it goes (url, method) and resume are the record's.
      const { url, method, resume, ...rest } = opts;
      up = from.unfinished.resume(from.picked ? { ...rest, file: from.picked } : rest);
    } else if (from.stream) {
      up = mu.upload(from.stream.make(), opts);
    } else {
      up = queue.add(from.handle && opts.resume ? from.handle : file, opts);
    }
  } catch (err) {
    // The API promises not to throw; show it in the row all the same.
    fail(entry, err);
    return;
  }
  entry.up = up;
  stateChanged(entry, up.state);
  up.promise.then((res) => done(entry, res), (err) => fail(entry, err));
}

// The upload's state, as its callback reports it, or as it is at once after pause(), resume()
// or abort() (an upload waiting in the queue reports no callback of its own: only a started
// one does).
function stateChanged(entry, state) {
  if (entry.state === state || !state) return;
  setState(entry, state);
  if (state === "paused") tell(`${entry.file.name}: paused`, null);
}

// ---------------------------------------------------------------- what the rows' buttons do

export const actions = {
  pause(entry) {
    if (entry.up) {
      entry.up.pause();
      return void stateChanged(entry, entry.up.state);
    }
    // Not handed to the module yet (it is loading): held here.
    if (entry.state !== "queued") return;
    const i = pending.indexOf(entry);
    if (i >= 0) pending.splice(i, 1);
    entry.from.held = true;
    setState(entry, "paused");
  },
  resume(entry) {
    // A failed upload is tried again the way it began (an unfinished one's record knows the
    // session; a stream that can be made again from the start, from its session).
    if (entry.state === "failed") return start(entry, entry.from.unfinished ? undefined : entry.lastSessionURL);
    if (entry.up) {
      entry.up.resume();
      return void stateChanged(entry, entry.up.state);
    }
    if (entry.from.held) {
      entry.from.held = false;
      setState(entry, "queued");
      if (mu) start(entry);
      else pending.push(entry);
    }
  },
  cancel(entry) {
    if (entry.up) return void entry.up.abort(); // its promise rejects: fail() says "cancelled"
    if (entry.state !== "queued" && !entry.from.held) return;
    const i = pending.indexOf(entry);
    if (i >= 0) pending.splice(i, 1);
    fail(entry, { code: "aborted", message: "upload aborted" });
  },
};

// ---------------------------------------------------------------- what the module reports

function progress(entry, p) {
  entry.progress = { bytesPerSecond: p.bytesPerSecond, secondsLeft: p.secondsLeft }; // the row's rate and time left
  setProgress(entry, p.loaded, p.confirmed, p.total);
  keptLine(entry, p.confirmed || 0);
  if (entry.resumedPending && entry.confirmed > 0) {
    // The first answer after a resumed session: what the server already held.
    entry.resumedPending = false;
    entry.resumedAt = entry.confirmed;
  }
}

const since = (entry) => `+${((performance.now() - entry.t0) / 1000).toFixed(2)} s`;

function logLine(entry, cells, cls) {
  const line = { cells, cls };
  entry.log.push(line);
  touch(entry);
  return line;
}

function requestLine(entry, r) {
  entry.requests++;
  entry.lastChunk = null;
  entry.lastRequest = { method: r.method || "", url: r.url || "" };
  const range = describeRange(r.contentRange);
  // A session that starts with a status query was remembered: it goes on where it was.
  if (entry.firstRequest && range.query) entry.resumedPending = true;
  entry.firstRequest = false;
  const status = r.error ? (r.status ? `${r.status} ${r.error}` : r.error) : String(r.status);
  const cls = r.error || r.status >= 400 ? "status bad" : r.status === 200 || r.status === 201 ? "status ok" : "status";
  const line = logLine(entry, [
    [since(entry)],
    [r.method || ""],
    [range.range],
    [range.size, "num"],
    [status, cls],
    [r.ms == null ? "" : String(Math.round(r.ms)), "num"],
  ]);
  // An answered chunk (a 308, or its X-GUploader-No-308 form, a 200): the progress report that
  // follows tells what the server kept of it.
  if (range.first !== undefined && !r.error && (r.status === 308 || r.status === 200)) {
    entry.lastChunk = { first: range.first, last: range.last, line };
  }
}

/**
 * A partial keep: the server stored only the first part of a chunk and said so with a shorter
 * Range (docs/protocol.md, section 3); the module sends the rest from there. The request
 * report does not carry the Range, but the progress report right after the chunk's answer
 * does (its confirmed bytes): where that falls inside the chunk, the chunk's line says how much
 * was kept and where the next range starts.
 */
function keptLine(entry, confirmed) {
  const chunk = entry.lastChunk;
  entry.lastChunk = null;
  if (!chunk || confirmed < chunk.first || confirmed > chunk.last) return;
  const kept = confirmed - chunk.first;
  const size = chunk.last - chunk.first + 1;
  const { line } = chunk;
  line.cells[4] = [`${line.cells[4][0]} · kept ${kept} of ${size} bytes`, "status partial"];
  line.cls = "partial";
  line.title = `The server stored bytes up to ${confirmed - 1} only (a shorter Range): the next chunk starts at byte ${confirmed}.`;
  entry.logEdits.push(line);
  entry.kept++;
  touch(entry);
}

function retryLine(entry, r) {
  const why = r.status ? `after ${r.status}` : r.error ? `after ${r.error}` : "";
  if (r.restart) {
    // The session was lost (404/410): the module starts a new one from byte 0.
    logLine(entry, [[since(entry)], ["restart"], [`new session in ${fmtDuration(r.delayMs)}`], [""], [why, "status"], [""]], "retry");
    tell(`${entry.file.name}: the server lost the session; starting over`, null);
    entry.restarts++;
    return;
  }
  logLine(entry, [[since(entry)], ["retry"], [`#${r.attempt} in ${fmtDuration(r.delayMs)}`], [""], [why, "status"], [""]], "retry");
  entry.retries++;
}

/**
 * Lets go of what an ended upload no longer needs: its File (a thousand of them are the
 * browser's objects for its collector to trace), its handle, its stream. The row keeps what it
 * shows. A failed upload keeps them: Retry sends them again.
 */
function letGo(entry) {
  const { name, size, type, lastModified, plain } = entry.file;
  entry.file = { name, size, type, lastModified, plain: plain && { size: plain.size } };
  entry.from = { stream: entry.from.stream && {}, handle: null, unfinished: null, picked: null, held: false };
  entry.up = null; // settled: nothing left to pause or cancel
}

function done(entry, res) {
  const { file } = entry;
  if (entry.from.stream) entry.total = Math.max(entry.total, entry.loaded);
  setProgress(entry, entry.total, entry.total, entry.total);
  setState(entry, "done");
  const meta = res && res.metadata;
  entry.meta = meta ? JSON.stringify(meta, null, 2) : (res && res.body) || "(empty answer)";
  // The module compared what it sent with the server's hashes (checksum): a mismatch would
  // have failed the upload with checksum_mismatch.
  const hash = meta && (meta.md5Hash || meta.md5Checksum);
  entry.md5 = "match";
  entry.md5Text = `md5 ✓ match${hash ? ` (${hash})` : ""}${file.plain ? ", of the compressed bytes" : ""}`;
  letGo(entry);
  touch(entry);
  tell(`${file.name}: uploaded`, "done");
  hooks.settled(entry);
}

let errorSeq = 0;

function fail(entry, err) {
  const { code, text, status, reason } = fmtError(err);
  entry.up = null;
  if (err && err.sessionURL) entry.lastSessionURL = err.sessionURL;
  if (code === "aborted") {
    // The user's own choice: said plainly, not as an error.
    setState(entry, "aborted");
    entry.notice = entry.from.stream && !entry.total
      ? `Cancelled at ${fmtBytes(entry.confirmed)}; nothing more is sent.`
      : `Cancelled at ${fmtBytes(entry.confirmed)} of ${fmtBytes(entry.total)}; nothing more is sent.`;
    letGo(entry);
    touch(entry);
    tell(`${entry.file.name}: cancelled`, "cancelled");
    hooks.settled(entry);
    return;
  }
  setState(entry, "failed");
  // The request it was, where the message does not name it.
  const last = entry.lastRequest;
  const request = last && last.url && !text.includes(withoutQuery(last.url)) ? `${last.method} ${withoutQuery(last.url)}` : "";
  entry.error = { code, text, status, reason, request, seq: ++errorSeq };
  touch(entry);
  tell(`${entry.file.name}: failed, ${code}${reason ? `, ${reason}` : ""}`, "failed");
  hooks.settled(entry);
}

// Screen readers hear of each file while a few run, and of a larger batch once, when it ends
// (a thousand announcements would drown the page). ending: how the upload ended, or null.
let batch = { done: 0, failed: 0, cancelled: 0 };
function tell(text, ending) {
  if (ending) batch[ending]++;
  const live = liveCount();
  const ended = batch.done + batch.failed + batch.cancelled;
  if (live + ended <= 12) announce(text);
  else if (live === 0) announce(`All ${ended} uploads ended: ${batch.done} uploaded, ${batch.failed} failed, ${batch.cancelled} cancelled.`);
  if (live === 0) batch = { done: 0, failed: 0, cancelled: 0 };
}

/** Whether any upload of the page is under way or waiting its turn (a reload would interrupt it). */
export const uploading = () => liveCount() > 0;
