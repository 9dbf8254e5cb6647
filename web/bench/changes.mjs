// The links-that-change part of ./build.sh bench (issue "Links that change", docs/protocol.md
// section 8): the scenarios of web/test/link-changes.mjs at their full length (after a fast
// upload the next over a link 40 times slower, or after one on loopback over 256 KB/s, 1 MB/s or
// 3 Mbit/s; a 20x drop mid-upload with thirty or forty seconds of the slow link after it; a 20x
// rise; a 20 s blackout; the round trip from 40 to 600 ms), each uploaded by the module at its
// defaults and as one whole PUT (the module with chunkSize 0: a session start and one PUT), in
// Chromium over HTTP/2 (progress inside a chunk) and over HTTP/1.1, in Firefox and in WebKit
// (over HTTP/2: both report progress at the answers only). The emulated link has its one-second
// queue (link-changes.mjs, QUEUE_MS: a request given up still delivers a second of the link);
// BENCH_CHANGE_QUEUE_MS sets another (0: all dropped at once, the model before 2026-11-28).
// One round each unless BENCH_CHANGE_ROUNDS says more (a round of every scenario takes about
// five minutes per way); the figures are
// those of web/test/engines/links.test.mjs, with the issue's targets beside them (Firefox's
// drop: its own one PUT's ratio, the issue's decision).
//
// BENCH_CHANGE_ENGINES picks engines ("chromium,firefox"; default all three),
// BENCH_CHANGE_SCENARIOS picks scenarios by the start of their names ("20x drop,blackout"),
// BENCH_CHANGE_TRACE=1 prints under each upload its requests (when each ended, from the
// upload's start, and what it was), the times `loaded` grew, and the server's log of it (what
// each request's body carried and what the server kept of it). The source is a File from disk,
// as a user picks one (an <input type=file> given a file the bench wrote);
// BENCH_CHANGE_SOURCE=blob uploads a Blob made in the page's memory instead, which every engine
// copies before its bytes leave, Firefox the most (web/bench/bodies.mjs).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES } from "../test/browsers.mjs";
import { pseudoRandomBytes, startAll } from "../test/harness.mjs";
import { QUEUE_MS, describe, figures, linkConfig, scenarios } from "../test/link-changes.mjs";
import { median, pickFile, pickedIn } from "./common.mjs";

// The ways: [label, upload options]. The first two run unless BENCH_CHANGE_WAYS picks others
// by name ("defaults,one PUT,no checksum,one PUT, no checksum": the checksum's share of a drop;
// "progress every 1.6 s": longer chunks where progress comes with answers).
const ALL_WAYS = [
  ["defaults", {}],
  ["one PUT", { chunkSize: 0 }],
  ["no checksum", { checksum: false }],
  ["one PUT, no checksum", { chunkSize: 0, checksum: false }],
  // Progress every 1.6 s rather than about every second: longer chunks, fewer round trips.
  ["progress every 1.6 s", { progressIntervalMs: 1600 }],
];
const WAYS = (() => {
  const picked = process.env.BENCH_CHANGE_WAYS?.split(/,(?! )/).map((s) => s.trim()).filter(Boolean);
  if (!picked) return ALL_WAYS.slice(0, 2);
  const unknown = picked.filter((p) => !ALL_WAYS.some(([label]) => label === p));
  if (unknown.length) throw new Error(`BENCH_CHANGE_WAYS: ${unknown.join(", ")}: not one of ${ALL_WAYS.map(([l]) => l).join("; ")}`);
  return ALL_WAYS.filter(([label]) => picked.includes(label));
})();
// BENCH_CHANGE_ROUNDS runs each scenario that many times (default 1), each round every way in
// turn, and prints the medians under them.
const ROUNDS = Number(process.env.BENCH_CHANGE_ROUNDS ?? 1);
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1)) throw new Error(`BENCH_CHANGE_ROUNDS: a count, not ${process.env.BENCH_CHANGE_ROUNDS}`);

const TRACE = process.env.BENCH_CHANGE_TRACE === "1";
const QUEUE = process.env.BENCH_CHANGE_QUEUE_MS === undefined ? QUEUE_MS : Number(process.env.BENCH_CHANGE_QUEUE_MS);
if (!(QUEUE >= 0)) throw new Error(`BENCH_CHANGE_QUEUE_MS: milliseconds, not ${process.env.BENCH_CHANGE_QUEUE_MS}`);
const SOURCE = process.env.BENCH_CHANGE_SOURCE ?? "file";
if (SOURCE !== "blob" && SOURCE !== "file") throw new Error(`BENCH_CHANGE_SOURCE: "blob" or "file", not ${SOURCE}`);

