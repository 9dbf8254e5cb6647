// Drawing the uploads: the overall line, and a row per file (the #row template of
// index.html), from state.js.
//
// A thousand files dropped at once must not hold the page (the worst delay of a 10 ms timer
// stays under 50 ms): changes are drawn in batches, at most BUDGET_MS of work per task, the
// rest in the next; a row is made when it is first drawn; only what changed is written; and
// nothing here reads the layout, but for an open request log that follows its newest line.
// A finished row collapses to its name, its md5 check and its request log's summary (CSS:
// .file[data-state=done]), unless the user opened its log or its metadata; rows off screen are
// skipped by the browser's layout (content-visibility in demo.css).

import { fmtBytes, fmtCount, fmtDuration, fmtLeft, fmtRate } from "./format.js";
import { LIVE, dirty, entries, inState, liveCount, rate, totals, watchChanges } from "./state.js";

const $ = (sel, root = document) => root.querySelector(sel);

const BUDGET_MS = 6; // of drawing per task
const MAX_LOG = 500; // request log lines kept per row

let timer = null;
let actions = null; // { pause(entry), resume(entry), cancel(entry) }: uploads.js
const byID = new Map(); // row id -> entry

/** Starts drawing: actions are what the rows' buttons do. */
export function initRows(a) {
  actions = a;
  watchChanges(schedule);
  const list = $("#uploads");
  // One listener for every row's buttons and logs (a thousand rows, no thousand handlers).
  list.addEventListener("click", (ev) => {
    const button = ev.target.closest("button");
    const entry = button && byID.get(Number(button.closest("li.file")?.dataset.id));
    if (!entry) return;
    for (const verb of ["pause", "resume", "cancel"]) if (button.classList.contains(verb)) actions[verb](entry);
  });
  // "toggle" does not bubble: caught on its way down.
  list.addEventListener("toggle", (ev) => {
    const li = ev.target.closest?.("li.file");
    if (!li) return;
    // A row the user opened stays open once finished (its log, its metadata).
    li.classList.toggle("open", [...li.querySelectorAll("details")].some((d) => d.open));
    // Opened, the log shows the newest requests first in view.
    if (ev.target.classList.contains("log") && ev.target.open) {
      const wrap = $(".log-wrap", li);
      wrap.scrollTop = wrap.scrollHeight;
    }
  }, true);
  // The overall rate and time left move while uploads run, whatever else changes.
  setInterval(() => {
    if (liveCount() === 0) return;
    rate.sample();
    schedule();
  }, 500);
}

/** Draws what changed, soon. */
export function schedule() {
  if (timer === null) timer = setTimeout(flush, 30);
}

function flush() {
  timer = null;
  const end = performance.now() + BUDGET_MS;
  drawOverall();
  for (const entry of dirty) {
    dirty.delete(entry);
    draw(entry);
    if (performance.now() > end) break;
  }
  if (dirty.size) timer = setTimeout(flush, 0); // the rest in the next task
}

/** Tells screen readers what happened (the list itself is not read out on every change). */
export function announce(text) {
  $("#announce").textContent = text;
}

/** Takes the rows of entries away (they were cleared). */
export function removeRows(gone) {
  for (const e of gone) {
    e.row?.remove();
    byID.delete(e.id);
  }
  drawOverall();
}

// ---------------------------------------------------------------- the overall line

function drawOverall() {
  const box = $("#overall");
  $("#empty").hidden = entries.length > 0;
  box.hidden = entries.length === 0;
  if (box.hidden) return;
  const done = inState("done"), failed = inState("failed"), aborted = inState("aborted");
  const live = liveCount();
  Object.assign(box.dataset, { files: totals.files, done, failed, aborted, live });
  set($(".files", box), `${fmtCount(done)} of ${fmtCount(totals.files)} files done`);
  const others = [failed && `${fmtCount(failed)} failed`, aborted && `${fmtCount(aborted)} cancelled`].filter(Boolean).join(", ");
  set($(".others", box), others);
  set($(".bytes", box), `${fmtBytes(totals.sent)} of ${fmtBytes(totals.bytes)}`);
  const bps = live ? rate.bytesPerSecond() : 0;
  set($(".rate", box), bps > 0 ? fmtRate(bps) : "");
  set($(".remaining", box), bps > 0 ? fmtLeft((totals.bytes - totals.sent) / bps) : live ? "estimating…" : "");
  set($(".time", box), rate.began ? `${live ? "for" : "took"} ${fmtDuration((live ? performance.now() : rate.samples.at(-1)?.[0] ?? rate.began) - rate.began)}` : "");
  const pct = totals.bytes > 0 ? Math.min(100, (totals.sent / totals.bytes) * 100) : totals.files === done ? 100 : 0;
  $(".fill", box).style.transform = `scaleX(${pct / 100})`;
  attr($(".bar", box), "aria-valuenow", String(Math.floor(pct)));
}

