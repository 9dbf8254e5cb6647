// The page-side objects in every engine: `resume: true` across a reload (IndexedDB and Web
// Locks), the queue, and the XMLHttpRequest facade, against the reference server.
// Run: node --test web/test/engines/resume.test.mjs

import assert from "node:assert/strict";
import { CHUNK, MiB, forEachEngine, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env, ref;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
  }, { engine, timeout: 90_000 });

  test("resume: true goes on after a reload from what the server holds, without a new session", async () => {
    const name = unique("resume");
    const size = 4 * MiB;
    const url = ref.uploadURL(name);
    const p = await env.openPage();
    try {
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } }); // 2 MB/s: 4 MiB takes 2 s
      // The same File (name, size, lastModified, type) is made again after the reload.
      const start = ({ url, size, watch }) =>
        T.load().then((mu) => {
          window.result = null;
          window.confirmed = 0;
          const file = T.file(size, 61, "resume.bin", { type: "application/octet-stream" });
          window.states = [];
          const up = mu.upload(file, { url, resume: true, chunkSize: 512 * 1024, onProgress: (q) => (window.confirmed = q.confirmed), onStateChange: (s) => window.states.push(s) });
          up.then((r) => (window.result = { ok: true, status: r.status }), (e) => (window.result = { ok: false, code: e.code }));
          return watch ? null : up.sessionURL;
        });
      await p.evaluate(start, { url, size });
      await p.waitForFunction(() => window.confirmed >= 1024 * 1024, undefined, { timeout: 30_000 });
      await p.reload();
      await p.waitForFunction(() => window.T);
      await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
      const before = (await ref.log()).filter((e) => e.kind === "start").length;
      await ref.clearLog();
      await p.evaluate(start, { url, size, watch: true });
      const out = await p.waitForFunction(() => window.result, undefined, { timeout: 60_000 });
      assert.ok(out.ok, JSON.stringify(out));
      assert.deepEqual(await env.checkStored(name, size, 61), []);
      const log = (await ref.log()).filter((e) => e.kind !== "preflight");
      assert.equal(before, 1);
      const states = await p.evaluate(() => window.states);
      assert.equal(log.filter((e) => e.kind === "start").length, 0, `no new session after the reload: ${log.map((e) => e.kind + ":" + e.status).join(" ")}; states ${states}`);
      assert.equal(log[0].kind, "query", "the first request after the reload asks the session what it holds");
      const sent = log.filter((e) => e.kind === "chunk").reduce((n, e) => n + e.contentLength, 0);
      assert.ok(sent <= size - MiB, `only the rest is sent after the reload (${sent} of ${size})`);
    } finally {
      await p.close();
    }
  });

  test("the queue: five uploads, two at a time, all stored, total progress and idle", async () => {
    const p = await env.openPage();
    try {
      const names = [1, 2, 3, 4, 5].map((i) => unique("queued" + i));
      const out = await p.evaluate(async (urls) => {
        const mu = await T.load();
        const q = mu.queue({ concurrency: 2 });
        let most = 0;
        const idle = new Promise((r) => q.addEventListener("idle", r, { once: true }));
        const ups = urls.map((url, i) => q.add(T.blob(300_000 + i * 100_000, 70 + i), { url, chunkSize: 262144 }));
        const timer = setInterval(() => (most = Math.max(most, ups.filter((u) => u.state === "uploading" || u.state === "starting").length)), 2);
        const results = await Promise.all(ups.map((u) => u.then((r) => r.status)));
        await idle;
        clearInterval(timer);
        return { results, most, loaded: q.loaded, total: q.total };
      }, names.map((n) => ref.uploadURL(n)));
      assert.deepEqual(out.results, [201, 201, 201, 201, 201]);
      assert.ok(out.most <= 2, `at most two at once, saw ${out.most}`);
      assert.equal(out.loaded, out.total);
      for (const [i, n] of names.entries()) assert.deepEqual(await env.checkStored(n, 300_000 + i * 100_000, 70 + i), []);
    } finally {
      await p.close();
    }
  });

  test("the XMLHttpRequest facade: a FormData of one File, events in XHR's order, the answer", async () => {
    const p = await env.openPage();
    try {
      const name = unique("xhr");
      const size = 3 * CHUNK + 3;
      const out = await p.evaluate(async ({ url, size }) => {
        const mu = await T.load();
        const x = new mu.XMLHttpRequest({ formFields: (fields, file) => ({ name: fields.name ?? file.name }) });
        const seen = [];
        for (const t of ["loadstart", "progress", "load", "loadend"]) x.upload.addEventListener(t, () => seen.at(-1) !== "upload." + t && seen.push("upload." + t));
        for (const t of ["loadstart", "load", "loadend"]) x.addEventListener(t, () => seen.push(t));
        const done = new Promise((r) => (x.onloadend = r));
        x.open("POST", url);
        const form = new FormData();
        form.append("file", T.file(size, 81, "form.bin"));
        x.send(form);
        await done;
        return { seen, readyState: x.readyState, status: x.status, response: JSON.parse(x.responseText) };
      }, { url: ref.uploadURL(name), size });
      assert.equal(out.readyState, 4);
      assert.equal(out.status, 201);
      assert.equal(out.response.size, String(size));
      assert.deepEqual(out.seen, ["loadstart", "upload.loadstart", "upload.progress", "upload.load", "upload.loadend", "load", "loadend"]);
      assert.deepEqual(await env.checkStored(name, size, 81), []);
    } finally {
      await p.close();
    }
  });
});
