// "Stored on …": the objects the target holds, as its server lists them, with a download link
// each. Asked when the target changes, on Refresh, and when the page's uploads have ended (not
// while a batch runs: a thousand rows listed again every few seconds would hold the page). A
// row is made once per object and kept (a thousand objects listed again cost only the new
// ones), and a long list is made a few hundred rows per task.

import { fmtBytes } from "./format.js";
import { liveCount } from "./state.js";
import { settings, site } from "./controls.js";

const $ = (sel, root = document) => root.querySelector(sel);

let timer = null;
const rows = new Map(); // "bucket/name" -> { tr, key }: the row drawn for an object, and what it showed

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
  const tbody = $("#objects tbody");
  const note = $("#objectsNote");
  if (s.target === "custom") {
    tbody.replaceChildren();
    rows.clear();
    $("#objects").hidden = true;
    note.textContent = "Objects of a custom target are not listed here.";
    return;
  }
  const target = s.target;
  let list = [];
  try {
    const res = await fetch(site.config.targets[target].objects, { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const data = await res.json();
    list = Array.isArray(data) ? data : data.items || [];
  } catch (e) {
    note.textContent = `Could not list the objects: ${e.message}`;
    return;
  }
  if (settings().target !== target) return; // the target changed meanwhile: its own answer follows
  const trs = [];
  for (let i = 0; i < list.length; i++) {
    trs.push(row(target, list[i]));
    // A long list is made a few hundred rows a task: the page stays responsive.
    if (i % 300 === 299) await new Promise((r) => setTimeout(r, 0));
  }
  const keep = new Set(trs);
  for (const [k, r] of rows) if (!keep.has(r.tr)) rows.delete(k);
  place(tbody, trs);
  $("#objects").hidden = list.length === 0;
  note.textContent = list.length ? "" : "No objects yet.";
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

// The row of one object: the one drawn before if nothing it shows has changed.
function row(target, o) {
  const id = `${target} ${o.bucket ?? ""}/${o.name}`;
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
