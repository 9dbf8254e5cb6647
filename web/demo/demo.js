// The mediaupload demo page: plain JS, no build step. It loads the module the
// way any site would and drives one upload per file, drawing a progress row,
// a request log and an md5 check for each.
import { load } from "/dist/mediaupload.js";

const $ = (sel, root = document) => root.querySelector(sel);

// ---------------------------------------------------------------- settings

// The serve command describes its targets at /api/config; these defaults
// match it, so the page still works when served some other way.
let config = {
  bucket: "demo",
  targets: {
    ref: { upload: "/ref/upload/storage/v1/b/demo/o", objects: "/ref/_ref/objects", faults: "/ref/_ref/faults" },
    gcs: { upload: "/upload/storage/v1/b/demo/o", objects: "/storage/v1/b/demo/o" },
  },
};

const targetNames = { ref: "the reference server", gcs: "fake-gcs-server", custom: "the custom target" };

function settings() {
  return {
    target: $("input[name=target]:checked").value,
    customURL: $("#customURL").value.trim(),
    token: $("#customToken").value.trim(),
    uploadType: $("#uploadType").value,
    // "" is the module's default (sized to the link as it goes, where the module does that).
    chunkSize: $("#chunkSize").value === "" ? undefined : Number($("#chunkSize").value),
    checksum: $("#checksum").value,
    fastRetry: $("#retry").value === "fast",
    statusEachChunk: $("#statusEachChunk").checked,
    no308: $("#no308").checked,
    flaky: $("#flaky").checked,
    seed: Number($("#seed").value) || 0,
  };
}

function uploadURL(s, name) {
  if (s.target === "custom") {
    const u = s.customURL;
    // GCS takes the object name from the query for media uploads; add it
    // when the user's URL is GCS shaped and has none.
    if (/\/upload\/storage\/v1\/b\/[^/]+\/o\/?(\?|$)/.test(u) && !/[?&]name=/.test(u)) {
      return u + (u.includes("?") ? "&" : "?") + "name=" + encodeURIComponent(name);
    }
    return u;
  }
  return location.origin + config.targets[s.target].upload + "?name=" + encodeURIComponent(name);
}

/** Where uploads go, and which bucket names each target takes: the reference server any. */
function targetInfo(target) {
  const b = config.bucket;
  const code = (text) => Object.assign(document.createElement("code"), { textContent: text });
  switch (target) {
    case "ref":
      return ["Uploads go to ", code(config.targets.ref.upload), ". The reference server takes any bucket name there (…/b/ANY/o): it keeps no list of buckets, and the table below lists all it holds."];
    case "gcs":
      return ["Uploads go to ", code(config.targets.gcs.upload), `. fake-gcs-server has one bucket, ${b}: any other is answered 404 (notFound), as Cloud Storage does.`];
    default:
      return ["Any upload URL, used as it is (a Cloud Storage one gets ", Object.assign(code("?name="), { className: "nowrap" }), " added). The local reference server takes any bucket name: ", code(`${location.origin}${config.targets.ref.upload.replace(`/b/${b}/`, "/b/ANY/")}`), "."];
  }
}

function refreshNote() {
  const s = settings();
  $("#custom").hidden = s.target !== "custom";
  $("#storedOn").textContent = targetNames[s.target];
  $("#targetInfo").replaceChildren(...targetInfo(s.target));
  const notes = [];
  if (s.target === "gcs" && s.statusEachChunk) {
    notes.push("fake-gcs-server finishes the object when it receives a status query, so with this option it ends early with a short object (docs/protocol.md, section 7).");
  }
  if (s.target === "gcs" && !s.no308) {
    notes.push("Without X-GUploader-No-308 the server answers real 308s, which Firefox's fetch does not hand over: the module then asks with a status query, and fake-gcs-server finishes the object on it (docs/protocol.md, sections 6 and 7).");
  }
  if (s.target !== "ref" && s.flaky) notes.push("The flaky network applies to the reference server only.");
  // A fixed small chunk costs a request (and, on a real server, a round trip) per chunk; the
  // emulator is slow per request: a 300 MiB file took 510 s in 256 KiB chunks, 21 s in 8 MiB.
  const small = s.uploadType !== "multipart" && s.uploadType !== "media" && s.chunkSize > 0 && s.chunkSize < 8 << 20;
  if (small && s.target === "gcs") {
    notes.push(`Slow: fake-gcs-server takes long over every request, and ${fmtBytes(s.chunkSize)} chunks make many (a 300 MiB file: 510 s in 256 KiB chunks, 21 s in 8 MiB). Pick "module default" unless small chunks are what you want to see.`);
  } else if (small && s.target === "custom") {
    notes.push(`Each ${fmtBytes(s.chunkSize)} chunk costs a round trip to the server: on a real API, larger chunks (or the module's default) are much faster.`);
  }
  if (s.target === "gcs" && s.checksum === "both") notes.push("fake-gcs-server ignores X-Goog-Hash; the module still compares the hashes in its answer.");
  $("#note").hidden = notes.length === 0;
  $("#note").textContent = notes.join(" ");
}

