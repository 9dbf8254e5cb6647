// "Stored on …": the objects the target holds, as its server lists them, with a download link
// each. Asked when the target changes, on Refresh, and when the page's uploads have ended (not
// while a batch runs). The table scrolls in its box; a long listing is a window
// (windowing.js), its rows one line each, spacer rows standing for those not in the page. A
// row is made once per object and kept while it shows the same.

import { fmtBytes } from "./format.js";
import { liveCount } from "./state.js";
import { settings, site } from "./controls.js";
import { $ } from "./page.js";
import { SHORT, followScroll, windowOf } from "./windowing.js";

let timer = null;
let listed = { target: "", objects: [] }; // the last listing
let lineHeight = 0; // a row's height, once measured (rows are one line: nowrap)
const rows = new Map(); // "target bucket/name" -> { tr, key }: the row made for an object, and what it showed
const spacers = [spacer(), spacer()]; // above and below the rows in view

function spacer() {
  const tr = document.createElement("tr");
  tr.className = "spacer";
  tr.setAttribute("aria-hidden", "true");
  tr.append(Object.assign(document.createElement("td"), { colSpan: 4 }));
  return tr;
}

/** Asks again soon, if no upload of the page runs (an upload ended; the last one asks). */
export function refreshObjects() {
  if (timer !== null || liveCount() > 0) return;
  timer = setTimeout(loadObjects, 150);
}

/** Asks the target for its objects now, and draws them. */
export async function loadObjects() {
  clearTimeout(timer);
  timer = null;
  const s = settings();
  const note = $("#objectsNote");
  if (s.target === "custom") {
    listed = { target: "", objects: [] };
    rows.clear();
    $("#objects tbody").replaceChildren();
    $("#objects").hidden = true;
    note.textContent = "Objects of a custom target are not listed here.";
    return;
  }
  const target = s.target;
  let objects = [];
  try {
    const res = await fetch(site.config.targets[target].objects, { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const data = await res.json();
    objects = Array.isArray(data) ? data : data.items || [];
  } catch (e) {
    note.textContent = `Could not list the objects: ${e.message}`;
    return;
  }
  if (settings().target !== target) return; // the target changed meanwhile: its own answer follows
  listed = { target, objects };
  const names = new Set(objects.map((o) => idOf(target, o)));
  for (const k of rows.keys()) if (!names.has(k)) rows.delete(k);
  $("#objects").hidden = objects.length === 0;
  note.textContent = objects.length ? "" : "No objects yet.";
  drawRows();
}

/** Wires the table's scrolling: the rows in view follow it. */
export function wireObjects() {
  followScroll([$("#objects").closest(".table-wrap")], () => listed.objects.length > SHORT, drawRows);
}

// Puts in the table the rows of the objects in view (all of a short listing).
function drawRows() {
  const { target, objects } = listed;
  const tbody = $("#objects tbody");
  const wrap = tbody.closest(".table-wrap");
  const long = objects.length > SHORT; // the layout is read for a long listing only
  if (long && !lineHeight) {
    // One row, measured once: every row is one line.
    place(tbody, [row(target, objects[0])]);
    lineHeight = tbody.firstElementChild.getBoundingClientRect().height || 24;
  }
  // What the box shows: its height once full (demo.css, .table-wrap's max-height), not what a
  // first, short drawing left it.
  const seen = long ? parseFloat(getComputedStyle(wrap).maxHeight) || wrap.clientHeight : 0;
  const { first, last, above, below } = windowOf(objects.length, () => lineHeight, long ? wrap.scrollTop : 0, seen);
  const trs = objects.slice(first, last).map((o) => row(target, o));
  spacers[0].style.height = `${above}px`;
  spacers[1].style.height = `${below}px`;
  place(tbody, [...(first ? [spacers[0]] : []), ...trs, ...(last < objects.length ? [spacers[1]] : [])]);
}

// Puts the rows in tbody in that order, moving only those not where they belong (a listing
// that gained a few objects moves nothing else).
function place(tbody, trs) {
  let at = tbody.firstElementChild;
  for (const tr of trs) {
    if (at === tr) at = at.nextElementSibling;
    else tbody.insertBefore(tr, at);
  }
  while (at) {
    const next = at.nextElementSibling;
    at.remove();
    at = next;
  }
}

const idOf = (target, o) => `${target} ${o.bucket ?? ""}/${o.name}`;

// The row of one object: the one made before if nothing it shows has changed.
function row(target, o) {
  const id = idOf(target, o);
  const key = `${o.size} ${o.md5Hash ?? ""}`;
  const had = rows.get(id);
  if (had && had.key === key) return had.tr;
  const tr = document.createElement("tr");
  const href = target === "ref"
    ? `${site.config.targets.ref.objects}/${encodeURIComponent(o.name)}`
    : `${site.config.targets.gcs.objects}/${encodeURIComponent(o.name)}?alt=media`;
  // The reference server keeps objects of any bucket: those not in the page's are named with
  // theirs.
  const shown = o.bucket && o.bucket !== site.config.bucket ? `${o.bucket}/${o.name}` : o.name;
  [shown, fmtBytes(Number(o.size)), o.md5Hash || ""].forEach((t, i) => {
    const td = document.createElement("td");
    td.textContent = t;
    if (i === 0) td.title = shown;
    if (i === 2) td.className = "md5col";
    tr.append(td);
  });
  const a = document.createElement("a");
  a.href = href;
  a.textContent = "download";
  a.setAttribute("download", o.name);
  const td = document.createElement("td");
  td.append(a);
  tr.append(td);
  rows.set(id, { tr, key });
  return tr;
}
