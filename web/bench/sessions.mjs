// Sessions from the app's backend, two ways measured.
//   - benchSessions: the backend package's session starts (web/gcs), 1,000 page requests at
//     once against fake-gcs-server, a Go program of its own (web/bench/sessions/main.go says
//     what it measures). No browser.
//   - benchSessionAsk: what asking the backend adds to an upload's first byte. The demo's
//     server (web/cmd/serve) behind its emulated link (POST /api/throttle: the link carries
//     fake-gcs-server and the backend alike, as a phone's uplink carries both), a page of its
//     origin in Chromium, Firefox and WebKit, and uploads of 256 KiB + 1 in 256 KiB chunks to
//     fake-gcs-server, taking turns: the page starting its session itself (url, resumable),
//     and the module's `session` asking the demo's backend (POST /api/gcs/session, which
//     starts the session in fake-gcs-server without the link, as a backend reaches Cloud
//     Storage). Timed from mu.upload() to the state "uploading" (the session is known and
//     the first chunk leaves: its first byte) and to the first progress (the first chunk
//     answered). Rounds per link, medians. A figure, not a test.
// BENCH_ONLY=sessions runs both; BENCH_ONLY=ask the second alone (BENCH_ASK_ENGINES picks
// engines, BENCH_ASK_ROUNDS rounds: 7).
import { spawnSync } from "node:child_process";
import { ENGINES, launchEngine } from "../test/browsers.mjs";
import { CHUNK, REPO_ROOT, startServe } from "../test/harness.mjs";
import { median, pickedIn } from "./common.mjs";

export function benchSessions() {
  const args = ["run", "./web/bench/sessions"];
  if (process.env.BENCH_SESSIONS_N) args.push("-n", process.env.BENCH_SESSIONS_N);
  if (process.env.BENCH_SESSIONS_ROUNDS) args.push("-rounds", process.env.BENCH_SESSIONS_ROUNDS);
  const r = spawnSync("go", args, { cwd: REPO_ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`go ${args.join(" ")} failed (${r.status ?? r.signal})`);
}

const LINKS = [
  { name: "loopback", bytesPerSecond: 0, rttMs: 0 },
  { name: "20 Mbit/s, 60 ms", bytesPerSecond: 20e6 / 8, rttMs: 60 },
  { name: "3 Mbit/s, 150 ms", bytesPerSecond: 3e6 / 8, rttMs: 150 },
];
const ROUNDS = Number(process.env.BENCH_ASK_ROUNDS ?? 7);
const SIZE = CHUNK + 1;

// Runs in the page: one upload, the page's own session start ("page") or the backend's
// ("backend"), timed from mu.upload().
const ASK_CODE = () => {
  window.askRun = async (way, name, size) => {
    const { load } = await import("/dist/mediaupload.js");
    const mu = await load();
    const file = new File([new Uint8Array(size).fill(7)], name, { type: "application/octet-stream" });
    let uploading = null;
    let progress = null;
    const t0 = performance.now();
    const where = way === "page" ? { url: "/upload/storage/v1/b/demo/o", uploadType: "resumable" } : { session: "/api/gcs/session" };
    await mu.upload(file, {
      ...where,
      metadata: { name },
      chunkSize: 262144,
      onStateChange: (s) => s === "uploading" && uploading === null && (uploading = performance.now() - t0),
      onProgress: (p) => p.confirmed > 0 && progress === null && (progress = performance.now() - t0),
    });
    return { uploading, progress, done: performance.now() - t0, mode: mu.mode };
  };
};

const throttle = (url, link) =>
  fetch(`${url}/api/throttle`, { method: "POST", body: JSON.stringify({ bytesPerSecond: link.bytesPerSecond, rttMs: link.rttMs }) });

export async function benchSessionAsk() {
  const engines = pickedIn("BENCH_ASK_ENGINES") ?? ENGINES;
  const serve = await startServe();
  const ms = (x) => `${Math.round(x)} ms`;
  try {
    console.log(`\n== What asking the backend adds to an upload's first byte: ${SIZE} bytes in 256 KiB chunks to fake-gcs-server, the page's own session start vs. session: "/api/gcs/session" (the demo's server, its link carrying both); medians of ${ROUNDS} rounds`);
    for (const engine of engines) {
      const browser = await launchEngine(engine);
      try {
        const page = await browser.newPage(`${serve.url}/`);
        await page.waitForFunction(() => document.body.dataset.ready === "yes", undefined, { timeout: 30_000 });
        await page.evaluate(ASK_CODE);
        // One of each on loopback first, not counted: the module's first upload pays its start.
        for (const way of ["page", "backend"]) await page.evaluate(({ way, name, size }) => window.askRun(way, name, size), { way, name: `ask-warm-${engine}-${way}`, size: SIZE });
        const mode = (await page.evaluate(() => window.askRun("page", "ask-mode", 1))).mode;
        console.log(`\n${browser.version} (the module in ${mode === "worker" ? "a Worker" : "the page"})`);
        console.log("link                 | way                    | session known (first byte leaves) | first progress | whole upload");
        for (const link of LINKS) {
          await throttle(serve.url, link);
          const got = { page: [], backend: [] };
          for (let i = 0; i < ROUNDS; i++) {
            for (const way of i % 2 ? ["backend", "page"] : ["page", "backend"]) {
              const r = await page.evaluate(({ way, name, size }) => window.askRun(way, name, size), { way, name: `ask-${engine}-${link.rttMs}-${way}-${i}`, size: SIZE });
              got[way].push(r);
            }
          }
          const med = (way, k) => median(got[way].map((r) => r[k]));
          for (const way of ["page", "backend"]) {
            const label = way === "page" ? "page starts it" : "session: the backend";
            console.log(`${link.name.padEnd(20)} | ${label.padEnd(22)} | ${ms(med(way, "uploading")).padStart(33)} | ${ms(med(way, "progress")).padStart(14)} | ${ms(med(way, "done")).padStart(12)}`);
          }
          const extra = med("backend", "uploading") - med("page", "uploading");
          console.log(`${"".padEnd(20)} | backend - page         | ${ms(extra).padStart(33)} | ${ms(med("backend", "progress") - med("page", "progress")).padStart(14)} | (round trip ${link.rttMs} ms)`);
        }
        await throttle(serve.url, LINKS[0]);
        await page.close();
      } finally {
        await browser.close();
      }
    }
  } finally {
    await throttle(serve.url, LINKS[0]).catch(() => {});
    await serve.stop();
  }
}
