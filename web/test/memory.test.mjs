// Many uploads in one page (issue 8): every upload lets go of what it held, with the module in
// its Worker (the default) and on the page.
// Run: node --test web/test/memory.test.mjs   (needs dist/ built by ./build.sh, and /usr/bin/chromium)
//
// A page's in-memory Blobs share one store of a few hundred MB, and a Blob stays in it while
// any reference to it or to a slice of it lives (docs/protocol.md section 6). A module that keeps
// the Blobs of settled uploads fills it: every later upload of the page fails, plain fetch
// included. Each test here uploads over a gibibyte of Blobs made in the page
// (`new Blob([bytes])`, what canvas.toBlob, MediaRecorder and zip libraries hand a page), one
// after another in one page, four times the point where that happened, keeping no reference
// to them in the test's own code; then a plain fetch of a new Blob must still work, and the
// Blob store (read from chrome://blob-internals) must be nearly empty again.
//
// The uploads are driven from here one page.evaluate at a time, so that the page holds
// nothing between them, and the reference server is reset after each (it keeps objects in
// memory). Objects are checked by size and MD5 on the server, not downloaded.
//
// V8 runs its collector after each upload here. It cannot see a Blob's bytes (they live in
// the browser process), so left to itself it collects the test's dropped Blobs late: on a
// 24 GiB machine the store reached 1 GB before it did. Where Chromium's store is smaller (its
// limit follows the machine's memory and memory pressure), that is, most likely, what CI saw
// once: the 27th upload, 488 MB in, failed every attempt, while a plain fetch of a new Blob
// made after the failure (and after a collection had emptied the store to 163 MB) worked; a
// failure of the test's own Blobs, not the module's.
// A collection frees only what nobody references, so a module that keeps settled uploads'
// Blobs (or leaves them to Go's collector) still fills the store, and the check after every
// tenth upload says so early.

import assert from "node:assert/strict";
import { MiB, POOL_SIZE, pooledBytes, useEnv } from "./harness.mjs";

const GiB = 1024 * MiB;
// After the uploads and a garbage collection, the Blob store holds at most this much more than
// before. Chromium itself keeps the bodies of a page's last couple of dozen requests for a
// while: a plain-JavaScript fetch loop over the same Blobs leaves about 23 Blobs, 184 MiB, and
// that figure does not grow with the number of uploads. A module that keeps settled uploads'
// Blobs holds over a gigabyte here (about 1.6 GB measured before the fix) and fails long before.
// The test collects the page's garbage; the module's Worker (where it runs by default) the
// module has collect itself after each 8 MiB of settled Blobs (engine/host.js, NUDGE_EVERY),
// which left 220-270 MB where the page left 200-250, and 990 MB after 30 uploads without it.
// The slices a checksum reads of a Blob count towards the nudge too: without that, the crc32c
// case held 349-357 MB after 40 uploads (2026-11-29), with it at most 240-246 MB, 194-216 at
// the end. Files made in script count alike (engine/host.js): without that, 365.6 MB after 30
// uploads (2026-12-06), with it at most 227 MB, 238 at the end.
const HELD_BOUND = 320 * MiB;
let env, ref;
const { test } = useEnv((e) => {
  env = e;
  ({ ref } = env);
}, { timeout: 240_000 });

// Blobs of 8 to 32 MiB (any byte count) cut at seeded places from the harness's pool, until
// they add up to at least 1 GiB.
function plan(seed) {
  let x = seed >>> 0;
  const next = (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return Math.floor((x / 2 ** 32) * n);
  };
  const out = [];
  for (let total = 0; total < GiB; ) {
    const size = 8 * MiB + 1 + next(24 * MiB);
    out.push({ size, offset: next(POOL_SIZE - size + 1) });
    total += size;
  }
  return out;
}

const mb = (n) => (n / MiB).toFixed(1);
const memoryText = (m) => `${m.blobs} blobs, ${mb(m.bytes)} MB`;

// A plain fetch PUT of a new 8 MiB Blob (a media upload to the reference server): what a page
// that never loaded the module does. Resolves to { status } or { error }.
function plainFetch(page, url) {
  return page.evaluate(async (url) => {
    try {
      const res = await fetch(url, { method: "PUT", body: T.pooled(0, 8 * 1024 * 1024) });
      return { status: res.status };
    } catch (e) {
      return { error: String(e?.message ?? e) };
    }
  }, url);
}

/**
 * Uploads the Blobs of plan(seed) one after another in a new page with `options`; fate(i) is
 * "ok" (must succeed and be stored), "abort" (aborted once the server confirmed some bytes,
 * by up.abort() or by the signal, alternately) or "fail" (the second chunk gets a 403, for
 * good). Then checks a plain fetch and the Blob store.
 */
