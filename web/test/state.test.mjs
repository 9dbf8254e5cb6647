// up.state answers at once (docs/api.md, "One upload"): read synchronously right after
// pause(), resume() and abort(), in several phases of an upload, and the statechange events
// that follow never contradict it. Also the handler properties (onprogress, …).
// Run: node --test web/test/state.test.mjs   (needs dist/ built by ./build.sh)

import assert from "node:assert/strict";
import { MiB, useEnv } from "./harness.mjs";


let env, ref, page;

const { test, unique } = useEnv(async (e) => {
  env = e;
  ({ ref } = env);
  page = await env.openPage();
  // S.log(up): a log of the calls made (["call", name, stateRightAfter]) and the statechange
  // events (["event", state]) in order; S.check(log) returns the contradictions in it: after
  // pause() only "paused" until resume(), after abort() only "aborted".
  await page.evaluate(() => {
    window.S = {
      log(up) {
        const log = [];
        up.addEventListener("statechange", (e) => log.push(["event", e.state]));
        const call = (name) => {
          up[name]();
          log.push(["call", name, up.state]);
          return up.state;
        };
        return { log, call };
      },
      // Waits for up to settle: { status, error, final (state), bad (S.check), log }.
      async settle(up, log) {
        const r = {};
        try {
          r.status = (await up).status;
        } catch (e) {
          r.error = T.errorData(e);
        }
        return { ...r, final: up.state, bad: S.check(log), log };
      },
      check(log) {
        const bad = [];
        let expect = null;
        for (const [kind, name] of log) {
          if (kind === "call") expect = name === "pause" ? "paused" : name === "abort" ? "aborted" : null;
          else if (expect && name !== expect) bad.push(`"${name}" after ${expect === "paused" ? "pause" : "abort"}()`);
        }
        return bad;
      },
    };
  });
}, { timeout: 60_000 });

// The upload was paused, paused still, resumed, paused and resumed again; it ended stored
// whole, and no statechange event contradicted up.state.
async function assertPausedAndResumed(out, name, size, seed) {
  assert.deepEqual(out.states, ["paused", "paused", "uploading", "paused", "uploading"]);
  assert.equal(out.error, undefined, JSON.stringify(out.error));
  assert.equal(out.final, "done");
  assert.deepEqual(out.bad, [], JSON.stringify(out.log));
  assert.deepEqual(await env.checkStored(name, size, seed), []);
}

test("before the first request answers: pause, resume, abort change state at once", async () => {
  const url = ref.uploadURL(unique("early"));
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const r = {};
    // getHeaders holds the session start until it is released: no request has been answered.
    let release;
    const held = new Promise((res) => (release = res));
    const up = mu.upload(T.blob(600 * 1024, 1), { url, chunkSize: 262144, getHeaders: () => held.then(() => ({})) });
    const { log, call } = S.log(up);
    r.initial = up.state;
    r.paused = call("pause");
    r.pausedAgain = call("pause");
    await T.sleep(50);
    r.stillPaused = up.state;
    r.resumed = call("resume");
    release();
    try {
      r.status = (await up).status;
    } catch (e) {
      r.error = T.errorData(e);
    }
    r.final = up.state;
    // An abort before anything was answered.
    const up2 = mu.upload(T.blob(1000, 2), { url: url + "x", getHeaders: () => new Promise(() => {}) });
    const l2 = S.log(up2);
    r.aborted = l2.call("abort");
    r.err2 = await up2.then(() => null, (e) => e.code);
    r.final2 = up2.state;
    r.bad = [...S.check(log), ...S.check(l2.log)];
    r.log = log;
    return r;
  }, url);
  assert.equal(out.initial, "starting");
  assert.equal(out.paused, "paused");
  assert.equal(out.pausedAgain, "paused");
  assert.equal(out.stillPaused, "paused");
  assert.equal(out.resumed, "starting", "resume goes back to the state the pause interrupted");
  assert.equal(out.error, undefined, JSON.stringify(out.error));
  assert.ok(out.status === 200 || out.status === 201, String(out.status));
  assert.equal(out.final, "done");
  assert.equal(out.aborted, "aborted");
  assert.equal(out.err2, "aborted");
  assert.equal(out.final2, "aborted");
  assert.deepEqual(out.bad, [], JSON.stringify(out.log));
});

test("mid chunk: pause, resume and abort while a chunk is in flight", async () => {
  const name = unique("mid");
  const size = 6 * MiB + 5;
  const out = await page.evaluate(async ({ url, size }) => {
    const mu = await T.load();
    const r = { states: [] };
    // Resolves on the first chunk's request report: the next chunk is on its way at once.
    const firstChunk = (up) =>
      new Promise((res) => up.addEventListener("request", (e) => /^bytes 0-/.test(e.contentRange ?? "") && res()));
    const up = mu.upload(T.blob(size, 3), { url, chunkSize: 1024 * 1024 });
    const { log, call } = S.log(up);
    await firstChunk(up);
    r.states.push(call("pause"));
    await T.until(() => log.some((l) => l[0] === "event" && l[1] === "paused"), 10000, "the paused event");
    await T.sleep(100);
    r.states.push(up.state);
    r.states.push(call("resume"));
    await new Promise((res) => up.addEventListener("progress", res, { once: true }));
    r.states.push(call("pause"));
    r.states.push(call("resume"));
    Object.assign(r, await S.settle(up, log));

    // An abort mid chunk.
    const up2 = mu.upload(T.blob(size, 4), { url: url + "-2", chunkSize: 2 * 1024 * 1024 });
    const l2 = S.log(up2);
    await firstChunk(up2);
    r.aborted = l2.call("abort");
    r.err2 = await up2.then(() => null, (e) => e.code);
    await T.sleep(100);
    r.final2 = up2.state;
    r.bad.push(...S.check(l2.log));
    return r;
  }, { url: ref.uploadURL(name), size });
  await assertPausedAndResumed(out, name, size, 3);
  assert.equal(out.aborted, "aborted");
  assert.equal(out.err2, "aborted");
  assert.equal(out.final2, "aborted");
});

