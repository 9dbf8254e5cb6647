// mu.queue with many files (docs/api.md, "Many files: a queue"), in every engine:
//   - q.total while the sizes of the files added are still being read (queue.js, #sizeSome): 0
//     and not computable right after add(), then one progress event with the whole total;
//   - an ended upload lets go of its File, its options' callbacks, its listeners and handler
//     properties (Chromium: WeakRefs to them, after a garbage collection forced through CDP;
//     the other engines give a test no way to force one);
//   - 10,000 files through one queue on a bare page: every one stored md5-exact and reported
//     done, with the page's worst event-loop delay (web/test/probe.mjs) and, in Chromium, the
//     JS heap after a forced collection, printed. Firefox sends 2,000: it sends about 80 small
//     files a second here (its fetch's cost per request, docs/performance.md), so 10,000 would
//     take over two minutes (MEDIAUPLOAD_QUEUE_FILES sets the count in every engine).
// Run: node --test web/test/engines/queue.test.mjs   (MEDIAUPLOAD_ENGINES=chromium for one)

import assert from "node:assert/strict";
import { forEachEngine, md5Base64, pseudoRandomBytes, useEnv } from "../harness.mjs";
import { startProbe, stopProbe } from "../probe.mjs";

forEachEngine((engine) => {
  let env, ref;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
  }, { engine, timeout: 300_000 });

  // Runs V8's collector in a Chromium page (CDP HeapProfiler.collectGarbage), twice: what a
  // first pass frees may hold more.
  const collect = async (page) => {
    const cdp = await page.raw.context().newCDPSession(page.raw);
    try {
      for (let i = 0; i < 2; i++) await cdp.send("HeapProfiler.collectGarbage");
    } finally {
      await cdp.detach();
    }
  };

  // The sizes of the Blobs added are read in the tasks after add() (WebKit reads each from
  // another process): until then total is 0 and not computable, as while a stream's length is
  // unknown; then one progress event brings the whole total. The queue is paused, so that no
  // upload's own progress comes in between. (Sizes read in add() fail the first check.)
  test("q.total while the sizes are read: 0 and not computable right after add(), then one progress event with the whole total", async () => {
    const N = 12; // at most 16: the first task reads them all, whatever the engine's speed
    const names = Array.from({ length: N }, () => unique("sized"));
    const page = await env.openPage();
    try {
      const out = await page.evaluate(async (urls) => {
        const mu = await T.load();
        const q = mu.queue();
        const events = [];
        q.addEventListener("progress", (e) => events.push({ loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable }));
        q.pause();
        const ups = urls.map((url, i) => q.add(T.blob(70_000 + i, 900 + i), { url }));
        const atAdd = { loaded: q.loaded, total: q.total, events: events.length, states: [...new Set(ups.map((u) => u.state))] };
        await Promise.resolve();
        const afterMicrotask = { total: q.total, events: events.length };
        await T.until(() => q.total > 0, 5000, "the total");
        await T.sleep(50);
        const whilePaused = events.slice();
        q.resume();
        await new Promise((r) => q.addEventListener("idle", r));
        return { atAdd, afterMicrotask, whilePaused, last: events.at(-1), after: events.slice(whilePaused.length), states: ups.map((u) => u.state) };
      }, names.map((n) => ref.uploadURL(n)));
      const sum = names.reduce((n, _, i) => n + 70_000 + i, 0);
      assert.deepEqual(out.atAdd, { loaded: 0, total: 0, events: 0, states: ["queued"] }, "right after add()");
      assert.deepEqual(out.afterMicrotask, { total: 0, events: 0 }, "a microtask later: the sizes wait for the next task");
      assert.deepEqual(out.whilePaused, [{ loaded: 0, total: sum, lengthComputable: true }], "one event, with the whole total");
      assert.deepEqual(out.states, Array(N).fill("done"));
      assert.deepEqual(out.last, { loaded: sum, total: sum, lengthComputable: true });
      for (const e of out.after) assert.equal(e.total, sum, `an event after: ${JSON.stringify(e)}`);
      for (let i = 0; i < N; i += 5) assert.deepEqual(await env.checkStored(names[i], 70_000 + i, 900 + i), []);
    } finally {
      await page.close();
    }
  });

  for (const worker of [true, false]) {
    const mode = worker ? "in a Worker" : "on the page";
    test(`an ended upload lets go of its File, its options' callbacks, its listeners and handler properties (${mode}; a forced GC: Chromium only)`, async (t) => {
      if (engine !== "chromium") return void t.skip("no way to force a garbage collection from a test in this engine");
      const N = 200;
      const prefix = unique("let-go");
      const page = await env.openPage();
      try {
        const out = await page.evaluate(async ({ url, prefix, N, worker }) => {
          const mu = await T.load({ worker });
          const q = mu.queue();
          // A WeakRef to each File, and to an object each callback, listener and handler
          // property holds: collected once nothing holds what holds it.
          const refs = (window.refs = { files: [], callbacks: [], listeners: [], handlers: [] });
          const holding = (kind) => {
            const token = {};
            refs[kind].push(new WeakRef(token));
            return () => token;
          };
          // Made in a function of their own: nothing of this page holds them but the queue.
          (() => {
            for (let i = 0; i < N; i++) {
              const f = new File([T.bytes(2000 + i, 3000 + i)], `f${i}.bin`);
              refs.files.push(new WeakRef(f));
              const up = q.add(f, { url: `${url}?name=${prefix}-${i}`, onProgress: holding("callbacks") });
              up.addEventListener("progress", holding("listeners"));
              up.onload = holding("handlers");
            }
          })();
          window.q = q; // the queue stays: it is what must not hold them
          await new Promise((r) => q.addEventListener("idle", r));
          const up = q.uploads[0];
          const result = await up.then((r) => r.status);
          return {
            mode: mu.mode, states: [...new Set(q.uploads.map((u) => u.state))], count: q.uploads.length,
            result, onload: up.onload, loaded: q.loaded, total: q.total,
          };
        }, { url: ref.uploadURL("x").replace(/\?.*$/, ""), prefix, N, worker });
        // What an ended upload still answers (docs/api.md, "Many files: a queue").
        assert.deepEqual(out.states, ["done"]);
        assert.equal(out.count, N);
        assert.ok(out.result === 200 || out.result === 201, `its promise's result: ${out.result}`);
        const bytes = N * 2000 + (N * (N - 1)) / 2;
        assert.deepEqual([out.loaded, out.total], [bytes, bytes], "loaded and total still right");
        await page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
        await collect(page);
        const held = await page.evaluate(() => Object.fromEntries(Object.entries(window.refs).map(([k, v]) => [k, v.filter((r) => r.deref() !== undefined).length])));
        console.log(`# ${env.engineVersion} ${out.mode}: of ${N} ended uploads, still reachable after a forced GC: ${JSON.stringify(held)}`);
        assert.deepEqual(held, { files: 0, callbacks: 0, listeners: 0, handlers: 0 }, "what the queue still holds of the ended uploads");
        assert.equal(out.onload, null, "its handler properties read null once let go");
      } finally {
        await page.close();
      }
    });
  }

  // 10,000 small files through one queue at its defaults in Chromium, where a forced
  // collection shows the heap the queue keeps (2,000 in Firefox and WebKit, to keep the suite's
  // time: 10,000 took WebKit a minute, Firefox two; MEDIAUPLOAD_QUEUE_FILES=10000 for them),
  // added in one loop as a page would: every one stored md5-exact and reported done.
  // Printed: the add() loop's time, the page's worst event-loop delay over the whole run (and
  // its own: web/test/probe.mjs), the rate, and in Chromium the JS heap before and after, each
  // after a forced collection.
  const MANY = Number(process.env.MEDIAUPLOAD_QUEUE_FILES ?? (engine === "chromium" ? 10_000 : 2000));
  test(`${MANY.toLocaleString("en")} files through one mu.queue: every one stored md5-exact; the page's worst delay and the JS heap printed`, async () => {
    const size = (i) => 1000 + ((i * 7919) % 3000);
    const prefix = unique("ten");
    const page = await env.openPage();
    const heap = async () => {
      if (engine !== "chromium") return null;
      await collect(page);
      const cdp = await page.raw.context().newCDPSession(page.raw);
      try {
        return (await cdp.send("Runtime.getHeapUsage")).usedSize;
      } finally {
        await cdp.detach();
      }
    };
    try {
      await page.evaluate(async () => {
        window.mu = await T.load();
      });
      const heapBefore = await heap();
      await page.evaluate((MANY) => {
        const size = (i) => 1000 + ((i * 7919) % 3000);
        window.files = Array.from({ length: MANY }, (_, i) => new File([T.bytes(size(i), 5000 + i)], `f${i}.bin`));
      }, MANY);
      await page.evaluate(startProbe);
      const out = await page.evaluate(async ({ url, prefix }) => {
        const t0 = performance.now();
        const q = (window.q = mu.queue());
        const ups = files.map((f, i) => q.add(f, { url: `${url}?name=${prefix}-${i}` }));
        const added = performance.now() - t0;
        window.files = null; // the queue alone holds them now
        await new Promise((r) => q.addEventListener("idle", r));
        const s = (performance.now() - t0) / 1000;
        const states = {};
        for (const u of ups) states[u.state] = (states[u.state] ?? 0) + 1;
        return { mode: mu.mode, added, s, states, loaded: q.loaded, total: q.total };
      }, { url: ref.uploadURL("x").replace(/\?.*$/, ""), prefix });
      const probe = await page.evaluate(stopProbe);
      const heapAfter = await heap();
      const mb = (n) => (n / 1e6).toFixed(1);
      console.log(
        `# ${env.engineVersion}: ${MANY} files of 1-4 KB through mu.queue (${out.mode}): ${(MANY / out.s).toFixed(0)} files/s, ` +
          `the add() loop ${out.added.toFixed(0)} ms; the page's worst event-loop delay ${probe.worst.toFixed(0)} ms, its own ${probe.own.toFixed(0)} ms ` +
          `(a worker's timer's worst ${probe.control.toFixed(0)} ms); delays over 50 ms [from start, late, the worker's]: ${JSON.stringify(probe.stalls)}` +
          (heapBefore === null ? "; no JS heap figure in this engine" : `; JS heap after a forced GC: ${mb(heapBefore)} MB before, ${mb(heapAfter)} MB after (the queue and its uploads kept)`),
      );
      assert.deepEqual(out.states, { done: MANY });
      const bytes = Array.from({ length: MANY }, (_, i) => size(i)).reduce((a, b) => a + b, 0);
      assert.deepEqual([out.loaded, out.total], [bytes, bytes]);
      const objects = new Map((await ref.objects()).map((o) => [o.name, o.md5Hash]));
      const wrong = [];
      for (let i = 0; i < MANY; i++) if (objects.get(`${prefix}-${i}`) !== md5Base64(pseudoRandomBytes(size(i), 5000 + i))) wrong.push(i);
      assert.deepEqual(wrong, [], "every file stored md5-exact");
    } finally {
      await page.close();
    }
  }, 900_000);
});