// ---------------------------------------------------------------- one row

function makeRow(entry) {
  const row = $("#row").content.firstElementChild.cloneNode(true);
  const name = entry.file.name;
  row.dataset.id = String(entry.id);
  row.dataset.name = name;
  $(".name", row).textContent = name;
  $(".name", row).title = name;
  $(".bar", row).setAttribute("aria-label", `${name} uploaded`);
  $(".log-wrap", row).setAttribute("aria-label", `Requests for ${name}`);
  for (const [cls, verb] of [["pause", "Pause"], ["cancel", "Cancel"]]) $(`.${cls}`, row).setAttribute("aria-label", `${verb} ${name}`);
  $("#uploads").append(row);
  entry.row = row;
  byID.set(entry.id, entry);
  return row;
}

function draw(entry) {
  if (entry.removed) return; // cleared before it was drawn
  const row = entry.row ?? makeRow(entry);
  const { state, file } = entry;
  const live = LIVE.has(state);
  attr(row, "data-state", state);
  set($(".state", row), state === "aborted" ? "cancelled" : state);
  const f = entry.from;
  const size = f.stream
    ? entry.state === "done" ? fmtBytes(Math.max(entry.total, entry.loaded)) : file.plain ? `from ${fmtBytes(file.plain.size)}` : "recording"
    : fmtBytes(file.size);
  set($(".size", row), size);

  // The buttons: Pause while it runs, Resume when paused, Retry when it failed and can go on.
  const retryable = f.unfinished || (entry.lastSessionURL && (!f.stream || f.stream.again));
  const resume = $(".resume", row);
  $(".pause", row).disabled = !live;
  resume.disabled = !(state === "paused" || (state === "failed" && retryable));
  const verb = state === "failed" ? "Retry" : "Resume";
  set(resume, verb);
  attr(resume, "aria-label", `${verb} ${file.name}`);
  $(".cancel", row).disabled = !(live || state === "paused");

  drawBar(entry, row);
  drawEstimate(entry, row);
  if (entry.resumedAt != null) {
    const el = $(".resumed", row);
    el.hidden = false;
    set(el, `resumed at ${fmtBytes(entry.resumedAt)}`);
    attr(row, "data-resumed-at", String(entry.resumedAt));
  }
  drawFaults(entry, row);
  drawEnd(entry, row);
  drawLog(entry, row);
}

function drawBar(entry, row) {
  const finished = entry.state === "done";
  const { loaded, confirmed } = entry;
  const total = finished && entry.from.stream ? Math.max(entry.total, loaded) : entry.total;
  // A finished upload is whole, whatever its size: a 0-byte file too.
  const pct = finished ? 100 : total > 0 ? Math.min(100, (Math.max(loaded, confirmed) / total) * 100) : 0;
  const cpct = finished ? 100 : total > 0 ? Math.min(100, (confirmed / total) * 100) : 0;
  const sent = finished ? total : loaded, held = finished ? total : confirmed;
  $(".fill", row).style.transform = `scaleX(${pct / 100})`;
  $(".confirmed", row).style.transform = `scaleX(${cpct / 100})`;
  const bar = $(".bar", row);
  attr(bar, "aria-valuenow", String(Math.floor(pct)));
  attr(bar, "aria-valuetext", `${Math.floor(pct)} %, ${fmtBytes(held)} of ${fmtBytes(total)} confirmed`);
  if (entry.from.stream && !finished && total === 0) {
    // A stream's length is known at its end only: bytes, no percentage.
    set($(".pct", row), "…");
    set($(".bytes", row), `sent ${fmtBytes(sent)} · confirmed ${fmtBytes(held)} so far`);
    return;
  }
  set($(".pct", row), `${Math.floor(pct)} %`);
  set($(".bytes", row), `sent ${fmtBytes(sent)} · confirmed ${fmtBytes(held)} of ${fmtBytes(total)}`);
}

/**
 * The rate and the time left as the module reports them (progress: bytesPerSecond, secondsLeft:
 * the link's, pauses and a resumed session's bytes left out), or "estimating…" before it has
 * measured any. Nothing while the upload waits (queued, starting, a retry wait, offline).
 */
