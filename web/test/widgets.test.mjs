// Browser tests of mu.queue and mu.XMLHttpRequest (docs/api.md, "Many files: a queue" and
// "Widgets that do their own XMLHttpRequest") against the reference server.
//
// The XMLHttpRequest facade is checked against Chromium's own XMLHttpRequest doing the same
// thing (a media upload of the same bytes to the same server): the sequence of events and
// readyState values a widget sees must be the same.

import assert from "node:assert/strict";
import { CHUNK, MiB, useEnv } from "./harness.mjs";


let env, ref, page;

const { test, unique } = useEnv(async (e) => {
  env = e;
  ({ ref } = env);
  page = await env.openPage();
  // The page-side recorder of everything an XMLHttpRequest (real or not) shows a widget.
  await page.evaluate(() => {
    const TYPES = ["loadstart", "progress", "load", "error", "abort", "timeout", "loadend"];
    window.X = {
      // Runs `xhr` (already opened, or not) through `drive(xhr, log)` and resolves when loadend
      // fires on it, with the normalized event list and the final fields.
      record(xhr) {
        const log = [];
        xhr.addEventListener("readystatechange", () => log.push(`rsc:${xhr.readyState}`));
        // Byte counts depend on timing (how much had reached the socket) and on the answer's
        // text: logged as 0 or n.
        const n = (e) => `${e.loaded ? "n" : 0}/${e.total ? "n" : 0}`;
        for (const t of TYPES) xhr.addEventListener(t, (e) => log.push(`${t}:${xhr.readyState}` + (t === "progress" ? "" : `:${n(e)}`)));
        for (const t of TYPES) xhr.upload.addEventListener(t, (e) => log.push(`upload.${t}` + (t === "progress" ? "" : `:${n(e)}`)));
        return log;
      },
      // Consecutive repeats (progress events, readystatechange 3) collapse to one.
      shape: (log) => log.filter((x, i) => x !== log[i - 1]),
      ended: (xhr) => new Promise((r) => xhr.addEventListener("loadend", () => setTimeout(r, 50), { once: true })),
      // open, send, and wait for the end (with a timeout, if given).
      async post(xhr, url, file, timeout) {
        xhr.open("POST", url);
        if (timeout) xhr.timeout = timeout;
        const ended = X.ended(xhr);
        xhr.send(file);
        await ended;
        return {};
      },
      fields(xhr) {
        let responseText;
        try {
          responseText = xhr.responseText;
        } catch (e) {
          responseText = `throws ${e.name}`;
        }
        return { readyState: xhr.readyState, status: xhr.status, responseText, response: xhr.response };
      },
    };
  });
}, { timeout: 90_000 });

// Runs `scenario` (a page function of (xhr, url, file) that ends when the request does) with a
// real XMLHttpRequest on a media upload URL and with mu.XMLHttpRequest on `url`; returns both
// outcomes as { shape, fields, extra }.
async function both(scenario, { size = 300_000, options = {}, realURL, muURL } = {}) {
  return page.evaluate(
    async ({ scenario, size, options, realURL, muURL }) => {
      const mu = await T.load();
      const fn = new Function(`return (${scenario})`)();
      const out = {};
      for (const [kind, make, url] of [
        ["real", () => new XMLHttpRequest(), realURL],
        ["mu", () => new mu.XMLHttpRequest(options), muURL],
      ]) {
        const xhr = make();
        const log = X.record(xhr);
        const extra = await fn(xhr, url, T.file(size, 7, "f.bin"));
        out[kind] = { shape: X.shape(log), fields: X.fields(xhr), extra };
      }
      return out;
    },
    { scenario: scenario.toString(), size, options, realURL, muURL },
  );
}

function urls(name) {
  const muURL = ref.uploadURL(name);
  return { muURL, realURL: muURL + "&uploadType=media" };
}

// --- the queue -----------------------------------------------------------------------------

