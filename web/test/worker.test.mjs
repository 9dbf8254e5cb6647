// Browser tests of worker mode (docs/api.md, "Loading": load({ worker: true })): the module
// runs in a dedicated Worker and the page's API is the same: byte-exact uploads with the same
// events in the same order as on the page, pause/resume/abort with up.state changing at once,
// getHeaders relayed (a throwing one is auth_error), a queue, the XMLHttpRequest facade, a
// stream (transferred), a reload mid-upload with resume: true, and a clear error where the
// page's Content-Security-Policy forbids workers.

import assert from "node:assert/strict";
import { MiB, useEnv } from "./harness.mjs";

let env, ref;
const { test, unique } = useEnv((e) => {
  env = e;
  ref = e.ref;
  // A page whose Content-Security-Policy forbids workers.
  env.web.route("/test/csp.html", (req, res) => {
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": "worker-src 'none'",
      "Cache-Control": "no-store",
    });
    res.end(`<!doctype html><meta charset="utf-8"><script type="module" src="/test/helpers.js"></script>`);
    return true;
  });
});

// A page whose module runs in a worker (or, with worker false, on the page): T.load is made to
// pass { worker }.
async function workerPage(worker = true) {
  const p = await env.openPage();
  await p.evaluate((worker) => {
    const load = T.load.bind(T);
    T.load = (options) => load({ ...options, worker });
  }, worker);
  return p;
}

test("an upload in worker mode lands byte-exact, with the events of page mode in the same order", async () => {
  const names = [unique("page"), unique("worker")];
  const size = 3 * 262144 + 11;
  const shapes = [];
  for (const [i, page] of [await workerPage(false), await workerPage()].entries()) {
    try {
      const r = await page.evaluate(
        ({ url, size }) => T.run(T.file(size, 61, "w.bin"), { url, chunkSize: 262144, checksum: "crc32c" }),
        { url: ref.uploadURL(names[i]), size },
      );
      assert.ok(r.ok, JSON.stringify(r.error));
      assert.deepEqual(await env.checkStored(names[i], size, 61), []);
      // Consecutive repeats (progress, request) collapse: their count depends on timing.
      shapes.push(r.events.map((e) => e.type + (e.state ? `:${e.state}` : "")).filter((x, j, a) => x !== a[j - 1]));
      // Worker mode made one dedicated Worker, named for the module; page mode none.
      assert.deepEqual(page.workers().length, i === 1 ? 1 : 0, "the page's workers");
    } finally {
      await page.close();
    }
  }
  assert.deepEqual(shapes[1], shapes[0]);
});

test("worker mode: pause, resume and abort change up.state at once; getHeaders is relayed and a throwing one is auth_error", async () => {
  const p = await workerPage();
  try {
    const out = await p.evaluate(async ({ a, b, c }) => {
      const mu = await T.load();
      const up = mu.upload(T.file(2 * 1024 * 1024, 62, "p.bin"), {
        url: a,
        chunkSize: 262144,
        getHeaders: async () => ({ Authorization: "Bearer from-the-page" }),
      });
      let moved = false;
      up.addEventListener("progress", (e) => (moved ||= e.loaded > 0));
      await T.until(() => moved, 20_000, "progress");
      up.pause();
      const afterPause = up.state;
      await T.sleep(300);
      up.resume();
      const afterResume = up.state;
      const done = await up.then(() => "ok", (e) => e.code);

      const up2 = mu.upload(T.file(2 * 1024 * 1024, 63, "q.bin"), { url: b, chunkSize: 262144 });
      up2.abort();
      const afterAbort = up2.state;
      const aborted = await up2.then(() => "ok", (e) => e.code);

      const boom = await T.run(T.file(1000, 64, "r.bin"), {
        url: c,
        getHeaders: () => {
          throw new Error("the token service is down");
        },
      });
      return { afterPause, afterResume, done, afterAbort, aborted, boom: boom.error };
    }, { a: ref.uploadURL(unique("wp")), b: ref.uploadURL(unique("wa")), c: ref.uploadURL(unique("wh")) });
    assert.equal(out.afterPause, "paused");
    assert.equal(out.afterResume, "uploading");
    assert.equal(out.done, "ok");
    assert.equal(out.afterAbort, "aborted");
    assert.equal(out.aborted, "aborted");
    assert.equal(out.boom.code, "auth_error");
    assert.match(out.boom.cause?.message ?? "", /token service is down/);
    const auth = (await ref.log()).filter((e) => e.method === "POST").map((e) => e.authorization);
    assert.ok(auth.includes("Bearer from-the-page"), `the page's header reached the server: ${auth}`);
  } finally {
    await p.close();
  }
});

