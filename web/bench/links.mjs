// The emulated-link part of ./build.sh bench (issues 9 and "Slow links", docs/protocol.md section
// 8): the reference server reads request bodies at a link's rate and answers one round trip late
// (its /_ref/config "link"), over HTTP/1.1 (its http origin) and over HTTP/2 (its https origin:
// web/cmd/refserver -tls, the browser trusting its certificate). Over each link, uploads of a
// file that takes about ten seconds there:
//   - one PUT of all of it (no progress until the end), over HTTP/1.1 and HTTP/2;
//   - the module at its defaults (chunkSize "auto"), over HTTP/1.1 and HTTP/2, in the bench's
//     page (whose earlier uploads taught it the link: all but a link's first round) and as the
//     first upload of a fresh page (opened for it, knowing nothing of the link);
//   - the module at 256 KiB and at 8 MiB, over HTTP/1.1;
//   - @mux/upchunk 3.5 with dynamicChunkSize (XHR, progress inside a chunk), to a session the
//     page started, over HTTP/1.1 and HTTP/2;
//   - over HTTP/2, how far ahead of the server a stream body is counted (window.leadRun).
// In Chromium (bench.mjs's page) all of them; in Firefox and WebKit (benchLinkEngines, their own
// browsers and servers, the two side by side) one PUT and the module's defaults, over both.
// Printed for each: the share of the link's rate reached (the time the bytes alone take at the
// rate, over the whole upload's time, from before its session start) and the longest wait for
// progress from the session's start (the module's state "uploading"; a session started by hand:
// its answer): to the first report that moved loaded, between two, and from the last to the
// end. Below each link, how long after the upload's start the first progress came. Several
// rounds, medians. Each upload's requests are checked to have gone over the HTTP version named
// (the server's log).
//
// For a closer look at one thing: BENCH_LINK_PROFILES picks links by their first number
// ("100,3"), BENCH_LINK_WAYS picks Chromium's ways ("whole,auto"; the others print "-").

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENGINES } from "../test/browsers.mjs";
import { MiB, REPO_ROOT, startAll } from "../test/harness.mjs";
import { BLOBS } from "./page-blobs.mjs";
import { median, pickedIn, LOAD_MODULE } from "./common.mjs";

const ALL_PROFILES = [
  { name: "100 Mbit/s up, 20 ms", bitsPerSecond: 100e6, rttMs: 20 },
  { name: "20 Mbit/s up, 60 ms", bitsPerSecond: 20e6, rttMs: 60 },
  { name: "10 Mbit/s up, 45 ms", bitsPerSecond: 10e6, rttMs: 45 },
  { name: "3 Mbit/s up, 150 ms", bitsPerSecond: 3e6, rttMs: 150 },
];
const PICKED_PROFILES = pickedIn("BENCH_LINK_PROFILES");
export const PROFILES = PICKED_PROFILES
  ? ALL_PROFILES.filter((p) => PICKED_PROFILES.includes(String(p.bitsPerSecond / 1e6)))
  : ALL_PROFILES;
const PICKED_WAYS = pickedIn("BENCH_LINK_WAYS");

const H1 = "HTTP/1.1";
const H2 = "HTTP/2";
// The ways in Chromium: [how, label, versions].
const WAYS = [
  ["whole", "one PUT of all", [H1, H2]],
  ["auto", "module, defaults", [H1, H2]],
  ["fresh", "module, a fresh page's first", [H1, H2]],
  [String(256 * 1024), "module, 256 KiB", [H1]],
  [String(8 * MiB), "module, 8 MiB", [H1]],
  ["upchunk", "@mux/upchunk, dynamicChunkSize", [H1, H2]],
];
// The ways in the other engines.
const ENGINE_WAYS = WAYS.slice(0, 3);