// Puts size bytes of seed's (what T.blob(size, seed) holds) in a file in dir and picks it in
// the page (<input id=changes-file>), whose File the upload then sends; returns the file's path,
// for the caller to remove once the upload has ended.
async function fileOnDisk(page, dir, size, seed) {
  const path = join(dir, `changes-${size}-${seed}.bin`);
  writeFileSync(path, pseudoRandomBytes(size, seed));
  await pickFile(page, "changes-file", path);
  return path;
}

// Prints an upload's requests and moves of `loaded` (seconds from its start) and the server's
// log of it (BENCH_CHANGE_TRACE), each entry with how long after the page sent it (its request
// report's start: its end less its time, on the page's clock from timeOrigin) the request
// reached the server. The emulated link delays answers only, so that is what the engine does
// before a request leaves (with its body, Firefox's hold: bodies.mjs), and a preflight where
// one goes first. The k-th entry is the k-th request sent (an upload's requests go one at a
// time).
function trace(out, log, timeOrigin) {
  const t0 = out.events.find((e) => e.type === "loadstart")?.t ?? out.events[0]?.t ?? 0;
  const at = (e) => ((e.t - t0) / 1000).toFixed(2).padStart(7);
  let loaded = 0;
  for (const e of out.events) {
    if (e.type === "request") {
      const what = e.error ? `no answer: ${e.error?.message ?? e.error}` : `${e.status} after ${Math.round(e.ms)} ms`;
      console.log(`      ${at(e)} s  ${e.method} ${e.contentRange ?? ""}  ${what}`);
    } else if (e.type === "progress" && e.loaded > loaded) {
      console.log(`      ${at(e)} s    loaded ${e.loaded}`);
      loaded = e.loaded;
    }
  }
  const sent = out.events
    .filter((e) => e.type === "request")
    .map((e) => timeOrigin + e.t - e.ms)
    .sort((a, b) => a - b);
  log.forEach((e, k) => {
    const after = sent[k] === undefined ? "" : `, ${Math.round(Date.parse(e.time) - sent[k])} ms after it was sent`;
    console.log(`      server: ${e.time} ${e.kind} ${e.contentRange || ""} status ${e.status}, body read ${e.received}, kept ${e.kept}${after}`);
  });
}

// What each target says, for the line under the figures. ratio: the time against the ideal
// that is the target (the issue's; in Firefox, its own one PUT's).
function verdict(f, c, ratio = c.ratio) {
  const miss = [];
  if (c.firstMs && !(f.firstMs !== null && f.firstMs <= c.firstMs)) miss.push(`first progress over ${c.firstMs / 1000} s`);
  if (c.gapMs && f.gapMs > c.gapMs) miss.push(`a gap over ${c.gapMs / 1000} s`);
  if (ratio && f.ratio > ratio) miss.push(`over ${ratio.toFixed(2)}x the ideal`);
  if (f.retries > c.retries) miss.push(`${f.retries} retries`);
  if (c.twice === 0 && f.twice > 0) miss.push("bytes sent twice");
  if (c.twice === "chunk" && f.twice > f.largest) miss.push("more than a chunk sent again");
  return miss.length ? `not met: ${miss.join(", ")}` : "met";
}

// The ways in which the module sizes its chunks, each with the one PUT it is held to in Firefox.
const ONE_PUT_OF = { defaults: "one PUT", "no checksum": "one PUT, no checksum", "progress every 1.6 s": "one PUT" };

// The targets' verdict on f, an upload of scenario sc the way named; onePut: the figures of the
// one PUT beside it (in Firefox, the drop's target is its own one PUT's time against the ideal:
// the issue's decision). One PUT's own are not judged.
function targets(engine, sc, way, f, onePut) {
  if (!ONE_PUT_OF[way]) return "(the module's only)";
  const ratio = engine === "firefox" && sc.checks.ratio && onePut ? onePut.ratio : sc.checks.ratio;
  return verdict(f, sc.checks, ratio);
}

// The median of each of the figures the verdict reads, over rounds (common.mjs's: the upper of
// an even count; first progress: null where any round had none).
function medianFigures(fs) {
  const pick = (k) => median(fs.map((f) => f[k]));
  return {
    tookMs: pick("tookMs"),
    ratio: pick("ratio"),
    firstMs: fs.some((f) => f.firstMs === null) ? null : pick("firstMs"),
    gapMs: pick("gapMs"),
    retries: Math.max(...fs.map((f) => f.retries)),
    twice: Math.max(...fs.map((f) => f.twice)),
    largest: Math.min(...fs.map((f) => f.largest)),
  };
}

