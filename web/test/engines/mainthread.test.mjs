// Does the page wait for the module (docs/api.md, "Where the module runs")? In every engine, at
// the defaults (the module in a Worker), while load() runs, while a 1 GiB File from disk uploads
// with the default checksum (CRC32C to a Cloud Storage URL), and while 1,000 small files go
// through mu.queue, what the page's main thread ran (web/test/probe.mjs), all printed:
// - in every engine, a 10 ms timer on the page's thread: its worst delay, raw, and the same less
//   the time a Worker's timer beside it was late too (the overlap of the two late spells);
// - in Chromium, the DevTools trace: each task of the page's thread with its wall and thread
//   time (the CPU it used), and which of them ran the module's code (a script of /dist/: its
//   message handlers, microtasks, its compile), counted whole with what else ran in them;
// - in Firefox and WebKit, whose drivers give no trace, the system's count of the page's
//   thread's CPU time: how long it ran in each delay of the timer (its own work, whoever's).
// The bound, measured once (never again until it passes): in Chromium each task of the module's
// at most 25 ms of thread time with the 1,000 files (the add() calls and what follows them are
// one task of 12-17 ms on a quiet machine), 50 ms in the other cases; in Firefox and WebKit the
// page's thread at most 50 ms run in one delay. Where the system does not count (not Linux),
// the timer less the overlap.
// Run: node --test web/test/engines/mainthread.test.mjs   (MEDIAUPLOAD_ENGINES=firefox for one)

import assert from "node:assert/strict";
import { after } from "node:test";
import { createHash, randomFillSync } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MiB, forEachEngine, md5Base64, pseudoRandomBytes, useEnv } from "../harness.mjs";
import { pageFigures, startProbe, stopProbe, watchMainThread } from "../probe.mjs";

// The bounds (see the file's comment), ms.
const BOUND_MS = 50;
const QUEUE_BOUND_MS = 25;
const GiB = 1024 * MiB;

const PAGE = `<!doctype html><meta charset="utf-8"><script src="/test/errors.js"></script>
<input type="file" id="pick">`;

