// End-to-end test of the demo: the serve program (web/cmd/serve, what `./build.sh serve` runs)
// on a free port, the demo page in headless Chromium, files picked through the file input.
// Every check is what a user would see: the rows reach 100 % and "md5 ✓ match", the objects
// arrive on the server intact (and their table fits a phone), pause holds, cancel stops (shown
// as "cancelled", not as a failure), the flaky network is survived and shows in every row
// (retry waits written like "1.6 s"), errors in the rows name the status, the URL and the
// server's reason (never its raw JSON; screenshots demo-error-*.png), the drop zone works from
// the keyboard with a visible focus, the targets say which bucket names they take, a 0-byte
// file ends at 100 %, the request log follows the newest request, fits a phone and shows a
// chunk the server kept only part of, a reload asks first, then the same file picked again
// resumes where it stopped, and no page asks for what is not there (a favicon's 404).
//
// Environment: MEDIAUPLOAD_SERVE (a prebuilt serve binary; default: go build it),
// MEDIAUPLOAD_DIST (default <repo>/dist), MEDIAUPLOAD_TEST_OUT (screenshots; default
// $TMPDIR/mediaupload-test-out), the README's screenshot among them (demo.png; with
// MEDIAUPLOAD_UPDATE_SCREENSHOT=1 it replaces docs/demo.png, and docs/demo-unfinished.png).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { CHUNK, DIST_DIR, KiB, MiB, REPO_ROOT, launchBrowser, md5Base64, pseudoRandomBytes, startServe } from "./harness.mjs";

const OUT_DIR = process.env.MEDIAUPLOAD_TEST_OUT ?? join(tmpdir(), "mediaupload-test-out");
// The README's picture: made by every run into OUT_DIR, and into docs/ (a tracked file) only
// when MEDIAUPLOAD_UPDATE_SCREENSHOT=1, so that a test run leaves the work tree as it was.
const SCREENSHOT = process.env.MEDIAUPLOAD_UPDATE_SCREENSHOT === "1" ? join(REPO_ROOT, "docs", "demo.png") : join(OUT_DIR, "demo.png");
// docs/api.md's picture of the unfinished uploads, likewise.
const SCREENSHOT_UNFINISHED = join(process.env.MEDIAUPLOAD_UPDATE_SCREENSHOT === "1" ? join(REPO_ROOT, "docs") : OUT_DIR, "demo-unfinished.png");

let serve; // { url, stop }
let browser;

before(async () => {
  if (!existsSync(join(DIST_DIR, "mediaupload.wasm"))) {
    throw new Error(`${DIST_DIR}/mediaupload.wasm is missing: run ./build.sh first (or set MEDIAUPLOAD_DIST)`);
  }
  mkdirSync(OUT_DIR, { recursive: true });
  [serve, browser] = await Promise.all([startServe(), launchBrowser()]);
});

after(async () => {
  await Promise.allSettled([browser?.close(), serve?.stop()]);
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** Files of the sizes that matter: exactly n × 256 KiB, odd sizes, a few MiB, a tiny text. */
function files(prefix, specs) {
  return specs.map(([name, size, seed, mimeType = "application/octet-stream"]) => ({
    name: `${prefix}-${name}`,
    mimeType,
    size,
    buffer: Buffer.from(pseudoRandomBytes(size, seed)),
  }));
}

const MIXED = [
  ["quarter-x3.bin", 3 * CHUNK, 1],
  ["quarter-x1.bin", CHUNK, 2],
  ["odd.bin", 1.5 * MiB + 17, 3],
  ["three-mib.bin", 3 * MiB + 1, 4],
  ["tiny.txt", 11, 5, "text/plain"],
];

/** Opens the demo in a new page and waits for the module; console errors are collected. */
async function openDemo({ width = 1100, height = 900 } = {}) {
  const page = await browser.newPage();
  await page.setViewportSize({ width, height });
  const consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e));
  const notFound = [];
  page.on("response", (r) => r.status() === 404 && notFound.push(r.url()));
  page.notFound = notFound;
  await page.goto(serve.url + "/");
  await page.waitForSelector("body[data-ready=yes]", { timeout: 15_000 });
  page.consoleErrors = consoleErrors;
  page.pageErrors = pageErrors;
  return page;
}

/** Sets the demo's choices as a user would. */
async function choose(page, o) {
  if (o.target) await page.check(`input[name=target][value=${o.target}]`);
  if (o.customURL !== undefined) await page.fill("#customURL", o.customURL);
  if (o.uploadType) await page.selectOption("#uploadType", o.uploadType);
  if (o.chunkSize !== undefined) await page.selectOption("#chunkSize", String(o.chunkSize));
  if (o.checksum !== undefined) await page.selectOption("#checksum", o.checksum);
  if (o.retry) await page.selectOption("#retry", o.retry);
  if (o.speed !== undefined) {
    await page.selectOption("#speed", String(o.speed));
    await waitThrottle(o.speed);
  }
  if (o.seed !== undefined) await page.fill("#seed", String(o.seed));
  if (o.flaky !== undefined) {
    await page.setChecked("#flaky", o.flaky);
    await page.waitForSelector(`body[data-flaky=${o.flaky ? "on" : "off"}]`);
  }
}

