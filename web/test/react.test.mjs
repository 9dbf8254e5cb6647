// mediaupload/react (docs/api.md, "React"), as an app uses it: the package ./build.sh packed
// (dist/mediaupload.tgz, as README.md's Install has it) installed into a copy of web/examples/react/ (a small Vite app on the hooks), with React and
// Vite at the versions of its package-lock.json, built by Vite in production mode, served, and
// driven in Chromium through its own UI: a file given to its <input type=file> lands byte for
// byte; its Pause and Resume buttons show the new state at once and hold the upload; the
// queue's bar reaches 100 %; a reload leaves uploads unfinished, which the app lists with what
// the server holds, resumes (the file picked again) without a new session, and forgets.
//
// Then the hooks alone, in a page bundled by esbuild from the same installed package with
// React's development build, in StrictMode (every render and every effect twice), against stub
// uploads, queues and lists: one load per page and the same `mu` as the package's own load();
// one upload or queue per handler call; pause/resume shown at once; no listener left after an
// unmount; the unfinished list asked once per mount, kept right by resume, forget and a failed
// resume, and by an upload's end heard (even while an older answer is on its way). And
// react.d.ts against the runtime: the exports and each hook's members.
//
// React and Vite come from the registry once per lock file (npm ci into
// node_modules/.cache/mediaupload-react/, as bundlers.test.mjs does); each run copies that.
// Run: node --test web/test/react.test.mjs (dist/ built).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { promisify } from "node:util";
import { build as esbuild } from "esbuild";
import { DIST_DIR, KiB, MiB, REPO_ROOT, pseudoRandomBytes, useEnv } from "./harness.mjs";

const EXAMPLE = join(REPO_ROOT, "web/examples/react");
const CACHE_DIR = join(REPO_ROOT, "node_modules/.cache/mediaupload-react");
const WAIT = 30_000;
const run = promisify(execFile);
const npm = (args, cwd) => run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, maxBuffer: 1 << 24 });

let tmp, app; // app: the folder of the installed copy
let ready; // the promise of the built app and the unit pages
before(() => {
  tmp = mkdtempSync(join(tmpdir(), "mediaupload-react-"));
  ready = prepare();
  ready.catch(() => {}); // a failure is the tests' to report
});
after(() => rmSync(tmp, { recursive: true, force: true }));

let env, ref, web;
const { test, unique } = useEnv((e) => {
  env = e;
  ({ ref, web } = e);
}, { timeout: 120_000 });

/** React and Vite installed once per lock file, in the cache; resolves to that node_modules. */
async function installed() {
  const lock = readFileSync(join(EXAMPLE, "package-lock.json"));
  const key = `${createHash("sha256").update(lock).digest("hex").slice(0, 16)}-${process.platform}-${process.arch}`;
  const dir = join(CACHE_DIR, key);
  if (!existsSync(join(dir, "ok"))) {
    mkdirSync(CACHE_DIR, { recursive: true });
    for (const old of readdirSync(CACHE_DIR)) rmSync(join(CACHE_DIR, old), { recursive: true, force: true });
    mkdirSync(dir);
    for (const f of ["package.json", "package-lock.json"]) cpSync(join(EXAMPLE, f), join(dir, f));
    await npm(["ci", "--prefer-offline"], dir);
    writeFileSync(join(dir, "ok"), "");
  }
  return join(dir, "node_modules");
}

