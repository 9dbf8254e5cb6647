// One upload's row (the #row template of index.html), drawn from its entry in state.js: the
// name, size and state, the bar, the rate and time left, the buttons, the md5 check, the error,
// and the request log. Drawing writes only what changed since the last draw (a row drawn again
// costs what moved), and reads nothing of the layout but for an open request log that follows
// its newest line. A finished row collapses to its name, its md5 check and its summaries (CSS:
// .file[data-state=done]), unless the user opened its log or its metadata. Which rows are in the
// page, and when they are drawn, is list.js's.

import { fmtBytes, fmtLeft, fmtRate } from "./format.js";
import { $, attr, set } from "./page.js";
import { LIVE } from "./state.js";

const MAX_LOG = 500; // request log lines kept per row

/** Makes an entry's row (not in the page yet: list.js puts it there). */
export function makeRow(entry) {
  const row = $("#row").content.firstElementChild.cloneNode(true);
  const name = entry.file.name;
  row.dataset.id = String(entry.id);
  row.dataset.name = name;
  $(".name", row).textContent = name;
  $(".name", row).title = name;
  $(".bar", row).setAttribute("aria-label", `${name} uploaded`);
  $(".log-wrap", row).setAttribute("aria-label", `Requests for ${name}`);
  for (const [cls, verb] of [["pause", "Pause"], ["cancel", "Cancel"]]) $(`.${cls}`, row).setAttribute("aria-label", `${verb} ${name}`);
  entry.row = row;
  return row;
}

/** Draws an entry's row from its state: what changed since the last draw is written. */
export function draw(entry) {
  const row = entry.row;
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
