// How long the page's main thread kept it waiting, and whose work that was (docs/api.md, "Where
// the module runs"; docs/performance.md, "Does the page wait for the module?").
//
// - startProbe/stopProbe run in the page (page.evaluate(startProbe)): a 10 ms timer on the
//   page's main thread and how late each one fires (the raw figure: `worst`), with the same
//   timer in a Worker of the page beside it. The page's tasks do not hold the Worker's thread:
//   where its timer was late over the same moment, the machine (two shared cores, the browser's
//   other processes) held both threads, and only that much time, the overlap of the two late
//   spells, is taken off the page's (`own`). That is all a timer can tell, in every engine:
//   the page's thread waiting for a core while the Worker's had one still counts as the page's.
// - traceMainThread(page) reads what the page's thread ran where the driver gives a trace
//   (Chromium's DevTools trace, through playwright's CDP session): each main-thread task with
//   its wall time and its thread time (the CPU the thread used: a task of ours is told from a
//   thread waiting for a core), and which of them ran the module's code (tasksOf).
// - Where there is no trace (Firefox, WebKit), watchThread(page) reads the page's main thread's
//   CPU time from the operating system (Linux's /proc/PID/task/TID/schedstat: time run, time
//   waiting for a core), every 2 ms while the probe runs; cpuInDelays then gives, for the
//   timer's delays, how much of each the page's thread spent running (its own work, whatever
//   it was: the module's, the page's, the engine's) and how much waiting for a core.

import { readFileSync, readdirSync } from "node:fs";

/**
 * Starts the probe of the page's event loop (run in the page, by evaluate; self-contained: the
 * benches embed its text): a 10 ms timer, and how late each one fires. Beside it, the same
 * timer in a Worker of the page (see the file's comment). State in window.__probe.
 */
export function startProbe() {
  const clock = () => performance.timeOrigin + performance.now(); // the same clock in the worker
  const probe = (window.__probe = { on: true, t0: clock(), late: [], worst: 0 });
  let last = clock();
  const tick = () => {
    const now = clock();
    probe.worst = Math.max(probe.worst, now - last - 10);
    if (now - last - 10 > 5) probe.late.push([last + 10, now]);
    last = now;
    if (probe.on) setTimeout(tick, 10);
  };
  setTimeout(tick, 10);
  const src = `const clock = () => performance.timeOrigin + performance.now();
    let last = clock(), late = [];
    const tick = () => { const now = clock(); if (now - last - 10 > 5) late.push([last + 10, now]); last = now; setTimeout(tick, 10); };
    setTimeout(tick, 10);
    onmessage = () => postMessage(late);`;
  probe.url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
  probe.worker = new Worker(probe.url);
}

/**
 * Stops the probe (in the page; self-contained) and resolves to, in ms:
 *   worst    the timer's worst delay, raw (how long the page's loop kept a due timer waiting);
 *   own      the worst delay less the time the Worker's timer was late over the same moment
 *            (the intersection of the two late spells, nothing more);
 *   control  the Worker's timer's worst delay;
 *   stalls   [from the start, the delay, the time of it the Worker's was late too] of each
 *            delay over 50 ms;
 *   ms       how long the probe ran;
 *   t0, late when it started, and every delay over 5 ms: [due, fired] (ms since 1970, as
 *            performance.timeOrigin).
 */
export async function stopProbe() {
  const probe = window.__probe;
  probe.on = false;
  probe.worker.postMessage("");
  const control = await new Promise((resolve) => (probe.worker.onmessage = (e) => resolve(e.data)));
  probe.worker.terminate();
  URL.revokeObjectURL(probe.url);
  // The Worker's late spells, in time order, as disjoint intervals (each [due, fired]).
  const spells = [];
  for (const [d, f] of [...control].sort((a, b) => a[0] - b[0])) {
    const top = spells.at(-1);
    if (top && d <= top[1]) top[1] = Math.max(top[1], f);
    else spells.push([d, f]);
  }
  // How much of [from, to] the Worker's timer was late in too.
  const overlap = (from, to) => {
    let n = 0;
    for (const [d, f] of spells) n += Math.max(0, Math.min(to, f) - Math.max(from, d));
    return n;
  };
  let own = 0, controlWorst = 0;
  const stalls = [];
  for (const [due, fired] of probe.late) {
    const late = fired - due;
    const both = overlap(due, fired);
    own = Math.max(own, late - both);
    if (late > 50) stalls.push([Math.round(due - probe.t0), Math.round(late), Math.round(both)]);
  }
  for (const [d, f] of control) controlWorst = Math.max(controlWorst, f - d);
  // late: every delay over 5 ms, [due, fired] in ms of the clock performance.timeOrigin starts.
  return { worst: probe.worst, own, control: controlWorst, stalls, ms: performance.timeOrigin + performance.now() - probe.t0, t0: probe.t0, late: probe.late };
}