// The page of the hooks alone: the installed package's mediaupload/react and mediaupload,
// React's development build, and the stubs the tests give the hooks.
const UNIT_ENTRY = `
import * as React from "react";
import { flushSync } from "react-dom";
import { createRoot } from "react-dom/client";
import { load } from "mediaupload";
import * as hooks from "mediaupload/react";

// An Upload as the hooks see it, counting the listeners it holds.
class StubUpload extends EventTarget {
  state = "uploading";
  sessionURL = null;
  listeners = 0;
  calls = [];
  constructor(fields) {
    super();
    Object.assign(this, fields);
    this.promise = new Promise((resolve, reject) => ((this.settle = resolve), (this.fail = reject)));
    this.promise.catch(() => {});
  }
  then(a, b) { return this.promise.then(a, b); }
  addEventListener(t, f, o) { this.listeners++; super.addEventListener(t, f, o); }
  removeEventListener(t, f, o) { this.listeners--; super.removeEventListener(t, f, o); }
  pause() { this.calls.push("pause"); this.state = "paused"; }
  resume() { this.calls.push("resume"); this.state = "uploading"; }
  abort() { this.calls.push("abort"); this.state = "aborted"; }
  fire(type, fields) { this.dispatchEvent(Object.assign(new Event(type), fields)); }
}

// A queue as the hooks see it.
class StubQueue extends EventTarget {
  uploads = [];
  loaded = 0;
  total = 0;
  listeners = 0;
  constructor(options) { super(); this.options = options; }
  add(source, options) {
    const up = new StubUpload({ state: "queued", source, options });
    this.uploads.push(up);
    this.total += source.size;
    return up;
  }
  addEventListener(t, f, o) { this.listeners++; super.addEventListener(t, f, o); }
  removeEventListener(t, f, o) { this.listeners--; super.removeEventListener(t, f, o); }
  pause() { for (const u of this.uploads) u.pause(); }
  resume() { for (const u of this.uploads) u.resume(); }
  abort() { for (const u of this.uploads) u.abort(); }
}

window.R = {
  React, hooks, load, StubUpload, StubQueue, h: React.createElement,
  // Renders element in StrictMode; unmount() takes it away.
  mount(element) {
    const div = document.body.appendChild(document.createElement("div"));
    const root = createRoot(div);
    flushSync(() => root.render(React.createElement(React.StrictMode, null, element)));
    return { div, unmount: () => root.unmount() };
  },
  async until(fn, what, ms = 5000) {
    for (const t = Date.now(); !fn(); await new Promise((r) => setTimeout(r, 5))) {
      if (Date.now() - t > ms) throw new Error("timed out waiting for " + what);
    }
  },
  // Clicks the element and returns what fn reads before the next task: what a person sees.
  async clickAndRead(el, fn) {
    el.click();
    await new Promise((r) => setTimeout(r, 0));
    return fn();
  },
};
`;

async function prepare() {
  const tarball = join(DIST_DIR, "mediaupload.tgz");
  if (!existsSync(tarball)) {
    throw new Error(`${tarball} is missing: run ./build.sh first (or set MEDIAUPLOAD_DIST)`);
  }
  const started = Date.now();
  const modules = await installed();
  app = join(tmp, "app");
  // What a developer may have built or installed in the example's folder is not the example.
  const own = (src) => !/[/\\](node_modules|dist)([/\\]|$)/.test(src.slice(EXAMPLE.length));
  cpSync(EXAMPLE, app, { recursive: true, filter: own });
  cpSync(modules, join(app, "node_modules"), { recursive: true, verbatimSymlinks: true });
  await npm(["install", "--no-save", "--prefer-offline", tarball], app);
  const installedAt = Date.now();
  try {
    await npm(["run", "build"], app);
  } catch (err) {
    throw new Error(`npm run build of the React example failed\n${err.stdout}\n${err.stderr}`);
  }
  // The hooks alone: a development build (StrictMode doubles only there). /unit/ has the wasm
  // beside the bundle; /unit-nowasm/ has not, for the load error.
  writeFileSync(join(app, "unit-entry.js"), UNIT_ENTRY);
  await esbuild({
    absWorkingDir: app,
    entryPoints: [join(app, "unit-entry.js")],
    bundle: true,
    format: "esm",
    outfile: join(app, "unit/unit.js"),
    define: { "process.env.NODE_ENV": '"development"' },
    logLevel: "error",
  });
  const html = `<!doctype html><meta charset="utf-8"><title>mediaupload/react hooks</title><link rel="icon" href="data:,"><script type="module" src="./unit.js"></script>`;
  writeFileSync(join(app, "unit/index.html"), html);
  cpSync(join(app, "unit"), join(app, "unit-nowasm"), { recursive: true });
  cpSync(join(app, "node_modules/mediaupload/mediaupload.wasm"), join(app, "unit/mediaupload.wasm"));
  console.log(`react example: installed in ${((installedAt - started) / 1000).toFixed(1)} s, built in ${((Date.now() - installedAt) / 1000).toFixed(1)} s`);
}