function drawEstimate(entry, row) {
  const p = entry.progress;
  let r = "", eta = "";
  if (entry.state === "uploading") {
    if (p && p.bytesPerSecond > 0) {
      r = fmtRate(p.bytesPerSecond);
      eta = entry.total > 0 && p.secondsLeft != null ? fmtLeft(p.secondsLeft) : "";
    } else if (entry.total > 0) eta = "estimating…";
  }
  set($(".rate", row), r);
  set($(".eta", row), eta);
}

/** What the network did to the upload, at a glance (the log has each one): "2 retries · 1 chunk partly kept". */
function drawFaults(entry, row) {
  const n = (count, one, many) => (count ? [`${count} ${count === 1 ? one : many}`] : []);
  const parts = [
    ...n(entry.retries, "retry", "retries"),
    ...n(entry.restarts, "new session", "new sessions"),
    ...n(entry.kept, "chunk partly kept", "chunks partly kept"),
  ];
  const el = $(".faults", row);
  el.hidden = parts.length === 0;
  set(el, parts.join(" · "));
}

/** The end of an upload: its md5 check, its error, the cancel's notice, the final metadata. */
function drawEnd(entry, row) {
  const md5 = $(".md5", row);
  if (entry.md5) {
    attr(row, "data-md5", entry.md5);
    attr(md5, "class", `md5 ${entry.md5}`);
  } else {
    row.removeAttribute("data-md5");
    attr(md5, "class", "md5 muted");
  }
  set(md5, entry.md5Text ?? "");

  const box = $(".error", row);
  box.hidden = !entry.error;
  if (entry.error && box.dataset.drawn !== String(entry.error.seq)) {
    box.dataset.drawn = String(entry.error.seq);
    box.replaceChildren(...errorLines(entry.error));
  }
  const notice = $(".notice", row);
  notice.hidden = !entry.notice;
  set(notice, entry.notice);
  const meta = $(".meta", row);
  meta.hidden = entry.meta == null;
  if (entry.meta != null) set($("pre", meta), entry.meta);
}

// One line to scan (the code, the status, the server's reason), then the message.
function errorLines({ code, status, reason, text, request }) {
  const el = (tag, cls, content) => Object.assign(document.createElement(tag), { className: cls, textContent: content });
  const head = el("p", "error-head", "");
  head.append(el("code", "error-code", code));
  if (status) head.append(" ", el("span", "error-status", `HTTP ${status}`));
  if (reason) {
    const r = el("span", "error-reason", reason);
    r.title = "the server's reason (error.errors[0].reason of its JSON error)";
    head.append(" ", r);
  }
  const message = el("p", "error-message", text);
  // The request it was, where the message does not name it.
  if (request) message.append(" ", el("span", "error-url", `(${request})`));
  return [head, message];
}

/** The request log: lines added since the last draw, lines edited (a partial keep). */
function drawLog(entry, row) {
  set($(".log .count", row), String(entry.requests));
  const details = $(".log", row);
  const tbody = $(".log tbody", row);
  let first = entry.log.length; // lines not drawn yet are the last ones
  while (first > 0 && !entry.log[first - 1].tr) first--;
  const fresh = entry.log.slice(first);
  if (fresh.length) {
    const wrap = $(".log-wrap", row);
    // Follow the newest request, unless the reader has scrolled up to look at older ones. (Read
    // only for an open log: it asks the browser for the layout.)
    const follow = details.open && wrap.scrollHeight - wrap.scrollTop - wrap.clientHeight < 24;
    for (const line of fresh) {
      const tr = document.createElement("tr");
      if (line.cls) tr.className = line.cls;
      for (const [text, cls] of line.cells) {
        const td = document.createElement("td");
        td.textContent = text;
        if (cls) td.className = cls;
        tr.append(td);
      }
      line.tr = tr;
      tbody.append(tr);
    }
    while (entry.log.length > MAX_LOG) entry.log.shift().tr.remove();
    if (follow) wrap.scrollTop = wrap.scrollHeight;
  }
  for (const line of entry.logEdits.splice(0)) {
    if (!line.tr) continue;
    if (line.cls) line.tr.className = line.cls;
    line.cells.forEach(([text, cls], i) => {
      const td = line.tr.cells[i];
      set(td, text);
      attr(td, "class", cls ?? "");
    });
    if (line.title) line.tr.cells[4].title = line.title;
  }
}

// Writes only what changed: a thousand rows drawn again cost no more than what moved.
function set(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function attr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
