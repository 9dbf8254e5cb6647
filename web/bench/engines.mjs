// The engines part of ./build.sh bench (BENCH_ONLY=engines): the module at its defaults
// (chunkSize "auto", every other option default) against one fetch PUT of the whole source to a
// resumable session (the best the engine can do), in Chromium, Firefox and WebKit, each
// uploading to its own reference server (web/cmd/refserver) over loopback, 16 MiB and 128 MiB,
// of a File picked from disk and of a Blob made in memory.
// Printed per engine and size, medians of several rounds: seconds and MB/s of each way, the
// module's time over one PUT's, the requests the module made (onRequest), the chunk answers
// sent as 308 and the preflights (from the server's log), and the module's time over
// Chromium's module time in the same round (and one PUT's over Chromium's one PUT: how much of
// the difference is the engine's own fetch). Target (printed, not asserted): Firefox and WebKit
// at most 1.5x Chromium's time for 16 MiB at the defaults, from a File on disk (what pages
// upload; engines read a File and a Blob made in memory at different speeds).
// The engines run side by side and the rounds go round them in turn, so that a slow moment of
// the machine hits every engine alike. Every upload's stored MD5 is checked: a wrong object
// is printed, as a figure measured on it means nothing.
//
// Environment: BENCH_ENGINES (a comma-separated subset of chromium, firefox, webkit; default
// MEDIAUPLOAD_ENGINES, else all three), BENCH_ENGINE_SIZES (MiB, comma-separated; default
// 16,128), BENCH_ENGINE_SOURCES (file, blob or both: the default).

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES, enginesUnderTest } from "../test/browsers.mjs";
import { MiB, pseudoRandomBytes, startAll } from "../test/harness.mjs";
import { median, LOAD_MODULE } from "./common.mjs";

const SEED = 0xe4915;
const TARGET = 1.5; // Firefox and WebKit against Chromium, 16 MiB, defaults
const TARGET_SIZE = 16 * MiB;

// Runs in the page: the Blob, one whole PUT, the module; each timed from the session start.
const ENGINE_CODE = () => {
  const blobs = new Map();
  // A big Blob made of references to one 1 MiB Blob (as bench.mjs's makeBlob): it takes no
  // more of the browser's Blob store than that 1 MiB. The block is pseudoRandomBytes(1 MiB,
  // SEED_), so Node knows the MD5 of what was sent. Returns the Blob's size, as the engine
  // reports it.
  window.makeBlob = (size) => {
    if (!blobs.has(size)) {
      const one = new Blob([pseudoRandomBytes(MiB_, SEED_)]);
      const parts = [];
      for (let n = 0; n < size; n += one.size) parts.push(n + one.size <= size ? one : one.slice(0, size - n));
      blobs.set(size, new Blob(parts));
    }
    return blobs.get(size).size;
  };
  // The File picked in #pick instead (the same bytes, written to disk by the bench): what a
  // page uploads in real use, read from disk by the engine as it sends.
  window.useFile = (size) => {
    const file = document.getElementById("pick").files[0];
    if (file.size !== size) throw new Error(`the picked file has ${file.size} bytes, not ${size}`);
    blobs.set(size, file);
    return file.size;
  };
  window.onePUT = async (url, size) => {
    const blob = blobs.get(size);
    const t0 = performance.now();
    const r = await fetch(url + "&uploadType=resumable", {
      method: "POST",
      headers: { "X-Upload-Content-Type": "application/octet-stream", "X-Upload-Content-Length": String(size) },
    });
    if (r.status !== 200) throw new Error("start: " + r.status);
    const put = await fetch(r.headers.get("Location"), {
      method: "PUT",
      headers: { "Content-Range": `bytes 0-${size - 1}/${size}` },
      body: blob,
    });
    if (put.status !== 200 && put.status !== 201) throw new Error("one PUT: " + put.status);
    await put.arrayBuffer();
    return { ms: performance.now() - t0 };
  };
  window.viaModule = async (url, size) => {
    const blob = blobs.get(size);
    let requests = 0, retries = 0;
    const t0 = performance.now();
    await window.mu.upload(blob, { url, onRequest: () => requests++, onRetry: () => retries++ });
    return { ms: performance.now() - t0, requests, retries };
  };
};

const PAGE = `<!doctype html><meta charset="utf-8"><title>engines bench</title>
<script src="/test/errors.js"></script>
<input type="file" id="pick">
<script>const MiB_ = ${MiB}, SEED_ = ${SEED}; ${pseudoRandomBytes}; (${ENGINE_CODE})();</script>
${LOAD_MODULE}`;

