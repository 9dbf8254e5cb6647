// Files into the page: the drop zone (a drop, or a click that opens a picker), and "gzip on
// the fly". Where the browser has them (Chromium: showOpenFilePicker, a drop's
// getAsFileSystemHandle), files are taken as FileSystemFileHandles: the module keeps the
// handle with the session, so that after a reload the upload goes on with Resume, no picker.
// Elsewhere, Files.

import { settings, showNote } from "./controls.js";
import { addFiles } from "./uploads.js";
import { $ } from "./page.js";

const pickerHandles = typeof window.showOpenFilePicker === "function";

/** The picked handles uploaded: each with its File, for the row. */
async function addHandles(handles, s = settings()) {
  const items = [];
  for (const h of handles) {
    try {
      items.push({ file: await h.getFile(), handle: h });
    } catch (e) {
      showNote(`Could not read ${h.name}: ${e.message}`);
    }
  }
  addFiles(items, s);
}

const asFiles = (files) => [...files].map((file) => ({ file, handle: null }));

/**
 * The click on the drop zone: showOpenFilePicker where there is one (a cancel is nothing),
 * and the file input's own picker where there is none or it refuses (a cross-origin frame).
 */
function pickFiles(e) {
  if (typeof window.showOpenFilePicker !== "function") return;
  e.preventDefault();
  window.showOpenFilePicker({ multiple: true }).then((h) => addHandles(h), (err) => {
    if (err?.name === "AbortError") return;
    const input = $("#files");
    input.addEventListener("click", (ev) => ev.stopImmediatePropagation(), { once: true, capture: true });
    input.click();
  });
}

const dropHandles = typeof DataTransferItem !== "undefined" && typeof DataTransferItem.prototype.getAsFileSystemHandle === "function";

/**
 * What a drop holds: handles where the browser gives them, else Files. Either is taken during
 * the event (the drop's data is gone after it); the rows are made later, a few at a time.
 */
function dropped(dataTransfer) {
  const s = settings();
  const files = [...dataTransfer.files];
  if (!dropHandles) return void addFiles(asFiles(files), s);
  const items = [...dataTransfer.items].filter((i) => i.kind === "file");
  const asked = items.map((i) => i.getAsFileSystemHandle().catch(() => null));
  Promise.all(asked).then(async (handles) => {
    const out = [];
    for (const [i, h] of handles.entries()) {
      if (h?.kind === "file") {
        try {
          out.push({ file: await h.getFile(), handle: h });
        } catch (e) {
          showNote(`Could not read ${h.name}: ${e.message}`);
        }
      } else if (files[i] && !h) out.push({ file: files[i], handle: null }); // no handle for it: its File
      // a folder: not uploaded
    }
    addFiles(out, s);
  });
}

/** Wires the drop zone and its file input. */
export function wirePicking() {
  const input = $("#files");
  input.addEventListener("change", () => {
    addFiles(asFiles(input.files), settings());
    input.value = "";
  });
  input.addEventListener("click", pickFiles);
  if (pickerHandles) $("#handleHint").textContent = "this browser keeps the files picked or dropped here: Resume needs no picker";
  const drop = $("#drop");
  for (const t of ["dragenter", "dragover"]) {
    drop.addEventListener(t, (e) => {
      e.preventDefault();
      drop.classList.add("over");
    });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    dropped(e.dataTransfer);
  });
  // A file dropped beside the zone must not make the browser navigate away.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());
}