test("queue: at most `concurrency` run, the rest wait in state queued; every file lands", async () => {
  const names = Array.from({ length: 7 }, () => unique("q"));
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 2 });
    const ups = urls.map((url, i) => q.add(T.blob(600_000 + i, 100 + i), { url, chunkSize: 262144 }));
    const statesAtAdd = ups.map((u) => u.state);
    let maxRunning = 0;
    const totals = [];
    q.addEventListener("progress", (e) => {
      const running = ups.filter((u) => !["queued", "done", "failed", "aborted"].includes(u.state)).length;
      maxRunning = Math.max(maxRunning, running);
      totals.push([e.loaded, e.total]);
    });
    let idle = 0;
    const idled = new Promise((r) => q.addEventListener("idle", () => (idle++, r())));
    await T.sleep(0);
    const statesAfterStart = ups.map((u) => u.state);
    await Promise.race([idled, T.sleep(60_000)]);
    return {
      statesAtAdd, statesAfterStart, maxRunning, idle,
      states: ups.map((u) => u.state), loaded: q.loaded, total: q.total, last: totals.at(-1),
      monotonic: totals.every((t, i) => i === 0 || t[0] >= totals[i - 1][0]),
      same: q.uploads.every((u, i) => u === ups[i]),
    };
  }, names.map((n) => ref.uploadURL(n)));
  assert.deepEqual(out.statesAtAdd, Array(7).fill("queued"));
  assert.equal(out.statesAfterStart.filter((s) => s === "queued").length, 5, `after start: ${out.statesAfterStart}`);
  assert.ok(out.maxRunning <= 2 && out.maxRunning >= 1, `at most 2 ran at once (${out.maxRunning})`);
  assert.equal(out.idle, 1);
  assert.deepEqual(out.states, Array(7).fill("done"));
  const total = names.reduce((n, _, i) => n + 600_000 + i, 0);
  assert.equal(out.total, total);
  assert.equal(out.loaded, total);
  assert.deepEqual(out.last, [total, total]);
  assert.ok(out.monotonic, "the total progress never went backwards");
  assert.ok(out.same, "q.uploads are the objects add returned, in order");
  for (let i = 0; i < 7; i++) assert.deepEqual(await env.checkStored(names[i], 600_000 + i, 100 + i), []);
});

test("queue: pause holds every upload, resume finishes them; abort settles queued ones too", async () => {
  const a = Array.from({ length: 4 }, () => unique("qp"));
  const b = Array.from({ length: 4 }, () => unique("qa"));
  const out = await page.evaluate(async ({ a, b }) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 2 });
    const ups = a.map((url, i) => q.add(T.blob(3 * 262144, 200 + i), { url, chunkSize: 262144 }));
    await T.until(() => q.loaded > 0, 20_000, "some progress");
    q.pause();
    await T.until(() => ups.every((u) => u.state === "paused" || u.state === "done"), 20_000, "paused");
    const paused = ups.map((u) => u.state);
    await T.sleep(300);
    const loadedWhilePaused = q.loaded;
    await T.sleep(500);
    const held = q.loaded === loadedWhilePaused;
    q.resume();
    const results = await Promise.allSettled(ups.map((u) => u.promise));

    const q2 = mu.queue({ concurrency: 1 });
    const ups2 = b.map((url, i) => q2.add(T.blob(4 * 262144, 300 + i), { url, chunkSize: 262144 }));
    const events = T.record(ups2[3]);
    let idle = false;
    q2.addEventListener("idle", () => (idle = true));
    await T.until(() => ups2[0].state === "uploading", 20_000, "the first upload");
    q2.abort();
    const aborted = await Promise.allSettled(ups2.map((u) => u.promise));
    await T.until(() => idle, 5000, "idle");
    return {
      paused, held, results: results.map((r) => r.status),
      aborted: aborted.map((r) => r.reason?.code), states2: ups2.map((u) => u.state),
      events: events.map((e) => e.type), total2: q2.total, loaded2: q2.loaded,
    };
  }, { a: a.map((n) => ref.uploadURL(n)), b: b.map((n) => ref.uploadURL(n)) });
  assert.ok(out.paused.filter((s) => s === "paused").length >= 2, `states after pause: ${out.paused}`);
  assert.ok(out.held, "nothing moved while paused");
  assert.deepEqual(out.results, Array(4).fill("fulfilled"));
  for (let i = 0; i < 4; i++) assert.deepEqual(await env.checkStored(a[i], 3 * 262144, 200 + i), []);
  assert.deepEqual(out.aborted, Array(4).fill("aborted"));
  assert.deepEqual(out.states2, Array(4).fill("aborted"));
  assert.deepEqual(out.events, ["statechange", "loadstart", "abort", "loadend"], "a never-started upload's events");
  assert.equal(out.total2, out.loaded2, "an aborted upload counts in the total what it had sent, no more");
  for (const n of b) assert.equal(await ref.object(n), undefined, `${n} was not stored`);
});

