// The page-thread measures of web/test/probe.mjs on made-up figures, in Node (no browser): what
// each takes off the timer's delay, and which trace tasks it calls the module's (issue 46: the
// Worker's whole lateness was taken off wherever two late spells overlapped at all).
// Run: node --test web/test/probe.test.mjs

import assert from "node:assert/strict";
import { test } from "node:test";
import { cpuInDelays, stopProbe, tasksOf } from "./probe.mjs";

// Runs stopProbe over the page's late spells and the Worker's ([due, fired], ms).
async function stop(page, worker) {
  globalThis.window = {
    __probe: {
      t0: 0,
      late: page,
      worst: Math.max(...page.map(([d, f]) => f - d)),
      worker: { postMessage() { queueMicrotask(() => this.onmessage({ data: worker })); }, terminate() {} },
    },
  };
  const revoke = URL.revokeObjectURL;
  URL.revokeObjectURL = () => {};
  try {
    return await stopProbe();
  } finally {
    URL.revokeObjectURL = revoke;
    delete globalThis.window;
  }
}

test("the timer: only the time both were late is taken off", async () => {
  // The issue's: a 100 ms stall of the page overlapping a 60 ms one of the Worker by 10 ms.
  const r = await stop([[1000, 1100]], [[1090, 1150]]);
  assert.equal(r.worst, 100);
  assert.equal(r.own, 90, "10 ms taken off, not 60");
  assert.deepEqual(r.stalls, [[1000, 100, 10]]);
  // Two Worker spells inside one of the page's, one overlapping the other: their union.
  assert.equal((await stop([[0, 100]], [[10, 30], [20, 40], [60, 70]])).own, 60);
  // None of the Worker's: all of it is the page's.
  assert.equal((await stop([[0, 80]], [[200, 300]])).own, 80);
});

test("the system's count: the thread's own work in a delay is at most its run time and at most the delay", () => {
  // Readings every 2 ms: [ms, run ns, waiting ns]. The thread runs 0-40 ms, then waits 40-60.
  const readings = [];
  for (let t = 0; t <= 100; t += 2) readings.push([t, Math.min(t, 40) * 1e6, Math.min(Math.max(t - 40, 0), 20) * 1e6]);
  const r = cpuInDelays(readings, [[10, 70], [80, 90]], 0);
  assert.equal(r.own, 30, "30 ms run in the first delay (10-40)");
  assert.deepEqual(r.worst, [10, 60, 30, 20, 60]);
  assert.deepEqual(r.over, [[10, 60, 30, 20, 60]]);
});

test("the trace: a task of the module's counts whole, by its thread time; a task waiting for a core is not the module's", () => {
  const url = "http://127.0.0.1:1/test/probe.html";
  const X = (name, ts, dur, tdur, data) => ({ ph: "X", pid: 7, tid: 7, name, ts, dur, tdur, args: data ? { data } : {} });
  const events = [
    { ph: "M", pid: 7, tid: 7, name: "thread_name", args: { name: "CrRendererMain" } },
    X("ThreadControllerImpl::RunTask", 0, 36_000, 1_000),
    X("MinorGC", 100, 35_000, 900),
    X("ThreadControllerImpl::RunTask", 50_000, 30_000, 18_000),
    X("FunctionCall", 51_000, 2_000, 1_900, { url: "http://127.0.0.1:1/dist/mediaupload.js" }),
    X("MinorGC", 60_000, 5_000, 4_000),
    X("ThreadControllerImpl::RunTask", 90_000, 5_000, 5_000),
    X("FunctionCall", 90_100, 4_000, 4_000, { url: "http://127.0.0.1:1/test/probe.html" }),
  ];
  const r = tasksOf(events, { url, ours: (u) => u.includes("/dist/") });
  assert.equal(r.tasks, 3);
  assert.deepEqual([r.longest.wall, r.longest.thread], [36, 1]);
  assert.deepEqual([r.ours.at, r.ours.wall, r.ours.thread], [50, 30, 18]);
  assert.match(r.ours.what, /FunctionCall \/dist\/mediaupload\.js/);
  assert.deepEqual(r.over, []);
});