/** Runs the part and prints the figures. */
export async function benchChanges() {
  const engines = pickedIn("BENCH_CHANGE_ENGINES") ?? ENGINES;
  const picked = pickedIn("BENCH_CHANGE_SCENARIOS");
  const all = scenarios({ full: true }).filter((s) => !picked || picked.some((p) => s.name.startsWith(p)));
  console.log(
    "links that change: the module at its defaults and one whole PUT over the reference server's emulated link with a " +
      `schedule, ${ROUNDS === 1 ? "one round" : `${ROUNDS} rounds, each way by turns`}; times from the upload's start, gaps and first progress from the change; the server's log for ` +
      `the bytes it read twice; the source ${SOURCE === "file" ? "a File on disk" : "a Blob in the page's memory"}; ` +
      `the link's queue (what a request given up still delivers) ${QUEUE} ms`,
  );
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-changes-"));
  for (const engine of engines) {
    const env = await startAll({ engine, tls: true });
    try {
      const page = await env.openPage();
      // Chromium over HTTP/1.1 too: there, as in Firefox and WebKit, progress comes at the answers only.
      const versions = engine === "chromium" ? [["HTTP/2", {}], ["HTTP/1.1", { http: true }]] : [["HTTP/2", {}]];
      for (const [proto, over] of versions) {
        console.log(`  ${env.engineVersion}, ${proto}`);
        for (const [i, sc] of all.entries()) {
          const rounds = []; // per round, each way's result: way -> { f, problems } or { error }
          for (let round = 0; round < ROUNDS; round++) {
            const results = new Map();
            for (const [way, options] of WAYS) {
              await page.reload();
              await page.waitForFunction(() => window.T);
              const run = async (s, seed) => {
                const name = `changes-${engine}-${proto}-${i}-${way}-${seed}-${round}`.replace(/[^a-z0-9-]/gi, "");
                await env.ref.clearLog();
                const path = SOURCE === "file" ? await fileOnDisk(page, dir, s.size, seed) : null;
                await env.ref.config(linkConfig(s.schedule, QUEUE));
                let out;
                try {
                  out = await page.evaluate(
                    ({ url, size, seed, options, file }) =>
                      T.run(file ? document.getElementById("changes-file").files[0] : T.blob(size, seed), { url, ...options }),
                    { url: env.ref.uploadURL(name, over), size: s.size, seed, options: { ...s.options, ...options }, file: SOURCE === "file" },
                  );
                } finally {
                  if (path) rmSync(path, { force: true });
                }
                await env.ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
                const log = (await env.ref.log()).filter((e) => e.kind !== "preflight");
                if (TRACE) trace(out, log, await page.evaluate(() => performance.timeOrigin));
                if (!out.ok) return { error: out.error };
                const problems = await env.checkStored(name, s.size, seed);
                await env.ref.reset();
                return { f: figures(out, log, s), problems };
              };
              if (sc.before) await run({ ...sc.before, changeMs: 0 }, 200 + i);
              results.set(way, await run(sc, i + 1));
            }
            rounds.push(results);
            const tag = ROUNDS > 1 ? ` (round ${round + 1})` : "";
            for (const [way] of WAYS) {
              const r = results.get(way);
              const label = `    ${sc.name}, ${way}${tag}: `;
              if (r.error) console.log(`${label}failed: ${r.error.code}: ${r.error.message}`);
              else console.log(`${label}${describe(r.f)}${r.problems.length ? `; STORED WRONG: ${r.problems}` : ""}; targets ${targets(engine, sc, way, r.f, results.get(ONE_PUT_OF[way])?.f)}`);
            }
          }
          if (ROUNDS > 1) {
            // The medians of each figure over the rounds, judged as one round is.
            const medians = new Map();
            for (const [way] of WAYS) {
              const fs = rounds.map((r) => r.get(way)?.f).filter(Boolean);
              if (fs.length) medians.set(way, medianFigures(fs));
            }
            for (const [way, m] of medians) {
              console.log(
                `    ${sc.name}, ${way}, medians of ${ROUNDS} rounds: took ${(m.tookMs / 1000).toFixed(2)} s (${m.ratio.toFixed(2)}x the ideal; ` +
                  `rounds ${rounds.map((r) => r.get(way)?.f?.ratio.toFixed(2) ?? "failed").join(", ")}), first progress after the change ` +
                  `${m.firstMs === null ? "-" : (m.firstMs / 1000).toFixed(2) + " s"}, longest gap after it ${(m.gapMs / 1000).toFixed(2)} s; ` +
                  `targets ${targets(engine, sc, way, m, medians.get(ONE_PUT_OF[way]))}`,
              );
            }
          }
        }
      }
    } finally {
      await env.close();
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
