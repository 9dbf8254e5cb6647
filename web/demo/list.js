// The uploads list: which rows are in the page and when they are drawn, and the overall line
// over them (files done of all, bytes, rate, time left).
//
// A thousand files dropped at once must not hold the page (the worst delay of a 10 ms timer
// stays under 50 ms), so:
//   - changes are drawn in batches, at most SLICE_MS of work per task (page.js), the rest in
//     the next; only rows in the page are drawn, a row kept aside is drawn when it comes back;
//   - a long list is a window (windowing.js): only the rows near the screen are in the page;
//     the rest of the list's height is padding, made of each row's measured height (a
//     ResizeObserver) with the gap after it (demo.css), or the height of its kind of row for
//     a row not measured as it is now.
// A row is made when it first comes into the window, and kept (its open log, its scroll) when
// it leaves it.

import { fmtBytes, fmtCount, fmtDuration, fmtLeft, fmtRate } from "./format.js";
import { $, SLICE_MS, attr, set } from "./page.js";
import { draw, makeRow } from "./rows.js";
import { dirty, entries, inState, liveCount, rate, totals, watchChanges } from "./state.js";
import { SHORT, followScroll, windowOf } from "./windowing.js";

const FRAME_MS = 200; // between two drawings of what changed
const NEW_ROWS = 8; // rows made at most in one drawing
const SOON_MS = 20; // between two drawings that make rows (the browser lays out the last meanwhile)

let timer = null;
let drawingNow = false; // a drawing is asked for as soon as the task ends (a microtask)
const byID = new Map(); // row id -> entry, for the rows' buttons
const inPage = new Set(); // the entries whose rows are in the page
const measured = new Map(); // entry -> { h, kind }: its row's height with the gap after it, and the kind of row it was then

// The kinds of row, by what they show (demo.css): an upload under way (or a finished one the
// user opened) shows its bar, figures and buttons; a finished one collapses to a line or two;
// a failed one shows its error too.
const ROW = Object.freeze({ FULL: "full", COLLAPSED: "collapsed", FAILED: "failed" });
const typical = { [ROW.FULL]: 200, [ROW.COLLAPSED]: 90, [ROW.FAILED]: 240 }; // a kind's height until one is measured

/** Starts drawing the list; actions are what the rows' buttons do ({ pause, resume, cancel }). */
export function initList(actions) {
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
    const entry = li && byID.get(Number(li.dataset.id));
    if (!entry) return;
    // A row the user opened stays open once finished (its log, its metadata).
    entry.open = [...li.querySelectorAll("details")].some((d) => d.open);
    li.classList.toggle("open", entry.open);
    // Opened, the log shows the newest requests first in view.
    if (ev.target.classList.contains("log") && ev.target.open) {
      const wrap = $(".log-wrap", li);
      wrap.scrollTop = wrap.scrollHeight;
    }
  }, true);
  // The window follows the scroll, in the next frame.
  followScroll([window], () => entries.length > SHORT, () => placeRows());
  // The overall rate and time left move while uploads run, whatever else changes.
  setInterval(() => {
    if (liveCount() === 0) return;
    rate.sample();
    schedule();
  }, 500);
}

/**
 * Draws what changed, soon: within a fifth of a second (a row's figures need no more, and each
 * drawing costs the browser a frame's style, layout and paint), or sooner where rows are to be
 * made (files just added, a scroll).
 */
export function schedule(soon = false) {
  if (soon && entries.length <= SHORT && !drawingNow) {
    // A short list's new rows are in the page at the end of the task that made them.
    drawingNow = true;
    queueMicrotask(() => {
      drawingNow = false;
      clearTimeout(timer);
      flush();
    });
    return;
  }
  if (timer === null && !drawingNow) timer = setTimeout(flush, soon ? SOON_MS : FRAME_MS);
}

function flush() {
  timer = null;
  const end = performance.now() + SLICE_MS;
  placeRows(end); // first: it reads the layout, which nothing has changed yet in this task
  drawOverall();
  for (const entry of dirty) {
    dirty.delete(entry);
    if (inPage.has(entry)) draw(entry);
    else entry.stale = true; // drawn when its row comes into the page
    if (performance.now() > end) break;
  }
  if (dirty.size && timer === null) timer = setTimeout(flush, 0); // the rest in the next task
}