forEachEngine((engine) => {
  let env, ref, dir;
  after(() => dir && rmSync(dir, { recursive: true, force: true }));
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    env.web.page("/test/probe.html", PAGE);
    dir = mkdtempSync(join(tmpdir(), "mediaupload-mainthread-"));
  }, { engine, timeout: 300_000 });

  // A fresh page for one case: setup(p) readies it, then run(p) runs the case with the page's
  // main thread watched (web/test/probe.mjs: its timer, and the trace or the system's count of
  // its CPU time) from before it to after; resolves to run's result with { probe, trace, cpu }.
  const probed = async (setup, run) => {
    const p = await env.openPage("/test/probe.html");
    try {
      await setup(p);
      const watch = await watchMainThread(p);
      await p.evaluate(startProbe);
      const out = await run(p);
      const probe = await p.evaluate(stopProbe);
      return { ...out, probe, ...(await watch.stop(probe, (url) => url.includes("/dist/"))) };
    } finally {
      await p.close();
    }
  };
  // Prints a case's figures, raw first, and asserts the module's own work within bound ms where
  // a trace tells it (Chromium), the page's thread's within 50 ms elsewhere.
  const within = (what, out, bound = BOUND_MS) => {
    const f = pageFigures(out);
    for (const line of [...f.lines, out.note]) if (line) console.log(`# ${env.engineVersion}: ${what}: ${line}`);
    assert.equal(out.mode, "worker", "the default runs the module in a Worker");
    if (out.trace) assert.ok(out.trace.ours, "the trace shows the module's tasks");
    const limit = out.trace ? bound : BOUND_MS;
    assert.ok(f.own <= limit, `${what}: ${f.own.toFixed(1)} ms, over the bound of ${limit} ms: ${f.ownIs}`);
  };

  test("load(): the page goes on while the module loads", async () => {
    const out = await probed(
      (p) => p.evaluate(() => import("/dist/mediaupload.js").then((m) => void (window.mu = m))),
      (p) =>
        p.evaluate(async () => {
          const t0 = performance.now();
          const mu = await window.mu.load();
          const loaded = performance.now() - t0;
          await new Promise((r) => setTimeout(r, 100)); // what the load left behind runs too
          return { mode: mu.mode, note: `load() took ${Math.round(loaded)} ms` };
        }),
    );
    within("load()", out);
  });

  test("a 1 GiB File from disk at the defaults (CRC32C to a Cloud Storage URL)", async () => {
    const path = join(dir, "big.bin");
    const md5 = createHash("md5");
    const fd = openSync(path, "w");
    const block = Buffer.alloc(4 * MiB);
    for (let n = 0; n < GiB; n += block.length) {
      randomFillSync(block);
      md5.update(block);
      writeSync(fd, block);
    }
    closeSync(fd);
    const digest = md5.digest("base64");
    try {
      const name = unique("gib");
      const out = await probed(
        async (p) => {
          await p.setInputFiles("#pick", path);
          await p.evaluate(async () => {
            const { load } = await import("/dist/mediaupload.js");
            window.mu = await load();
          });
        },
        (p) =>
          p.evaluate(async (url) => {
            const file = document.getElementById("pick").files[0];
            const t0 = performance.now();
            const res = await mu.upload(file, { url }).then((r) => ({ status: r.status }), (e) => ({ code: e.code, message: e.message }));
            const s = (performance.now() - t0) / 1000;
            return { ...res, mode: mu.mode, note: `${(file.size / 1e6 / s).toFixed(0)} MB/s` };
          }, ref.uploadURL(name)),
      );
      within("a 1 GiB File, default checksum", out);
      assert.ok(out.status === 200 || out.status === 201, JSON.stringify(out));
      const obj = await ref.object(name);
      assert.equal(obj.md5Hash, digest, "stored byte-exact");
      const last = (await ref.log()).filter((e) => e.kind === "chunk" || e.kind === "media").at(-1);
      assert.equal(last.googHash, `crc32c=${obj.crc32c}`, "the last request stated the crc32c the server computed");
      await ref.reset(); // the object's gigabyte goes
    } finally {
      rmSync(path, { force: true });
    }
  });

  test("1,000 small files through mu.queue: every one stored md5-exact and reported stored", async () => {
    const N = 1000;
    const sizes = Array.from({ length: N }, (_, i) => 5_000 + ((i * 7919) % 45_000));
    const prefix = unique("q");
    const out = await probed(
      (p) =>
        p.evaluate(async (sizes) => {
          const { load } = await import("/dist/mediaupload.js");
          window.mu = await load();
          const { pseudoRandomBytes } = await import("/test/random.mjs");
          window.blobs = sizes.map((n, i) => new Blob([pseudoRandomBytes(n, 1000 + i)]));
        }, sizes),
      (p) =>
        p.evaluate(async ({ url, prefix }) => {
          const t0 = performance.now();
          const q = mu.queue();
          const ups = blobs.map((b, i) => q.add(b, { url: `${url}?name=${prefix}-${i}` }));
          const added = performance.now() - t0; // one task: the page's loop and add()'s own work
          const results = await Promise.allSettled(ups.map((u) => u.promise));
          const s = (performance.now() - t0) / 1000;
          const failed = results.filter((r) => r.status === "rejected").map((r) => r.reason?.code + ": " + r.reason?.message);
          return { mode: mu.mode, failed: failed.slice(0, 5), failures: failed.length, note: `${(blobs.length / s).toFixed(0)} files/s; the 1,000 add() calls took ${added.toFixed(0)} ms` };
        }, { url: ref.uploadURL("x").replace(/\?.*$/, ""), prefix }),
    );
    within("1,000 small files through mu.queue", out, QUEUE_BOUND_MS);
    assert.equal(out.failures, 0, `reported failed: ${out.failures} (${out.failed.join("; ")})`);
    const objects = new Map((await ref.objects()).map((o) => [o.name, o]));
    const wrong = sizes.map((n, i) => i).filter((i) => objects.get(`${prefix}-${i}`)?.md5Hash !== md5Base64(pseudoRandomBytes(sizes[i], 1000 + i)));
    assert.deepEqual(wrong, [], "every file stored md5-exact");
  });
});