/** The engines to run: BENCH_ENGINES, else MEDIAUPLOAD_ENGINES (browsers.mjs), else all three. */
function enginesToRun() {
  const want = (process.env.BENCH_ENGINES ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (!want.length) return enginesUnderTest();
  for (const e of want) if (!ENGINES.includes(e)) throw new Error(`BENCH_ENGINES: unknown engine ${e} (one of ${ENGINES})`);
  return want;
}

/** The sources: BENCH_ENGINE_SOURCES, "file" (a File picked from disk) and "blob" (made in memory). */
function sourcesToRun() {
  const want = (process.env.BENCH_ENGINE_SOURCES ?? "file,blob").split(",").map((s) => s.trim()).filter(Boolean);
  for (const s of want) if (s !== "file" && s !== "blob") throw new Error(`BENCH_ENGINE_SOURCES: unknown source ${s} (file or blob)`);
  return want;
}

function sizesToRun() {
  const mib = (process.env.BENCH_ENGINE_SIZES ?? "16,128").split(",").map((s) => Number(s.trim()));
  for (const n of mib) if (!(Number.isInteger(n) && n > 0)) throw new Error(`BENCH_ENGINE_SIZES: not a whole number of MiB: ${n}`);
  return mib.map((n) => n * MiB);
}

/** The base64 MD5 of size bytes made of the page's 1 MiB block repeated. */
function expectedMD5(size) {
  const block = pseudoRandomBytes(MiB, SEED);
  const h = createHash("md5");
  for (let n = 0; n < size; n += MiB) h.update(block.subarray(0, Math.min(MiB, size - n)));
  return h.digest("base64");
}

const mbps = (size, ms) => size / MiB / (ms / 1000);

// One engine's environment: its browser, reference server and page origin (harness.mjs), and
// the bench page, loaded.
async function open(engine) {
  const env = await startAll({ engine });
  try {
    env.web.page("/engines.html", PAGE);
    const page = await env.openPage("/engines.html");
    const ready = await page.waitForFunction(() => window.ready, undefined, { timeout: 60_000 });
    if (ready !== "ok") throw new Error(ready);
    return { engine, env, page, version: env.engineVersion };
  } catch (err) {
    await env.close();
    throw err;
  }
}

// Uploads one way (module or one PUT) under a new name and returns the page's figures, with
// the problems of the stored object and what the server's log says of the requests.
async function run(e, how, size, name, md5) {
  await e.env.ref.clearLog();
  const url = e.env.ref.uploadURL(name);
  const r = await e.page.evaluate(
    ([how, url, size]) => (how === "module" ? window.viaModule(url, size) : window.onePUT(url, size)),
    [how, url, size],
  );
  const obj = await e.env.ref.object(name);
  r.problem = !obj ? "no object" : obj.size !== String(size) ? `size ${obj.size}` : obj.md5Hash !== md5 ? "md5 differs" : "";
  const log = await e.env.ref.log();
  r.as308 = log.filter((l) => l.kind === "chunk" && l.status === 308).length;
  r.preflights = log.filter((l) => l.kind === "preflight").length;
  await e.env.ref.reset(); // the object goes: the server keeps nothing between uploads
  return r;
}

/** Runs the engines part, `rounds` rounds of each size in each engine, and prints the figures. */
export async function benchEngines(rounds) {
  const engines = enginesToRun();
  const sizes = sizesToRun();
  const sources = sourcesToRun();
  const scratch = mkdtempSync(join(tmpdir(), "mediaupload-bench-"));
  const opened = await Promise.allSettled(engines.map(open));
  const live = [];
  try {
    opened.forEach((o, i) => {
      if (o.status === "fulfilled") live.push(o.value);
      else console.log(`  ${engines[i]}: not measured: ${o.reason?.message ?? o.reason}`);
    });
    console.log(
      `engines: the module at its defaults (chunkSize "auto") against one fetch PUT of the whole source (a File picked from disk, a Blob made in memory), ` +
        `to the reference server over loopback, ${rounds} rounds, medians (of each round's own ratio for ratios); ` +
        `${live.map((e) => e.version).join(", ")}`,
    );
    const head =
      `  ${"size".padEnd(14)}${"engine".padEnd(10)}${"module s".padStart(9)}${"MB/s".padStart(7)}` +
      `${"1 PUT s".padStart(9)}${"MB/s".padStart(7)}${"mod/PUT".padStart(9)}${"requests".padStart(10)}` +
      `${"retries".padStart(9)}${"as 308".padStart(8)}${"preflights".padStart(12)}${"vs Chromium".padStart(13)}${"1 PUT vs Chromium".padStart(19)}`;
    console.log(head);
    for (const size of sizes) for (const source of sources) {
      const md5 = expectedMD5(size);
      const path = join(scratch, `bench-${size}.bin`);
      if (source === "file") writeFileSync(path, blockBytes(size));
      for (const e of live) {
        if (source === "file") await e.page.setInputFiles("#pick", path);
        const got = await e.page.evaluate(([s, file]) => (file ? window.useFile(s) : window.makeBlob(s)), [size, source === "file"]);
        if (got !== size) console.log(`  ${e.engine}: its ${source} of ${size} bytes reports ${got} bytes`);
      }
      const t = new Map(live.map((e) => [e, { module: [], whole: [] }]));
      const problems = [];
      for (let i = 0; i < rounds; i++) {
        // The engines in a rotating order, each way first in turn.
        const order = [...live];
        for (let k = 0; k < i % order.length; k++) order.push(order.shift());
        for (const e of order) {
          for (const how of i % 2 ? ["whole", "module"] : ["module", "whole"]) {
            const r = await run(e, how, size, `engines-${e.engine}-${how}-${size / MiB}-${i}`, md5);
            if (r.problem) problems.push(`${e.engine}, ${how}, round ${i + 1}: stored object wrong (${r.problem})`);
            t.get(e)[how].push(r);
          }
        }
      }
      const chromium = live.find((e) => e.engine === "chromium");
      for (const e of live) {
        const { module: m, whole: w } = t.get(e);
        const ms = (rs) => rs.map((r) => r.ms);
        const ratio = median(m.map((r, i) => r.ms / w[i].ms));
        const requests = m.map((r) => r.requests);
        const [lo, hi] = [Math.min(...requests), Math.max(...requests)];
        const vs = (how) => median(t.get(e)[how].map((r, i) => r.ms / t.get(chromium)[how][i].ms));
        const target = e === chromium || !chromium || size !== TARGET_SIZE || source !== "file" ? "" : vs("module") <= TARGET ? " (met)" : " (not met)";
        console.log(
          `  ${`${size / MiB} MiB ${source}`.padEnd(14)}${e.engine.padEnd(10)}` +
            `${(median(ms(m)) / 1000).toFixed(3).padStart(9)}${mbps(size, median(ms(m))).toFixed(0).padStart(7)}` +
            `${(median(ms(w)) / 1000).toFixed(3).padStart(9)}${mbps(size, median(ms(w))).toFixed(0).padStart(7)}` +
            `${`${ratio.toFixed(2)}x`.padStart(9)}${(lo === hi ? `${lo}` : `${lo}-${hi}`).padStart(10)}` +
            `${String(median(m.map((r) => r.retries))).padStart(9)}${String(median(m.map((r) => r.as308))).padStart(8)}` +
            `${String(median(m.map((r) => r.preflights))).padStart(12)}` +
            `${(chromium ? `${vs("module").toFixed(2)}x` : "-").padStart(13)}` +
            `${(chromium ? `${vs("whole").toFixed(2)}x` : "-").padStart(19)}${target}`,
        );
      }
      for (const p of problems) console.log(`  ${p}`);
    }
    console.log(
      `  (mod/PUT: the module's time over one PUT's; requests: the module's, session start included, ` +
        `fewest-most; retries, as 308 (chunk answers sent as 308, not 200 + X-HTTP-Status-Code-Override) and ` +
        `preflights: medians per module upload; vs Chromium: the module's time over Chromium's module time in ` +
        `the same round, target <= ${TARGET}x at ${TARGET_SIZE / MiB} MiB; 1 PUT vs Chromium: the same of one PUT, ` +
        `what the engine's own fetch costs)`,
    );
  } finally {
    await Promise.allSettled(live.map((e) => e.env.close()));
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** size bytes of the page's 1 MiB block repeated (what makeBlob builds), for the file on disk. */
function blockBytes(size) {
  const block = pseudoRandomBytes(MiB, SEED);
  const out = Buffer.alloc(size);
  for (let n = 0; n < size; n += MiB) out.set(block.subarray(0, Math.min(MiB, size - n)), n);
  return out;
}
