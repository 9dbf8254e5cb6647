// Worker mode (docs/api.md, "Worker mode") in every engine: a Blob and a ReadableStream land
// byte-exact; the stream goes to the Worker by transfer where the engine can transfer streams
// (Chromium, Firefox) and is read by the page for the Worker where it cannot (WebKit:
// stream-relay.js), and each test says which path the engine took; faults mid-stream are
// survived byte-exact; a stream that errors fails with source_error; abort and a refusal of
// the server cancel the page's stream; pause/resume of a stream completes byte-exact.

import assert from "node:assert/strict";
import { CHUNK, MiB, forEachEngine, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env;
  const { test, unique } = useEnv((e) => {
    env = e;
  }, { engine, timeout: 60_000 });

  // The path a worker-mode stream takes: transferred where the engine can (the module's
  // feature test), read by the page for the Worker in WebKit, which cannot transfer streams.
  const expectedPath = engine === "webkit" ? "relay" : "transfer";

  // A page whose module runs in a Worker (T.load passes { worker: true }, the approach of
  // web/test/worker.test.mjs), with:
  //   T.path()   the path the page's stream took to the Worker, from what the page posted to it:
  //              "transfer" (a ReadableStream in a transfer list), "relay" (Blobs of the stream's
  //              bytes sent while it uploads), or "none"
  //   T.oddStream(size, seed, { failAt, endless })  a ReadableStream of T.bytes(size, seed) in
  //              pieces of odd sizes, and its stats { pulls, cancelled, reason }: failAt errors
  //              it once that many bytes are out; endless gives 64 KiB pieces for ever
  async function workerPage() {
    const page = await env.openPage();
    await page.evaluate(() => {
      const load = T.load.bind(T);
      T.load = (options) => load({ ...options, worker: true });
      const posted = { streams: 0, blobs: 0 };
      const postMessage = Worker.prototype.postMessage;
      Worker.prototype.postMessage = function (msg, transfer) {
        const list = Array.isArray(transfer) ? transfer : (transfer?.transfer ?? []);
        posted.streams += list.filter((x) => x instanceof ReadableStream).length;
        if (msg && typeof msg === "object") posted.blobs += Object.values(msg).filter((v) => v instanceof Blob).length;
        return postMessage.call(this, msg, transfer);
      };
      T.path = () => (posted.streams > 0 ? "transfer" : posted.blobs > 0 ? "relay" : "none");
      const PIECES = [99_991, 7, 65_537, 250_001, 1, 131_071];
      T.oddStream = (size, seed, { failAt = Infinity, endless = false } = {}) => {
        const bytes = endless ? null : T.bytes(size, seed);
        const stats = { pulls: 0, cancelled: false, reason: null };
        let at = 0;
        const stream = new ReadableStream({
          async pull(c) {
            stats.pulls++;
            if (at >= failAt) return c.error(new Error(`the camera went away at byte ${at}`));
            if (endless) {
              await T.sleep(1);
              c.enqueue(new Uint8Array(65_536).fill(stats.pulls & 255));
              at += 65_536;
              return;
            }
            if (at >= size) return c.close();
            const n = PIECES[stats.pulls % PIECES.length];
            c.enqueue(bytes.slice(at, at + n));
            at += n;
          },
          cancel(reason) {
            stats.cancelled = true;
            stats.reason = String(reason?.message ?? reason);
          },
        });
        return { stream, stats };
      };
    });
    return page;
  }

  // Nothing thrown or logged as an error on the page, then the page closed.
  async function done(page) {
    try {
      assert.deepEqual((await page.errors()).filter((e) => !/^Failed to load resource/.test(e)), [], "the page's errors");
    } finally {
      await page.close();
    }
  }

  test("a Blob in worker mode lands byte-exact", async () => {
    const name = unique("wblob");
    const size = MiB + 17;
    const page = await workerPage();
    try {
      const r = await page.evaluate(({ url, size, chunk }) => T.run(T.blob(size, 81), { url, chunkSize: chunk }), {
        url: env.ref.uploadURL(name),
        size,
        chunk: CHUNK,
      });
      assert.ok(r.ok, JSON.stringify(r.error));
      assert.equal(r.state, "done");
      assert.deepEqual(await env.checkStored(name, size, 81), []);
    } finally {
      await done(page);
    }
  });

  test(`a ReadableStream in worker mode lands byte-exact, by ${expectedPath}`, async (t) => {
    const names = [unique("wstream"), unique("wstream-crc")];
    const size = 3 * MiB;
    const page = await workerPage();
    try {
      const out = await page.evaluate(
        async ({ urls, size, chunk }) => {
          // chunkSize "auto"; then fixed chunks with a checksum, whose bytes the host reads
          // (a relayed stream's bytes() in WebKit).
          const a = T.oddStream(size, 82);
          const auto = await T.run(a.stream, { url: urls[0], chunkSize: "auto" });
          const path = T.path();
          const b = T.oddStream(size, 83);
          const crc = await T.run(b.stream, { url: urls[1], chunkSize: chunk, checksum: "crc32c" });
          // What the engine can do, asked the way the module asks (an independent check).
          let transfers;
          try {
            const s = new ReadableStream();
            structuredClone(s, { transfer: [s] });
            transfers = true;
          } catch {
            transfers = false;
          }
          const last = (r) => r.events.filter((e) => e.type === "progress").at(-1);
          return { auto, crc, path, transfers, totals: [last(auto)?.total, last(crc)?.total] };
        },
        { urls: names.map((n) => env.ref.uploadURL(n)), size, chunk: CHUNK },
      );
      t.diagnostic(`${engine}: a worker-mode stream went by ${out.path} (transferable streams: ${out.transfers})`);
      assert.ok(out.auto.ok, JSON.stringify(out.auto.error));
      assert.ok(out.crc.ok, JSON.stringify(out.crc.error));
      assert.equal(out.path, expectedPath);
      assert.equal(out.transfers, expectedPath === "transfer");
      assert.deepEqual(out.totals, [size, size], "the stream's length is told at its end");
      assert.deepEqual(await env.checkStored(names[0], size, 82), []);
      assert.deepEqual(await env.checkStored(names[1], size, 83), []);
    } finally {
      await done(page);
    }
  });

  test("faults mid-stream in worker mode (5xx, dropped connection, partial keep, 404 early): byte-exact", async () => {
    const cases = [
      [{ on: "chunk", action: "status", status: 503, times: 2, skip: 1 }],
      [{ on: "chunk", action: "close", afterBytes: 100_000, times: 2, skip: 2 }],
      [{ on: "chunk", action: "keep", keep: 12345, times: 1, skip: 1 }, { on: "chunk", action: "keep", keep: 0, times: 1, skip: 3 }],
      // Lost before the server confirmed anything: every byte is still kept, so it starts over.
      [{ on: "chunk", action: "expire", times: 1 }],
    ];
    const size = 1536 * 1024 + 3;
    const page = await workerPage();
    try {
      for (const [i, rules] of cases.entries()) {
        const name = unique("wfault");
        await env.ref.setFaults(rules);
        // With a checksum: the bytes sent again are read again (a relayed stream's bytes()).
        const r = await page.evaluate(
          ({ url, size, seed, chunk }) =>
            T.run(T.oddStream(size, seed).stream, {
              url,
              chunkSize: chunk,
              checksum: "crc32c",
              retry: { initialDelayMs: 10, maxDelayMs: 50, jitterMs: 0 },
            }),
          { url: env.ref.uploadURL(name), size, seed: 86 + i, chunk: CHUNK },
        );
        assert.ok(r.ok, `${JSON.stringify(rules)}: ${JSON.stringify(r.error)}`);
        assert.deepEqual(await env.checkStored(name, size, 86 + i), [], JSON.stringify(rules));
      }
    } finally {
      await env.ref.clearFaults();
      await done(page);
    }
  });

  test("a stream that errors mid-way in worker mode fails with source_error, its error the cause", async () => {
    const page = await workerPage();
    try {
      const r = await page.evaluate(
        async ({ url, chunk }) => {
          const { stream } = T.oddStream(2 * 1024 * 1024, 84, { failAt: 700_000 });
          return T.run(stream, { url, chunkSize: chunk });
        },
        { url: env.ref.uploadURL(unique("werr")), chunk: CHUNK },
      );
      assert.equal(r.ok, false);
      assert.equal(r.error.isMediaUploadError, true);
      assert.equal(r.error.code, "source_error");
      assert.equal(r.state, "failed");
      assert.match(r.error.cause?.message ?? "", /the camera went away at byte \d+/);
    } finally {
      await done(page);
    }
  });

  test("abort of a worker-mode stream upload cancels the page's stream", async (t) => {
    const page = await workerPage();
    try {
      const out = await page.evaluate(
        async ({ url, chunk }) => {
          const mu = await T.load();
          const { stream, stats } = T.oddStream(0, 0, { endless: true });
          const up = mu.upload(stream, { url, chunkSize: chunk });
          let loaded = 0;
          up.addEventListener("progress", (e) => (loaded = e.loaded));
          await T.until(() => loaded >= 2 * chunk, 20_000, "two chunks sent");
          up.abort();
          const code = await up.then(() => "ok", (e) => e.code);
          await T.until(() => stats.cancelled, 10_000, "the stream's cancel()");
          const pulls = stats.pulls;
          await T.sleep(300);
          return { code, state: up.state, cancelled: stats.cancelled, reason: stats.reason, pullsAfter: stats.pulls - pulls, path: T.path() };
        },
        { url: env.ref.uploadURL(unique("wabort")), chunk: CHUNK },
      );
      t.diagnostic(`${engine}: ${out.path}; the stream's cancel() got "${out.reason}"`);
      assert.equal(out.code, "aborted");
      assert.equal(out.state, "aborted");
      assert.equal(out.cancelled, true);
      assert.equal(out.pullsAfter, 0, "nothing read from the stream once it is cancelled");
      assert.equal(out.path, expectedPath);
    } finally {
      await done(page);
    }
  });

  test("a worker-mode stream upload that the server refuses (403 on a chunk) cancels the page's stream", async () => {
    await env.ref.setFaults([{ on: "chunk", action: "status", status: 403, skip: 1 }]);
    const page = await workerPage();
    try {
      const out = await page.evaluate(
        async ({ url, chunk }) => {
          const { stream, stats } = T.oddStream(0, 0, { endless: true });
          const r = await T.run(stream, { url, chunkSize: chunk });
          await T.until(() => stats.cancelled, 10_000, "the stream's cancel()");
          return { error: r.error, cancelled: stats.cancelled, path: T.path() };
        },
        { url: env.ref.uploadURL(unique("w403")), chunk: CHUNK },
      );
      assert.equal(out.error?.code, "http_error");
      assert.equal(out.error.status, 403);
      assert.equal(out.cancelled, true);
      assert.equal(out.path, expectedPath);
    } finally {
      await done(page);
    }
  });

  test("pause and resume of a worker-mode stream upload complete byte-exact", async () => {
    const name = unique("wpause");
    const size = 3 * MiB;
    const page = await workerPage();
    try {
      const out = await page.evaluate(
        async ({ url, size, chunk }) => {
          const mu = await T.load();
          const { stream } = T.oddStream(size, 85);
          const up = mu.upload(stream, { url, chunkSize: chunk });
          const states = [];
          up.addEventListener("statechange", (e) => states.push(e.state));
          let confirmed = 0;
          up.addEventListener("progress", (e) => (confirmed = e.confirmed));
          await T.until(() => confirmed >= chunk, 20_000, "a chunk confirmed");
          up.pause();
          const paused = up.state;
          await T.sleep(400);
          const during = confirmed;
          await T.sleep(400);
          const still = confirmed;
          up.resume();
          const result = await up.then(() => "ok", (e) => e.code);
          return { paused, result, still: still === during, states, state: up.state };
        },
        { url: env.ref.uploadURL(name), size, chunk: CHUNK },
      );
      assert.equal(out.paused, "paused");
      assert.equal(out.still, true, "nothing confirmed while paused");
      assert.equal(out.result, "ok");
      assert.equal(out.state, "done");
      assert.ok(out.states.includes("paused"), `states: ${out.states}`);
      assert.deepEqual(await env.checkStored(name, size, 85), []);
    } finally {
      await done(page);
    }
  });
});