// The built app and the unit pages, on the page origin (useEnv's, started beside the build).
let served = false;
async function serve() {
  await ready;
  if (served) return;
  served = true;
  web.dir("/app/", join(app, "dist"));
  web.dir("/unit/", join(app, "unit"));
  web.dir("/unit-nowasm/", join(app, "unit-nowasm"));
}

// --- the example app --------------------------------------------------------------------------

/** Opens the built app (?upload=, ?chunk=) and waits until it is ready; wasm: the .wasm requests. */
async function openApp(query = {}) {
  await serve();
  const page = await env.browser.newPage();
  const wasm = [];
  page.on("request", (r) => new URL(r.url()).pathname.endsWith(".wasm") && wasm.push(r.url()));
  const params = new URLSearchParams({ upload: ref.url + "/upload/storage/v1/b/test/o", ...query });
  await page.goto(`${web.url}/app/?${params}`);
  await waitFor(page, () => document.getElementById("status")?.textContent !== "loading", null);
  assert.equal(await page.locator("#status").textContent(), "ready");
  page.wasm = wasm;
  return page;
}

/** page.waitForFunction, whose timeout says what the app showed. */
async function waitFor(page, fn, arg, timeout = WAIT) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
  } catch (err) {
    const shown = await page.evaluate(() => document.body.innerText).catch(() => "(the page is gone)");
    err.message += `\nthe app showed:\n${shown}`;
    throw err;
  }
}

// A file on disk: given by its path, it keeps its modification time when picked again (a
// buffer's File would be new each time, and not the file an unfinished upload began with).
function fileOf(name, size, seed) {
  const buffer = Buffer.from(pseudoRandomBytes(size, seed));
  const path = join(tmp, "files", name);
  mkdirSync(join(tmp, "files"), { recursive: true });
  writeFileSync(path, buffer);
  return { name, path, buffer };
}
const starts = async () => (await ref.log()).filter((e) => e.kind === "start").length;
const slowLink = () => ref.config({ link: { bitsPerSecond: 8_000_000, rttMs: 10 } }); // 1 MB/s
const fastLink = () => ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });

// The requests that reach the server over a while: none while an upload is paused.
async function requestsOver(ms) {
  const a = (await ref.log()).length;
  await new Promise((r) => setTimeout(r, ms));
  return (await ref.log()).length - a;
}

test("app: one file through its <input type=file>; Pause and Resume show at once and hold it; it lands byte for byte", async () => {
  const page = await openApp({ chunk: "262144" });
  try {
    const name = unique("one") + ".bin";
    const size = 3 * MiB + 5;
    await slowLink();
    await page.setInputFiles("#one", fileOf(name, size, 1).path);
    const row = "#one-file li";
    await waitFor(page, (row) => Number(document.querySelector(row)?.dataset.confirmed) > 0, row);

    const paused = await page.evaluate(async (row) => {
      const li = document.querySelector(row);
      li.querySelector("button.pause").click();
      await new Promise((r) => setTimeout(r, 0)); // before the next task: what the next paint shows
      return { state: li.querySelector(".state").textContent, resume: !!li.querySelector("button.resume") };
    }, row);
    assert.deepEqual(paused, { state: "paused", resume: true }, "the row says paused at once, with a Resume button");
    await new Promise((r) => setTimeout(r, 400)); // the chunk in flight ends
    assert.equal(await requestsOver(700), 0, "requests while paused");
    assert.equal(await page.locator(`${row} .state`).textContent(), "paused");

    const resumed = await page.evaluate(async (row) => {
      const li = document.querySelector(row);
      li.querySelector("button.resume").click();
      await new Promise((r) => setTimeout(r, 0));
      return li.querySelector(".state").textContent;
    }, row);
    assert.notEqual(resumed, "paused", "the row leaves paused at once");
    await fastLink();
    await waitFor(page, (row) => document.querySelector(row)?.dataset.state === "done", row);
    assert.equal(await page.locator(`${row} .pct`).textContent(), "100 %");
    assert.deepEqual(await env.checkStored(name, size, 1), []);
    assert.equal(await starts(), 1, "one session: StrictMode or a re-render started no second upload");
    assert.equal(page.wasm.length, 1, `one load: ${page.wasm}`);
    assert.deepEqual(env.browser.errors, []);
  } finally {
    await fastLink();
    await page.close();
  }
});