async function post(url, body, method = "POST") {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status}`);
}

// The reference server's seeded random fault mode: the same seed gives the
// same faults, so a run can be repeated. At 15 % some seeds draw no fault for a
// whole batch of small files: everyUpload gives each upload one early all the
// same (its first chunk, or a media or multipart upload's first try), so every
// row shows a retry or a resumed chunk (web/refserver/faults.go, Random).
async function syncFlaky() {
  const s = settings();
  const url = config.targets.ref.faults;
  try {
    if (s.flaky) await post(url, { random: { seed: s.seed, rate: 0.15, everyUpload: true } });
    else await post(url, undefined, "DELETE");
    document.body.dataset.flaky = s.flaky ? "on" : "off";
  } catch (e) {
    showNote(`Could not switch the flaky network: ${e.message}`);
  }
  refreshNote();
}

// The network speed's options: "rate" or "rate rtt", bytes per second and the round trip in ms
// (an emulated link).
const speedOf = (value) => {
  const [bytesPerSecond, rttMs = 0] = value.split(" ").map(Number);
  return { bytesPerSecond, rttMs };
};

async function syncSpeed() {
  try {
    await post("/api/throttle", speedOf($("#speed").value));
  } catch (e) {
    showNote(`Could not set the network speed: ${e.message}`);
  }
}

/**
 * Shows the speed the server has (it outlives the page): a reload must neither show another one
 * nor set one the user did not pick (Chromium and WebKit restore no select on a reload).
 */
async function showSpeed() {
  let now;
  try {
    const res = await fetch("/api/throttle", { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    now = await res.json();
  } catch {
    return void syncSpeed(); // served some other way: the page's choice it is
  }
  const select = $("#speed");
  let option = [...select.options].find((o) => {
    const s = speedOf(o.value);
    return s.bytesPerSecond === now.bytesPerSecond && s.rttMs === now.rttMs;
  });
  if (!option) {
    // Set some other way (a script posting to /api/throttle): shown as it is.
    const value = `${now.bytesPerSecond} ${now.rttMs}`;
    const rate = now.bytesPerSecond > 0 ? fmtRate(now.bytesPerSecond) : "unlimited";
    const text = `${rate}${now.rttMs ? `, ${now.rttMs} ms` : ""} (set elsewhere)`;
    option = new Option(text, value);
    select.append(option);
  }
  select.value = option.value;
}

function showNote(text) {
  $("#note").hidden = false;
  $("#note").textContent = text;
}

// ---------------------------------------------------------------- formatting

function fmtBytes(n) {
  if (!Number.isFinite(n)) return "";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}

function fmtRate(bps) {
  if (!bps || !Number.isFinite(bps)) return "";
  const mb = bps / 1e6;
  return mb >= 1 ? `${mb.toFixed(mb < 10 ? 1 : 0)} MB/s` : `${(bps / 1e3).toFixed(0)} kB/s`;
}

/** A duration for people: "350 ms", "1.6 s", "12 s", "2:05". */
function fmtDuration(ms) {
  if (ms == null || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 10) return `${sec.toFixed(1)} s`;
  if (sec < 90) return `${Math.round(sec)} s`;
  const m = Math.floor(sec / 60), r = Math.round(sec % 60);
  return `${m}:${String(r).padStart(2, "0")}`;
}

function fmtLeft(sec) {
  if (sec == null || !Number.isFinite(sec)) return "";
  if (sec < 1) return "< 1 s left";
  if (sec < 90) return `${Math.round(sec)} s left`;
  const total = Math.round(sec), h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const mm = h > 0 ? `${h}:${String(m).padStart(2, "0")}` : String(m);
  return `${mm}:${String(s).padStart(2, "0")} left`;
}

/**
 * What a row says of a failure: the code, the status, the server's reason (Google's
 * error.errors[0].reason, "quotaExceeded") where there is one, and the module's message, which
 * is written for a person (docs/api.md, "Errors"). Never the raw responseText: a page of JSON
 * or HTML says less than the message, which names what the server said. (`reason` is newer
 * than the other fields: a module without it gives undefined, and the row goes without.)
 */
function fmtError(err) {
  if (err && typeof err === "object" && "code" in err) {
    return {
      code: String(err.code),
      text: String(err.message || ""),
      status: Number(err.status) || 0,
      reason: typeof err.reason === "string" ? err.reason : "",
    };
  }
  return { code: "error", text: String((err && err.message) || err), status: 0, reason: "" };
}

/** A URL as the row shows it: without its query (a session URI's is long, and a secret). */
function withoutQuery(url) {
  const i = url.search(/[?#]/);
  return i < 0 ? url : url.slice(0, i);
}

// ---------------------------------------------------------------- one upload

let mu = null;
let moduleReady;
const ready = new Promise((resolve) => { moduleReady = resolve; });
const entries = new Set();
const MAX_LOG = 500;
const LIVE = ["queued", "starting", "uploading", "retrying", "offline"];

/** Tells screen readers what happened to a file (the list itself is not read out on every change). */
function announce(text) {
  $("#announce").textContent = text;
}

/**
 * Adds a row and starts its upload. `file` is a File, or what the row shows of one: for a
 * stream { name, size: 0, type }, for an unfinished upload its record's name, size and type.
 * from says where the bytes come from, where not from `file` itself:
 *   stream      { make, again }: make() makes the ReadableStream to upload (again: it can be
 *               made anew for a retry)
 *   handle      the FileSystemFileHandle `file` was read from (the module keeps it with the
 *               session: after a reload the upload goes on without a picker)
 *   unfinished  an upload an earlier page left unfinished (mu.unfinished()), and picked: the
 *               file picked again for it, where the browser kept no handle
 */
function addFile(file, { stream = null, handle = null, unfinished = null, picked = null } = {}) {
  if (!stream && !unfinished && $("#gzip").checked) {
    // Compressed as it is read: the upload's length is known only at the end.
    const plain = file;
    file = { name: `${plain.name}.gz`, size: 0, type: "application/gzip", plain };
    stream = { make: () => plain.stream().pipeThrough(new CompressionStream("gzip")), again: true };
  }
  const row = $("#row").content.firstElementChild.cloneNode(true);
  row.dataset.name = file.name;
  $(".name", row).textContent = file.name;
  $(".name", row).title = file.name;
  $(".size", row).textContent = stream ? (file.plain ? `from ${fmtBytes(file.plain.size)}` : "recording") : fmtBytes(file.size);
  $(".bar", row).setAttribute("aria-label", `${file.name} uploaded`);
  $(".log-wrap", row).setAttribute("aria-label", `Requests for ${file.name}`);
  for (const [cls, verb] of [["pause", "Pause"], ["resume", "Resume"], ["cancel", "Cancel"]]) {
    $(`.${cls}`, row).setAttribute("aria-label", `${verb} ${file.name}`);
  }
  $("#uploads").append(row);
  $("#empty").hidden = true;

  const entry = {
    file, row, up: null, t0: performance.now(), loaded: 0, confirmed: 0, requests: 0,
    stream, handle, unfinished, picked,
    total: stream ? 0 : file.size, // a stream's length, once it has ended
  };
  entries.add(entry);
  $(".pause", row).onclick = () => entry.up && entry.up.pause();
  $(".resume", row).onclick = () => {
    // A failed unfinished upload is tried again the way it began (its record knows the session).
    if (entry.row.dataset.state === "failed") start(entry, entry.unfinished ? undefined : entry.lastSessionURL);
    else if (entry.up) entry.up.resume();
  };
  $(".cancel", row).onclick = () => entry.up && entry.up.abort();
  // Opened, the log shows the newest requests first in view.
  $(".log", row).addEventListener("toggle", (e) => {
    if (e.target.open) $(".log-wrap", row).scrollTop = $(".log-wrap", row).scrollHeight;
  });
  start(entry);
}

function start(entry, sessionURL) {
  if (!mu) {
    // Files picked while the module is still loading wait for it.
    ready.then(() => start(entry, sessionURL));
    return;
  }
  const s = settings();
  const { file, row } = entry;
  entry.settings = s;
  showUnfinished(); // an unfinished upload this one goes on with gives way to its row
  entry.firstRequest = true;
  entry.lastRequest = entry.lastChunk = null;
  setState(entry, "starting");
  $(".error", row).hidden = true;
  $(".notice", row).hidden = true;
  $(".md5", row).textContent = "";
  $(".md5", row).className = "md5 muted";
  delete row.dataset.md5;

  if (s.target === "custom" && !s.customURL) {
    fail(entry, { code: "invalid_argument", message: "enter the custom target's upload URL first", status: 0 });
    return;
  }

  // A stream goes resumable whatever the setting (its length is not known up front), and is
  // not remembered for a reload (it cannot be read again from the start). An unfinished upload
  // is a resumable one by nature.
  if (entry.stream || entry.unfinished) s.uploadType = "resumable";
  const resumable = (s.uploadType === "resumable" || s.uploadType === "auto") && !entry.stream;
  const opts = {
    url: uploadURL(s, file.name),
    method: "POST",
    uploadType: s.uploadType,
    queryStatusEachChunk: s.statusEachChunk,
    noRedirect308: s.no308,
    // A reload (or a closed tab) does not lose the work: the session is remembered in the
    // browser, and the same file picked again goes on from what the server holds.
    resume: resumable && !sessionURL,
    onProgress: (p) => progress(entry, p),
    onRetry: (r) => retryLine(entry, r),
    onStateChange: (st) => setState(entry, st),
    onRequest: (r) => requestLine(entry, r),
  };
  if (s.chunkSize !== undefined && !(entry.stream && s.chunkSize === 0)) opts.chunkSize = s.chunkSize;
  // A media upload has no room for metadata: its name travels in the URL.
  if (s.uploadType !== "media") opts.metadata = { name: file.name };
  if (file.type) opts.contentType = file.type;
  // The module hashes what it sends, streams too, and compares with the server's hashes: the
  // row's md5 check is its verdict (a mismatch fails the upload: checksum_mismatch).
  opts.checksum = s.checksum === "both" ? "both" : "md5";
  if (s.fastRetry) opts.retry = { retries: 8, initialDelayMs: 200, maxDelayMs: 3000, jitterMs: 200 };
  if (s.target === "custom" && s.token) {
    // getHeaders is asked again after a 401: a real page would refresh its token here.
    opts.getHeaders = async () => ({ Authorization: `Bearer ${s.token}` });
  }
  if (sessionURL) opts.sessionURL = sessionURL;

  let up;
  try {
    if (entry.unfinished) {
      // Where it goes (url, method) and resume are the record's.
      const { url, method, resume, ...rest } = opts;
      up = entry.unfinished.resume(entry.picked ? { ...rest, file: entry.picked } : rest);
    } else {
      up = mu.upload(entry.stream ? entry.stream.make() : entry.handle && opts.resume ? entry.handle : file, opts);
    }
  } catch (err) {
    // The API promises not to throw; show it in the row all the same.
    fail(entry, err);
    return;
  }
  entry.up = up;
  up.promise.then(
    (res) => done(entry, res),
    (err) => fail(entry, err),
  );
}

function setState(entry, state) {
  const row = entry.row;
  const before = row.dataset.state;
  row.dataset.state = state;
  $(".state", row).textContent = state === "aborted" ? "cancelled" : state;
  const live = LIVE.includes(state);
  $(".pause", row).disabled = !live;
  const retryable = entry.unfinished || (entry.lastSessionURL && (!entry.stream || entry.stream.again));
  $(".resume", row).disabled = !(state === "paused" || (state === "failed" && retryable));
  $(".resume", row).textContent = state === "failed" ? "Retry" : "Resume";
  $(".resume", row).setAttribute("aria-label", `${state === "failed" ? "Retry" : "Resume"} ${entry.file.name}`);
  $(".cancel", row).disabled = !(live || state === "paused");
  if (!live) {
    $(".rate", row).textContent = "";
    $(".eta", row).textContent = "";
  } else {
    drawEstimate(entry);
  }
  if (state === "paused") announce(`${entry.file.name}: paused`);
}

function drawBar(entry, loaded, confirmed, total, finished = false) {
  const row = entry.row;
  // A finished upload is whole, whatever its size: a 0-byte file too.
  const pct = finished ? 100 : total > 0 ? Math.min(100, (Math.max(loaded, confirmed) / total) * 100) : 0;
  const cpct = finished ? 100 : total > 0 ? Math.min(100, (confirmed / total) * 100) : 0;
  $(".fill", row).style.width = `${pct}%`;
  $(".confirmed", row).style.width = `${cpct}%`;
  $(".bar", row).setAttribute("aria-valuenow", String(Math.floor(pct)));
  $(".bar", row).setAttribute("aria-valuetext", `${Math.floor(pct)} %, ${fmtBytes(confirmed)} of ${fmtBytes(total)} confirmed`);
  if (entry.stream && !finished && total === 0) {
    // A stream's length is known at its end only: bytes, no percentage.
    $(".pct", row).textContent = "…";
    $(".bytes", row).textContent = `sent ${fmtBytes(loaded)} · confirmed ${fmtBytes(confirmed)} so far`;
    return;
  }
  $(".pct", row).textContent = `${Math.floor(pct)} %`;
  $(".bytes", row).textContent = `sent ${fmtBytes(loaded)} · confirmed ${fmtBytes(confirmed)} of ${fmtBytes(total)}`;
}

/**
 * The rate and the time left as the module reports them (progress: bytesPerSecond, secondsLeft:
 * the link's, pauses and a resumed session's bytes left out), or "estimating…" before it has
 * measured any.
 */
function drawEstimate(entry) {
  const row = entry.row;
  if (row.dataset.state !== "uploading") {
    // Waiting (starting, a retry wait, offline): no rate is being made, none is shown.
    $(".rate", row).textContent = "";
    $(".eta", row).textContent = "";
    return;
  }
  const p = entry.progress;
  if (!p || !(p.bytesPerSecond > 0)) {
    $(".rate", row).textContent = "";
    $(".eta", row).textContent = entry.total > 0 ? "estimating…" : "";
    return;
  }
  $(".rate", row).textContent = fmtRate(p.bytesPerSecond);
  $(".eta", row).textContent = entry.total > 0 && p.secondsLeft != null ? fmtLeft(p.secondsLeft) : "";
}

function progress(entry, p) {
  entry.progress = p; // its bytesPerSecond and secondsLeft: drawEstimate
  if (p.total > 0) entry.total = p.total; // a stream's, once it has ended
  const total = entry.total;
  entry.loaded = Math.max(entry.loaded, p.loaded || 0);
  entry.confirmed = p.confirmed || 0;
  keptLine(entry, p.confirmed || 0);
  if (entry.resumedPending && entry.confirmed > 0) {
    // The first answer after a resumed session: what the server already held.
    entry.resumedPending = false;
    const el = $(".resumed", entry.row);
    el.hidden = false;
    el.textContent = `resumed at ${fmtBytes(entry.confirmed)}`;
    entry.row.dataset.resumedAt = String(entry.confirmed);
  }
  drawBar(entry, entry.loaded, entry.confirmed, total);
  drawEstimate(entry);
}

function logRow(entry, cells, cls) {
  const wrap = $(".log-wrap", entry.row);
  // Follow the newest request, unless the reader has scrolled up to look at older ones.
  const follow = !$(".log", entry.row).open || wrap.scrollHeight - wrap.scrollTop - wrap.clientHeight < 24;
  const tbody = $(".log tbody", entry.row);
  const tr = document.createElement("tr");
  if (cls) tr.className = cls;
  for (const [text, tdClass] of cells) {
    const td = document.createElement("td");
    td.textContent = text;
    if (tdClass) td.className = tdClass;
    tr.append(td);
  }
  tbody.append(tr);
  while (tbody.rows.length > MAX_LOG) tbody.deleteRow(0);
  if (follow) wrap.scrollTop = wrap.scrollHeight;
  return tr;
}

function since(entry) {
  return `+${((performance.now() - entry.t0) / 1000).toFixed(2)} s`;
}

/**
 * What a request's Content-Range says, for the log: the byte range, the chunk's size, and
 * whether it was a status query ("bytes *\/total", docs/protocol.md section 4).
 */
function describeRange(contentRange) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(contentRange || "");
  if (m) {
    const first = Number(m[1]), last = Number(m[2]);
    return { range: `${first}–${last}`, size: fmtBytes(last - first + 1), bytes: last - first + 1, query: false };
  }
  if (/^bytes \*\/(\d+|\*)$/.test(contentRange || "")) return { range: "status query", size: "", bytes: 0, query: true };
  // A final empty chunk of a stream, or a request without a range (the session start).
  return { range: contentRange || "—", size: "", bytes: 0, query: false };
}

/**
 * A partial keep: the server stored only the first part of a chunk and said so with a shorter
 * Range (docs/protocol.md, section 3); the module sends the rest from there. The request
 * report does not carry the Range, but the progress report right after the chunk's answer
 * does (its confirmed bytes): where that falls inside the chunk, the chunk's row says how much
 * was kept and where the next range starts.
 */
function keptLine(entry, confirmed) {
  const chunk = entry.lastChunk;
  entry.lastChunk = null;
  if (!chunk || confirmed < chunk.first || confirmed > chunk.last) return;
  const kept = confirmed - chunk.first;
  const size = chunk.last - chunk.first + 1;
  chunk.td.textContent = `${chunk.td.textContent} · kept ${kept} of ${size} bytes`;
  chunk.td.className = "status partial";
  chunk.td.title = `The server stored bytes up to ${confirmed - 1} only (a shorter Range): the next chunk starts at byte ${confirmed}.`;
  chunk.td.parentElement.classList.add("partial");
  entry.kept = (entry.kept || 0) + 1;
  drawFaults(entry);
}

/** What the network did to the upload, at a glance (the log has each one): "2 retries · 1 chunk partly kept". */
function drawFaults(entry) {
  const n = (count, one, many) => (count ? [`${count} ${count === 1 ? one : many}`] : []);
  const parts = [
    ...n(entry.retries || 0, "retry", "retries"),
    ...n(entry.restarts || 0, "new session", "new sessions"),
    ...n(entry.kept || 0, "chunk partly kept", "chunks partly kept"),
  ];
  const el = $(".faults", entry.row);
  el.hidden = parts.length === 0;
  el.textContent = parts.join(" · ");
}

function requestLine(entry, r) {
  entry.requests++;
  entry.lastChunk = null;
  entry.lastRequest = { method: r.method || "", url: r.url || "" };
  $(".log .count", entry.row).textContent = String(entry.requests);
  const range = describeRange(r.contentRange);
  // A session that starts with a status query was remembered: it goes on where it was.
  if (entry.firstRequest && range.query) entry.resumedPending = true;
  entry.firstRequest = false;
  const status = r.error ? (r.status ? `${r.status} ${r.error}` : r.error) : String(r.status);
  const cls = r.error || r.status >= 400 ? "status bad" : r.status === 200 || r.status === 201 ? "status ok" : "status";
  const tr = logRow(entry, [
    [since(entry)],
    [r.method || ""],
    [range.range],
    [range.size, "num"],
    [status, cls],
    [r.ms == null ? "" : String(Math.round(r.ms)), "num"],
  ]);
  // An answered chunk (a 308, or its X-GUploader-No-308 form, a 200): the progress report that
  // follows tells what the server kept of it.
  const m = /^bytes (\d+)-(\d+)\//.exec(r.contentRange || "");
  if (m && !r.error && (r.status === 308 || r.status === 200)) {
    entry.lastChunk = { first: Number(m[1]), last: Number(m[2]), td: tr.cells[4] };
  }
  drawEstimate(entry);
}

function retryLine(entry, r) {
  const why = r.status ? `after ${r.status}` : r.error ? `after ${r.error}` : "";
  if (r.restart) {
    // The session was lost (404/410): the module starts a new one from byte 0.
    logRow(entry, [[since(entry)], ["restart"], [`new session in ${fmtDuration(r.delayMs)}`], [""], [why, "status"], [""]], "retry");
    announce(`${entry.file.name}: the server lost the session; starting over`);
    entry.restarts = (entry.restarts || 0) + 1;
    drawFaults(entry);
    return;
  }
  logRow(entry, [[since(entry)], ["retry"], [`#${r.attempt} in ${fmtDuration(r.delayMs)}`], [""], [why, "status"], [""]], "retry");
  entry.retries = (entry.retries || 0) + 1;
  drawFaults(entry);
}

