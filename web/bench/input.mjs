// A thousand files set on the demo's file input (Chromium, a 390 x 844 viewport, the demo's
// defaults): the page's worst event-loop delay (web/test/probe.mjs), and whose the long tasks
// are, from the DevTools trace of the page's main thread. For each task over 50 ms (and the
// longest one): its wall and thread time, what the browser did in it (the DevTools command
// that set the files, its synchronous lookups of each file's MIME type), and the time of the
// functions of each script in it (the demo's, the module's /dist), with their URLs; and the
// same of the task in which the page's own functions used the thread most.
// Run: BENCH_ONLY=input ./build.sh bench   (BENCH_INPUT_FILES: how many, default 1,000;
// BENCH_INPUT_RUNS: rounds, default 3)

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser, pseudoRandomBytes, startServe } from "../test/harness.mjs";
import { startProbe, stopProbe } from "../test/probe.mjs";

const N = Number(process.env.BENCH_INPUT_FILES ?? 1000);
const RUNS = Number(process.env.BENCH_INPUT_RUNS ?? 3);
// The trace's categories: tasks and script (devtools.timeline), the task's own name
// (toplevel), the DevTools command run in it (devtools), and the browser's interfaces called
// from it (mojom: the MIME type of each file).
const CATEGORIES = "devtools.timeline,toplevel,devtools,mojom";
const ms = (us) => (us / 1000).toFixed(1);

export async function benchInput() {
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-input-"));
  const [serve, browser] = await Promise.all([startServe(), launchBrowser()]);
  try {
    console.log(`\n== ${N} files set on the demo's input, Chromium, 390 x 844 (the trace of the page's main thread)`);
    for (let run = 1; run <= RUNS; run++) {
      // 5-50 KB each, new names each round (the demo's uploads are remembered).
      const paths = Array.from({ length: N }, (_, i) => {
        const p = join(dir, `input-${run}-${String(i).padStart(4, "0")}.bin`);
        writeFileSync(p, pseudoRandomBytes(5000 + ((i * 7919) % 45001), 7000 + i));
        return p;
      });
      const page = await browser.newPage();
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(serve.url + "/");
        await page.waitForFunction(() => document.body.dataset.ready === "yes", undefined, { timeout: 30_000 });
        const { events, probe, setMs, allMs } = await traced(browser, page, async () => {
          const t0 = Date.now();
          await page.setInputFiles("#files", paths);
          const setMs = Date.now() - t0;
          await page.waitForFunction((n) => Number(document.querySelector("#overall")?.dataset.done) === n, N, { timeout: 300_000 });
          return { setMs, allMs: Date.now() - t0 };
        });
        report(run, events, serve.url, probe, setMs, allMs);
      } finally {
        await page.close();
      }
      for (const p of paths) rmSync(p, { force: true });
    }
  } finally {
    await Promise.allSettled([browser.close(), serve.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

// Runs what() with the probe started and the trace recording; resolves to its result with the
// trace's events and the probe's figures.
async function traced(browser, page, what) {
  const cdp = await browser.context.newCDPSession(page);
  const events = [];
  cdp.on("Tracing.dataCollected", (d) => {
    for (const e of d.value) events.push(e);
  });
  const complete = new Promise((r) => cdp.once("Tracing.tracingComplete", r));
  await cdp.send("Tracing.start", { categories: CATEGORIES, transferMode: "ReportEvents" });
  try {
    await page.evaluate(startProbe);
    const out = await what();
    const probe = await page.evaluate(stopProbe);
    return { ...out, probe, events };
  } finally {
    await cdp.send("Tracing.end");
    await complete;
    await cdp.detach();
  }
}

function report(run, events, origin, probe, setMs, allMs) {
  // The page's main thread: the one whose functions come from the demo's origin.
  const own = events.find((e) => e.name === "FunctionCall" && e.args?.data?.url?.startsWith(origin));
  const main = events.filter((e) => e.pid === own.pid && e.tid === own.tid && e.ph === "X").sort((a, b) => a.ts - b.ts);
  const tasks = main.filter((e) => e.name === "ThreadControllerImpl::RunTask");
  const longest = tasks.reduce((a, b) => (b.dur > a.dur ? b : a));
  // The task of the page's own script (the demo's, the module's) that used the thread most:
  // each function call's thread time added to the task it starts in, in one pass over the
  // sorted events. (Filtering every event for each task took the square of the trace's length:
  // about 20 minutes at 100 % CPU for a thousand files' trace.)
  const scriptTime = new Map();
  let k = 0;
  for (const e of main) {
    if (e.name !== "FunctionCall") continue;
    while (k + 1 < tasks.length && tasks[k + 1].ts <= e.ts) k++;
    const t = tasks[k];
    if (t && e.ts >= t.ts && e.ts < t.ts + t.dur) scriptTime.set(t, (scriptTime.get(t) ?? 0) + (e.tdur ?? 0));
  }
  const scriptOf = (t) => scriptTime.get(t) ?? 0;
  const ours = tasks.filter((t) => t !== longest).reduce((a, b) => (scriptOf(b) > scriptOf(a) ? b : a));
  const long = tasks.filter((t) => t.dur > 50_000 || t === longest || t === ours);
  const t0 = tasks[0].ts;
  console.log(
    `round ${run}: setInputFiles took ${setMs} ms, all ${N} done in ${(allMs / 1000).toFixed(1)} s; the page's worst delay ${probe.worst.toFixed(0)} ms ` +
      `(its own ${probe.own.toFixed(0)}); delays over 50 ms [from start, late, the worker's]: ${JSON.stringify(probe.stalls)}; ` +
      `${tasks.filter((t) => t.dur > 50_000).length} tasks over 50 ms of ${tasks.length}`,
  );
  for (const t of long) {
    const inside = main.filter((e) => e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && e !== t);
    const command = inside.find((e) => e.name === "api_call")?.args?.method_name;
    const lookups = inside.filter((e) => e.name === "MimeRegistry::GetMimeTypeFromExtension");
    const sum = (list, k) => list.reduce((n, e) => n + (e[k] ?? 0), 0);
    // Script: the outermost function calls, by their script's URL (a microtask's included).
    const scripts = new Map();
    let end = -1;
    for (const e of inside) {
      if (e.name !== "FunctionCall" || e.ts < end) continue;
      end = e.ts + e.dur;
      const url = (e.args?.data?.url || "(no URL)").replace(origin, "");
      const s = scripts.get(url) ?? { dur: 0, tdur: 0 };
      s.dur += e.dur;
      s.tdur += e.tdur ?? 0;
      scripts.set(url, s);
    }
    const byScript = [...scripts].map(([url, s]) => `${url} ${ms(s.dur)} ms (thread ${ms(s.tdur)})`).join(", ");
    console.log(
      `  a task of ${ms(t.dur)} ms wall, ${ms(t.tdur)} ms thread, at ${((t.ts - t0) / 1e6).toFixed(2)} s: ` +
        `${command ? `the DevTools command ${command}` : "no DevTools command"}; ` +
        `${lookups.length} MIME type lookups in the browser process, ${ms(sum(lookups, "dur"))} ms wall (thread ${ms(sum(lookups, "tdur"))}); ` +
        `script: ${byScript || "none"}`,
    );
  }
}