test("app: a queue of three files: every row and the total bar reach 100 %; each file lands once", async () => {
  const page = await openApp();
  try {
    const files = [unique("q-a"), unique("q-b"), unique("q-c")].map((n, i) => fileOf(n + ".bin", [2 * MiB + 1, 700 * KiB, 1][i], 10 + i));
    // The bar as the page shows it, sampled as it goes.
    await page.evaluate(() => {
      window.__bar = [];
      new MutationObserver(() => window.__bar.push(document.getElementById("total-text").textContent)).observe(
        document.getElementById("queue"),
        { subtree: true, childList: true, characterData: true },
      );
    });
    await page.setInputFiles("#many", files.map((f) => f.path));
    await waitFor(page, () => document.querySelectorAll("#queued li[data-state=done]").length === 3, null);
    await waitFor(page, () => document.getElementById("total-text").textContent === "100 %", null);
    assert.equal(await page.locator("#total").evaluate((p) => p.value), 1);
    const bar = (await page.evaluate(() => window.__bar)).filter(Boolean).map((t) => parseInt(t, 10));
    assert.deepEqual(bar, [...bar].sort((a, b) => a - b), `the bar never goes back: ${bar}`);
    for (const [i, f] of files.entries()) assert.deepEqual(await env.checkObject(f.name, f.buffer), [], `file ${i}`);
    // The 1-byte file goes in one request, the 2 MiB one in a session (nothing is known of the
    // link when it starts); the 700 KiB one in a session too unless the other's first chunk
    // has measured loopback by the time it starts (docs/api.md, "One request or resumable").
    const sessions = await starts();
    assert.ok(sessions >= 1 && sessions <= 2, `${sessions} sessions for three files`);
    assert.deepEqual(env.browser.errors, []);
  } finally {
    await page.close();
  }
});

test("app: after a reload, the unfinished list shows what the server holds; Resume goes on without a new session; Forget drops one", async () => {
  let page = await openApp({ chunk: "262144" });
  const size = 2 * MiB + 9;
  const kept = fileOf(unique("left-resume") + ".bin", size, 21);
  const dropped = fileOf(unique("left-forget") + ".bin", size, 22);
  try {
    await slowLink();
    await page.setInputFiles("#many", [kept.path, dropped.path]);
    // Both under way, the server holding some of each.
    await waitFor(page, () => [...document.querySelectorAll("#queued li")].filter((li) => li.dataset.confirmed >= 262144).length === 2, null);
    await page.close();
    await fastLink();

    page = await openApp({ chunk: "262144" });
    await waitFor(page, () => document.querySelectorAll("#left li").length >= 2, null);
    const held = async (name) => page.locator(`#left li[data-name="${name}"] .held`).textContent();
    for (const f of [kept, dropped]) assert.match(await held(f.name), /^\d+(\.\d)? (KiB|MiB) of 2\.0 MiB on the server$/, f.name);
    await ref.clearLog();

    // Chromium keeps no handle to a File from <input type=file>: the app asks for it again.
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.locator(`#left li[data-name="${kept.name}"] button.resume`).click()]);
    await chooser.setFiles(kept.path);
    await waitFor(page, (n) => !document.querySelector(`#left li[data-name="${n}"]`), kept.name);
    await waitFor(page, () => document.querySelector("#resumed li")?.dataset.state === "done", null);
    assert.deepEqual(await env.checkObject(kept.name, kept.buffer), []);
    const log = (await ref.log()).filter((e) => e.kind !== "preflight");
    assert.equal(log.filter((e) => e.kind === "start").length, 0, `no new session: ${log.map((e) => e.kind)}`);
    const sent = log.filter((e) => e.kind === "chunk").reduce((n, e) => n + e.contentLength, 0);
    assert.ok(sent < size, `only the rest was sent (${sent} of ${size} bytes)`);

    await page.locator(`#left li[data-name="${dropped.name}"] button.forget`).click();
    await waitFor(page, (n) => !document.querySelector(`#left li[data-name="${n}"]`), dropped.name, 5_000);
    await page.close();

    page = await openApp();
    await waitFor(page, () => !/asking/.test(document.getElementById("unfinished").textContent), null);
    const names = await page.$$eval("#left li", (lis) => lis.map((li) => li.dataset.name));
    assert.deepEqual(names.filter((n) => n === kept.name || n === dropped.name), [], "neither is listed after a reload");
    assert.deepEqual(env.browser.errors, []);
  } finally {
    await fastLink();
    await page.close();
  }
});