/** Tells screen readers what happened (the list itself is not read out on every change). */
export function announce(text) {
  $("#announce").textContent = text;
}

/** Takes the rows of entries away (they were cleared). */
export function removeRows(gone) {
  for (const e of gone) {
    e.row?.remove();
    if (e.row) sizes.unobserve(e.row);
    inPage.delete(e);
    measured.delete(e);
    byID.delete(e.id);
  }
  schedule();
}

// ---------------------------------------------------------------- the window

// Row heights as the browser lays them out, for the padding that stands for the rows not in
// the page.
const kindOf = (e) => ((e.state === "done" || e.state === "aborted") && !e.open ? ROW.COLLAPSED : e.state === "failed" ? ROW.FAILED : ROW.FULL);
const heightOf = (e) => {
  const m = measured.get(e);
  return m && m.kind === kindOf(e) ? m.h : typical[kindOf(e)];
};
let gap = null; // px after each row: its margin (demo.css, .uploads > li), read once
const sizes = new ResizeObserver((seen) => {
  let moved = false;
  for (const s of seen) {
    const entry = byID.get(Number(s.target.dataset.id));
    if (!entry || !inPage.has(entry)) continue;
    gap ??= parseFloat(getComputedStyle(s.target).marginBottom) || 0;
    const h = (s.borderBoxSize?.[0]?.blockSize ?? s.target.offsetHeight) + gap;
    const kind = kindOf(entry);
    if (Math.abs((measured.get(entry)?.h ?? 0) - h) > 0.5 || measured.get(entry)?.kind !== kind) moved = true;
    measured.set(entry, { h, kind });
    typical[kind] = h;
  }
  if (moved && entries.length > SHORT) schedule();
});

/**
 * Puts in the page the rows of the entries near the screen (all of a short list), in order.
 * New rows are made until `end` (a time): those left are made by the next flush, padding
 * standing for them meanwhile.
 */
function placeRows(end = Infinity) {
  const list = $("#uploads");
  // Where the screen's top is in the list's own coordinates (read for a long list only: it
  // asks the browser for the layout).
  const top = entries.length > SHORT ? -(list.getBoundingClientRect().top + parseFloat(list.style.paddingTop || "0")) : 0;
  let { first, last, above, below } = windowOf(entries.length, (i) => heightOf(entries[i]), top, innerHeight);
  // The rows made already, and new ones as the time allows, from the top: at most NEW_ROWS a
  // drawing, as the browser's first style and layout of a row cost more than making it (WebKit:
  // twenty new rows held the page 60-90 ms).
  let made = first, fresh = 0;
  while (made < last && (entries[made].row || (performance.now() < end && fresh++ < NEW_ROWS))) {
    const e = entries[made++];
    if (e.row) continue;
    makeRow(e);
    byID.set(e.id, e);
    draw(e);
  }
  if (made < last) {
    for (let i = made; i < last; i++) below += heightOf(entries[i]);
    last = made;
    schedule(true);
  }
  const want = entries.slice(first, last);
  const keep = new Set(want);
  for (const e of inPage) {
    if (keep.has(e)) continue;
    e.row.remove();
    sizes.unobserve(e.row);
    inPage.delete(e);
  }
  // In order, moving only the rows not where they belong.
  let at = list.firstElementChild;
  for (const [i, e] of want.entries()) {
    if (e.stale) {
      e.stale = false;
      draw(e);
    }
    attr(e.row, "aria-posinset", String(first + i + 1));
    attr(e.row, "aria-setsize", String(entries.length));
    if (at === e.row) at = at.nextElementSibling;
    else list.insertBefore(e.row, at);
    if (!inPage.has(e)) {
      inPage.add(e);
      sizes.observe(e.row);
    }
  }
  list.style.paddingTop = above ? `${above}px` : "";
  list.style.paddingBottom = below ? `${below}px` : "";
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
  const took = fmtDuration((live ? performance.now() : rate.samples.at(-1)?.[0] ?? rate.began) - rate.began);
  set($(".time", box), rate.began ? (live ? `${took} so far` : `took ${took}`) : "");
  const pct = totals.bytes > 0 ? Math.min(100, (totals.sent / totals.bytes) * 100) : totals.files === done ? 100 : 0;
  $(".fill", box).style.transform = `scaleX(${pct / 100})`;
  attr($(".bar", box), "aria-valuenow", String(Math.floor(pct)));
}