test("queue: a paused upload gives up its slot; resumed, it finishes beside the next", async () => {
  const names = [unique("qs"), unique("qs")];
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 1 });
    const size = 8 * 262144;
    const ups = urls.map((url, i) => q.add(T.blob(size, 400 + i), { url, chunkSize: 262144 }));
    let moved = false;
    ups[0].addEventListener("progress", (e) => (moved ||= e.loaded > 0));
    await T.until(() => moved, 20_000, "the first upload's progress");
    const secondBefore = ups[1].state;
    ups[0].pause();
    await T.until(() => ups[1].state !== "queued", 20_000, "the second upload to start");
    const secondAfter = ups[1].state;
    ups[0].resume();
    const results = await Promise.allSettled(ups.map((u) => u.promise));
    return { secondBefore, secondAfter, results: results.map((r) => r.status) };
  }, names.map((n) => ref.uploadURL(n)));
  assert.equal(out.secondBefore, "queued", "concurrency 1: the second waits");
  assert.notEqual(out.secondAfter, "queued", "the paused upload's slot went to the second");
  assert.deepEqual(out.results, ["fulfilled", "fulfilled"]);
  for (let i = 0; i < 2; i++) assert.deepEqual(await env.checkStored(names[i], 8 * 262144, 400 + i), []);
});

test("queue: a queued upload's on… handler properties fire as an upload's do, started or aborted before its turn; once it has ended they are let go", async () => {
  const names = [unique("qh"), unique("qh")];
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 1 });
    const ups = urls.map((url, i) => q.add(T.blob(2 * 262144 + 5, 800 + i), { url, chunkSize: 262144 }));
    const calls = [[], []];
    const fns = [{}, {}];
    ups.forEach((up, i) => {
      for (const type of ["loadstart", "progress", "load", "error", "abort", "loadend", "retry", "statechange"]) {
        up["on" + type] = fns[i][type] = function (e) {
          calls[i].push(`${type}${this === up ? "" : " (this is not the upload)"}${e.type === type ? "" : ` (event ${e.type})`}`);
        };
      }
    });
    const sameFn = ups[0].onload === fns[0].load;
    ups[1].onretry = null; // removed: never called, and reads back null
    const cleared = ups[1].onretry;
    ups[1].abort(); // before its turn
    await Promise.allSettled(ups.map((u) => u.promise));
    await T.sleep(50);
    const shape = (list) => list.filter((x, i) => x !== list[i - 1]);
    return { calls: calls.map(shape), sameFn, cleared, afterEnd: [ups[0].onload, ups[1].onabort] };
  }, names.map((n) => ref.uploadURL(n)));
  assert.equal(out.calls[0][0], "loadstart");
  assert.ok(out.calls[0].includes("progress"), `calls: ${out.calls[0]}`);
  assert.ok(out.calls[0].includes("statechange"), `calls: ${out.calls[0]}`);
  assert.deepEqual(out.calls[0].slice(-2), ["load", "loadend"]);
  assert.ok(!out.calls[0].some((c) => c.includes("(")), `calls: ${out.calls[0]}`);
  assert.deepEqual(out.calls[1], ["statechange", "loadstart", "abort", "loadend"]);
  assert.ok(out.sameFn, "a handler property reads back the function set");
  assert.equal(out.cleared, null);
  assert.deepEqual(out.afterEnd, [null, null], "an ended upload's handler properties are let go (docs/api.md, \"Many files: a queue\")");
  assert.deepEqual(await env.checkStored(names[0], 2 * 262144 + 5, 800), []);
});

// A queued upload forwards "request" events only once someone listens (the Go side reports a
// request only to a listener: queue.js): a listener added before the upload's turn hears every
// request, one added while it runs hears the requests from then on.
test("queue: request events reach a listener added before the upload's turn and one added while it runs", async () => {
  const names = [unique("qr"), unique("qr")];
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 1 });
    const [a, b] = urls.map((url, i) => q.add(T.blob(3 * 262144 + 9, 60 + i), { url, chunkSize: 262144 }));
    const before = [];
    b.addEventListener("request", (e) => before.push(`${e.method} ${e.contentRange ?? ""}`.trim()));
    const during = [];
    a.addEventListener("progress", function once(e) {
      if (e.loaded < 262144) return;
      a.removeEventListener("progress", once);
      a.addEventListener("request", (r) => during.push(r.method));
    });
    await Promise.all([a, b]);
    return { before, during };
  }, names.map((n) => ref.uploadURL(n)));
  // The session start and four chunks, each heard once.
  assert.equal(out.before.length, 5, `before: ${out.before}`);
  assert.equal(out.before[0], "POST");
  assert.ok(out.before.slice(1).every((r) => r.startsWith("PUT bytes")), `before: ${out.before}`);
  assert.ok(out.during.length >= 1 && out.during.length <= 3, `during: ${out.during}`);
  assert.ok(out.during.every((m) => m === "PUT"), `during: ${out.during}`);
  for (let i = 0; i < 2; i++) assert.deepEqual(await env.checkStored(names[i], 3 * 262144 + 9, 60 + i), []);
});