// --- the hooks alone --------------------------------------------------------------------------

async function openUnit(path = "/unit/") {
  await serve();
  const page = await env.browser.newPage();
  const wasm = [];
  page.on("request", (r) => new URL(r.url()).pathname.endsWith(".wasm") && wasm.push(r.url()));
  const warnings = [];
  page.on("console", (m) => (m.type() === "error" || m.type() === "warning") && warnings.push(m.text()));
  await page.goto(web.url + path);
  await page.waitForFunction(() => window.R);
  Object.assign(page, { wasm, warnings });
  return page;
}

test("hooks: useMediaUpload loads once per page, gives every component the package's own mu, and its load_error", async () => {
  const page = await openUnit();
  try {
    const out = await page.evaluate(async () => {
      const { h, hooks, mount, until, React } = R;
      const seen = {};
      const Probe = ({ id }) => ((seen[id] ??= []).push(hooks.useMediaUpload()), null);
      mount(h(React.Fragment, null, h(Probe, { id: "a" }), h(Probe, { id: "b" })));
      const first = seen.a[0];
      await until(() => seen.a.at(-1).mu && seen.b.at(-1).mu, "mu");
      const mu = seen.a.at(-1).mu;
      mount(h(Probe, { id: "late" })); // mounted once loaded: mu at its first render
      return {
        first: { mu: first.mu, error: first.error, loading: first.loading },
        same: mu === seen.b.at(-1).mu && mu === (await R.load()),
        late: seen.late[0].mu === mu,
        loaded: { error: seen.a.at(-1).error, loading: seen.a.at(-1).loading },
      };
    });
    assert.deepEqual(out, {
      first: { mu: null, error: null, loading: true },
      same: true,
      late: true,
      loaded: { error: null, loading: false },
    });
    assert.equal(page.wasm.length, 1, `one load in StrictMode, for two components: ${page.wasm}`);
    assert.deepEqual(page.warnings, []);
  } finally {
    await page.close();
  }

  const bare = await openUnit("/unit-nowasm/");
  try {
    const out = await bare.evaluate(async () => {
      const { h, hooks, mount, until } = R;
      let seen;
      const Probe = () => ((seen = hooks.useMediaUpload()), null);
      mount(h(Probe));
      await until(() => seen.error, "the error", 10_000);
      return { mu: seen.mu, loading: seen.loading, code: seen.error.code, name: seen.error.name, message: seen.error.message };
    });
    assert.equal(out.code, "load_error");
    assert.equal(out.name, "MediaUploadError");
    assert.deepEqual([out.mu, out.loading], [null, false]);
    assert.match(out.message, /mediaupload\.wasm not found/);
  } finally {
    await bare.close();
  }
});

