// The mediaupload demo page: plain JS modules, no build step. It loads the module the way any
// site would, and uploads what is dropped or picked, with a row per file (its progress, its
// request log, its md5 check) and an overall line.
//
// Where things are:
//   demo.js       this file: loads the module and wires the parts together
//   state.js      the state: one record per upload (its fields written down there), and the
//                 totals (no DOM)
//   uploads.js    starting uploads (one mu.queue), and what the module reports, into the state
//   list.js       drawing the list: the overall line, which rows are in the page, and when
//                 they are drawn (in batches: the page never waits)
//   rows.js       drawing one upload's row
//   windowing.js  a long list's window: only the rows near the screen in the page (the
//                 uploads list, the objects table)
//   page.js       what every part shares: $, writes of what changed, and the time one slice
//                 of the page's work may take
//   controls.js   the settings panel: targets, upload options, network speed, flaky network
//   picking.js    the drop zone, file picker, handles; gzip on the fly
//   record.js     "● Record": a recording uploaded while it is made
//   unfinished.js "Unfinished uploads" an earlier visit left, with Resume, Pick again, Forget
//   objects.js    "Stored on …": the target's objects
//   format.js     numbers, times, errors and request ranges written for people
//
// ?worker=1 loads the module with load({ worker: true }), ?worker=0 with load({ worker:
// false }); without it, load() as it is. The header says where it runs (mu.mode).
import { load } from "/dist/mediaupload.js";
import { loadConfig, refreshNote, showSpeed, syncFlaky, wireControls } from "./controls.js";
import { fmtError } from "./format.js";
import { loadObjects, refreshObjects, wireObjects } from "./objects.js";
import { wirePicking } from "./picking.js";
import { toggleRecording } from "./record.js";
import { initList, removeRows } from "./list.js";
import { entries, removeFinished } from "./state.js";
import { initUnfinished, refreshUnfinished, showUnfinishedSoon } from "./unfinished.js";
import { actions, initUploads, moduleLoaded, uploading } from "./uploads.js";
import { $ } from "./page.js";

function wire() {
  initList(actions);
  initUploads({
    started: showUnfinishedSoon,
    settled() {
      refreshUnfinished();
      refreshObjects();
    },
  });
  wireControls({ onTarget: loadObjects });
  wirePicking();
  wireObjects();
  $("#record").addEventListener("click", toggleRecording);
  $("#refresh").addEventListener("click", loadObjects);
  $("#clear").addEventListener("click", () => {
    removeRows(removeFinished());
    refreshUnfinished(); // a failed upload cleared away is listed there again
  });
  // Leaving while uploads run asks first. Nothing is lost if the user goes all the same (the
  // sessions are remembered: the same files picked again go on), but it is worth a question.
  window.addEventListener("beforeunload", (e) => {
    if (uploading()) {
      e.preventDefault();
      e.returnValue = ""; // older browsers ask only when this is set
    }
  });
}

async function main() {
  await loadConfig();
  wire();
  refreshNote();
  // Browsers restore form fields on reload (some of them, some fields): the flaky network is
  // made to agree with the page, and the page with the server's network speed.
  await Promise.all([syncFlaky(), showSpeed()]);
  loadObjects();
  const worker = new URLSearchParams(location.search).get("worker");
  let mu;
  try {
    mu = await load(worker === null ? undefined : { worker: worker === "1" });
  } catch (err) {
    const { code, text } = fmtError(err);
    const banner = $("#banner");
    banner.hidden = false;
    banner.textContent = `The module did not load — ${code}: ${text}. Is dist/ built? Run ./build.sh serve.`;
    document.body.dataset.ready = "error";
    return;
  }
  $("#version").textContent = `Module ${mu.version}, ${mu.mode === "worker" ? "in a Worker" : "on the page's thread"}.`;
  await initUnfinished(mu);
  document.body.dataset.ready = "yes";
  moduleLoaded(mu);
}

// For the curious, and for the tests.
window.demo = { entries };

main();