// The queue's progress through an abort (docs/api.md, "Many files: a queue"): loaded never goes
// back, total drops at once to what was sent, q.abort() reports one event, and lengthComputable
// is never true with 0/0 or loaded > total. (It used to go 3670016/43000000, 1310720/3000000,
// then 0/0: one event per aborted upload, each leaving the sums.)
test("queue: q.abort() mid-flight: one progress event, loaded kept, total = what was sent; never 0/0 nor loaded > total", async () => {
  const names = Array.from({ length: 5 }, () => unique("qab"));
  // Four chunks go through, then every chunk request hangs: the abort finds two uploads
  // mid-request and three waiting, whatever the timing.
  await ref.setFaults([{ on: "chunk", action: "stall", skip: 4, times: -1 }]);
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 2 });
    const size = 16 * 262144;
    const ups = urls.map((url, i) => q.add(T.blob(size, 600 + i), { url, chunkSize: 262144 }));
    const events = [];
    q.addEventListener("progress", (e) => events.push({ loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable }));
    let idle = 0;
    q.addEventListener("idle", () => idle++);
    await T.until(() => q.loaded === 4 * 262144, 20_000, "four chunks");
    await T.sleep(200); // the fifth and sixth chunk requests are held by the server
    const before = { loaded: q.loaded, total: q.total, states: ups.map((u) => u.state), events: events.length };
    q.abort();
    const atOnce = { loaded: q.loaded, total: q.total, events: events.length };
    await Promise.allSettled(ups.map((u) => u.promise));
    await T.until(() => idle > 0, 5000, "idle");
    await T.sleep(100);
    return { before, atOnce, after: { loaded: q.loaded, total: q.total }, events, idle, states: ups.map((u) => u.state) };
  }, names.map((n) => ref.uploadURL(n)));
  const sent = 4 * 262144;
  assert.deepEqual(out.before.loaded, sent);
  assert.equal(out.before.total, 5 * 16 * 262144);
  assert.equal(out.before.states.filter((s) => s === "uploading").length, 2, `before: ${out.before.states}`);
  assert.deepEqual(out.states, Array(5).fill("aborted"));
  assert.deepEqual(out.atOnce, { loaded: sent, total: sent, events: out.before.events + 1 }, "total drops at once, one event says so");
  assert.deepEqual(out.after, { loaded: sent, total: sent });
  assert.equal(out.events.length, out.before.events + 1, `one event for the abort: ${JSON.stringify(out.events.slice(out.before.events))}`);
  assert.deepEqual(out.events.at(-1), { loaded: sent, total: sent, lengthComputable: true });
  assert.equal(out.idle, 1);
  for (const [i, e] of out.events.entries()) {
    assert.ok(!(e.lengthComputable && e.total === 0), `event ${i}: 0/0 computable`);
    assert.ok(e.loaded <= e.total, `event ${i}: loaded ${e.loaded} > total ${e.total}`);
    assert.ok(i === 0 || e.loaded >= out.events[i - 1].loaded, `event ${i}: loaded went back`);
  }
});