test("hooks: useUpload starts one upload per call in StrictMode, shows pause at once, lets go on unmount", async () => {
  const page = await openUnit();
  try {
    const out = await page.evaluate(async () => {
      const { h, hooks, mount, until, clickAndRead, StubUpload } = R;
      const made = [];
      const mu = { upload: (source, options) => (made.push(new StubUpload({ source, options })), made.at(-1)) };
      let view;
      function One() {
        view = hooks.useUpload(mu);
        return h("div", null,
          h("button", { id: "go", onClick: () => view.start("SOURCE", { url: "u" }) }),
          h("button", { id: "pause", onClick: view.pause }),
          h("output", null, `${view.state} ${view.fraction}`));
      }
      const m = mount(h(One));
      const r = { idle: `${view.state} ${view.upload}` };
      const text = () => m.div.querySelector("output").textContent;
      r.started = await clickAndRead(m.div.querySelector("#go"), text);
      await until(() => view.upload, "the upload");
      const up = made[0];
      r.made = made.length;
      r.args = [up.source, up.options.url];
      up.fire("progress", { loaded: 5, total: 10, lengthComputable: true, confirmed: 4, bytesPerSecond: 1, secondsLeft: 5 });
      await until(() => view.fraction === 0.5, "progress");
      r.progress = { ...view.progress };
      r.listening = up.listeners;
      // No statechange from the stub: the hook shows the Upload's own state at once.
      r.paused = await clickAndRead(m.div.querySelector("#pause"), text);
      r.calls = up.calls;
      m.unmount();
      r.afterUnmount = up.listeners;
      return r;
    });
    assert.deepEqual(out, {
      idle: "null null",
      started: "uploading null",
      made: 1,
      args: ["SOURCE", "u"],
      progress: { loaded: 5, total: 10, lengthComputable: true, confirmed: 4, bytesPerSecond: 1, secondsLeft: 5 },
      listening: 7,
      paused: "paused 0.5",
      calls: ["pause"],
      afterUnmount: 0,
    });

    // useUploadState of an Upload that settles while shown: result, fraction 1, no listener left.
    const settled = await page.evaluate(async () => {
      const { h, hooks, mount, until, StubUpload } = R;
      const up = new StubUpload();
      let view;
      const Show = () => ((view = hooks.useUploadState(up)), null);
      mount(h(Show));
      up.state = "done";
      up.fire("load", { loaded: 3, total: 3, lengthComputable: true, result: { status: 200 } });
      up.fire("loadend", { loaded: 3, total: 3, lengthComputable: true });
      await until(() => view.result, "the result");
      const failed = new StubUpload({ state: "failed" }); // settled before anyone asked
      failed.fail(Object.assign(new Error("no"), { code: "http_error" }));
      let late;
      const Late = () => ((late = hooks.useUploadState(failed)), null);
      mount(h(Late));
      await until(() => late.error, "the error");
      return { state: view.state, fraction: view.fraction, result: view.result, listeners: up.listeners, late: [late.state, late.error.code, failed.listeners] };
    });
    assert.deepEqual(settled, { state: "done", fraction: 1, result: { status: 200 }, listeners: 0, late: ["failed", "http_error", 0] });
    assert.deepEqual(page.warnings, []);
  } finally {
    await page.close();
  }
});