// ---------------------------------------------------------------------------------------------
// The trace (Chromium), in Node

// What the trace records: each task of every thread with its wall and thread time (toplevel's
// ThreadControllerImpl::RunTask, with tdur), and inside a renderer's main thread the scripts,
// timers, events and garbage collections it ran, each script function with its script's URL
// (devtools.timeline). disabled-by-default-devtools.timeline would add a heap count to each
// function called (UpdateCounters: a few ms more of thread time in a task of a thousand calls),
// and V8's sampling profiler a sample every 0.1-0.2 ms: neither is needed to tell whose a task is.
const CATEGORIES = ["toplevel", "devtools.timeline"];

/**
 * Starts a trace of the browser behind page (a browsers.mjs page), where its driver gives one
 * (playwright's CDP session: Chromium); resolves to null elsewhere, or to { stop(ours) }, which
 * ends the trace and resolves to tasksOf(events, { url: the page's URL, ours }).
 */
export async function traceMainThread(page) {
  const raw = page.raw;
  if (typeof raw?.context !== "function" || typeof raw.context().newCDPSession !== "function") return null;
  const url = raw.url();
  const cdp = await raw.context().newCDPSession(raw);
  const events = [];
  const collect = (e) => events.push(...e.value);
  cdp.on("Tracing.dataCollected", collect);
  await cdp.send("Tracing.start", { traceConfig: { includedCategories: CATEGORIES }, transferMode: "ReportEvents" });
  return {
    async stop(ours) {
      const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
      await cdp.send("Tracing.end");
      await complete;
      cdp.off("Tracing.dataCollected", collect);
      await cdp.detach().catch(() => {});
      return tasksOf(events, { url, ours });
    },
  };
}

// The events inside a task that say what it ran (describe), and those whose script makes the
// task the module's (a function called, a script run or compiled: message handlers, timers,
// microtasks and event listeners are each a FunctionCall of their function's script).
const TOLD = /^(FunctionCall|EvaluateScript|TimerFire|HandlePostMessage|EventDispatch|FireAnimationFrame|MajorGC|MinorGC|Layout|UpdateLayoutTree|Paint|ParseHTML|v8\.compile\w*)$/;
const ENTRY = /^(FunctionCall|EvaluateScript|v8\.compile\w*)$/;

/**
 * The tasks of the page's main thread in a Chromium trace (events), in ms:
 *   tasks    how many;
 *   longest  the task of the longest wall time: { at (ms from the first), wall, thread, what };
 *   mostCPU  the task of the most thread time (the same shape);
 *   ours     the task of ours of the most thread time (the same shape, or null where none): a
 *            task in which the module's code ran (a function, script or compile whose
 *            script's URL ours(url) accepts: its message handlers, timers, microtasks, event
 *            listeners), counted whole, with what else ran in it (the page's own code that
 *            called the module, garbage collections);
 *   over     the tasks of over 50 ms of wall time: [at, wall, thread, whether ours].
 * The page's thread is the renderer main thread of the process that ran scripts of url's origin.
 */