test("worker mode: a queue of four, the XMLHttpRequest facade and a stream", async () => {
  const p = await workerPage();
  const q = Array.from({ length: 4 }, () => unique("wq"));
  const x = unique("wx");
  const s = unique("ws");
  try {
    const out = await p.evaluate(async ({ q, x, s }) => {
      const mu = await T.load();
      const queue = mu.queue({ concurrency: 2 });
      const ups = q.map((url, i) => queue.add(T.blob(600_000 + i, 70 + i), { url, chunkSize: 262144 }));
      const queued = ups.map((u) => u.state);
      const results = await Promise.allSettled(ups.map((u) => u.promise));

      const xhr = new mu.XMLHttpRequest();
      const ended = new Promise((r) => xhr.addEventListener("loadend", r));
      xhr.open("POST", x);
      xhr.send(T.file(300_000, 75, "x.bin"));
      await ended;

      const bytes = T.bytes(1_000_003, 76);
      let at = 0;
      const stream = new ReadableStream({
        pull(c) {
          if (at >= bytes.length) return c.close();
          c.enqueue(bytes.slice(at, at + 99_999));
          at += 99_999;
        },
      });
      const st = await T.run(stream, { url: s, chunkSize: 262144 });
      return { queued, results: results.map((r) => r.status), xhrStatus: xhr.status, stream: st.ok ? "ok" : st.error };
    }, { q: q.map((n) => ref.uploadURL(n)), x: ref.uploadURL(x), s: ref.uploadURL(s) });
    assert.deepEqual(out.queued, Array(4).fill("queued"));
    assert.deepEqual(out.results, Array(4).fill("fulfilled"));
    for (let i = 0; i < 4; i++) assert.deepEqual(await env.checkStored(q[i], 600_000 + i, 70 + i), []);
    assert.equal(out.xhrStatus, 201);
    assert.deepEqual(await env.checkStored(x, 300_000, 75), []);
    assert.equal(out.stream, "ok");
    assert.deepEqual(await env.checkStored(s, 1_000_003, 76), []);
  } finally {
    await p.close();
  }
});

test("worker mode: a reload mid-upload with resume: true goes on from the server's offset", async () => {
  const name = unique("wr");
  const url = ref.uploadURL(name);
  const p = await workerPage();
  try {
    const before = await p.evaluate(async (url) => {
      const mu = await T.load();
      const up = mu.upload(T.file(2 * 1024 * 1024, 77, "r.bin"), { url, resume: true, chunkSize: 262144 });
      up.addEventListener("progress", (e) => e.confirmed >= 524288 && up.pause());
      await T.until(() => up.state === "paused" && up.sessionURL, 20_000, "paused");
      await T.sleep(200); // the record is written
      return up.sessionURL;
    }, url);
    await p.reload();
    await p.waitForFunction(() => window.T);
    await p.evaluate(() => {
      const load = T.load.bind(T);
      T.load = (options) => load({ ...options, worker: true });
    });
    await ref.clearLog();
    const r = await p.evaluate((url) => T.run(T.file(2 * 1024 * 1024, 77, "r.bin"), { url, resume: true, chunkSize: 262144 }), url);
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.equal(r.result.sessionURL, before);
    assert.deepEqual(await env.checkStored(name, 2 * MiB, 77), []);
    const log = (await ref.log()).filter((e) => e.method !== "OPTIONS");
    assert.equal(log.filter((e) => e.method === "POST").length, 0, "no new session");
  } finally {
    await p.close();
  }
});

test("worker mode where the page's Content-Security-Policy forbids workers: load() says so", async () => {
  const p = await env.openPage("/test/csp.html");
  try {
    await p.waitForFunction(() => window.T, null, { timeout: 10_000 });
    const err = await p.evaluate(async () => {
      try {
        await T.load({ worker: true });
        return null;
      } catch (e) {
        return String(e.message);
      }
    });
    assert.match(err ?? "no error", /worker mode could not start its Worker/);
    assert.match(err, /Content-Security-Policy/);
  } finally {
    await p.close();
  }
});

test("worker mode from the classic script: the Worker is found beside mediaupload.classic.js", async () => {
  env.web.page("/test/classic-worker.html", `<!doctype html><meta charset="utf-8"><script src="/dist/mediaupload.classic.js"></script>`);
  const name = unique("wc");
  const p = await env.browser.newPage(env.web.url + "/test/classic-worker.html");
  try {
    const out = await p.evaluate(async (url) => {
      const mu = await MediaUpload.load({ worker: true });
      const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) & 255);
      const r = await mu.upload(new Blob([bytes]), { url, chunkSize: 262144 });
      return r.status;
    }, ref.uploadURL(name));
    assert.equal(out, 201);
    assert.equal(p.workers().length, 1, "one Worker");
    const stored = await ref.download(name);
    assert.equal(stored.length, 300_000);
    assert.ok(stored.every((b, i) => b === ((i * 31) & 255)), "byte-exact");
  } finally {
    await p.close();
  }
});