test("hooks: useQueue makes one queue for two adds, shows its progress and a pause of all at once, lets go on unmount", async () => {
  const page = await openUnit();
  try {
    const out = await page.evaluate(async () => {
      const { h, hooks, mount, until, clickAndRead, StubQueue } = R;
      const queues = [];
      const mu = { queue: (options) => (queues.push(new StubQueue(options)), queues.at(-1)) };
      let q;
      const Row = ({ up }) => h("li", null, hooks.useUploadState(up).state);
      function Many() {
        q = hooks.useQueue(mu, { concurrency: 2 });
        return h("div", null,
          h("button", { id: "add", onClick: () => (q.add({ size: 10 }, { url: "a" }), q.add({ size: 30 }, { url: "b" })) }),
          h("button", { id: "pause", onClick: q.pause }),
          h("ul", null, q.uploads.map((up, i) => h(Row, { key: i, up }))));
      }
      const m = mount(h(Many));
      const r = { before: [q.queue, q.uploads.length, q.fraction, q.idle] };
      const rows = () => [...m.div.querySelectorAll("li")].map((li) => li.textContent).join(" ");
      r.added = await clickAndRead(m.div.querySelector("#add"), rows);
      const queue = queues[0];
      r.made = [queues.length, queue.options.concurrency, q.uploads.length, q.total, q.idle];
      queue.loaded = 20;
      queue.dispatchEvent(new ProgressEvent("progress", { loaded: 20, total: 40 }));
      await until(() => q.fraction === 0.5, "the queue's progress");
      r.paused = await clickAndRead(m.div.querySelector("#pause"), rows);
      for (const up of queue.uploads) up.state = "done";
      queue.loaded = 40;
      queue.dispatchEvent(new Event("idle"));
      await until(() => q.idle, "idle");
      r.done = [q.fraction, q.loaded, q.total];
      r.listening = [queue.listeners, ...queue.uploads.map((u) => u.listeners)];
      m.unmount();
      r.afterUnmount = [queue.listeners, ...queue.uploads.map((u) => u.listeners)];
      return r;
    });
    assert.deepEqual(out, {
      before: [null, 0, null, true],
      added: "queued queued",
      made: [1, 2, 2, 40, false],
      paused: "paused paused",
      done: [1, 40, 40],
      listening: [2, 7, 7],
      afterUnmount: [0, 0, 0],
    });
    assert.deepEqual(page.warnings, []);
  } finally {
    await page.close();
  }
});

test("hooks: useUnfinished asks once per mount in StrictMode; resume, forget and a failed resume keep the list right", async () => {
  const page = await openUnit();
  try {
    const out = await page.evaluate(async () => {
      const { h, hooks, mount, until, StubUpload } = R;
      const item = (key) => ({
        key, name: key, size: 10, confirmed: 4, canResume: true, given: [], forgotten: 0,
        resume(options) { this.given.push(options); return (this.up = new StubUpload()); },
        async forget() { this.forgotten++; },
      });
      const items = { a: item("a"), b: item("b") };
      let asks = 0;
      let answer = ["a", "b"];
      const mu = { unfinished: async (options) => (asks++, (mu.options = options), answer.map((k) => items[k])) };
      let left;
      const List = () => ((left = hooks.useUnfinished(mu, { headers: { X: "1" } })), null);
      const keys = () => left.list.map((u) => u.key).join(",");
      const m = mount(h(List));
      const r = { first: [left.loading, keys()] };
      await until(() => !left.loading, "the list");
      r.mounted = [asks, keys(), mu.options.headers.X];
      const up = left.resume(items.a, { chunkSize: 262144 });
      await until(() => keys() === "b", "a off the list");
      r.resumed = [up === items.a.up, items.a.given[0].chunkSize];
      await left.refresh(); // a still runs: not listed, though the module lists it
      r.refreshed = [asks, keys()];
      up.fail(Object.assign(new Error("offline"), { code: "network_error" }));
      await until(() => asks === 3 && keys() === "a,b", "a back after its failure");
      r.failed = [asks, keys()];
      const forgetting = left.forget(items.b);
      await until(() => keys() === "a", "b off the list");
      await forgetting;
      answer = ["a"];
      r.forgot = [keys(), items.b.forgotten];
      m.unmount();
      const again = mount(h(List));
      await until(() => !left.loading && asks === 4, "the list of a new mount");
      r.remounted = [asks, keys()];
      again.unmount();
      return r;
    });
    assert.deepEqual(out, {
      first: [true, ""],
      mounted: [1, "a,b", "1"],
      resumed: [true, 262144],
      refreshed: [2, "b"],
      failed: [3, "a,b"],
      forgot: ["a", 1],
      remounted: [4, "a"],
    });
    assert.deepEqual(page.warnings, []);
  } finally {
    await page.close();
  }
});