export function tasksOf(events, { url, ours }) {
  const threads = new Map();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name") threads.set(`${e.pid}:${e.tid}`, e.args.name);
  const isMain = (e) => threads.get(`${e.pid}:${e.tid}`) === "CrRendererMain";
  const origin = new URL(url).origin, seen = new Map();
  for (const e of events) if (isMain(e) && e.args?.data?.url?.startsWith(origin)) seen.set(e.pid, (seen.get(e.pid) ?? 0) + 1);
  const pid = [...seen].sort((a, b) => b[1] - a[1])[0]?.[0];
  const main = events.filter((e) => e.pid === pid && isMain(e) && e.ph === "X").sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  if (!main.length) throw new Error(`the trace shows no main thread that ran ${origin}'s scripts`);

  // The outermost tasks, in time order, each with the events inside it.
  const tasks = [];
  for (const e of main) {
    const top = tasks.at(-1);
    if (top && e.ts < top.end) top.inside.push(e);
    else if (e.name === "ThreadControllerImpl::RunTask") tasks.push({ e, end: e.ts + e.dur, inside: [] });
  }
  const t0 = tasks[0]?.e.ts ?? 0;
  const scriptURL = (e) => e.args?.data?.url ?? e.args?.fileName ?? "";
  const what = (task) => {
    const names = [];
    for (const e of task.inside) {
      if (!TOLD.test(e.name)) continue;
      const u = scriptURL(e).replace(/^\w+:\/\/[^/]+/, "");
      const name = [e.name, e.args?.data?.type, u, e.args?.data?.functionName].filter(Boolean).join(" ");
      if (!names.includes(name)) names.push(name);
    }
    return names.slice(0, 5).join(", ") || "(the browser's own)";
  };
  const all = tasks.map((task) => ({
    at: (task.e.ts - t0) / 1000,
    wall: task.e.dur / 1000,
    thread: (task.e.tdur ?? task.e.dur) / 1000,
    ours: task.inside.some((x) => ENTRY.test(x.name) && ours(scriptURL(x))),
    task,
  }));
  const most = (list, key) => list.reduce((a, b) => (!a || b[key] > a[key] ? b : a), null);
  const shape = (t) => t && { at: Math.round(t.at), wall: t.wall, thread: t.thread, what: what(t.task) };
  return {
    tasks: all.length,
    longest: shape(most(all, "wall")),
    mostCPU: shape(most(all, "thread")),
    ours: shape(most(all.filter((t) => t.ours), "thread")),
    over: all.filter((t) => t.wall > 50).map((t) => [Math.round(t.at), Math.round(t.wall), Math.round(t.thread), t.ours]),
  };
}

// ---------------------------------------------------------------------------------------------
// The page's thread's CPU time from the operating system (Firefox, WebKit), in Node


// Run and waiting time of thread tid of process pid so far, in ns (schedstat's first two fields),
// or null where there is none (not Linux, a process gone).
function schedstat(pid, tid = pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
    return { run, wait };
  } catch {
    return null;
  }
}

// The main thread (its process's first: pid = tid) of every process, with its schedstat.
function everyMainThread() {
  const out = new Map();
  let dirs = [];
  try {
    dirs = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const d of dirs) {
    const s = schedstat(d);
    if (s) out.set(Number(d), s);
  }
  return out;
}

/**
 * Finds the operating system's thread that runs page's scripts (in(page, fn) runs fn in it:
 * page.evaluate, or a frame's): the main thread of the process whose CPU time grows by a busy
 * loop of 300 ms run there (every engine runs a page's scripts on its process's first thread).
 * Resolves to { pid, sample() }, or null where the system does not tell (not Linux) or no
 * process did; sample() starts reading its schedstat every 2 ms and returns { stop() }, which
 * resolves to the readings [ms since 1970, run ns, waiting ns].
 */
export async function watchThread(page, run = (fn) => page.evaluate(fn)) {
  const before = everyMainThread();
  if (!before.size) return null;
  await run(() => {
    const end = performance.now() + 300;
    while (performance.now() < end);
  });
  const after = everyMainThread();
  let pid = null, most = 0;
  for (const [p, s] of after) {
    const grew = s.run - (before.get(p)?.run ?? s.run);
    if (grew > most) [pid, most] = [p, grew];
  }
  if (pid === null || most < 200e6) return null;
  return {
    pid,
    sample() {
      const readings = [];
      const read = () => {
        const s = schedstat(pid);
        if (s) readings.push([performance.timeOrigin + performance.now(), s.run, s.wait]);
      };
      read();
      const timer = setInterval(read, 2);
      return {
        async stop() {
          clearInterval(timer);
          read();
          return readings;
        },
      };
    },
  };
}

/**
 * What the page's thread did in the timer's delays (late: stopProbe's), from readings
 * (watchThread's): for each delay, its CPU time (run) and its time waiting for a core (wait)
 * between the readings before it began and after it ended, and how long that was (window: the
 * delay and a few ms, more where the readings came late). The thread's own work in a delay is at
 * most the delay and at most its run. Returns, in ms, { own: the most of that in any delay,
 * worst: [at (ms from t0), delay, run, wait, window] of that delay (null for none), over: the
 * same of each delay over 50 ms }.
 */