async function done(entry, res) {
  const { row, file } = entry;
  setState(entry, "done");
  refreshUnfinished();
  const size = entry.stream ? Math.max(entry.total, entry.loaded) : file.size;
  if (entry.stream) $(".size", row).textContent = fmtBytes(size);
  drawBar(entry, size, size, size, true);
  $(".eta", row).textContent = "";
  announce(`${file.name}: uploaded`);
  const meta = res && res.metadata;
  $(".meta", row).hidden = false;
  $(".meta pre", row).textContent = meta ? JSON.stringify(meta, null, 2) : (res && res.body) || "(empty answer)";
  refreshObjects();

  // The module compared what it sent with the server's hashes (opts.checksum): a mismatch
  // would have failed the upload with checksum_mismatch.
  row.dataset.md5 = "match";
  $(".md5", row).className = "md5 match";
  const hash = meta && (meta.md5Hash || meta.md5Checksum);
  $(".md5", row).textContent = `md5 ✓ match${hash ? ` (${hash})` : ""}${file.plain ? ", of the compressed bytes" : ""}`;
}

function fail(entry, err) {
  const row = entry.row;
  const { code, text, status, reason } = fmtError(err);
  refreshUnfinished();
  if (err && err.sessionURL) entry.lastSessionURL = err.sessionURL;
  $(".rate", row).textContent = "";
  $(".eta", row).textContent = "";
  if (code === "aborted") {
    // The user's own choice: said plainly, not as an error.
    setState(entry, "aborted");
    const n = $(".notice", row);
    n.hidden = false;
    n.textContent = entry.stream && !entry.total
      ? `Cancelled at ${fmtBytes(entry.confirmed)}; nothing more is sent.`
      : `Cancelled at ${fmtBytes(entry.confirmed)} of ${fmtBytes(entry.total)}; nothing more is sent.`;
    announce(`${entry.file.name}: cancelled`);
    refreshObjects();
    return;
  }
  setState(entry, "failed");
  const box = $(".error", row);
  box.hidden = false;
  const el = (tag, cls, content) => {
    const e = document.createElement(tag);
    e.className = cls;
    e.textContent = content;
    return e;
  };
  // One line to scan (the code, the status, the server's reason), then the message.
  const head = el("p", "error-head", "");
  head.append(el("code", "error-code", code));
  if (status) head.append(" ", el("span", "error-status", `HTTP ${status}`));
  if (reason) {
    const r = el("span", "error-reason", reason);
    r.title = "the server's reason (error.errors[0].reason of its JSON error)";
    head.append(" ", r);
  }
  const message = el("p", "error-message", text);
  // The request it was, where the message does not name it (a module older than the one
  // whose messages do).
  const last = entry.lastRequest;
  if (last && last.url && !text.includes(withoutQuery(last.url))) {
    message.append(" ", el("span", "error-url", `(${last.method} ${withoutQuery(last.url)})`));
  }
  box.replaceChildren(head, message);
  announce(`${entry.file.name}: failed, ${code}${reason ? `, ${reason}` : ""}`);
  refreshObjects();
}

