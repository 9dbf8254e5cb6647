// The example pages of web/examples/, each a real upload widget from npm used unchanged
// (jQuery File Upload, Uppy's Dashboard, FilePond), driven in Chromium as a person would: files
// are given to the widget's own file input, and what the test reads is the widget's own DOM.
//
// For each widget: the files land byte-exact on the reference server, the widget's progress
// bar moves and reaches 100 %, its cancel stops the upload (nothing is stored) and its bar
// does not stay where the cancel left it, and with the server's random faults on every file
// still lands. No page asks for anything that is not there (a favicon, say): the console
// stays clean of 404s.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, test as nodeTest } from "node:test";
import { KiB, MiB, REPO_ROOT, pseudoRandomBytes, startAll } from "./harness.mjs";

const test = (name, fn) => nodeTest(name, { timeout: 120_000 }, fn);
const WAIT = 60_000;

let env, ref, web;
let seq = 0;
// The files given to the widgets are written here (a path is much quicker for Playwright to
// hand to Chromium than a buffer).
const filesDir = mkdtempSync(join(tmpdir(), "mediaupload-examples-"));

before(async () => {
  env = await startAll();
  ({ ref, web } = env);
  web.dir("/examples/", join(REPO_ROOT, "web/examples"));
  web.dir("/node_modules/", join(REPO_ROOT, "node_modules"));
});
after(async () => {
  await env?.close();
  rmSync(filesDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await ref.reset();
  await ref.clearFaults();
});

// How each widget is driven and read. progress(): the widget's own bar, 0..100, read from its
// DOM; cancel(page): what a person clicks to cancel; cancelled(page): the widget says so;
// afterCancel: what its bar reads once the only upload is cancelled (blueimp's own UI shows
// 0 %), where the widget keeps a bar at all.
const WIDGETS = {
  blueimp: {
    input: "#fileupload",
    progress: () => parseFloat(document.querySelector("#total .bar")?.style.width || "0"),
    afterCancel: 0,
    done: (n) => document.querySelectorAll("#files li[data-state=done]").length === n,
    cancel: (page) => page.locator("#files li .cancel").first().click(),
    cancelled: () => document.querySelector("#files li")?.dataset.state === "cancelled",
  },
  uppy: {
    input: "input.uppy-Dashboard-input",
    start: (page) => page.locator(".uppy-StatusBar-actionBtn--upload").click(),
    progress: () => parseFloat(document.querySelector(".uppy-StatusBar-progress")?.style.width || "0"),
    done: () => !!document.querySelector(".uppy-StatusBar.is-complete"),
    cancel: (page) => page.locator('.uppy-StatusBar button[aria-label="Cancel"], .uppy-StatusBar button[title="Cancel"]').first().click(),
    cancelled: () => window.uppy.getFiles().length === 0,
  },
  filepond: {
    input: "input.filepond--browser",
    // FilePond writes "Uploading 42%" into the item's status while it works, and
    // "Upload complete" at the end.
    progress: () => {
      const items = [...document.querySelectorAll(".filepond--item")];
      if (items.length === 0) return 0;
      const each = items.map((li) => {
        if (li.dataset.filepondItemState === "processing-complete") return 100;
        const m = /(\d+(?:\.\d+)?)\s*%/.exec(li.querySelector(".filepond--file-status")?.textContent ?? "");
        return m ? parseFloat(m[1]) : 0;
      });
      return each.reduce((a, b) => a + b, 0) / each.length;
    },
    done: (n) => document.querySelectorAll('.filepond--item[data-filepond-item-state="processing-complete"]').length === n,
    cancel: (page) => page.locator(".filepond--action-abort-item-processing").first().click(),
    cancelled: () => {
      const li = document.querySelector(".filepond--item");
      return !li || li.dataset.filepondItemState === "idle" || li.dataset.filepondItemState === "processing-revert-error";
    },
  },
};

// Opens a page of /examples/, noting every answer of 404 from the pages' own server
// (page.notFound) and every error on its console but the upload server's answers, which the
// fault tests make fail on purpose (page.consoleErrors).
async function openPage(path) {
  const page = await env.browser.newPage();
  page.notFound = [];
  page.consoleErrors = [];
  page.on("response", (r) => r.status() === 404 && r.url().startsWith(web.url) && page.notFound.push(r.url()));
  page.on("console", (m) => {
    const at = m.location()?.url ?? "";
    if (m.type() === "error" && !at.startsWith(ref.url)) page.consoleErrors.push(`${m.text()} (${at})`);
  });
  await page.goto(`${web.url}/examples/${path}`);
  return page;
}

// Opens the widget's page with the given query, and starts sampling its progress bar.
async function open(name, query = {}) {
  const w = WIDGETS[name];
  const q = new URLSearchParams({ upload: `${ref.url}/upload/storage/v1/b/test/o`, ...query });
  const page = await openPage(`${name}.html?${q}`);
  await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: WAIT });
  await page.evaluate((src) => {
    const progress = new Function(`return (${src})`)();
    window.__samples = [];
    setInterval(() => {
      const p = progress();
      if (window.__samples.at(-1) !== p) window.__samples.push(p);
    }, 10);
  }, w.progress.toString());
  return page;
}