test("queue: abort() right after add() starts nothing; one upload cancelled counts what it sent, the rest reach 100 %", async () => {
  const early = Array.from({ length: 3 }, () => unique("qe"));
  const names = Array.from({ length: 3 }, () => unique("qc"));
  await ref.clearLog();
  const out = await page.evaluate(async ({ early, urls }) => {
    const mu = await T.load();
    const record = (q) => {
      const events = [];
      q.addEventListener("progress", (e) => events.push({ loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable }));
      return events;
    };

    // Aborted before any upload started (add() starts them from a microtask).
    const q1 = mu.queue({ concurrency: 1 });
    const events1 = record(q1);
    let idle1 = 0;
    q1.addEventListener("idle", () => idle1++);
    const ups1 = early.map((url, i) => q1.add(T.blob(600_000, 700 + i), { url }));
    q1.abort();
    const codes1 = (await Promise.allSettled(ups1.map((u) => u.promise))).map((r) => r.reason?.code);
    await T.sleep(300);

    // One of three cancelled after its first chunk, beside a stream whose length comes last.
    const q2 = mu.queue({ concurrency: 3 });
    const events2 = record(q2);
    const size = 8 * 262144;
    const victim = q2.add(T.blob(size, 710), { url: urls[0], chunkSize: 262144 });
    let abortedAt = -1;
    victim.addEventListener("progress", (e) => {
      if (abortedAt < 0 && e.loaded > 0) (abortedAt = e.loaded), victim.abort();
    });
    q2.add(T.blob(size, 711), { url: urls[1], chunkSize: 262144 });
    const bytes = T.bytes(3 * 262144 + 1000, 712);
    let at = 0;
    const stream = new ReadableStream({
      async pull(c) {
        await T.sleep(20);
        if (at >= bytes.length) return c.close();
        c.enqueue(bytes.slice(at, (at += 100_000)));
      },
    });
    q2.add(stream, { url: urls[2], chunkSize: 262144 });
    const results = (await Promise.allSettled(q2.uploads.map((u) => u.promise))).map((r) => r.status);
    await T.sleep(100);
    return {
      events1, idle1, codes1, q1: { loaded: q1.loaded, total: q1.total },
      events2, abortedAt, results, q2: { loaded: q2.loaded, total: q2.total }, streamSize: bytes.length,
    };
  }, { early: early.map((n) => ref.uploadURL(n)), urls: names.map((n) => ref.uploadURL(n)) });

  assert.deepEqual(out.codes1, ["aborted", "aborted", "aborted"]);
  assert.equal(out.idle1, 1);
  assert.deepEqual(out.q1, { loaded: 0, total: 0 });
  assert.deepEqual(out.events1, [{ loaded: 0, total: 0, lengthComputable: false }], "one event, not computable");
  const log = await ref.log();
  for (const n of early) assert.ok(!log.some((r) => r.query.includes(n)), `no request for ${n}`);

  assert.deepEqual(out.results, ["rejected", "fulfilled", "fulfilled"]);
  assert.ok(out.abortedAt > 0 && out.abortedAt < 8 * 262144, `cancelled at ${out.abortedAt}`);
  const want = out.abortedAt + 8 * 262144 + out.streamSize;
  assert.deepEqual(out.q2, { loaded: want, total: want }, "100 % at the end: the cancelled upload counts what it sent");
  assert.deepEqual(out.events2.at(-1), { loaded: want, total: want, lengthComputable: true });
  let sawUnknown = false;
  for (const [i, e] of out.events2.entries()) {
    if (!e.lengthComputable) {
      sawUnknown = true;
      assert.equal(e.total, 0, `event ${i}: a total while the stream's length is unknown`);
      continue;
    }
    assert.ok(e.total > 0 && e.loaded <= e.total, `event ${i}: ${e.loaded}/${e.total}`);
    assert.ok(i === 0 || e.loaded >= out.events2[i - 1].loaded, `event ${i}: loaded went back`);
  }
  assert.ok(sawUnknown, "the stream's unknown length made the total unknown for a while");
  for (const [i, e] of out.events2.entries()) assert.ok(i === 0 || e.loaded >= out.events2[i - 1].loaded, `event ${i}: loaded went back`);
  assert.deepEqual(await env.checkStored(names[1], 8 * 262144, 711), []);
});