// Runs in the page: each way of uploading, timed, with the times of its progress reports.
const LINK_CODE = () => {
  // The session start of the page's code (window.startSession), called at run time.
  const start = (url, size) => window.startSession(url, size);
  // The longest wait from started to the first report, between two, and from the last to the
  // end; null without any report.
  const longestGap = (started, reports, end) => {
    if (reports.length === 0) return null;
    const t = [started, ...reports, end];
    let gap = 0;
    for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i] - t[i - 1]);
    return gap;
  };
  // The in-chunk lead (docs/protocol.md section 8): one PUT of all of it as a counted stream
  // body (as the module sends a chunk over HTTP/2, in 64 KiB pieces); once the browser has
  // taken all, the server still had to receive the bytes the link carried from then until one
  // round trip before the answer: that is how far the count ran ahead.
  window.leadRun = async (url, size, rate, rttMs) => {
    const blob = window.benchBlob(size);
    const session = await start(url, size);
    const reader = blob.stream().getReader();
    let taken = 0;
    let full = 0; // when all of it was taken
    let rest = null;
    const body = new ReadableStream(
      {
        async pull(c) {
          if (!rest?.byteLength) {
            const r = await reader.read();
            if (r.done) return void c.close();
            rest = r.value;
          }
          const piece = rest.subarray(0, 64 * 1024); // as counted.js hands them on
          rest = rest.subarray(piece.byteLength);
          c.enqueue(piece);
          taken += piece.byteLength;
          if (taken === size) full = performance.now();
        },
      },
      { highWaterMark: 0 },
    );
    const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` }, body, duplex: "half" });
    const answered = performance.now();
    if (r.status !== 200 && r.status !== 201) throw new Error("lead: " + r.status);
    const ahead = Math.max(0, (answered - rttMs - full) / 1000);
    return { aheadSeconds: ahead, aheadBytes: ahead * rate };
  };
  // One upload of size bytes to url, the way how says ("whole", "upchunk", "auto" or a chunk
  // size); resolves to { ms, gap, first }: its time, the longest wait for progress from its
  // session's start (longestGap), and when loaded first moved (ms from the start; null: never).
  window.linkRun = async (how, url, size) => {
    const blob = window.benchBlob(size);
    const reports = [];
    const t0 = performance.now();
    let started = null; // when the session was started
    if (how === "whole") {
      const session = await start(url, size);
      started = performance.now();
      const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` }, body: blob });
      if (r.status !== 200 && r.status !== 201) throw new Error("whole: " + r.status);
    } else if (how === "upchunk") {
      const session = await start(url, size);
      started = performance.now();
      await new Promise((resolve, reject) => {
        const up = window.UpChunk.createUpload({
          endpoint: session,
          file: new File([blob], "bench.bin"),
          dynamicChunkSize: true,
          attempts: 1,
        });
        up.on("progress", (e) => e.detail > 0 && reports.push(performance.now()));
        up.on("success", resolve);
        up.on("error", (e) => reject(new Error("upchunk: " + (e.detail?.message ?? e.detail))));
      });
    } else {
      const options = { url };
      if (how !== "auto") options.chunkSize = Number(how);
      const up = window.mu.upload(blob, options);
      let loaded = 0;
      up.addEventListener("statechange", () => up.state === "uploading" && started === null && (started = performance.now()));
      up.addEventListener("progress", (e) => {
        if (e.loaded > loaded && e.loaded < size) reports.push(performance.now());
        loaded = Math.max(loaded, e.loaded);
      });
      await up;
    }
    const end = performance.now();
    return { ms: end - t0, gap: longestGap(started ?? t0, reports, end), first: reports.length ? reports[0] - t0 : null };
  };
};

const ENGINE_PAGE = `<!doctype html><meta charset="utf-8"><title>links bench</title>
<script src="/test/errors.js"></script>
<script>(${BLOBS})(); (${LINK_CODE})();</script>
${LOAD_MODULE}`;


/** The page code and the routes the link runs need: call before the bench page loads. */
export function prepareLinks(env) {
  const upchunk = join(REPO_ROOT, "node_modules/@mux/upchunk/dist/upchunk.js");
  env.web.route("/upchunk.js", (req, res) => {
    res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(upchunk));
  });
  return `<script src="/upchunk.js"></script><script>(${LINK_CODE})();</script>`;
}

// About ten seconds of the link, in whole 256 KiB units.
const sizeFor = (p) => Math.round((10 * p.bitsPerSecond) / 8 / (256 * 1024)) * 256 * 1024;

// An upload URL of env's reference server over version (H1: its http origin, H2: its https one).
const urlOver = (env, name, version) => env.ref.uploadURL(name, { http: version === H1 });