function files(prefix, sizes) {
  return sizes.map((size, i) => ({
    name: `${prefix}-${++seq}.bin`,
    mimeType: "application/octet-stream",
    size,
    seed: 1000 + seq,
  }));
}

async function give(page, name, list) {
  const w = WIDGETS[name];
  const paths = list.map((f) => {
    const path = join(filesDir, f.name);
    writeFileSync(path, pseudoRandomBytes(f.size, f.seed));
    return path;
  });
  await page.locator(w.input).first().setInputFiles(paths);
  if (w.start) await w.start(page);
}

async function uploadAll(name, query, sizes) {
  const w = WIDGETS[name];
  const page = await open(name, query);
  try {
    const list = files(name, sizes);
    await give(page, name, list);
    await page.waitForFunction(`(${w.done})(${list.length})`, null, { timeout: WAIT });
    await page.waitForFunction(() => window.__samples.at(-1) === 100, null, { timeout: 5000 }).catch(() => {});
    const samples = await page.evaluate(() => window.__samples);
    for (const f of list) assert.deepEqual(await env.checkStored(f.name, f.size, f.seed), [], `${name}: ${f.name}`);
    // A page without an icon of its own makes the browser ask for /favicon.ico: a 404, and an
    // error on the console.
    assert.deepEqual(page.notFound, [], `${name}: answers of 404`);
    assert.deepEqual(page.consoleErrors, [], `${name}: errors on the console`);
    return samples;
  } finally {
    await page.close();
  }
}

for (const name of Object.keys(WIDGETS)) {
  test(`${name}: the files land byte-exact, and the widget's own progress bar moves to 100 %`, async () => {
    const samples = await uploadAll(name, { chunk: "262144" }, [24 * MiB + 5, 1 * MiB, 700 * KiB]);
    assert.equal(samples.at(-1), 100, `${name}: the bar ends at 100 % (samples ${samples.join(" ")})`);
    assert.ok(samples.some((p) => p > 0 && p < 100), `${name}: the bar moved (samples ${samples.join(" ")})`);
  });

  test(`${name}: the widget's cancel stops the upload`, async () => {
    const w = WIDGETS[name];
    const page = await open(name, { chunk: "262144" });
    try {
      const [f] = files(name, [40 * MiB]);
      await give(page, name, [f]);
      await page.waitForFunction(() => window.__samples.some((p) => p > 0), null, { timeout: WAIT });
      await w.cancel(page);
      await page.waitForFunction(w.cancelled, null, { timeout: WAIT });
      if ("afterCancel" in w) {
        // Nothing is left to upload: the total bar says so rather than staying where it was.
        const ok = await page.waitForFunction(`(${w.progress})() === ${w.afterCancel}`, null, { timeout: 5000 }).then(() => true, () => false);
        const bar = await page.evaluate(w.progress);
        assert.ok(ok, `${name}: the bar reads ${bar} % after the cancel, want ${w.afterCancel} %`);
      }
      const at = (await ref.log()).length;
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await ref.object(f.name), undefined, `${name}: nothing stored after cancel`);
      assert.ok((await ref.log()).length <= at + 2, `${name}: requests went on after cancel`);
    } finally {
      await page.close();
    }
  });

  test(`${name}: with 15 % random faults every file still lands`, async () => {
    await ref.setFaults([], { seed: 15 + seq, rate: 0.15 });
    const samples = await uploadAll(name, { chunk: "262144", fast: "1" }, [2 * MiB + 3, 1 * MiB + 7, 300 * KiB]);
    assert.equal(samples.at(-1), 100, `${name}: the bar ends at 100 %`);
    const faults = (await ref.log()).filter((e) => e.fault).length;
    console.log(`${name}: ${faults} faults injected`);
    assert.ok(faults > 0, "faults were injected");
  });
}