// The queue keeps loaded and total as running sums (queue.js), so an abort must reach them at
// once, whichever way it comes; and it looks for the next upload to start from where it last
// stopped, so an upload paused before its turn and resumed after later ones started must
// still start.
test("queue: total drops at once when a running upload is aborted, by abort() or by its signal; one paused before its turn and resumed later still runs", async () => {
  const names = Array.from({ length: 4 }, () => unique("qt"));
  const size = 8 * 262144;
  const out = await page.evaluate(async ({ urls, size }) => {
    const mu = await T.load();
    const q = mu.queue({ concurrency: 2 });
    const ac = new AbortController();
    const seen = [0, 0];
    const ups = [
      q.add(T.blob(size, 720), { url: urls[0], chunkSize: 262144 }),
      q.add(T.blob(size, 721), { url: urls[1], chunkSize: 262144, signal: ac.signal }),
      q.add(T.blob(300_000, 722), { url: urls[2] }),
      q.add(T.blob(300_000, 723), { url: urls[3] }),
    ];
    ups[2].pause(); // before its turn: the queue passes it by
    ups.slice(0, 2).forEach((u, i) => u.addEventListener("progress", (e) => (seen[i] = e.loaded)));
    await T.until(() => seen[0] > 0 && seen[1] > 0, 20_000, "both running uploads to send a chunk");
    const before = q.total;
    ups[0].abort();
    const afterAbort = { total: q.total, loaded: seen[0] };
    ac.abort();
    const afterSignal = { total: q.total, loaded: seen[1] };
    await T.until(() => ups[3].state === "done", 20_000, "the fourth upload, started past the paused third");
    const thirdWhileFourthDone = ups[2].state;
    ups[2].resume();
    const results = (await Promise.allSettled(ups.map((u) => u.promise))).map((r) => r.status);
    return { before, afterAbort, afterSignal, thirdWhileFourthDone, results, end: { loaded: q.loaded, total: q.total } };
  }, { urls: names.map((n) => ref.uploadURL(n)), size });
  const all = 2 * size + 600_000;
  assert.equal(out.before, all);
  assert.equal(out.afterAbort.total, all - size + out.afterAbort.loaded, "abort(): total counts what the upload had sent, at once");
  assert.equal(out.afterSignal.total, out.afterAbort.loaded + out.afterSignal.loaded + 600_000, "the signal: the same, at once");
  assert.equal(out.thirdWhileFourthDone, "paused");
  assert.deepEqual(out.results, ["rejected", "rejected", "fulfilled", "fulfilled"]);
  assert.deepEqual(out.end, { loaded: out.afterSignal.total, total: out.afterSignal.total }, "100 % at the end");
  assert.deepEqual(await env.checkStored(names[2], 300_000, 722), []);
  assert.deepEqual(await env.checkStored(names[3], 300_000, 723), []);
});

test("queue: bad concurrency is a typed error", async () => {
  const out = await page.evaluate(async () => {
    const mu = await T.load();
    try {
      mu.queue({ concurrency: 0 });
      return null;
    } catch (e) {
      return T.errorData(e);
    }
  });
  assert.equal(out?.code, "invalid_argument");
});

test("queue: 20 concurrent uploads' throughput against 20 plain fetch loops (printed, not asserted)", async () => {
  const size = 4 * MiB;
  const names = Array.from({ length: 20 }, () => unique("tp"));
  const out = await page.evaluate(async ({ urls, size }) => {
    const mu = await T.load();
    const blobs = urls.map((_, i) => T.blob(size, 500 + i));
    let t0 = performance.now();
    const q = mu.queue({ concurrency: 20 });
    for (let i = 0; i < urls.length; i++) q.add(blobs[i], { url: urls[i], chunkSize: 262144 * 4 });
    await new Promise((r) => q.addEventListener("idle", r));
    const muMs = performance.now() - t0;
    const ok = q.uploads.every((u) => u.state === "done");
    // The floor: the same chunks PUT by plain fetch loops to resumable sessions.
    t0 = performance.now();
    await Promise.all(urls.map(async (url, i) => {
      const start = await fetch(url + "-fetch&uploadType=resumable", { method: "POST", headers: { "X-Upload-Content-Length": String(size) } });
      const session = start.headers.get("Location");
      for (let off = 0; off < size; off += 262144 * 4) {
        const end = Math.min(size, off + 262144 * 4);
        const r = await fetch(session, { method: "PUT", body: blobs[i].slice(off, end), headers: { "Content-Range": `bytes ${off}-${end - 1}/${size}` } });
        if (end < size && r.status !== 308) throw new Error(`fetch loop: ${r.status}`);
      }
    }));
    const fetchMs = performance.now() - t0;
    return { ok, muMs, fetchMs };
  }, { urls: names.map((n) => ref.uploadURL(n)), size });
  assert.ok(out.ok, "every upload done");
  const mb = (20 * size) / 1e6;
  console.log(
    `queue throughput: 20 x 4 MiB, 1 MiB chunks: mu.queue ${(mb / (out.muMs / 1000)).toFixed(1)} MB/s (${out.muMs.toFixed(0)} ms), ` +
      `20 fetch loops ${(mb / (out.fetchMs / 1000)).toFixed(1)} MB/s (${out.fetchMs.toFixed(0)} ms), ratio ${(out.fetchMs / out.muMs).toFixed(2)}`,
  );
  for (let i = 0; i < 20; i += 7) assert.deepEqual(await env.checkStored(names[i], size, 500 + i), []);
});

