// The checksum part of ./build.sh bench (BENCH_ONLY=hashing): what a checksum costs, and
// whether the page waits, in Chromium, Firefox and WebKit, over loopback. Printed per engine:
//   - reads: MB/s of reading a 256 MiB Blob made in memory and a 256 MiB File from disk each
//     way a page can (stream(), arrayBuffer() of slices with the next in flight, FileReader,
//     FileReaderSync), on the page and in a Worker;
//   - hashes: the module's CRC-32C and MD5 (web/js/src/engine/hash.js, as the module runs it)
//     beside hash-wasm's own over the same bytes, read by stream() and the module's way;
//   - uploads: a 256 MiB Blob and a 1 GiB File at the defaults (CRC32C to a Cloud Storage URL)
//     against checksum: false, with the page's worst event-loop delay (a 10 ms timer) during each,
//     raw and less the time a Worker's timer beside it was late too (web/test/probe.mjs; what the
//     page's thread ran, mainthread.test.mjs measures); target: the default keeps 0.90 of the rate
//     without (WebKit: 0.90 of the lower of that rate and the engine's fastest read in a Worker,
//     printed beside it); and the machine's CPU over each (all processes: browser, servers, bench;
//     /proc/stat), in core-seconds an upload and the cores kept busy: where the upload without a
//     checksum already keeps every core busy, the hashing's CPU comes out of the upload's, and the
//     ratio is the CPU's, not the module's;
//   - load(): how long it takes and the page's worst delay meanwhile, in a Worker (the
//     default) and on the page;
//   - 1,000 small files (5-50 KB) through mu.queue at the defaults, each mode: files a second
//     and the page's worst delay.
// Best of BENCH_HASH_RUNS rounds (default 2) for reads and hashes; the uploads
// BENCH_HASH_UPLOAD_RUNS rounds (default 5) each way, alternating, with the median and the
// spread (single rounds of the same upload differ by half on two shared cores); medians for
// the rest. Every upload's stored MD5 is checked.
//
// Environment: BENCH_HASH_ENGINES (default MEDIAUPLOAD_ENGINES, else all three),
// BENCH_HASH_PARTS (reads, uploads, load, files; default all), BENCH_HASH_RUNS,
// BENCH_HASH_FILE_MIB (the File's size, default 1024).

import { build } from "esbuild";
import { createHash, randomFillSync } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { enginesUnderTest } from "../test/browsers.mjs";
import { MiB, md5Base64, pseudoRandomBytes, startAll } from "../test/harness.mjs";
import { startProbe, stopProbe } from "../test/probe.mjs";
import { median, pickedIn } from "./common.mjs";

const RUNS = Number(process.env.BENCH_HASH_RUNS ?? 2);
const UPLOAD_RUNS = Number(process.env.BENCH_HASH_UPLOAD_RUNS ?? 5);
const BLOB = 256 * MiB;
const READ_FILE = 256 * MiB;
const FILE = Number(process.env.BENCH_HASH_FILE_MIB ?? 1024) * MiB;
const SMALL = 1000;
const SEED = 0xc4c;

// The page: a file input, the event-loop probe, the Blob (references to one 1 MiB block, as
// the engines part makes it) and the bench's code.
const PAGE = `<!doctype html><meta charset="utf-8"><title>checksum bench</title>
<script src="/test/errors.js"></script>
<input type="file" id="pick">
<script>
// web/test/probe.mjs's probe: the page's worst delay, raw and less the time a Worker's timer
// beside it was late too.
window.probe = {
  start: ${startProbe},
  async stop() {
    const r = await (${stopProbe})();
    return { worst: Math.round(r.worst), own: Math.round(r.own) };
  },
};
</script>
<script type="module">
  import { pseudoRandomBytes } from "/test/random.mjs";
  import "/hashbench/hash-page.js";
  const one = new Blob([pseudoRandomBytes(${MiB}, ${SEED})]);
  window.blob = new Blob(Array(${BLOB / MiB}).fill(one));
  window.ready = "ok";
</script>`;

// The machine's busy CPU time so far, in seconds (/proc/stat's first line: user, nice, system,
// idle, iowait, irq, softirq, steal in USER_HZ, 100 a second on Linux); null elsewhere.
function busySeconds() {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / 100;
  } catch {
    return null;
  }
}

/** "1.9 core-s, 1.95 of 2 cores busy": the median CPU of rounds { cpu, ms }. */
const cpuOf = (rs) => {
  if (rs.some((r) => r.cpu === null)) return "CPU not measured";
  const cpu = median(rs.map((r) => r.cpu));
  return `${cpu.toFixed(2)} core-s, ${(cpu / (median(rs.map((r) => r.ms)) / 1000)).toFixed(2)} of ${availableParallelism()} cores busy`;
};