// ---------------------------------------------------------------- unfinished uploads

// The uploads an earlier page left unfinished (mu.unfinished(), docs/api.md "Unfinished
// uploads"): each with what its server holds, and Resume (the browser kept a handle to the
// file), Pick again (it did not: the same file, picked, goes on), or Forget. Asked when the
// page loads and again whenever an upload here settles. One this page uploads is not listed:
// its own row shows it, from the moment it starts (the same file picked or dropped again goes
// on with the record) until it ends.
let unfinishedAsked = null;
function refreshUnfinished() {
  clearTimeout(unfinishedAsked);
  unfinishedAsked = setTimeout(drawUnfinished, 100);
}

/** Whether the upload of entry is the one u records (same url and file). */
const sameUpload = (entry, u) =>
  entry.file.name === u.name && entry.file.size === u.size &&
  (entry.file.lastModified === undefined || entry.file.lastModified === u.lastModified) &&
  entry.settings && uploadURL(entry.settings, entry.file.name) === u.url;

let unfinishedList = []; // the last answer of mu.unfinished()

async function drawUnfinished() {
  if (!mu) return;
  try {
    unfinishedList = await mu.unfinished();
  } catch (e) {
    showNote(`Could not list the unfinished uploads: ${e.message}`);
    return;
  }
  showUnfinished();
}