// Runs each [how, version] of runs `rounds` times over profile p in page (rotating order, so
// that a slow moment of the machine hits each alike) and returns { "how version": { share,
// gap } } of arrays, and the uploads that went over another HTTP version than named.
async function runProfile(env, page, p, runs, rounds, tag) {
  const size = sizeFor(p);
  const bytesPerSecond = p.bitsPerSecond / 8;
  await page.evaluate((s) => window.makeBlob(s), size);
  await env.ref.reset();
  await env.ref.config({ link: { bitsPerSecond: p.bitsPerSecond, rttMs: p.rttMs } });
  const t = Object.fromEntries(runs.map(([how, v]) => [`${how} ${v}`, { share: [], gap: [], first: [] }]));
  const wrong = [];
  for (let i = 0; i < rounds; i++) {
    const order = [...runs];
    for (let k = 0; k < i % order.length; k++) order.push(order.shift());
    for (const [how, version] of order) {
      // A name of its own for each link: the start's URL carries it, and the same URL used over
      // an earlier link would find its preflight cached (Access-Control-Max-Age 600), a round
      // trip fewer than the uploads of the first link, or of a link ten minutes later, pay.
      const name = `link-${tag}-${p.bitsPerSecond / 1e6}-${how}-${version.replace(/\W/g, "")}-${i}`;
      await env.ref.clearLog();
      // A fresh page: the same page opened anew, its module loaded, its first upload the
      // module's defaults; the bench's page, every other way.
      const on = how === "fresh" ? await openFresh(env, page, size) : page;
      let r;
      try {
        r = await on.evaluate(([how, url, size]) => window.linkRun(how, url, size), [how === "fresh" ? "auto" : how, urlOver(env, name, version), size]);
      } finally {
        if (on !== page) await on.close();
      }
      const want = version === H1 ? "HTTP/1.1" : "HTTP/2.0";
      const other = (await env.ref.log()).filter((e) => e.proto !== want);
      if (other.length) wrong.push(`${how} over ${version}: ${other.length} requests over ${other[0].proto}`);
      t[`${how} ${version}`].share.push(size / bytesPerSecond / (r.ms / 1000));
      t[`${how} ${version}`].gap.push(r.gap);
      t[`${how} ${version}`].first.push(r.first);
      await env.ref.deleteObject(name).catch(() => {});
    }
  }
  return { t, wrong, size };
}

// A fresh page of page's own (its path), ready, with the Blob of size bytes made.
async function openFresh(env, page, size) {
  const fresh = await env.openPage(new URL(await page.url()).pathname);
  try {
    await fresh.waitForFunction(() => window.ready, undefined, { timeout: 60_000 });
    const ready = await fresh.evaluate(() => window.ready); // (playwright's wait gives a handle)
    if (ready !== true && ready !== "ok") throw new Error(String(ready));
    await fresh.evaluate((s) => window.makeBlob(s), size);
    return fresh;
  } catch (err) {
    await fresh.close();
    throw err;
  }
}

// "first progress after the start: …" for the module's ways of t over versions, medians.
function firsts(t, ways, versions) {
  const out = [];
  for (const [how, label] of ways.filter(([how]) => how === "auto" || how === "fresh")) {
    for (const v of versions) {
      const m = t[`${how} ${v}`];
      if (m?.first.length && !m.first.some((f) => f === null)) out.push(`${label} over ${v} ${(median(m.first) / 1000).toFixed(2)} s`);
    }
  }
  return out.length ? `    first progress after the upload's start (its session start included): ${out.join("; ")}` : null;
}

// "0.950, 1.30 s" for one cell: the median share and the median longest wait.
function cell(m) {
  if (!m) return "-";
  const gap = m.gap.some((g) => g === null) ? "none" : `${(median(m.gap) / 1000).toFixed(2)} s`;
  return `${median(m.share).toFixed(3)}, ${gap}`;
}

const HEAD = `    ${"way".padEnd(40)}${"HTTP/1.1: share, wait".padEnd(24)}HTTP/2: share, wait`;