async function uploadGiB(t, label, { seed, options = {}, fate = () => "ok", load, file = false }) {
  const page = await env.openPage();
  try {
    await page.evaluate((load) => T.load(load), load);
    await env.browser.collectGarbage(page);
    const before = await env.browser.blobMemory();
    const figures = { ok: 0, aborted: 0, failed: 0, bytes: 0, retries: 0 };
    let peak = before;
    const uploads = plan(seed);
    for (const [i, { size, offset }] of uploads.entries()) {
      const name = `${label}-${i}`;
      const want = fate(i);
      await ref.reset();
      // The session is started and a first chunk stored; the next chunk is refused for good
      // (http_error, not retried).
      if (want === "fail") await ref.setFaults([{ on: "chunk", action: "status", status: 403, skip: 1 }]);
      const out = await page.evaluate(
        async ({ url, size, offset, options, want, bySignal, file }) => {
          const mu = await T.load();
          const controller = new AbortController();
          // A File made in script lives in the Blob store as any Blob made in memory does.
          const source = file ? new File([T.pooled(offset, size)], "made.bin", { type: "application/octet-stream" }) : T.pooled(offset, size);
          const up = mu.upload(source, { ...options, url, signal: controller.signal });
          let retries = 0;
          let firstRetry;
          up.addEventListener("retry", (e) => {
            retries++;
            firstRetry ??= { status: e.status, error: e.error };
          });
          if (want === "abort") {
            up.addEventListener("progress", (e) => e.confirmed > 0 && (bySignal ? controller.abort() : up.abort()));
          }
          try {
            await up;
            return { ok: true, retries };
          } catch (e) {
            return { ok: false, error: T.errorData(e), retries, firstRetry };
          }
        },
        { url: ref.uploadURL(name), size, offset, options, want, bySignal: i % 2 === 1, file },
      );
      figures.retries += out.retries;
      figures.bytes += size;
      const what = `upload ${i + 1} of ${uploads.length} (${mb(size)} MB, ${mb(figures.bytes - size)} MB of Blobs uploaded before it)`;
      if (want === "ok" && !out.ok) {
        // Say what the page is left with: the symptom is that plain fetch fails too.
        const fetched = await plainFetch(page, ref.uploadURL(`${label}-plain`) + "&uploadType=media");
        const held = await env.browser.blobMemory();
        assert.fail(
          `${what} failed: ${out.error.code}: ${out.error.message}\n` +
            `its first retry: ${JSON.stringify(out.firstRetry)}\n` +
            `a plain fetch PUT of a new 8 MiB Blob then: ${JSON.stringify(fetched)}; Blob store: ${memoryText(held)}`,
        );
      }
      if (want === "ok") {
        assert.deepEqual(await env.checkObject(name, pooledBytes(offset, size), { download: false }), [], what);
        figures.ok++;
      } else if (want === "abort") {
        assert.equal(out.error?.code, "aborted", `${what}: ${JSON.stringify(out)}`);
        figures.aborted++;
      } else {
        assert.equal(out.error?.code, "http_error", `${what}: ${JSON.stringify(out)}`);
        assert.equal(out.error.status, 403, what);
        figures.failed++;
      }
      await env.browser.collectGarbage(page);
      if (i % 10 === 9) {
        const m = await env.browser.blobMemory();
        if (m.bytes > peak.bytes) peak = m;
        assert.ok(
          m.bytes <= before.bytes + HELD_BOUND,
          `after ${what} and a GC the Blob store holds ${memoryText(m)} (before: ${memoryText(before)})`,
        );
      }
    }
    await ref.reset();

    // A plain fetch of a new Blob still works in this page.
    const plain = `${label}-plain`;
    const fetched = await plainFetch(page, ref.uploadURL(plain) + "&uploadType=media");
    assert.deepEqual(fetched, { status: 200 }, "a plain fetch PUT of a new 8 MiB Blob after the uploads");
    assert.deepEqual(await env.checkObject(plain, pooledBytes(0, 8 * MiB), { download: false }), []);

    // What the Blob store holds now, and once V8 has collected what nobody references.
    await page.evaluate(() => T.sleep(500));
    const held = await env.browser.blobMemory();
    await env.browser.collectGarbage(page);
    await page.evaluate(() => T.sleep(500));
    const collected = await env.browser.blobMemory();
    t.diagnostic(
      `${label}: ${uploads.length} Blobs, ${mb(figures.bytes)} MB: ${figures.ok} uploaded, ${figures.aborted} aborted, ` +
        `${figures.failed} failed, ${figures.retries} retries`,
    );
    t.diagnostic(
      `${label}: blob memory before: ${memoryText(before)}; highest seen: ${memoryText(peak)}; ` +
        `after: ${memoryText(held)}; after a GC: ${memoryText(collected)}`,
    );
    assert.ok(figures.bytes >= GiB);
    assert.ok(
      collected.bytes <= before.bytes + HELD_BOUND,
      `the Blob store still holds ${memoryText(collected)} after the uploads settled and a GC (before: ${memoryText(before)})`,
    );
  } finally {
    await page.close();
  }
}

test("1 GiB of in-memory Blobs of 8-32 MiB, one after another in one page: every upload succeeds", (t) =>
  uploadGiB(t, "plain", { seed: 1 }));

test("the same with the module on the page (worker: false)", (t) => uploadGiB(t, "on-page", { seed: 4, load: { worker: false } }));

// A File made in script (`new File([bytes])`: what an app that names its Blob hands over) is
// in the Blob store as a Blob is; script cannot tell it from a File on disk (engine/host.js).
test("the same with Files made in script", (t) => uploadGiB(t, "made-files", { seed: 5, file: true }));

test('the same with checksum: "crc32c"', (t) => uploadGiB(t, "crc32c", { seed: 2, options: { checksum: "crc32c" } }));

// (Fixed chunks: at "auto" an upload after the first sizes its first chunk from the link the
// page has measured, which on loopback is the whole Blob: nothing would be confirmed to abort
// after, nor a second chunk to refuse.)
test("the same with aborted and failed uploads in the mix: those let go too", (t) =>
  uploadGiB(t, "mixed", { seed: 3, options: { chunkSize: 8 * MiB }, fate: (i) => ["ok", "abort", "ok", "fail"][i % 4] }));
