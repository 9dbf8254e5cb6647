// "Unfinished uploads": what an earlier page left unfinished (mu.unfinished(), docs/api.md
// "Unfinished uploads"), each with what its server holds, and Resume (the browser kept a handle
// to the file), Pick again (it did not: the same file, picked, goes on) or Forget. Asked when the
// page loads, and again when the page's uploads have ended (not while a batch runs).
// One this page uploads is not listed: its own row shows it, from the moment it starts (the
// same file picked or dropped again goes on with the record) until it ends.

import { fmtBytes, fmtDuration } from "./format.js";
import { announce } from "./list.js";
import { entries, liveCount } from "./state.js";
import { settings, showNote, uploadURL } from "./controls.js";
import { addUnfinished } from "./uploads.js";
import { $ } from "./page.js";

let mu = null;
let list = []; // the last answer of mu.unfinished()
let asked = null; // the timer of the next ask
let shown = null; // the timer of the next showing

/** The module is loaded: asks for the list. */
export async function initUnfinished(m) {
  mu = m;
  await ask();
}

/** Asks again soon, if no upload of the page runs (an upload ended; the last one asks). */
export function refreshUnfinished() {
  if (asked !== null || liveCount() > 0) return;
  asked = setTimeout(() => {
    asked = null;
    ask();
  }, 100);
}

/** Shows the list again soon, without asking (an upload started: its item gives way to its row). */
export function showUnfinishedSoon() {
  if (shown === null) shown = setTimeout(show, 50);
}

async function ask() {
  if (!mu) return;
  try {
    list = await mu.unfinished();
  } catch (e) {
    showNote(`Could not list the unfinished uploads: ${e.message}`);
    return;
  }
  show();
}

/** Whether the upload of entry is the one u records (same url and file). */
const sameUpload = (entry, u) =>
  entry.file.name === u.name && entry.file.size === u.size &&
  (entry.file.lastModified === undefined || entry.file.lastModified === u.lastModified) &&
  uploadURL(entry.settings, entry.file.name) === u.url;

/** Lists the unfinished uploads of the last answer that no row of this page uploads. */
function show() {
  clearTimeout(shown);
  shown = null;
  // Those with a row here (running, or failed with its Retry) are in the Uploads list already.
  const byName = new Map();
  for (const e of entries) byName.set(e.file.name, [...(byName.get(e.file.name) ?? []), e]);
  const left = list.filter((u) => !(byName.get(u.name) ?? []).some((e) => e.from.unfinished?.key === u.key || sameUpload(e, u)));
  $("#unfinishedList").replaceChildren(...left.map(item));
  $("#unfinished").hidden = left.length === 0;
  $("#empty").textContent = left.length && entries.length === 0 ? "Nothing yet on this page: the uploads an earlier visit left unfinished are listed above." : "Nothing yet.";
  document.body.dataset.unfinished = String(left.length);
}

function item(u) {
  const li = $("#unfinishedRow").content.firstElementChild.cloneNode(true);
  li.dataset.name = u.name;
  $(".name", li).textContent = u.name;
  $(".size", li).textContent = fmtBytes(u.size);
  const pct = u.confirmed == null || !u.size ? null : Math.floor((u.confirmed / u.size) * 100);
  $(".held", li).textContent = u.confirmed == null ? "server not reachable" : `${pct} % on the server`;
  $(".bar", li).setAttribute("aria-label", `${u.name}: held by the server`);
  $(".bar", li).setAttribute("aria-valuenow", String(pct ?? 0));
  $(".bar .confirmed", li).style.transform = `scaleX(${(pct ?? 0) / 100})`;
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
  // Its item gives way to the upload's own row (uploads.js calls showUnfinishedSoon).
  const goOn = (picked) => addUnfinished(u, picked, settings());
  // From the click itself: the browser may ask for permission to read the file again.
  go.onclick = () => goOn(null);
  const input = $("input", pick);
  input.onchange = () => input.files[0] && goOn(input.files[0]);
  $(".forget", li).onclick = async () => {
    await u.forget();
    announce(`${u.name}: forgotten`);
    ask();
  };
  return li;
}