/** Runs the profiles in page (the bench page, with mu and benchBlob) and prints the figures. */
export async function benchLinks(env, page, rounds) {
  const versions = env.ref.tls ? [H1, H2] : [H1];
  const runs = WAYS.filter(([how]) => !PICKED_WAYS || PICKED_WAYS.includes(how))
    .flatMap(([how, , vs]) => vs.filter((v) => versions.includes(v)).map((v) => [how, v]));
  const cdp = await page.context().newCDPSession(page);
  const { product } = await cdp.send("Browser.getVersion"); // "Chrome/156.0.8078.79" (the user agent says 156.0.0.0)
  await cdp.detach();
  console.log(
    `emulated links (the reference server reads bodies at the rate and answers one round trip late), ` +
      `Chromium ${product.replace(/^\D+\//, "")}, ` +
      `HTTP/1.1 to its http origin, HTTP/2 to its https origin; ${rounds} rounds each, medians: share of the link's rate, ` +
      `longest wait for progress from the session's start to the end ("none": no progress until the end)`,
  );
  for (const p of PROFILES) {
    const { t, wrong, size } = await runProfile(env, page, p, runs, rounds, "chromium");
    console.log(`  ${p.name}, ${(size / MiB).toFixed(1)} MiB (${(size / (p.bitsPerSecond / 8)).toFixed(1)} s of the link):`);
    console.log(HEAD);
    for (const [how, label] of WAYS) {
      console.log(`    ${label.padEnd(40)}${cell(t[`${how} ${H1}`]).padEnd(24)}${cell(t[`${how} ${H2}`])}`);
    }
    for (const w of wrong) console.log(`    (over another version than named: ${w})`);
    const first = firsts(t, WAYS, versions);
    if (first) console.log(first);
    // Every way here pays four round trips besides its bytes: the start's preflight and answer,
    // the first PUT's preflight (a session URI is new each time, so no preflight is cached),
    // and the last answer.
    const bytesTime = size / (p.bitsPerSecond / 8);
    console.log(`    four round trips (two preflights, the start, the last answer) cap any cross-origin resumable upload near ${(bytesTime / (bytesTime + (4 * p.rttMs) / 1000)).toFixed(3)}`);
    if (versions.includes(H2)) {
      const leads = [];
      for (let i = 0; i < rounds; i++) {
        leads.push(await page.evaluate(([url, size, rate, rtt]) => window.leadRun(url, size, rate, rtt), [urlOver(env, `lead-${i}`, H2), size, p.bitsPerSecond / 8, p.rttMs]));
        await env.ref.deleteObject(`lead-${i}`).catch(() => {});
      }
      const m = median(leads.map((l) => l.aheadBytes));
      console.log(`    in-chunk lead over HTTP/2: the browser takes a stream body ${(m / MiB).toFixed(2)} MiB (${(m / (p.bitsPerSecond / 8)).toFixed(2)} s of the link) ahead of the server`);
    }
  }
  await env.ref.reset();
}

/**
 * The same links in other engines (BENCH_LINK_ENGINES, default firefox,webkit): one PUT and the
 * module's defaults, over HTTP/1.1 and HTTP/2, `rounds` rounds; each engine has its own browser,
 * servers and link, and the engines run side by side.
 */
export async function benchLinkEngines(rounds) {
  const want = (process.env.BENCH_LINK_ENGINES ?? "firefox,webkit").split(",").map((s) => s.trim()).filter(Boolean);
  for (const e of want) if (!ENGINES.includes(e)) throw new Error(`BENCH_LINK_ENGINES: unknown engine ${e} (one of ${ENGINES})`);
  if (!want.length) return;
  const opened = await Promise.allSettled(
    want.map(async (engine) => {
      const env = await startAll({ engine, tls: true });
      try {
        env.web.page("/links.html", ENGINE_PAGE);
        const page = await env.openPage("/links.html");
        const ready = await page.waitForFunction(() => window.ready, undefined, { timeout: 60_000 });
        if (ready !== "ok") throw new Error(ready);
        return { engine, env, page };
      } catch (err) {
        await env.close();
        throw err;
      }
    }),
  );
  const live = [];
  opened.forEach((o, i) => {
    if (o.status === "fulfilled") live.push(o.value);
    else console.log(`  ${want[i]}: not measured: ${o.reason?.message ?? o.reason}`);
  });
  try {
    if (!live.length) return;
    console.log(
      `emulated links in ${live.map((e) => e.env.engineVersion).join(" and ")} (side by side, each with its own server and link), ` +
        `${rounds} rounds each, medians: share of the link's rate, longest wait for progress from the session's start to the end`,
    );
    const runs = ENGINE_WAYS.flatMap(([how, , vs]) => vs.map((v) => [how, v]));
    for (const p of PROFILES) {
      const results = await Promise.all(live.map((e) => runProfile(e.env, e.page, p, runs, rounds, e.engine)));
      console.log(`  ${p.name}, ${(sizeFor(p) / MiB).toFixed(1)} MiB:`);
      console.log(HEAD);
      live.forEach((e, i) => {
        for (const [how, label] of ENGINE_WAYS) {
          const { t } = results[i];
          console.log(`    ${`${e.engine}: ${label}`.padEnd(40)}${cell(t[`${how} ${H1}`]).padEnd(24)}${cell(t[`${how} ${H2}`])}`);
        }
        const first = firsts(results[i].t, ENGINE_WAYS, [H1, H2]);
        if (first) console.log(first.replace("first progress", `${e.engine}: first progress`));
        for (const w of results[i].wrong) console.log(`    (${e.engine}, over another version than named: ${w})`);
      });
    }
  } finally {
    await Promise.allSettled(live.map((e) => e.env.close()));
  }
}