/** Lists the unfinished uploads of the last answer that no row of this page uploads. */
function showUnfinished() {
  // Those with a row here (running, or failed with its Retry) are in the Uploads list already.
  const list = unfinishedList.filter((u) => ![...entries].some((e) => e.unfinished?.key === u.key || sameUpload(e, u)));
  $("#unfinishedList").replaceChildren(...list.map(unfinishedRow));
  $("#unfinished").hidden = list.length === 0;
  $("#empty").textContent = list.length && entries.size === 0 ? "Nothing yet on this page: the uploads an earlier visit left unfinished are listed above." : "Nothing yet.";
  document.body.dataset.unfinished = String(list.length);
}

function unfinishedRow(u) {
  const li = $("#unfinishedRow").content.firstElementChild.cloneNode(true);
  li.dataset.name = u.name;
  $(".name", li).textContent = u.name;
  $(".name", li).title = u.name;
  $(".size", li).textContent = fmtBytes(u.size);
  const pct = u.confirmed == null || !u.size ? null : Math.floor((u.confirmed / u.size) * 100);
  $(".held", li).textContent = u.confirmed == null ? "server not reachable" : `${pct} % on the server`;
  $(".bar", li).setAttribute("aria-label", `${u.name}: held by the server`);
  $(".bar", li).setAttribute("aria-valuenow", String(pct ?? 0));
  $(".bar .confirmed", li).style.width = `${pct ?? 0}%`;
  const ago = fmtDuration(Date.now() - u.touchedAt);
  $(".when", li).textContent = `started ${new Date(u.startedAt).toLocaleString()} · last moved ${ago} ago${u.confirmed == null ? "" : ` · ${fmtBytes(u.confirmed)} of ${fmtBytes(u.size)} held`}`;
  $(".how", li).textContent = u.running
    ? "uploading in another tab: Resume here waits for it, showing its progress"
    : u.canResume ? "this browser kept the file: no need to pick it again" : "pick the same file again to go on";
  const go = $(".go", li);
  const pick = $(".pick", li);
  go.hidden = !u.canResume;
  pick.hidden = u.canResume;
  go.setAttribute("aria-label", `Resume ${u.name}`);
  pick.setAttribute("aria-label", `Pick ${u.name} again`);
  $(".forget", li).setAttribute("aria-label", `Forget ${u.name}`);
  // Its row gives way to the upload's own (start: showUnfinished).
  const goOn = (picked) => addFile({ name: u.name, size: u.size, type: u.type }, { unfinished: u, picked });
  // From the click itself: the browser may ask for permission to read the file again.
  go.onclick = () => goOn(null);
  const input = $("input", pick);
  input.onchange = () => input.files[0] && goOn(input.files[0]);
  $(".forget", li).onclick = async () => {
    await u.forget();
    announce(`${u.name}: forgotten`);
    drawUnfinished();
  };
  return li;
}