// --- the XMLHttpRequest facade ---------------------------------------------------------------

test("XMLHttpRequest: a successful upload shows the same events and readyStates as a real one", async () => {
  const name = unique("x");
  const out = await both(async (xhr, url, file) => {
    const states = [xhr.readyState];
    xhr.open("POST", url);
    states.push(xhr.readyState);
    xhr.responseType = "json";
    const ended = X.ended(xhr);
    xhr.send(file);
    states.push(xhr.readyState);
    let second;
    try {
      xhr.send(file);
    } catch (e) {
      second = e.name;
    }
    await ended;
    let afterDone;
    try {
      xhr.send(file);
    } catch (e) {
      afterDone = e.name;
    }
    return { states, second, afterDone, name: xhr.response?.name, size: xhr.response?.size, type: xhr.getResponseHeader("content-type")?.split(";")[0] };
  }, { ...urls(name), size: 300_000 });
  assert.deepEqual(out.mu.shape, out.real.shape, "event sequence");
  assert.ok([200, 201].includes(out.mu.fields.status), `status ${out.mu.fields.status}`);
  assert.equal(out.mu.fields.readyState, 4);
  assert.equal(out.mu.fields.responseText, out.real.fields.responseText, "responseText with responseType json");
  assert.deepEqual(out.mu.extra, out.real.extra);
  assert.equal(out.mu.extra.name, name);
  assert.equal(out.mu.extra.second, "InvalidStateError");
  assert.deepEqual(await env.checkStored(name, 300_000, 7), []);
});

test("XMLHttpRequest: handler properties, responseType text, and a FormData's one File", async () => {
  const name = unique("xf");
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const got = [];
    const xhr = new mu.XMLHttpRequest({ formFields: (fields, file) => ({ name: fields.key, contentType: file.type }) });
    xhr.onreadystatechange = () => got.push(`rsc:${xhr.readyState}`);
    xhr.upload.onprogress = (e) => got.push(`up:${e.loaded}/${e.total}`);
    xhr.onload = () => got.push("load");
    xhr.open("POST", url.split("?")[0]);
    xhr.setRequestHeader("Content-Type", "multipart/form-data; boundary=widget");
    const form = new FormData();
    form.append("key", url.split("name=")[1]);
    form.append("file", T.file(700_000, 9, "a.bin", { type: "application/x-test" }));
    const ended = X.ended(xhr);
    xhr.send(form);
    await ended;
    return { got: X.shape(got), status: xhr.status, body: JSON.parse(xhr.responseText), handler: typeof xhr.onload };
  }, ref.uploadURL(name));
  assert.ok([200, 201].includes(out.status), `status ${out.status}`);
  assert.equal(out.body.name, name);
  assert.equal(out.body.contentType, "application/x-test", "the form's Content-Type was replaced by the file's");
  assert.equal(out.handler, "function");
  assert.deepEqual(out.got.filter((g) => g.startsWith("rsc")), ["rsc:1", "rsc:2", "rsc:3", "rsc:4"]);
  assert.ok(out.got.includes("up:700000/700000"), `upload progress reached the end: ${out.got}`);
  assert.equal(out.got.at(-1), "load");
  assert.deepEqual(await env.checkStored(name, 700_000, 9), []);
});

test("XMLHttpRequest: abort() during the upload and after it, as a real one", async () => {
  const name = unique("xa");
  const out = await both(async (xhr, url, file) => {
    xhr.open("POST", url);
    const ended = X.ended(xhr);
    xhr.upload.addEventListener("progress", () => xhr.abort(), { once: true });
    xhr.send(file);
    await ended;
    return { afterAbort: xhr.readyState };
  }, { ...urls(name), size: 16 * MiB, options: { chunkSize: CHUNK } });
  assert.deepEqual(out.mu.shape, out.real.shape, "event sequence of abort during");
  assert.deepEqual(out.mu.fields, out.real.fields);
  assert.equal(out.mu.fields.status, 0);
  assert.equal(out.mu.extra.afterAbort, 0);

  const name2 = unique("xb");
  const out2 = await both(async (xhr, url, file) => {
    xhr.open("POST", url);
    const ended = X.ended(xhr);
    xhr.send(file);
    await ended;
    const before = xhr.readyState;
    xhr.abort();
    return { before, after: xhr.readyState, status: xhr.status };
  }, { ...urls(name2), size: 1000 });
  assert.deepEqual(out2.mu.shape, out2.real.shape, "abort after done fires nothing");
  assert.deepEqual(out2.mu.extra, out2.real.extra);
});