/** The worst of rounds' probe figures: "N ms (M less the overlap)". */
const delays = (rounds) => `${Math.max(...rounds.map((r) => r.worst.worst))} ms (${Math.max(...rounds.map((r) => r.worst.own))} less the overlap)`;
const mbs = (bytes, ms) => bytes / 1e6 / (ms / 1000);
const best = (rounds) => Object.fromEntries(Object.keys(rounds[0]).map((k) => [k, Math.max(...rounds.map((r) => r[k]))]));

/** Runs the part and prints its figures. */
export async function benchHashing() {
  const engines = pickedIn("BENCH_HASH_ENGINES") ?? enginesUnderTest();
  const parts = pickedIn("BENCH_HASH_PARTS") ?? ["reads", "uploads", "load", "files"];
  const scratch = mkdtempSync(join(tmpdir(), "mediaupload-hashbench-"));
  try {
    await build({
      entryPoints: [fileURLToPath(new URL("./hash-page.js", import.meta.url))],
      bundle: true,
      format: "esm",
      outfile: join(scratch, "www", "hash-page.js"),
      logLevel: "warning",
    });
    const readFile = writeRandom(join(scratch, "read.bin"), READ_FILE);
    const bigFile = parts.includes("uploads") ? writeRandom(join(scratch, "big.bin"), FILE) : null;
    const blobMD5 = (() => {
      const block = pseudoRandomBytes(MiB, SEED);
      const h = createHash("md5");
      for (let n = 0; n < BLOB; n += MiB) h.update(block);
      return h.digest("base64");
    })();
    console.log(`checksum: reads, hashes, uploads with and without the default CRC32C, load() and 1,000 small files; loopback, ${RUNS} rounds (uploads ${UPLOAD_RUNS})`);
    for (const engine of engines) {
      const env = await startAll({ engine });
      try {
        env.web.dir("/hashbench/", join(scratch, "www"));
        env.web.page("/hash.html", PAGE);
        const open = async () => {
          const page = await env.openPage("/hash.html");
          const ready = await page.waitForFunction(() => window.ready, undefined, { timeout: 60_000 });
          if (ready !== "ok") throw new Error(ready);
          return page;
        };
        const page = await open();
        const v = env.engineVersion;
        const fastest = {}; // source -> the best read in a Worker, MB/s
        if (parts.includes("reads")) {
          await page.setInputFiles("#pick", readFile.path);
          for (const source of ["blob", "file"]) {
            for (const realm of ["page", "worker"]) {
              const r = [];
              const h = [];
              for (let i = 0; i < RUNS; i++) {
                r.push(await page.evaluate(([source, realm]) => {
                  const b = source === "blob" ? window.blob : document.getElementById("pick").files[0];
                  return realm === "page" ? hashBench.reads(b) : hashBench.inWorker("/hashbench/hash-page.js", "reads", b);
                }, [source, realm]));
                h.push(await page.evaluate(([source, realm]) => {
                  const b = source === "blob" ? window.blob : document.getElementById("pick").files[0];
                  return realm === "page" ? hashBench.hashes(b) : hashBench.inWorker("/hashbench/hash-page.js", "hashes", b);
                }, [source, realm]));
              }
              const rb = best(r), hb = best(h);
              if (realm === "worker") fastest[source] = Math.max(...Object.values(rb));
              console.log(`  ${v}, a 256 MiB ${source === "blob" ? "Blob made in memory" : "File from disk"}, ${realm === "page" ? "on the page" : "in a Worker"}, MB/s:`);
              console.log(`    read:  ${Object.entries(rb).map(([k, x]) => `${k} ${x}`).join(", ")}`);
              console.log(`    hash:  ${Object.entries(hb).map(([k, x]) => `${k} ${x}`).join(", ")}`);
            }
          }
        }
        if (parts.includes("uploads")) {
          await page.setInputFiles("#pick", bigFile.path);
          for (const source of ["blob", "file"]) {
            const size = source === "blob" ? BLOB : FILE;
            const md5 = source === "blob" ? blobMD5 : bigFile.md5;
            const t = { auto: [], none: [] };
            const problems = [];
            for (let i = 0; i < UPLOAD_RUNS; i++) {
              for (const how of i % 2 ? ["none", "auto"] : ["auto", "none"]) {
                const name = `hash-${engine}-${source}-${how}-${i}`;
                const cpu0 = busySeconds();
                const r = await page.evaluate(async ([source, how, url]) => {
                  const b = source === "blob" ? window.blob : document.getElementById("pick").files[0];
                  const mu = await (await import("/dist/mediaupload.js")).load();
                  probe.start();
                  const t0 = performance.now();
                  const res = await mu.upload(b, how === "none" ? { url, checksum: false } : { url }).then(() => "", (e) => `${e.code}: ${e.message}`);
                  return { ms: performance.now() - t0, worst: await probe.stop(), error: res, mode: mu.mode };
                }, [source, how, env.ref.uploadURL(name)]);
                r.cpu = cpu0 === null ? null : busySeconds() - cpu0; // (the page's probe and load() too: a few ms)
                const obj = await env.ref.object(name);
                if (r.error || obj?.md5Hash !== md5) problems.push(`${how}, round ${i + 1}: ${r.error || "stored object differs"}`);
                t[how].push(r);
                await env.ref.reset();
              }
            }
            const rate = (rs) => mbs(size, median(rs.map((r) => r.ms)));
            const spread = (rs) => `${mbs(size, Math.max(...rs.map((r) => r.ms))).toFixed(0)}-${mbs(size, Math.min(...rs.map((r) => r.ms))).toFixed(0)}`;
            const [auto, none] = [rate(t.auto), rate(t.none)];
            const bound = engine === "webkit" && fastest[source] ? Math.min(none, fastest[source]) : none;
            const ratio = auto / bound;
            console.log(
              `  ${v}, ${source === "blob" ? "a 256 MiB Blob" : `a ${size / MiB} MiB File`} (${t.auto[0]?.mode}): default ${auto.toFixed(0)} MB/s (${spread(t.auto)}), ` +
                `checksum false ${none.toFixed(0)} MB/s (${spread(t.none)}), fastest read ${fastest[source] ?? "-"} MB/s: ` +
                `${ratio.toFixed(2)} of ${engine === "webkit" ? "the lower" : "the rate without"} (target 0.90: ${ratio >= 0.9 ? "met" : "not met"}); ` +
                `the page's worst delay ${delays(t.auto)} with, ${delays(t.none)} without`,
            );
            console.log(`    the machine's CPU an upload: default ${cpuOf(t.auto)}; checksum false ${cpuOf(t.none)}`);
            for (const p of problems) console.log(`    ${p}`);
          }
        }
        // The next parts open a page each: this one closes first. A page left open beside them
        // kept WebKit's new one in the background, whose timers fire once a second (the probe
        // read that as the page held for a second at a time).
        await page.close();
        if (parts.includes("load")) {
          for (const worker of [undefined, false]) {
            const rs = [];
            for (let i = 0; i < RUNS + 1; i++) {
              const p = await open();
              try {
                rs.push(await p.evaluate(async (worker) => {
                  const { load } = await import("/dist/mediaupload.js");
                  probe.start();
                  const t0 = performance.now();
                  const mu = await load(worker === null ? undefined : { worker });
                  const ms = performance.now() - t0;
                  await new Promise((r) => setTimeout(r, 100));
                  return { ms, worst: await probe.stop(), mode: mu.mode };
                }, worker ?? null));
              } finally {
                await p.close();
              }
            }
            console.log(`  ${v}, load() ${worker === false ? "with worker: false" : "(the default)"}: ${rs[0].mode}, ${median(rs.map((r) => r.ms)).toFixed(0)} ms (median of ${rs.length}), the page's worst delay ${delays(rs)}`);
          }
        }
        if (parts.includes("files")) {
          const sizes = Array.from({ length: SMALL }, (_, i) => 5_000 + ((i * 7919) % 45_000));
          for (const worker of [undefined, false]) {
            const p = await open();
            try {
              const r = await p.evaluate(async ([url, sizes, worker]) => {
                const { load } = await import("/dist/mediaupload.js");
                const { pseudoRandomBytes } = await import("/test/random.mjs");
                const mu = await load(worker === null ? undefined : { worker });
                const blobs = sizes.map((n, i) => new Blob([pseudoRandomBytes(n, i)]));
                probe.start();
                const t0 = performance.now();
                const q = mu.queue();
                const done = await Promise.allSettled(blobs.map((b, i) => q.add(b, { url: `${url}?name=small-${i}` }).promise));
                return { ms: performance.now() - t0, worst: await probe.stop(), failed: done.filter((d) => d.status === "rejected").length, mode: mu.mode };
              }, [env.ref.uploadURL("x").replace(/\?.*$/, ""), sizes, worker ?? null]);
              const objects = new Map((await env.ref.objects()).map((o) => [o.name, o.md5Hash]));
              const wrong = sizes.filter((n, i) => objects.get(`small-${i}`) !== md5Base64(pseudoRandomBytes(n, i))).length;
              console.log(`  ${v}, 1,000 files of 5-50 KB through mu.queue (${r.mode}): ${(SMALL / (r.ms / 1000)).toFixed(0)} files/s, the page's worst delay ${delays([r])}; ${r.failed} failed, ${wrong} stored wrong`);
              await env.ref.reset();
            } finally {
              await p.close();
            }
          }
        }
      } catch (err) {
        console.log(`  ${engine}: not measured: ${err?.message ?? err}`);
      } finally {
        await env.close();
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// Writes size random bytes to path; returns { path, md5 }.
function writeRandom(path, size) {
  const h = createHash("md5");
  const fd = openSync(path, "w");
  const block = Buffer.alloc(4 * MiB);
  for (let n = 0; n < size; n += block.length) {
    const b = block.subarray(0, Math.min(block.length, size - n));
    randomFillSync(b);
    h.update(b);
    writeSync(fd, b);
  }
  closeSync(fd);
  return { path, md5: h.digest("base64") };
}