// ---------------------------------------------------------------- picking with handles

// Where the browser has them (Chromium: showOpenFilePicker, a drop's getAsFileSystemHandle),
// files are taken as FileSystemFileHandles: the module keeps the handle with the session, so
// that after a reload the upload goes on with Resume, no picker. Elsewhere, Files.
const pickerHandles = typeof window.showOpenFilePicker === "function";

/** The picked handles uploaded: each with its File, for the row. */
async function addHandles(handles) {
  for (const h of handles) {
    try {
      addFile(await h.getFile(), { handle: h });
    } catch (e) {
      showNote(`Could not read ${h.name}: ${e.message}`);
    }
  }
}

/**
 * The click on the drop zone: showOpenFilePicker where there is one (a cancel is nothing),
 * and the file input's own picker where there is none or it refuses (a cross-origin frame).
 */
function pickFiles(e) {
  if (typeof window.showOpenFilePicker !== "function") return;
  e.preventDefault();
  window.showOpenFilePicker({ multiple: true }).then(addHandles, (err) => {
    if (err?.name === "AbortError") return;
    const input = $("#files");
    input.addEventListener("click", (ev) => ev.stopImmediatePropagation(), { once: true, capture: true });
    input.click();
  });
}

/** What a drop holds: handles where the browser gives them (asked at once: only during the event), else Files. */
function dropped(dataTransfer) {
  const items = [...dataTransfer.items].filter((i) => i.kind === "file");
  const files = [...dataTransfer.files];
  if (!items.length || typeof items[0].getAsFileSystemHandle !== "function") return void files.forEach((f) => addFile(f));
  const asked = items.map((i) => i.getAsFileSystemHandle().catch(() => null));
  Promise.all(asked).then((handles) => {
    handles.forEach((h, i) => {
      if (h?.kind === "file") addHandles([h]);
      else if (files[i] && !h) addFile(files[i]); // no handle for it: its File
      // a folder: not uploaded
    });
  });
}