async function waitThrottle(rate) {
  for (let i = 0; i < 100; i++) {
    const r = await (await fetch(serve.url + "/api/throttle")).json();
    if (r.bytesPerSecond === rate) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the page did not set the speed to ${rate}`);
}

/** What the rows show, keyed by file name. */
async function rows(page) {
  return page.$$eval("li.file", (lis) =>
    Object.fromEntries(
      lis.map((li) => {
        const err = li.querySelector(".error");
        const notice = li.querySelector(".notice");
        return [
          li.dataset.name,
          {
            state: li.dataset.state,
            stateText: li.querySelector(".state").textContent,
            stateColor: getComputedStyle(li.querySelector(".state")).color,
            notice: notice.hidden ? "" : notice.textContent,
            eta: li.querySelector(".eta").textContent,
            resumedAt: Number(li.dataset.resumedAt ?? 0),
            retries: [...li.querySelectorAll(".log tr.retry td:nth-child(3)")].map((td) => td.textContent),
            md5: li.dataset.md5,
            md5Text: li.querySelector(".md5").textContent,
            pct: li.querySelector(".pct").textContent,
            bytes: li.querySelector(".bytes").textContent,
            error: err.hidden ? "" : err.textContent,
            errorCode: err.hidden ? "" : err.querySelector(".error-code")?.textContent ?? "",
            errorStatus: err.hidden ? "" : err.querySelector(".error-status")?.textContent ?? "",
            errorReason: err.hidden ? "" : err.querySelector(".error-reason")?.textContent ?? "",
            errorMessage: err.hidden ? "" : err.querySelector(".error-message")?.textContent ?? "",
            // What the network did, as the row sums it up ("1 retry · 1 chunk partly kept").
            faults: li.querySelector(".faults").hidden ? "" : li.querySelector(".faults").textContent,
            // Chunks the server kept only part of: their status cells.
            kept: [...li.querySelectorAll(".log tr.partial td.status")].map((td) => td.textContent),
            requests: Number(li.querySelector(".log .count").textContent),
            logRows: li.querySelectorAll(".log tbody tr").length,
            logText: [...li.querySelectorAll(".log tbody tr")].map((tr) => [...tr.cells].map((td) => td.textContent).join(" ")),
          },
        ];
      }),
    ),
  );
}

/** Waits until every named row is finished (done with its md5 checked, failed or cancelled). */
async function waitFinished(page, names, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const r = await rows(page);
    const finished = names.every((n) => {
      const row = r[n];
      return row && ((row.state === "done" && row.md5 && row.md5 !== "pending") || row.state === "failed" || row.state === "aborted");
    });
    if (finished) return r;
    if (Date.now() > end) throw new Error(`timed out; rows: ${JSON.stringify(r, null, 1)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function waitRow(page, name, cond, what, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const row = (await rows(page))[name];
    if (row && cond(row)) return row;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; row: ${JSON.stringify(row)}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

function assertAllMatch(r, list) {
  for (const f of list) {
    const row = r[f.name];
    assert.ok(row, `no row for ${f.name}`);
    assert.equal(row.state, "done", `${f.name}: ${row.state} ${row.error}`);
    assert.equal(row.pct, "100 %", `${f.name}: bar at ${row.pct}`);
    assert.equal(row.md5, "match", `${f.name}: ${row.md5Text}`);
    assert.match(row.md5Text, /md5 ✓ match/);
    assert.ok(row.requests >= 1, `${f.name}: no request logged`);
  }
}

/** The server's own listing, checked against md5s computed here in Node. */
async function assertStored(target, list) {
  const url = target === "ref" ? `${serve.url}/ref/_ref/objects` : `${serve.url}/storage/v1/b/demo/o`;
  const data = await (await fetch(url)).json();
  const objects = Array.isArray(data) ? data : data.items ?? [];
  for (const f of list) {
    const o = objects.find((x) => x.name === f.name);
    assert.ok(o, `${target}: no object ${f.name}`);
    assert.equal(String(o.size), String(f.size), `${target}: ${f.name} size`);
    assert.equal(o.md5Hash, md5Base64(f.buffer), `${target}: ${f.name} md5Hash`);
  }
}

async function shot(page, name) {
  await page.screenshot({ path: join(OUT_DIR, `demo-${name}.png`), fullPage: true });
}

/** The reference server's fault script, as the demo's flaky switch sets it (POST /ref/_ref/faults). */
async function setFaults(script) {
  const res = await fetch(`${serve.url}/ref/_ref/faults`, { method: script ? "POST" : "DELETE", body: script ? JSON.stringify(script) : undefined });
  assert.ok(res.ok, `faults: HTTP ${res.status}`);
}

/** A local port nothing listens on. */
async function deadPort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** A log's rows, as cells' text. */
function logCells(page, name) {
  return page.$$eval(`li.file[data-name="${name}"] .log tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
}

function assertNoStack(page) {
  assert.deepEqual(page.pageErrors.map(String), [], "uncaught errors in the page");
  const stacks = page.consoleErrors.filter((t) => /\n\s+at |\.wasm:|goroutine \d/.test(t));
  assert.deepEqual(stacks, [], "stack traces on the console");
}

// ---------------------------------------------------------------------------------------------
// Tests

for (const target of ["ref", "gcs"]) {
  test(`files picked in the page arrive intact on ${target === "ref" ? "the reference server" : "fake-gcs-server"}`, async () => {
    const page = await openDemo();
    try {
      await choose(page, { target, uploadType: "resumable", chunkSize: CHUNK, speed: 0, flaky: false });
      const list = files(target, MIXED);
      await page.setInputFiles("#files", list.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));
      const r = await waitFinished(page, list.map((f) => f.name));
      await shot(page, `${target}-done`);
      assertAllMatch(r, list);
      // 3 MiB + 1 in 256 KiB chunks: 13 chunk PUTs at least, after a session start of the
      // page's (fake-gcs-server's: of the demo's backend, not in the page's log).
      const least = target === "gcs" ? 13 : 14;
      assert.ok(r[`${target}-three-mib.bin`].requests >= least, `three-mib: ${r[`${target}-three-mib.bin`].requests} requests`);
      await assertStored(target, list);
      // The page lists what arrived.
      await page.click("#refresh");
      await page.waitForFunction(
        (n) => [...document.querySelectorAll("#objects td")].some((td) => td.textContent === n),
        list[0].name,
      );
      // Nothing the page asked for was missing (its icon is inline: no /favicon.ico).
      assert.deepEqual(page.notFound, [], "answers of 404");
      assert.deepEqual(page.consoleErrors.filter((t) => /404/.test(t)), [], "404s on the console");
      assertNoStack(page);
    } finally {
      await page.close();
    }
  });
}

// fake-gcs-server's sessions come from the demo's backend (/api/gcs/session): media picked
// for it goes resumable, as the note says, and the page starts no session (no POST of its own).
test("multipart to the reference server; media picked for fake-gcs-server goes resumable through the demo's backend", async () => {
  const page = await openDemo();
  try {
    const specs = [["small.bin", 100 * KiB + 3, 11], ["note.txt", 42, 12, "text/plain"]];
    await choose(page, { target: "ref", uploadType: "multipart", speed: 0, flaky: false });
    const a = files("mp", specs);
    await page.setInputFiles("#files", a.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));
    // The settings are read when a file is picked, so the first batch keeps its own.
    await choose(page, { target: "gcs", uploadType: "media" });
    assert.match(await page.textContent("#note"), /from the demo.s backend: media .*its uploads go resumable/);
    assert.match(await page.textContent("#targetInfo"), /POST \/api\/gcs\/session/);
    const b = files("media", specs);
    await page.setInputFiles("#files", b.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));
    assertAllMatch(await waitFinished(page, [...a, ...b].map((f) => f.name)), [...a, ...b]);
    for (const f of b) {
      const methods = (await logCells(page, f.name)).map((cells) => cells[1]);
      assert.deepEqual([...new Set(methods)], ["PUT"], `${f.name}: ${methods}`);
    }
    await assertStored("ref", a);
    await assertStored("gcs", b);
  } finally {
    await page.close();
  }
});

test("pause holds the upload and resume finishes it; the README screenshot", async () => {
  const page = await openDemo({ width: 860, height: 1060 });
  try {
    await choose(page, { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 1048576, flaky: false });
    const list = files("pause", [["big.bin", 2 * MiB, 21], ["photo.jpg", MiB + 5, 22, "image/jpeg"], ["notes.txt", 300 * KiB, 23, "text/plain"]]);
    const big = list[0].name;
    await page.setInputFiles("#files", list.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));

    await waitRow(page, big, (row) => parseInt(row.pct) >= 15, "big.bin at 15 %");
    await page.click(`li.file[data-name="${big}"] .pause`);
    const paused = await waitRow(page, big, (row) => row.state === "paused", "the paused state", 10_000);
    assert.ok(parseInt(paused.pct) < 100, `already finished: ${paused.pct}`);

    // The README's picture: one paused row with its request log open, others moving.
    await page.click(`li.file[data-name="${big}"] .log summary`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(250);
    await page.screenshot({ path: SCREENSHOT });
    await shot(page, "paused");
    const size = statSync(SCREENSHOT).size;
    assert.ok(size < 150_000, `docs/demo.png is ${size} bytes`);

    // Pause stops after the request in flight (docs/api.md): let that one land, then nothing moves.
    let settled = paused;
    for (const end = Date.now() + 8000; ; ) {
      await page.waitForTimeout(700);
      const now = (await rows(page))[big];
      if (now.requests === settled.requests && now.bytes === settled.bytes) break;
      assert.ok(Date.now() < end, `the paused upload kept moving: ${JSON.stringify(now)}`);
      settled = now;
    }
    assert.ok(settled.requests - paused.requests <= 1, `${settled.requests - paused.requests} requests after the pause`);
    await page.waitForTimeout(800);
    const still = (await rows(page))[big];
    assert.equal(still.state, "paused");
    assert.equal(still.requests, settled.requests, "requests were sent while paused");
    assert.equal(still.bytes, settled.bytes, "bytes moved while paused");

    await page.click(`li.file[data-name="${big}"] .resume`);
    const r = await waitFinished(page, list.map((f) => f.name), 30_000);
    assertAllMatch(r, list);
    assert.ok(r[big].requests > still.requests, "resume sent nothing");
    await assertStored("ref", list);

    // Phone width, with a long name among the stored objects: the name gives way, the size and
    // the download link stay in view.
    const long = "pause-a-photo-of-the-harbour-at-dusk-taken-from-the-ferry.jpg";
    await fetch(`${serve.url}/ref/upload/storage/v1/b/demo/o?uploadType=media&name=${encodeURIComponent(long)}`, { method: "POST", body: "x" });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click("#refresh");
    await page.waitForFunction((n) => [...document.querySelectorAll("#objects td")].some((td) => td.title === n), long);
    await shot(page, "phone-390");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 390px screen`);
    const table = await page.$eval("#objects", (t) => {
      const wrap = t.closest(".table-wrap");
      const box = wrap.getBoundingClientRect();
      return {
        overflowX: wrap.scrollWidth - wrap.clientWidth,
        cut: [...t.querySelectorAll("tbody tr")].filter((tr) => {
          const a = tr.querySelector("a").getBoundingClientRect();
          return a.width === 0 || a.right > box.right + 0.5 || tr.cells[1].getBoundingClientRect().right > box.right + 0.5;
        }).map((tr) => tr.cells[0].title),
      };
    });
    assert.ok(table.overflowX <= 0, `the objects' table is ${table.overflowX}px wider than its box`);
    assert.deepEqual(table.cut, [], "rows whose size or download link is cut off at 390 px");
    assertNoStack(page);
  } finally {
    await choose(page, { speed: 0 }).catch(() => {});
    await page.close();
  }
});

test("cancel stops the upload for good", async () => {
  const page = await openDemo();
  try {
    await choose(page, { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 1048576, flaky: false });
    const [f] = files("cancel", [["big.bin", 2 * MiB, 31]]);
    await page.setInputFiles("#files", [{ name: f.name, mimeType: f.mimeType, buffer: f.buffer }]);
    await waitRow(page, f.name, (row) => parseInt(row.pct) >= 10, "10 %");
    await page.click(`li.file[data-name="${f.name}"] .cancel`);
    const row = await waitRow(page, f.name, (row) => row.state === "aborted", "the cancelled state", 10_000);
    // The user's own choice: told plainly and in grey, not as a red failure.
    assert.equal(row.error, "", `an error is shown for a cancel: ${row.error}`);
    assert.equal(row.stateText, "cancelled");
    assert.match(row.notice, /^Cancelled at \S+ \S+ of 2\.00 MiB/, `notice: ${row.notice}`);
    assert.notEqual(row.stateColor, "rgb(197, 34, 31)", "the cancelled state is shown in the failure's red");
    await shot(page, "cancelled");
    await page.waitForTimeout(700);
    const later = (await rows(page))[f.name];
    assert.equal(later.requests, row.requests, "requests after cancel");
    const objects = await (await fetch(`${serve.url}/ref/_ref/objects`)).json();
    assert.ok(!objects.some((o) => o.name === f.name), "a cancelled upload was stored");
    assertNoStack(page);
  } finally {
    await choose(page, { speed: 0 }).catch(() => {});
    await page.close();
  }
});

test("flaky network with a fixed seed: every file still arrives intact", async () => {
  const page = await openDemo();
  try {
    await fetch(`${serve.url}/ref/_ref/log`, { method: "DELETE" });
    await choose(page, { target: "ref", uploadType: "resumable", chunkSize: CHUNK, retry: "fast", speed: 0, seed: 1234, flaky: true });
    const list = files("flaky", [
      ["a.bin", MiB + 5, 41],
      ["b.bin", 2 * MiB, 42],
      ["c.bin", 3 * CHUNK, 43],
      ["d.txt", 999, 44, "text/plain"],
    ]);
    await page.setInputFiles("#files", list.map(({ name, mimeType, buffer }) => ({ name, mimeType, buffer })));
    const r = await waitFinished(page, list.map((f) => f.name), 90_000);
    await shot(page, "flaky");
    assertAllMatch(r, list);
    await assertStored("ref", list);
    const log = await (await fetch(`${serve.url}/ref/_ref/log`)).json();
    const faults = log.filter((e) => e.fault);
    assert.ok(faults.length >= list.length, `only ${faults.length} faults were injected for ${list.length} files`);
    // Every upload meets the flaky network early, whatever the seed draws: each row shows a
    // retry (or a new session) or a chunk the server kept only part of. One fault the page
    // never sees: a connection dropped unanswered that the browser had reused sends the same
    // request again by itself (Chromium does, over HTTP/1.1 keep-alive): the server then logs
    // the same range twice, the first dropped (status 0), and the row one request fewer.
    let resentByBrowser = 0;
    for (const f of list) {
      const row = r[f.name];
      const mine = log.filter((e) => e.kind === "chunk" && e.contentRange.endsWith(`/${f.size}`));
      const shown = row.retries.length + row.kept.length;
      const unseen = mine.filter((e, i) => e.fault && e.status === 0 && mine.slice(i + 1).some((l) => l.contentRange === e.contentRange && !l.fault));
      const sums = () => `${f.name}: no retry or resumed chunk shown (${row.requests} requests): ${JSON.stringify(row.logText)}; ` +
        `the server's chunks: ${JSON.stringify(mine.map((e) => `${e.contentRange} ${e.fault || "-"} ${e.status}`))}`;
      if (shown === 0 && unseen.length > 0 && mine.filter((e) => e.fault).length === unseen.length) {
        resentByBrowser++;
        continue;
      }
      assert.ok(shown >= 1, sums());
      assert.match(row.faults, /^\d+ (retr|new session|chunks? partly kept)/, `${f.name}: the row does not sum up the faults`);
    }
    assert.ok(resentByBrowser < list.length, "no fault reached the page at all");
    if (resentByBrowser) console.log(`# ${resentByBrowser} upload(s) met only a dropped connection that the browser itself sent again`);
    // Retry waits are written for people ("#2 in 1.6 s"), not as "1601.533559 ms".
    const waits = list.flatMap((f) => r[f.name].retries);
    for (const w of waits) assert.match(w, /^(#\d+|new session) in (\d{1,3} ms|\d+(\.\d)? s)$/, `retry wait: ${w}`);
    assertNoStack(page);
  } finally {
    await choose(page, { flaky: false }).catch(() => {});
    await page.close();
  }
});

test("errors in the rows name the status, the URL and the server's reason, never its raw JSON; a checksum upload matches", async () => {
  const page = await openDemo({ width: 860, height: 900 });
  /** Uploads one small file with the settings chosen and returns its finished row. */
  const failOne = async (name) => {
    const [f] = files("err", [[name, 1000, 51]]);
    await page.setInputFiles("#files", [{ name: f.name, mimeType: f.mimeType, buffer: f.buffer }]);
    const row = (await waitFinished(page, [f.name], 20_000))[f.name];
    return { row, sel: `li.file[data-name="${f.name}"]` };
  };
  /** What a person reads in every error row: a code, a message, no JSON or HTML from the server. */
  const assertReadable = (row, code) => {
    assert.equal(row.state, "failed", JSON.stringify(row));
    assert.equal(row.errorCode, code, row.error);
    assert.ok(row.errorMessage.length > 20, `no message: ${row.error}`);
    assert.doesNotMatch(row.error, /[{}<>]|"error"/, `raw server text in the row: ${row.error}`);
  };
  try {
    // A 403 in Google's JSON form, from the reference server (set after the page has loaded:
    // it clears the faults on load, to match its flaky switch).
    await choose(page, { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 0, flaky: false });
    await setFaults({ rules: [{ on: "chunk", action: "status", status: 403, message: "The project exceeded its storage quota.", reason: "quotaExceeded", times: 1 }] });
    const quota = await failOne("quota.bin");
    await page.locator(quota.sel).screenshot({ path: join(OUT_DIR, "demo-error-403.png") });
    assertReadable(quota.row, "http_error");
    assert.equal(quota.row.errorStatus, "HTTP 403");
    assert.equal(quota.row.errorReason, "quotaExceeded");
    assert.match(quota.row.errorMessage, /403/);
    assert.ok(quota.row.errorMessage.includes("The project exceeded its storage quota."), quota.row.errorMessage);
    assert.ok(quota.row.errorMessage.includes(`${serve.url}/ref/upload/storage/v1/b/demo/o`), `no URL: ${quota.row.errorMessage}`);
    assert.doesNotMatch(quota.row.errorMessage, /upload_id=/, "the session URI's secret query is shown");

    // A 404: a bucket that does not exist (fake-gcs-server has only "demo"), as a custom target.
    const nowhere = `${serve.url}/upload/storage/v1/b/nosuchbucket/o`;
    await choose(page, { target: "custom", customURL: nowhere });
    const missing = await failOne("missing.bin");
    await page.locator(missing.sel).screenshot({ path: join(OUT_DIR, "demo-error-404.png") });
    assertReadable(missing.row, "http_error");
    assert.equal(missing.row.errorStatus, "HTTP 404");
    assert.equal(missing.row.errorReason, "notFound");
    assert.ok(missing.row.errorMessage.includes(nowhere), `no URL: ${missing.row.errorMessage}`);

    // A 404 that is not JSON (a path nothing serves): the message all the same, not the page.
    await choose(page, { customURL: `${serve.url}/no/such/upload` });
    const plain = await failOne("plain.bin");
    assertReadable(plain.row, "http_error");
    assert.equal(plain.row.errorStatus, "HTTP 404");
    assert.equal(plain.row.errorReason, "");
    assert.doesNotMatch(plain.row.error, /page not found/, "the server's raw body is shown");

    // The network fails: a port nothing listens on.
    const dead = `http://127.0.0.1:${await deadPort()}/upload/storage/v1/b/demo/o`;
    await choose(page, { customURL: dead });
    const t0 = Date.now();
    const net = await failOne("offline.bin");
    await page.locator(net.sel).screenshot({ path: join(OUT_DIR, "demo-error-network.png") });
    assertReadable(net.row, "network_error");
    assert.equal(net.row.errorStatus, "");
    assert.ok(net.row.errorMessage.includes(dead), `no URL: ${net.row.errorMessage}`);
    assert.ok(Date.now() - t0 < 15_000, `the network failure took ${Date.now() - t0} ms to show`);

    // Not a URL at all: refused before any request.
    await choose(page, { customURL: "not a url" });
    const bad = await failOne("notaurl.bin");
    assertReadable(bad.row, "invalid_argument");
    assert.equal(bad.row.requests, 0);
    await shot(page, "errors");

    // With a checksum the module hashes while it sends and compares with the server's.
    await choose(page, { target: "ref", checksum: "both" });
    const [g] = files("sum", [["y.bin", 5000, 52]]);
    await page.setInputFiles("#files", [{ name: g.name, mimeType: g.mimeType, buffer: g.buffer }]);
    const row2 = (await waitFinished(page, [g.name], 20_000))[g.name];
    assert.equal(row2.state, "done", `error shown: ${row2.error}`);
    assert.equal(row2.md5, "match");
    assertNoStack(page);
  } finally {
    await setFaults(null).catch(() => {});
    await page.close();
  }
});

test("keyboard: the drop zone shows its focus and Enter opens the picker; a 0-byte file ends at 100 %; small chunks on fake-gcs-server warn", async () => {
  const page = await openDemo();
  try {
    // Playwright catches file choosers only once it listens (set up asynchronously): listen from
    // the start, or an Enter pressed right away opens a chooser nobody sees.
    const chooser = page.waitForEvent("filechooser", { timeout: 30_000 });
    chooser.catch(() => {});
    // The warning for a fixed small chunk against the slow emulator, gone with the default.
    await choose(page, { target: "gcs", chunkSize: CHUNK });
    await page.waitForSelector("#note:not([hidden])", { timeout: 5000 });
    assert.match(await page.textContent("#note"), /Slow: fake-gcs-server/);
    // Which bucket names each target takes, said where it is picked: fake-gcs-server one, the
    // reference server any (and its objects of another bucket are listed with their bucket).
    assert.match(await page.textContent("#targetInfo"), /one bucket, demo/);
    await choose(page, { target: "ref", chunkSize: "", uploadType: "resumable", speed: 0, flaky: false });
    assert.equal(await page.isHidden("#note"), true, "a warning is left with the module's default chunk size");
    assert.match(await page.textContent("#targetInfo"), /\/ref\/upload\/storage\/v1\/b\/demo\/o.*any bucket name/);
    const other = await fetch(`${serve.url}/ref/upload/storage/v1/b/another-bucket/o?uploadType=media&name=kbd-elsewhere.txt`, { method: "POST", body: "hello" });
    assert.equal(other.status, 200, "the reference server refused another bucket");
    await page.click("#refresh");
    await page.waitForFunction(() => [...document.querySelectorAll("#objects td")].some((td) => td.textContent === "another-bucket/kbd-elsewhere.txt"), null, { timeout: 5000 });

    // The file input's own picker: as in an engine without showOpenFilePicker (Chromium's is
    // taken in the test of unfinished uploads; Playwright sees no chooser it opens).
    await page.evaluate(() => (window.showOpenFilePicker = undefined));
    // Tab from the last control before the zone reaches the file input inside it.
    await page.focus("#seed");
    let focused = "";
    for (let i = 0; i < 5 && focused !== "files"; i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => document.activeElement?.id ?? "");
    }
    assert.equal(focused, "files", "Tab does not reach the drop zone");
    const outline = await page.$eval("#drop", (el) => {
      const cs = getComputedStyle(el);
      return { style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) };
    });
    assert.ok(outline.style !== "none" && outline.width >= 2, `no visible focus ring: ${JSON.stringify(outline)}`);
    await page.keyboard.press("Enter");
    const fc = await chooser;
    await page.screenshot({ path: join(OUT_DIR, "demo-focus.png"), clip: await page.$eval("#drop", (el) => {
      const r = el.getBoundingClientRect();
      return { x: Math.max(0, r.x - 8), y: Math.max(0, r.y - 8), width: r.width + 16, height: r.height + 16 };
    }) });
    const empty = { name: "kbd-empty.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(0) };
    await fc.setFiles([empty]);
    const r = await waitFinished(page, [empty.name], 20_000);
    assert.equal(r[empty.name].state, "done", r[empty.name].error);
    assert.equal(r[empty.name].pct, "100 %", "a finished 0-byte file is not at 100 %");
    assert.equal(await page.getAttribute(`li.file[data-name="${empty.name}"] .bar`, "aria-valuenow"), "100");
    await assertStored("ref", [{ ...empty, size: 0 }]);
    // Screen readers are told.
    await page.waitForFunction(() => /kbd-empty\.bin: uploaded/.test(document.querySelector("#announce").textContent), null, { timeout: 5000 });
    assertNoStack(page);
  } finally {
    await page.close();
  }
});

test("the request log follows the newest request, fits a phone's width, and shows each chunk's range and size", async () => {
  const page = await openDemo({ width: 390, height: 844 });
  try {
    await choose(page, { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 4194304, flaky: false });
    const [f] = files("log", [["many.bin", 4 * MiB + 100, 61]]);
    await page.setInputFiles("#files", [{ name: f.name, mimeType: f.mimeType, buffer: f.buffer }]);
    const sel = `li.file[data-name="${f.name}"]`;
    await waitRow(page, f.name, (row) => row.requests >= 3, "three requests");
    await page.click(`${sel} .log summary`);
    const r = await waitFinished(page, [f.name], 30_000);
    assertAllMatch(r, [f]);
    const geo = await page.$eval(`${sel} .log-wrap`, (wrap) => {
      const w = wrap.getBoundingClientRect();
      const rows = [...wrap.querySelectorAll("tbody tr")];
      const last = rows.at(-1).getBoundingClientRect();
      const statusRight = Math.max(...[...wrap.querySelectorAll("td.status")].map((td) => td.getBoundingClientRect().right));
      return {
        scrolled: wrap.scrollHeight > wrap.clientHeight,
        atBottom: wrap.scrollHeight - wrap.scrollTop - wrap.clientHeight,
        lastVisible: last.top >= w.top - 1 && last.bottom <= w.bottom + 1,
        overflowX: wrap.scrollWidth - wrap.clientWidth,
        statusRight, wrapRight: w.right,
        cells: rows.map((tr) => [...tr.cells].map((td) => td.textContent)),
      };
    });
    await shot(page, "log-phone");
    assert.ok(geo.scrolled, "the log is too short to test following");
    assert.ok(geo.atBottom <= 2, `the log is ${geo.atBottom}px above its newest request`);
    assert.ok(geo.lastVisible, "the newest request is out of view");
    assert.ok(geo.overflowX <= 0, `the log is ${geo.overflowX}px wider than its box`);
    assert.ok(geo.statusRight <= geo.wrapRight + 0.5, `the status column is cut: ${geo.statusRight} > ${geo.wrapRight}`);
    // Chunk by chunk: its bytes and its size; the last one is the 100-byte tail.
    assert.ok(geo.cells.some((c) => c[2] === "0–262143" && c[3] === "256 KiB"), JSON.stringify(geo.cells.slice(0, 3)));
    const total = 4 * MiB + 100;
    assert.ok(geo.cells.some((c) => c[2] === `${4 * MiB}–${total - 1}` && c[3] === "100 B"), JSON.stringify(geo.cells.slice(-3)));

    // A partial keep: the server stores 1000 bytes of the second chunk and says so with a
    // shorter Range. That chunk's row says so, and the next range starts where the server said.
    await setFaults({ rules: [{ on: "chunk", action: "keep", keep: 1000, skip: 1, times: 1 }] });
    const [k] = files("log", [["kept.bin", 3 * CHUNK, 62]]);
    await page.setInputFiles("#files", [{ name: k.name, mimeType: k.mimeType, buffer: k.buffer }]);
    const rk = await waitFinished(page, [k.name], 20_000);
    assertAllMatch(rk, [k]);
    assert.equal(rk[k.name].kept.length, 1, JSON.stringify(rk[k.name].kept));
    assert.match(rk[k.name].kept[0], /^\d{3} · kept 1000 of 262144 bytes$/);
    assert.equal(rk[k.name].faults, "1 chunk partly kept");
    const cells = await logCells(page, k.name);
    const at = cells.findIndex((c) => c[2] === `${CHUNK}–${2 * CHUNK - 1}`);
    assert.match(cells[at]?.[4] ?? "", /kept 1000 of 262144 bytes/, JSON.stringify(cells));
    assert.equal(cells[at + 1]?.[2].split("–")[0], String(CHUNK + 1000), `the range after the partial keep: ${JSON.stringify(cells)}`);
    await page.click(`li.file[data-name="${k.name}"] .log summary`);
    await page.locator(`li.file[data-name="${k.name}"]`).screenshot({ path: join(OUT_DIR, "demo-log-kept.png") });
    assertNoStack(page);
  } finally {
    await setFaults(null).catch(() => {});
    await choose(page, { speed: 0 }).catch(() => {});
    await page.close();
  }
});

test("a reload asks first, and the same file picked again resumes where it stopped, with a sane estimate", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-reload-"));
  const page = await openDemo();
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.type());
    d.accept().catch(() => {});
  });
  try {
    // A file on disk, so that it is the same File (name, size, lastModified) after the reload.
    const size = 3 * MiB + 7;
    const buffer = Buffer.from(pseudoRandomBytes(size, 71));
    const path = join(dir, "reload-big.bin");
    writeFileSync(path, buffer);
    const name = "reload-big.bin";
    const settingsUsed = { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 1048576, flaky: false };
    await choose(page, settingsUsed);
    await page.click("h1"); // a user gesture: without one, browsers skip the question
    await page.setInputFiles("#files", path);
    await waitRow(page, name, (row) => parseInt(row.pct) >= 30 && parseInt(row.pct) < 80, "30 %", 20_000);

    await page.reload({ timeout: 15_000 });
    await page.waitForSelector("body[data-ready=yes]", { timeout: 15_000 });
    assert.ok(dialogs.includes("beforeunload"), `no "leave the page?" question: ${JSON.stringify(dialogs)}`);

    await choose(page, settingsUsed);
    await page.setInputFiles("#files", path);
    // Every estimate shown on the way: "estimating…" or a time that fits 3 MiB at 1 MB/s.
    const etas = new Set();
    let r;
    for (const end = Date.now() + 30_000; ; ) {
      r = (await rows(page))[name];
      if (r?.eta) etas.add(r.eta);
      if (r && ((r.state === "done" && r.md5 && r.md5 !== "pending") || r.state === "failed" || r.state === "aborted")) break;
      assert.ok(Date.now() < end, `the resumed upload did not finish: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 20));
    }
    assertAllMatch({ [name]: r }, [{ name }]);
    assert.ok(r.resumedAt >= 256 * KiB, `it did not resume (resumed at ${r.resumedAt})`);
    const log = await page.$$eval(`li.file[data-name="${name}"] .log tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
    assert.equal(log[0][1], "PUT", `the first request after the reload: ${log[0]}`);
    assert.equal(log[0][2], "status query");
    assert.ok(!log.some((c) => c[1] === "POST"), "a new session was started");
    const firstByte = Math.min(...log.filter((c) => /^\d+–\d+$/.test(c[2])).map((c) => Number(c[2].split("–")[0])));
    assert.equal(firstByte, r.resumedAt, "the first chunk after the reload does not start at the server's offset");
    for (const eta of etas) {
      if (eta === "estimating…") continue;
      const m = /^(?:< )?(\d+) s left$/.exec(eta);
      assert.ok(m && Number(m[1]) <= 20, `an absurd estimate after resuming: "${eta}" (all: ${[...etas]})`);
    }
    await assertStored("ref", [{ name, size, buffer }]);
    assertNoStack(page);
  } finally {
    await choose(page, { speed: 0 }).catch(() => {});
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("unfinished uploads after a reload: Resume goes on from a kept handle with no picker, Pick again from the file, Forget; the list's screenshot", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-unfinished-"));
  const page = await openDemo();
  page.on("dialog", (d) => d.accept().catch(() => {}));
  try {
    const size = 3 * MiB + 5;
    const handled = { name: "left-handle.bin", size, buffer: Buffer.from(pseudoRandomBytes(size, 81)) };
    const picked = { name: "left-file.bin", size, buffer: Buffer.from(pseudoRandomBytes(size, 82)) };
    const forgotten = { name: "left-forget.bin", size, buffer: Buffer.from(pseudoRandomBytes(size, 83)) };
    for (const f of [picked, forgotten]) writeFileSync(join(dir, f.name), f.buffer);
    const settingsUsed = { target: "ref", uploadType: "resumable", chunkSize: CHUNK, speed: 1048576, flaky: false };
    await choose(page, settingsUsed);
    // Chromium's picker gives FileSystemFileHandles. Playwright cannot answer it (it sees no
    // chooser), so the page's showOpenFilePicker answers with a real handle of the origin
    // private file system: the demo's click, the handle and the module's keeping of it are real.
    await page.evaluate(async ({ name, b64 }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const root = await navigator.storage.getDirectory();
      const h = await root.getFileHandle(name, { create: true });
      const w = await h.createWritable();
      await w.write(bytes);
      await w.close();
      window.showOpenFilePicker = async () => [h];
    }, { name: handled.name, b64: handled.buffer.toString("base64") });
    await page.click("#drop");
    await page.setInputFiles("#files", [picked, forgotten].map((f) => join(dir, f.name)));
    for (const f of [handled, picked, forgotten]) await waitRow(page, f.name, (row) => parseInt(row.pct) >= 15, `${f.name} at 15 %`, 30_000);

    await page.reload({ timeout: 15_000 });
    await page.waitForSelector("body[data-ready=yes]", { timeout: 15_000 });
    await choose(page, { ...settingsUsed, speed: 0 });
    const listed = () =>
      page.$$eval("#unfinished li.left", (lis) =>
        Object.fromEntries(lis.map((li) => [li.dataset.name, {
          held: li.querySelector(".held").textContent,
          how: li.querySelector(".how").textContent,
          resume: !li.querySelector(".go").hidden,
          pick: !li.querySelector(".pick").hidden,
        }])),
      );
    const list = await listed();
    assert.deepEqual(Object.keys(list).sort(), [forgotten.name, picked.name, handled.name].sort(), JSON.stringify(list));
    assert.equal(await page.isVisible("#unfinished"), true);
    for (const [name, it] of Object.entries(list)) {
      const pct = Number(/^(\d+) % on the server$/.exec(it.held)?.[1]);
      assert.ok(pct >= 8 && pct < 100, `${name}: ${it.held}`);
    }
    assert.deepEqual([list[handled.name].resume, list[handled.name].pick], [true, false], "the handle's upload: Resume");
    assert.deepEqual([list[picked.name].resume, list[picked.name].pick], [false, true], "a File's upload: Pick again");
    assert.match(list[picked.name].how, /pick the same file again/);
    assert.match(await page.textContent("#empty"), /left unfinished/);
    await page.screenshot({ path: SCREENSHOT_UNFINISHED, fullPage: true, clip: await page.$eval("#unfinished", (el) => {
      const r = el.getBoundingClientRect();
      return { x: Math.max(0, r.x - 8), y: Math.max(0, r.y + window.scrollY - 8), width: r.width + 16, height: r.height + 16 };
    }) });

    await page.click(`#unfinished li.left[data-name="${forgotten.name}"] .forget`);
    await page.waitForFunction((n) => !document.querySelector(`#unfinished li.left[data-name="${n}"]`), forgotten.name, { timeout: 5000 });
    await page.click(`#unfinished li.left[data-name="${handled.name}"] .go`);
    await page.setInputFiles(`#unfinished li.left[data-name="${picked.name}"] .pick input`, join(dir, picked.name));
    const r = await waitFinished(page, [handled.name, picked.name], 30_000);
    assertAllMatch(r, [handled, picked]);
    for (const f of [handled, picked]) {
      assert.ok(r[f.name].resumedAt >= 256 * KiB, `${f.name} did not go on (resumed at ${r[f.name].resumedAt})`);
      const log = await logCells(page, f.name);
      assert.equal(log[0][2], "status query", `${f.name}: the first request asks the server`);
      assert.ok(!log.some((c) => c[1] === "POST"), `${f.name}: a new session was started`);
    }
    await assertStored("ref", [handled, picked]);
    // Nothing is left: the list is gone, and stays so after another reload.
    await page.waitForSelector("#unfinished", { state: "hidden", timeout: 5000 });
    await page.reload({ timeout: 15_000 });
    await page.waitForSelector("body[data-ready=yes]", { timeout: 15_000 });
    assert.equal(await page.getAttribute("body", "data-unfinished"), "0");
    assertNoStack(page);
  } finally {
    await choose(page, { speed: 0 }).catch(() => {});
    await page.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Record uploads while recording and ends soon after Stop; gzip on the fly stores the file compressed", async () => {
  const page = await openDemo();
  try {
    await choose(page, { target: "ref", uploadType: "resumable", speed: 0, flaky: false });
    // A recording (no camera in the test browser: the page's test pattern).
    await page.click("#record");
    await page.waitForFunction(() => [...document.querySelectorAll("li.file")].some((li) => li.dataset.name.startsWith("recording-")), null, { timeout: 10_000 });
    const name = await page.evaluate(() => [...document.querySelectorAll("li.file")].find((li) => li.dataset.name.startsWith("recording-")).dataset.name);
    await new Promise((r) => setTimeout(r, 2500));
    await page.click("#record");
    const stoppedAt = Date.now();
    const rec = await waitRow(page, name, (row) => row.state === "done" || row.state === "failed", "the recording's upload", 20_000);
    assert.equal(rec.state, "done", JSON.stringify(rec));
    const afterStop = Date.now() - stoppedAt;
    assert.ok(afterStop < 8000, `the upload ended ${afterStop} ms after Stop`);
    const stored = Buffer.from(await (await fetch(`${serve.url}/ref/_ref/objects/${encodeURIComponent(name)}`)).arrayBuffer());
    assert.deepEqual([...stored.subarray(0, 4)], [0x1a, 0x45, 0xdf, 0xa3], `a WebM: ${stored.length} bytes`);

    // gzip on the fly: the object is the file, compressed.
    await page.check("#gzip");
    const [file] = files("gz", [["notes.txt", 700 * KiB + 3, 31, "text/plain"]]);
    await page.setInputFiles("#files", [{ name: file.name, mimeType: file.mimeType, buffer: file.buffer }]);
    const gz = await waitRow(page, `${file.name}.gz`, (row) => row.state === "done" || row.state === "failed", "the gzip upload", 30_000);
    assert.equal(gz.state, "done", JSON.stringify(gz));
    const { gunzipSync } = await import("node:zlib");
    const obj = Buffer.from(await (await fetch(`${serve.url}/ref/_ref/objects/${encodeURIComponent(file.name + ".gz")}`)).arrayBuffer());
    assert.ok(gunzipSync(obj).equals(Buffer.from(file.buffer)), "the stored object unzips to the file");
    await page.uncheck("#gzip");
    await shot(page, "streams");
    assertNoStack(page);
  } finally {
    await page.close();
  }
});