export function cpuInDelays(readings, late, t0) {
  let worst = null, own = 0;
  const over = [];
  let i = 0;
  for (const [due, fired] of late) {
    while (i + 1 < readings.length && readings[i + 1][0] <= due) i++;
    let j = i;
    while (j + 1 < readings.length && readings[j][0] < fired) j++;
    if (readings[i][0] > due || readings[j][0] < fired) continue; // not watched over all of it
    const delay = fired - due;
    const row = [due - t0, delay, (readings[j][1] - readings[i][1]) / 1e6, (readings[j][2] - readings[i][2]) / 1e6, readings[j][0] - readings[i][0]];
    const mine = Math.min(delay, row[2]);
    if (!worst || mine > own) [worst, own] = [row, mine];
    if (delay > 50) over.push(row.map(Math.round));
  }
  return { own, worst: worst && worst.map((n) => Math.round(n * 10) / 10), over };
}

// ---------------------------------------------------------------------------------------------
// Both, as the tests use them

/**
 * Starts watching page's main thread (before startProbe): the trace where the driver gives one,
 * else the system's count of its CPU time (found by a busy loop run by run(fn): page.evaluate,
 * or a frame's). Resolves to { stop(probe, ours) }, which resolves to { trace, cpu } (each null
 * where not measured): traceMainThread's and cpuInDelays' figures for probe (stopProbe's result);
 * ours(url) tells the module's scripts.
 */
export async function watchMainThread(page, run = (fn) => page.evaluate(fn)) {
  const trace = await traceMainThread(page);
  const thread = trace ? null : (await watchThread(page, run))?.sample();
  return {
    async stop(probe, ours) {
      return {
        trace: trace && (await trace.stop(ours)),
        cpu: thread && cpuInDelays(await thread.stop(), probe.late, probe.t0),
      };
    },
  };
}

/**
 * A case's figures as lines to print (raw first), and the one a test bounds: own, in ms, with
 * what it is (ownIs): in Chromium the thread time of the module's worst task (the trace); where
 * the system counts the thread's CPU time, the most the page's thread ran in one delay of its
 * timer (its own work, whatever it was); else the timer's delay less the overlap.
 * { probe, trace, cpu }: stopProbe's, and watchMainThread's stop's.
 */
export function pageFigures({ probe, trace, cpu }) {
  const ms = (n) => n.toFixed(1);
  const task = (t) => (t ? `${ms(t.wall)} ms (${ms(t.thread)} ms of thread time) at ${t.at} ms: ${t.what}` : "none");
  const lines = [
    `the page's 10 ms timer: worst delay ${ms(probe.worst)} ms raw, ${ms(probe.own)} ms less the time a Worker's timer was late too ` +
      `(its worst ${ms(probe.control)} ms), over ${(probe.ms / 1000).toFixed(1)} s; delays over 50 ms [ms from the start, delay, of it the ` +
      `Worker's late too]: ${JSON.stringify(probe.stalls)}`,
  ];
  if (trace) {
    lines.push(
      `the trace, ${trace.tasks} tasks on the page's thread: the longest ${task(trace.longest)}; the most thread time ${task(trace.mostCPU)}; ` +
        `the module's worst ${task(trace.ours)}; tasks over 50 ms [at, wall, thread, ours]: ${JSON.stringify(trace.over)}`,
    );
    return { lines, own: trace.ours?.thread ?? 0, ownIs: `the module's worst task's thread time: ${task(trace.ours)}` };
  }
  if (cpu) {
    const w = cpu.worst;
    lines.push(
      `the page's thread as the system counts its CPU time: at most ${ms(cpu.own)} ms run in one delay` +
        `${w ? ` (a delay of ${ms(w[1])} ms at ${Math.round(w[0])} ms; over ${ms(w[4])} ms around it the thread ran ${ms(w[2])} ms, waited ` +
          `for a core ${ms(w[3])} ms and neither ${ms(Math.max(w[4] - w[2] - w[3], 0))} ms)` : ""}; ` +
        `delays over 50 ms [at, delay, run, waiting, over]: ${JSON.stringify(cpu.over)}`,
    );
    return { lines, own: cpu.own, ownIs: `the most the page's thread ran in one delay of its timer: ${JSON.stringify(w)}` };
  }
  return { lines, own: probe.own, ownIs: `the timer's worst delay less the overlap (raw ${ms(probe.worst)} ms)` };
}