// ---------------------------------------------------------------- stored objects

let refreshing = null;
function refreshObjects() {
  clearTimeout(refreshing);
  refreshing = setTimeout(loadObjects, 150);
}

async function loadObjects() {
  const s = settings();
  const tbody = $("#objects tbody");
  const note = $("#objectsNote");
  if (s.target === "custom") {
    tbody.replaceChildren();
    $("#objects").hidden = true;
    note.textContent = "Objects of a custom target are not listed here.";
    return;
  }
  let list = [];
  try {
    const res = await fetch(config.targets[s.target].objects, { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const data = await res.json();
    list = Array.isArray(data) ? data : data.items || [];
  } catch (e) {
    note.textContent = `Could not list the objects: ${e.message}`;
    return;
  }
  tbody.replaceChildren(...list.map((o) => {
    const tr = document.createElement("tr");
    const href = s.target === "ref"
      ? `${config.targets.ref.objects}/${encodeURIComponent(o.name)}`
      : `${config.targets.gcs.objects}/${encodeURIComponent(o.name)}?alt=media`;
    const a = document.createElement("a");
    a.href = href;
    a.textContent = "download";
    a.setAttribute("download", o.name);
    // The reference server keeps objects of any bucket: those not in the page's are named
    // with theirs.
    const shown = o.bucket && o.bucket !== config.bucket ? `${o.bucket}/${o.name}` : o.name;
    const cells = [shown, fmtBytes(Number(o.size)), o.md5Hash || ""];
    cells.forEach((t, i) => {
      const td = document.createElement("td");
      td.textContent = t;
      if (i === 0) td.title = shown;
      if (i === 2) td.className = "md5col";
      tr.append(td);
    });
    const td = document.createElement("td");
    td.append(a);
    tr.append(td);
    return tr;
  }));
  $("#objects").hidden = list.length === 0;
  note.textContent = list.length ? "" : "No objects yet.";
}

// ---------------------------------------------------------------- wiring

function wire() {
  const input = $("#files");
  input.addEventListener("change", () => {
    for (const f of input.files) addFile(f);
    input.value = "";
  });
  input.addEventListener("click", pickFiles);
  if (pickerHandles) $("#handleHint").textContent = "this browser keeps the files picked or dropped here: Resume needs no picker";
  const drop = $("#drop");
  for (const t of ["dragenter", "dragover"]) {
    drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add("over"); });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    dropped(e.dataTransfer);
  });
  // Leaving while uploads run asks first. Nothing is lost if the user goes all the same (the
  // sessions are remembered: the same files picked again go on), but it is worth a question.
  window.addEventListener("beforeunload", (e) => {
    if ([...entries].some((x) => LIVE.includes(x.row.dataset.state))) {
      e.preventDefault();
      e.returnValue = ""; // older browsers ask only when this is set
    }
  });
  // A file dropped beside the zone must not make the browser navigate away.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());

  for (const el of document.querySelectorAll("input[name=target]")) {
    el.addEventListener("change", () => { refreshNote(); loadObjects(); });
  }
  for (const id of ["#statusEachChunk", "#no308", "#checksum", "#customURL", "#chunkSize", "#uploadType"]) $(id).addEventListener("change", refreshNote);
  $("#flaky").addEventListener("change", syncFlaky);
  $("#record").addEventListener("click", toggleRecording);
  $("#seed").addEventListener("change", () => settings().flaky && syncFlaky());
  $("#speed").addEventListener("change", syncSpeed);
  $("#refresh").addEventListener("click", loadObjects);
  $("#clear").addEventListener("click", () => {
    for (const e of entries) {
      if (["done", "failed", "aborted"].includes(e.row.dataset.state)) {
        e.row.remove();
        entries.delete(e);
      }
    }
    $("#empty").hidden = entries.size > 0;
    refreshUnfinished(); // a failed upload cleared away is listed there again
  });
}