test("during a retry wait: pause, resume, abort change state at once", async () => {
  // Every chunk after the first answers 503: the upload waits between retries.
  await ref.setFaults([{ on: "chunk", action: "status", status: 503, times: 2, skip: 1 }]);
  const name = unique("retry");
  const size = 3 * 262144;
  const out = await page.evaluate(async ({ url, size }) => {
    const mu = await T.load();
    const r = { states: [] };
    const retry = { retries: 5, initialDelayMs: 400, maxDelayMs: 400, jitterMs: 0 };
    const up = mu.upload(T.blob(size, 5), { url, chunkSize: 262144, retry });
    const { log, call } = S.log(up);
    await T.until(() => up.state === "retrying", 10000, "retrying");
    r.states.push(call("pause"));
    await T.sleep(600); // longer than the wait: still paused
    r.states.push(up.state);
    r.states.push(call("resume"));
    await T.until(() => up.state === "retrying", 10000, "retrying again");
    r.states.push(call("pause"));
    r.states.push(call("resume"));
    Object.assign(r, await S.settle(up, log));
    return r;
  }, { url: ref.uploadURL(name), size });
  await assertPausedAndResumed(out, name, size, 5);

  await ref.setFaults([{ on: "chunk", action: "status", status: 503, times: -1 }]);
  const aborted = await page.evaluate(async (url) => {
    const mu = await T.load();
    const up = mu.upload(T.blob(1000, 6), { url, uploadType: "resumable", retry: { retries: 5, initialDelayMs: 5000, jitterMs: 0 } });
    const { log, call } = S.log(up);
    await T.until(() => up.state === "retrying", 10000, "retrying");
    const t0 = performance.now();
    const state = call("abort");
    const code = await up.then(() => null, (e) => e.code);
    return { state, code, ms: performance.now() - t0, bad: S.check(log), final: up.state };
  }, ref.uploadURL(unique("retry-abort")));
  assert.equal(aborted.state, "aborted");
  assert.equal(aborted.code, "aborted");
  assert.equal(aborted.final, "aborted");
  assert.deepEqual(aborted.bad, []);
  assert.ok(aborted.ms < 2000, `the abort took ${aborted.ms} ms`);
});

test("handler properties: onloadstart … onloadend, onretry, onstatechange", async () => {
  await ref.setFaults([{ on: "chunk", action: "status", status: 503, times: 1, skip: 1 }]);
  const url = ref.uploadURL(unique("handlers"));
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const TYPES = ["loadstart", "progress", "load", "error", "abort", "loadend", "retry", "statechange"];
    const retry = { retries: 3, initialDelayMs: 20, maxDelayMs: 100, jitterMs: 0 };
    const run = async (blob, options, after) => {
      const up = mu.upload(blob, options);
      const calls = [];
      const before = {};
      for (const t of TYPES) {
        before[t] = up["on" + t];
        up["on" + t] = function (e) {
          calls.push([t, e.type, this === up, e.state ?? null]);
        };
      }
      // Replacing a handler replaces it; a non-function clears it.
      const extra = [];
      up.onretry = function (e) {
        calls.push(["retry", e.type, this === up, e.attempt]);
      };
      up.onabort = 42;
      const cleared = up.onabort;
      up.onabort = (e) => calls.push(["abort", e.type, true, null]);
      after?.(up);
      const end = await up.then(() => "done", (e) => e.code);
      return { calls, before, cleared, end, extra };
    };
    const ok = await run(T.blob(3 * 262144, 7), { url, chunkSize: 262144, retry });
    const bad = await run(T.blob(10, 8), { url, chunkSize: 1000 }); // not a multiple of 262144
    const aborted = await run(T.blob(10, 9), { url: url + "-a" }, (up) => up.abort());
    // A handler set to null is no longer called.
    const up = mu.upload(T.blob(10, 10), { url: url + "-n" });
    let n = 0;
    up.onprogress = () => n++;
    up.onprogress = null;
    await up;
    return { ok, bad, aborted, nullCalls: n, nullValue: up.onprogress };
  }, url);
  const types = (r) => r.calls.map((c) => c[0]);
  for (const t of ["loadstart", "progress", "load", "loadend", "retry", "statechange"]) {
    assert.ok(types(out.ok).includes(t), `on${t} not called: ${types(out.ok)}`);
  }
  assert.deepEqual(Object.values(out.ok.before), Array(8).fill(null), "handlers start null");
  assert.equal(out.ok.cleared, null);
  assert.ok(out.ok.calls.every((c) => c[0] === c[1] && c[2]), JSON.stringify(out.ok.calls));
  assert.equal(out.ok.calls.filter((c) => c[0] === "retry").length, 1);
  assert.equal(out.ok.calls.filter((c) => c[0] === "statechange").at(-1)[3], "done");
  assert.equal(types(out.ok)[0], "loadstart");
  assert.equal(types(out.ok).at(-1), "loadend");
  assert.equal(out.ok.end, "done");
  assert.equal(out.bad.end, "invalid_argument");
  assert.deepEqual(types(out.bad).filter((t) => t !== "statechange"), ["loadstart", "error", "loadend"]);
  assert.equal(out.aborted.end, "aborted");
  const abortedShape = types(out.aborted).filter((t) => t !== "statechange").join(" ");
  assert.match(abortedShape, /^loadstart( progress)* abort loadend$/);
  assert.equal(out.nullCalls, 0);
  assert.equal(out.nullValue, null);
});