test("the examples' index links every widget page and loads without a 404", async () => {
  const page = await openPage("index.html");
  try {
    // The browser asks for the icon once the page has loaded: wait for the network to rest.
    await page.waitForLoadState("networkidle");
    const links = await page.$$eval("a", (as) => as.map((a) => a.getAttribute("href")));
    for (const name of Object.keys(WIDGETS)) assert.ok(links.includes(`${name}.html`), `no link to ${name}.html: ${links}`);
    assert.deepEqual(page.notFound, [], "answers of 404");
    assert.deepEqual(page.consoleErrors, [], "errors on the console");
  } finally {
    await page.close();
  }
});

// --- the Uppy plugin's controls: pause/resume of one file and of all, retry ----------------

test("uppy: pause and resume of one file and of all drive the module; the files land", async () => {
  const page = await open("uppy", { chunk: "262144" });
  try {
    const list = files("uppy-pause", [24 * MiB, 24 * MiB + 1]);
    await give(page, "uppy", list);
    await page.waitForFunction(() => window.__samples.some((p) => p > 0), null, { timeout: WAIT });
    // Holds still while paused: no request reaches the server for a while.
    const still = async () => {
      await new Promise((r) => setTimeout(r, 400)); // the chunk in flight ends
      const a = (await ref.log()).length;
      await new Promise((r) => setTimeout(r, 600));
      return (await ref.log()).length - a;
    };
    const id0 = await page.evaluate(() => window.uppy.getFiles()[0].id);
    await page.evaluate(() => window.uppy.pauseAll());
    assert.equal(await still(), 0, "requests while every file was paused");
    await page.evaluate(() => window.uppy.resumeAll());
    await page.evaluate((id) => window.uppy.pauseResume(id), id0);
    const paused = await page.evaluate((id) => window.uppy.getFile(id).isPaused, id0);
    assert.equal(paused, true);
    // The other file finishes while this one waits.
    await page.waitForFunction((id) => window.uppy.getFiles().some((f) => f.id !== id && f.progress.uploadComplete), id0, { timeout: WAIT });
    assert.equal(await still(), 0, "requests while the one left was paused");
    assert.equal(await page.evaluate((id) => window.uppy.getFile(id).progress.uploadComplete, id0), false);
    await page.evaluate((id) => window.uppy.pauseResume(id), id0);
    await page.waitForFunction(WIDGETS.uppy.done, null, { timeout: WAIT });
    for (const f of list) assert.deepEqual(await env.checkStored(f.name, f.size, f.seed), []);
  } finally {
    await page.close();
  }
});

test("uppy: a failed file shows Uppy's error, and Uppy's retry resumes from the server's offset", async () => {
  const page = await open("uppy", { chunk: "262144" });
  try {
    const [f] = files("uppy-retry", [3 * MiB]);
    // The fifth chunk is refused for good (403 is not retried): the upload fails part way.
    await ref.setFaults([{ on: "chunk", action: "status", status: 403, times: 1, skip: 4 }]);
    await give(page, "uppy", [f]);
    await page.waitForFunction(() => window.uppy.getFiles()[0]?.error, null, { timeout: WAIT });
    const shown = await page.evaluate(() => document.querySelector(".uppy-StatusBar")?.className);
    assert.match(shown, /is-error/, "the Dashboard shows the error");
    const before = (await ref.log()).filter((e) => e.kind !== "preflight").length;
    await page.evaluate(() => window.uppy.retryAll());
    await page.waitForFunction(WIDGETS.uppy.done, null, { timeout: WAIT });
    const after = (await ref.log()).filter((e) => e.kind !== "preflight").slice(before);
    assert.ok(!after.some((e) => e.kind === "start"), `no new session after retry: ${after.map((e) => e.kind)}`);
    const firstChunk = after.find((e) => e.kind === "chunk");
    assert.ok(firstChunk && !firstChunk.contentRange.startsWith("bytes 0-"), `resumed, not from 0: ${firstChunk?.contentRange}`);
    assert.deepEqual(await env.checkStored(f.name, f.size, f.seed), []);
  } finally {
    await page.close();
  }
});

test("uppy: removing one file mid-upload cancels it alone", async () => {
  const page = await open("uppy", { chunk: "262144" });
  try {
    const list = files("uppy-remove", [40 * MiB, 2 * MiB]);
    await give(page, "uppy", list);
    await page.waitForFunction(() => window.uppy.getFiles().some((f) => f.progress.bytesUploaded > 0), null, { timeout: WAIT });
    await page.evaluate((name) => window.uppy.removeFile(window.uppy.getFiles().find((f) => f.name === name).id), list[0].name);
    await page.waitForFunction(WIDGETS.uppy.done, null, { timeout: WAIT });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await ref.object(list[0].name), undefined, "the removed file was not stored");
    assert.deepEqual(await env.checkStored(list[1].name, list[1].size, list[1].seed), []);
  } finally {
    await page.close();
  }
});