test("hooks: useUnfinished takes off an item whose upload ended, here or in another tab; an answer asked before does not bring it back", async () => {
  const page = await openUnit();
  try {
    const out = await page.evaluate(async () => {
      const { h, hooks, mount, until } = R;
      const item = (key) => ({ key, name: key, size: 10, confirmed: 4, canResume: true, resume() {}, async forget() {} });
      const items = { a: item("a"), b: item("b") };
      let answer = () => Promise.resolve([items.a, items.b]);
      const mu = { unfinished: () => answer() };
      let left;
      const List = () => ((left = hooks.useUnfinished(mu)), null);
      const keys = () => left.list.map((u) => u.key).join(",");
      const m = mount(h(List));
      await until(() => !left.loading, "the list");
      const r = { mounted: keys() };
      // An ask in flight, whose answer was read before a's upload ended.
      let answerOld;
      answer = () => new Promise((resolve) => (answerOld = () => resolve([items.a, items.b])));
      const asked = left.refresh();
      // What the module posts once a record is no longer unfinished (resume-store.js).
      const other = new BroadcastChannel("mediaupload");
      other.postMessage({ key: "a", ended: true });
      await until(() => keys() === "b", "a off the list");
      r.ended = keys();
      answerOld();
      await asked;
      r.staleAnswer = keys();
      other.postMessage({ key: "b", loaded: 5, total: 10, confirmed: 5 }); // progress: no ending
      await new Promise((res) => setTimeout(res, 50));
      r.progress = keys();
      other.close();
      m.unmount();
      return r;
    });
    assert.deepEqual(out, { mounted: "a,b", ended: "b", staleAnswer: "b", progress: "b" });
    assert.deepEqual(page.warnings, []);
  } finally {
    await page.close();
  }
});

// --- the types ----------------------------------------------------------------------------------

test("types: react.d.ts declares what mediaupload/react exports, and each hook's members", async () => {
  const page = await openUnit();
  let runtime;
  try {
    runtime = await page.evaluate(async () => {
      const { h, hooks, mount, until } = R;
      const mu = { upload: () => new R.StubUpload(), queue: () => new R.StubQueue(), unfinished: async () => [] };
      const got = {};
      function All() {
        got.MediaUploadLoad = hooks.useMediaUpload();
        got.UploadView = hooks.useUploadState(null);
        got.UploadHook = hooks.useUpload(mu);
        got.QueueHook = hooks.useQueue(mu);
        got.UnfinishedHook = hooks.useUnfinished(mu);
        return null;
      }
      mount(h(All));
      await until(() => got.MediaUploadLoad.mu, "mu");
      const keys = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, Object.keys(v)]));
      return { exports: Object.keys(hooks), ...keys };
    });
  } finally {
    await page.close();
  }
  // Each runtime list against the declared keys, both ways: tsc names what is left over.
  const union = (names) => names.map((n) => JSON.stringify(n)).join(" | ") || "never";
  const lines = [
    `import * as M from "mediaupload/react";`,
    `import type * as T from "mediaupload/react";`,
    `import type { MediaUpload } from "mediaupload";`,
    // A loaded module goes to every hook as it is.
    `export function typed(mu: MediaUpload | null) { return [M.useUpload(mu), M.useQueue(mu), M.useUnfinished(mu)] as const; }`,
  ];
  for (const [name, keys] of Object.entries(runtime)) {
    const declared = name === "exports" ? "keyof typeof M" : `keyof T.${name}`;
    lines.push(`type ${name}Runtime = ${union(keys)};`);
    lines.push(`export const ${name}_declaredOnly: never = null as unknown as Exclude<${declared}, ${name}Runtime>;`);
    lines.push(`export const ${name}_runtimeOnly: never = null as unknown as Exclude<${name}Runtime, ${declared}>;`);
  }
  writeFileSync(join(app, "probe.ts"), lines.join("\n") + "\n");
  writeFileSync(
    join(app, "tsconfig.probe.json"),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: "esnext", moduleResolution: "bundler", target: "es2022", lib: ["es2022", "dom"], types: [], noErrorTruncation: true, skipLibCheck: false },
      files: ["probe.ts"],
    }),
  );
  const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
  await run(process.execPath, [tsc, "-p", join(app, "tsconfig.probe.json")], { cwd: app }).catch((err) =>
    assert.fail(`react.d.ts and the runtime differ (tsc over a probe of ${JSON.stringify(runtime)}):\n${err.stdout}${err.stderr}`),
  );
});