async function main() {
  try {
    const res = await fetch("/api/config", { cache: "no-store" });
    if (res.ok) config = await res.json();
  } catch {
    // served without the serve command: keep the defaults
  }
  wire();
  refreshNote();
  // Browsers restore form fields on reload (some of them, some fields): the flaky network is
  // made to agree with the page, and the page with the server's network speed.
  await Promise.all([syncFlaky(), showSpeed()]);
  loadObjects();
  try {
    mu = await load();
  } catch (err) {
    const { code, text } = fmtError(err);
    const banner = $("#banner");
    banner.hidden = false;
    banner.textContent = `The module did not load — ${code}: ${text}. Is dist/ built? Run ./build.sh serve.`;
    document.body.dataset.ready = "error";
    return;
  }
  $("#version").textContent = `Module ${mu.version}.`;
  await drawUnfinished();
  document.body.dataset.ready = "yes";
  moduleReady();
}

// ---------------------------------------------------------------- recording

let recording = null; // { recorder, tracks, stopDrawing }

/** Starts a recording uploaded while it is made, or stops the one running. */
async function toggleRecording() {
  const button = $("#record");
  if (recording) {
    recording.recorder.stop();
    return;
  }
  let media = null;
  let stopDrawing = () => {};
  try {
    media = await navigator.mediaDevices.getUserMedia({ video: true, audio: false });
  } catch {
    // No camera (or no permission): a moving test pattern, drawn here.
    const canvas = Object.assign(document.createElement("canvas"), { width: 640, height: 360 });
    const g = canvas.getContext("2d");
    const t0 = performance.now();
    const timer = setInterval(() => {
      const t = (performance.now() - t0) / 1000;
      g.fillStyle = `hsl(${(t * 60) % 360} 70% 45%)`;
      g.fillRect(0, 0, 640, 360);
      g.fillStyle = "#fff";
      g.font = "32px sans-serif";
      g.fillText(`mediaupload test pattern ${t.toFixed(1)} s`, 40, 80 + 200 * Math.abs(Math.sin(t)));
    }, 33);
    stopDrawing = () => clearInterval(timer);
    media = canvas.captureStream(30);
  }
  const recorder = new MediaRecorder(media, { mimeType: MediaRecorder.isTypeSupported("video/webm") ? "video/webm" : "" });
  const { readable, writable } = new TransformStream();
  const writer = writable.getWriter();
  let written = Promise.resolve();
  recorder.ondataavailable = (e) => {
    written = written.then(async () => writer.write(new Uint8Array(await e.data.arrayBuffer())));
  };
  recorder.onstop = () => {
    stopDrawing();
    for (const t of media.getTracks()) t.stop();
    written.then(() => writer.close(), (err) => writer.abort(err));
    recording = null;
    button.textContent = "● Record";
    button.setAttribute("aria-pressed", "false");
  };
  const stamp = new Date().toISOString().slice(11, 19).replaceAll(":", "");
  const type = (recorder.mimeType || "video/webm").split(";")[0];
  const made = { make: () => readable, again: false };
  addFile({ name: `recording-${stamp}.webm`, size: 0, type }, { stream: made });
  recorder.start(1000);
  recording = { recorder };
  button.textContent = "■ Stop recording";
  button.setAttribute("aria-pressed", "true");
}

// For the curious, and for the end-to-end tests.
window.demo = { entries };

main();