test("XMLHttpRequest: a network error and a timeout, as a real one", async () => {
  // Port 9 of 127.0.0.1: nothing listens, the connection is refused.
  const dead = "http://127.0.0.1:9/upload/storage/v1/b/test/o?name=x";
  const out = await both((xhr, url, file) => X.post(xhr, url, file), { realURL: dead, muURL: dead, size: 1000, options: { retry: { retries: 0 } } });
  assert.deepEqual(out.mu.shape, out.real.shape, "network error sequence");
  assert.deepEqual(out.mu.fields, out.real.fields);

  const name = unique("xt");
  const out2 = await both((xhr, url, file) => X.post(xhr, url, file, 30), { ...urls(name), size: 32 * MiB });
  assert.deepEqual(out2.mu.shape, out2.real.shape, "timeout sequence");
  assert.equal(out2.mu.fields.status, 0);
  assert.ok(out2.mu.shape.includes("timeout:4:0/0"), String(out2.mu.shape));
});

test("XMLHttpRequest: an HTTP refusal is an answer with its status, as a real one", async () => {
  const name = unique("xr");
  await ref.setFaults([{ on: "any", action: "status", status: 403, times: -1 }]);
  const out = await both((xhr, url, file) => X.post(xhr, url, file), { ...urls(name), size: 1000 });
  assert.equal(out.mu.fields.status, 403);
  assert.equal(out.real.fields.status, 403);
  assert.deepEqual(out.mu.shape.filter((s) => !s.startsWith("upload.")), out.real.shape.filter((s) => !s.startsWith("upload.")));
});

test("XMLHttpRequest: a string, bytes and URLSearchParams are sent as a real one sends them", async () => {
  const names = [unique("xs"), unique("xb"), unique("xu")];
  const out = await page.evaluate(async (urls) => {
    const mu = await T.load();
    const bodies = ["héllo, wörld", new Uint8Array([0, 1, 2, 250, 251, 252]).subarray(1), new URLSearchParams({ a: "1", b: "x y" })];
    const statuses = [];
    for (let i = 0; i < urls.length; i++) {
      const xhr = new mu.XMLHttpRequest();
      const ended = X.ended(xhr);
      xhr.open("POST", urls[i]);
      xhr.send(bodies[i]);
      await ended;
      statuses.push(xhr.status);
    }
    return statuses;
  }, names.map((n) => ref.uploadURL(n)));
  assert.deepEqual(out, [200, 200, 200], "stored: a small body goes in one request (the default, \"auto\"), answered 200");
  const want = [Buffer.from("héllo, wörld"), Buffer.from([1, 2, 250, 251, 252]), Buffer.from("a=1&b=x+y")];
  const types = ["text/plain;charset=UTF-8", "application/octet-stream", "application/x-www-form-urlencoded;charset=UTF-8"];
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await ref.download(names[i]), want[i], names[i]);
    assert.equal((await ref.object(names[i]))?.contentType?.toLowerCase(), types[i].toLowerCase(), `${names[i]} content type`);
  }
});

test("XMLHttpRequest: a FormData without exactly one File is a network error, before any request (and formFields is not asked)", async () => {
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const res = [];
    for (const n of [0, 2]) {
      // formFields is given the form's one File: with none, or two, there is none to give.
      let asked = 0;
      const xhr = new mu.XMLHttpRequest({ formFields: (fields, file) => (asked++, { name: file.name }) });
      const log = X.record(xhr);
      const form = new FormData();
      form.append("key", "value");
      for (let i = 0; i < n; i++) form.append("file" + i, T.file(1000, i, `f${i}.bin`));
      const ended = X.ended(xhr);
      xhr.open("POST", url);
      xhr.send(form);
      await ended;
      res.push({ shape: X.shape(log), status: xhr.status, asked });
    }
    return res;
  }, ref.uploadURL(unique("xn")));
  for (const r of out) {
    assert.equal(r.status, 0);
    assert.equal(r.asked, 0, "formFields was asked");
    assert.ok(r.shape.includes("error:4:0/0"), String(r.shape));
  }
  assert.deepEqual((await ref.log()).filter((e) => e.kind !== "preflight"), [], "no request was sent");
});
