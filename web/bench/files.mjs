// The many-files part of ./build.sh bench (BENCH_ONLY=files; issues "Slow links" and "Many
// files at the speed of one request each"): up to 300 files of 50 KB to 5 MB (sizes drawn
// log-uniformly with a fixed seed: many small files, a few big ones, about 320 MB in all), each
// uploaded to the reference server several ways, in rows: one per browser, link and HTTP version.
//
// Links (BENCH_FILES_LINKS; package netlink's emulation, which the reference server applies to
// every request, preflights included: bodies read at the rate, every answer a round trip late):
// loopback ("none": its own round trip is well under a millisecond, which leaves the browser's
// CPU as what bounds the rate), a 20 and a 60 ms round trip at no rate limit ("rtt20", "rtt60":
// the issue's targets), 100 Mbit/s up with 20 ms and 20 Mbit/s with 60 ms ("100/20", "20/60":
// links that bound the rate, as users' do, where the default checksum's cost is judged). Over a link without a rate a row uploads every file; over one with a rate, 300
// would take minutes a round (14 at 3 Mbit/s), so a row uploads the first files the link carries
// in about BENCH_FILES_LINK_SECONDS (10: 21 files at 20 Mbit/s, 8.5 s of it), and at least 12,
// two for each of six slots (at 3 Mbit/s 12 files, 18.8 s); each row prints its number of files.
// HTTP versions (BENCH_FILES_HTTP): HTTP/1.1 to the server's http origin (six connections per
// host), HTTP/2 to its https one (one connection; the browsers trust its test certificate). After
// each round the server's log says what version every request came over; one over another than
// the row's is printed as a problem.
//
// The ways (ALL_WAYS), six at a time unless said, each round timed inside the page:
//   - the module's queue, mu.queue({ concurrency: 6 }), at the defaults (uploadType "auto": one
//     media POST for a file small enough for the link as the page knows it, else resumable with
//     chunkSize "auto"; checksum: a CRC32C, the reference server's paths being Cloud Storage's);
//     in every row;
//   - the same with checksum: false (what the default checksum costs); in every row;
//   - plain fetch, six loops: one uploadType=media POST of the file, with the Content-Type the
//     module sends (the plain one-request loop: the requests the defaults make for a small file,
//     and the way every other is compared with); in every row;
//   - Uppy 6 with @uppy/xhr-upload (XMLHttpRequest, one media POST per file, limit 6), timed
//     from addFiles; in every row. Its own default, a form POST, needs a preflight as well:
//     XMLHttpRequest preflights a request to another origin that has upload listeners;
//   on loopback, where the module's own cost shows:
//   - the queue with uploadType "resumable" (the defaults before "auto": a session start, then
//     chunks from 256 KiB up);
//   - the queue, resumable with chunkSize 0 (a session start and one PUT of the file: the plain
//     start + PUT loop's requests, so that what differs from it is the module's own cost);
//   - the queue at the defaults, each File handed over as a Blob of all of it (file.slice()):
//     the module watches a File for changes on disk (engine/file-watch.js, small reads before
//     each request of a resumable upload), not a Blob, so what differs is the watch's cost;
//   - six loops of mu.upload at the defaults, without the queue (the queue's own cost);
//   - plain fetch, six loops: a session start and one PUT of the file;
//   over HTTP/2 at a 60 ms round trip, where HTTP/1.1's six connections per host are one
//   connection, so that the queue's default concurrency there can be chosen:
//   - the queue at 12 and at 24 (mu.queue({ concurrency: 12 })), the plain one-request loop
//     with 12 and 24 loops.
//
// The browsers (BENCH_FILES_ENGINES: chromium, firefox, webkit), a page of their own for each
// link (what the module learns of a link stays with the page, and one link must not start from
// another's), every round going to buckets of its own (browsers cache preflights by URL):
//   - Chromium driven through DevTools (bench.mjs's; BENCH_FILES_ATTACHED=0 leaves it out): the
//     files written to a folder and picked in an <input type="file" multiple> (Files on disk, as
//     a page gets them: slices of a File made in memory are copies in Chromium's Blob store, and
//     300 of them run it out of memory, ERR_BLOB_OUT_OF_MEMORY, until a GC). Also printed: the
//     page's main thread per file (DevTools' TaskDuration); BENCH_FILES_PROFILE=PREFIX profiles
//     each way's first round of each row by DevTools, writes PREFIX-LINK-h1|h2-WAY.cpuprofile
//     and prints its functions of most self time (a wasm built without -s -w names them).
//   - Chromium with nothing attached, as a user's browser is (BENCH_FILES_UNATTACHED=0 leaves it
//     out): DevTools, through which Playwright drives a page, makes every request cost the page
//     more (each way made 1.1 to 1.7 times its files per second without it, on 2026-11-25), and
//     not the same for every way, so the ways' ratios differ between the two. No file on disk
//     can be picked there, so the page fetches the same files into Files in memory, drives its
//     rounds itself and tells Node how each went (Node checks what was stored).
//   - Firefox and WebKit (web/test/browsers.mjs), each with its own reference server and page
//     origin (harness.mjs's startAll with tls), the same self-driving page in a tab.
//
// Printed per row, medians of BENCH_FILES_RUNS rounds (the ways' order turning each round; each
// round checks every stored object's size and MD5): per way files per second and MB/s, the rate
// over the plain one-request loop's (the median of each round's own ratio), the requests and
// preflights per file (the server's log), the CPU time per file of the browser's processes and
// of the server (from /proc; in Chromium also by process kind, the renderers' main threads
// apart; in WebKit the web process, its main thread, its WebAssembly compiler's thread and the
// network process; each row's compiler, or Chromium's renderers' other threads, by round),
// and, from each request's times (fetch wrapped on the page), where a file's time goes: from
// its start to its first request, between its requests, from its last answer to its end, and
// from a file's end to the start of the next one in the freed slot. Last, two tables over
// the rows: the module's defaults over the plain one-request loop, with the rounds' lowest and
// highest ratio and the issue's target (at least 0.95 at a 20 and a 60 ms round trip, 0.90 on
// loopback with nothing attached) met or not, and Uppy beside; the queue against the plain loop at 6, 12 and 24 at a time.
//
// Environment: BENCH_FILES_RUNS (default 5), BENCH_FILES_N (default 300), BENCH_FILES_LINKS
// (default "none,rtt20,rtt60,100/20,20/60": "none", "rttMS" or "MBITS/MS"; BENCH_FILES_RTT=MS, of
// old, is "rttMS"), BENCH_FILES_LINK_SECONDS (default 10), BENCH_FILES_HTTP (default "1.1,2"),
// BENCH_FILES_ENGINES (default all three), BENCH_FILES_ATTACHED and BENCH_FILES_UNATTACHED
// (0: without that half of Chromium's), BENCH_FILES_WAYS (a comma-separated list of the ways'
// names below, e.g. "queue,media": those alone, in every row), BENCH_FILES_PROFILE (above),
// BENCH_FILES_TRACE=1 (after each round of a way, the files it sent resumable: the sessions
// the server saw started, with the files' sizes).

import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_ARGS, ENGINES, chromiumTrustArgs, scratchDir } from "../test/browsers.mjs";
import { REPO_ROOT, pseudoRandomBytes, readBody, spawnGroup, startAll } from "../test/harness.mjs";
import { median, pickedIn } from "./common.mjs";

const N = Number(process.env.BENCH_FILES_N ?? 300);
const SEED = 0xf11e5;
const MIN = 50_000;
const MAX = 5_000_000;
const ATTACHED = process.env.BENCH_FILES_ATTACHED !== "0";
const UNATTACHED = process.env.BENCH_FILES_UNATTACHED !== "0";
const PROFILE = process.env.BENCH_FILES_PROFILE;
// The engines (BENCH_FILES_ENGINES), in this order: Chromium's two halves, Firefox, WebKit.
const ENGINES_RUN = pickedIn("BENCH_FILES_ENGINES") ?? ENGINES;
for (const e of ENGINES_RUN) if (!ENGINES.includes(e)) throw new Error(`BENCH_FILES_ENGINES: unknown engine ${e} (one of ${ENGINES})`);

// The links (BENCH_FILES_LINKS): "none" (loopback), "rttMS" (every answer MS ms late, no rate
// limit) or "MBITS/MS" (bodies read at MBITS Mbit/s, every answer MS ms late), each applied by
// the reference server to every request, preflights included (/_ref/config "link").
function parseLink(s) {
  let m;
  if (s === "none") return { key: "none", name: "loopback", bitsPerSecond: 0, rttMs: 0 };
  if ((m = /^rtt(\d+(?:\.\d+)?)$/.exec(s))) return { key: s, name: `a ${m[1]} ms round trip`, bitsPerSecond: 0, rttMs: Number(m[1]) };
  if ((m = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(s))) {
    return { key: `${m[1]}-${m[2]}`, name: `${m[1]} Mbit/s up with ${m[2]} ms`, bitsPerSecond: Number(m[1]) * 1e6, rttMs: Number(m[2]) };
  }
  throw new Error(`BENCH_FILES_LINKS: ${s} is not "none", "rttMS" or "MBITS/MS"`);
}
// BENCH_FILES_RTT=MS, of old, is BENCH_FILES_LINKS=rttMS.
const RTT = process.env.BENCH_FILES_RTT;
const LINKS = (pickedIn("BENCH_FILES_LINKS") ?? (RTT ? [RTT === "0" ? "none" : `rtt${RTT}`] : ["none", "rtt20", "rtt60", "100/20", "20/60"])).map(parseLink);

// With a rate, a row uploads the first of the files that the link carries in about this many
// seconds (BENCH_FILES_LINK_SECONDS), and at least MIN_FILES (two for each of six slots).
const LINK_SECONDS = Number(process.env.BENCH_FILES_LINK_SECONDS ?? 10);
const MIN_FILES = 12;
function filesFor(link, sizes) {
  if (!link.bitsPerSecond) return sizes.length;
  let n = 0, bytes = 0;
  while (n < sizes.length && (8 * (bytes + sizes[n])) / link.bitsPerSecond <= LINK_SECONDS) bytes += sizes[n++];
  return Math.min(sizes.length, Math.max(n, MIN_FILES));
}

// The HTTP versions (BENCH_FILES_HTTP: "1.1,2"): HTTP/1.1 to the reference server's http
// origin, HTTP/2 to its https one.
const H1 = "HTTP/1.1";
const H2 = "HTTP/2";
const VERSIONS = (pickedIn("BENCH_FILES_HTTP") ?? ["1.1", "2"]).map((v) => {
  if (v !== "1.1" && v !== "2") throw new Error(`BENCH_FILES_HTTP: ${v} is not 1.1 or 2`);
  return v === "1.1" ? H1 : H2;
});

// The ways, as the page runs them (filesRun): kind "queue" (one mu.queue of `n`, each file
// added with `options`; `blobs`: each File handed over as file.slice()), "loops" (`n` loops of
// mu.upload), "plain" (`n` loops of a session start and one PUT), "media" (`n` loops of one
// media POST) or "uppy" (Uppy with XHR upload, limit `n`); `rows`: where each runs unless
// BENCH_FILES_WAYS names ways (those alone, everywhere): the module's defaults, the plain
// one-request loop and Uppy everywhere; the others on loopback, where the module's own cost
// shows; the queue and the plain one-request loop 12 and 24 at a time over HTTP/2 at a 60 ms
// round trip, where the six connections of HTTP/1.1 are one (issue 29: the queue's default
// concurrency over HTTP/2 is chosen from them).
const everywhere = () => true;
const onLoopback = (link) => !link.bitsPerSecond && !link.rttMs;
const overH2At60 = (link, version) => version === H2 && link.rttMs === 60 && !link.bitsPerSecond;
const ALL_WAYS = [
  { how: "queue", label: "module: mu.queue({ concurrency: 6 }), defaults", kind: "queue", n: 6, rows: everywhere },
  { how: "queueNoSum", label: "module: mu.queue, defaults, checksum: false", kind: "queue", n: 6, options: { checksum: false }, rows: everywhere },
  { how: "queueResumable", label: "module: mu.queue, uploadType \"resumable\"", kind: "queue", n: 6, options: { uploadType: "resumable" }, rows: onLoopback },
  { how: "queue0", label: "module: mu.queue, resumable, chunkSize 0", kind: "queue", n: 6, options: { uploadType: "resumable", chunkSize: 0 }, rows: onLoopback },
  { how: "queueBlob", label: "module: mu.queue, defaults, file.slice() Blobs", kind: "queue", n: 6, blobs: true, rows: onLoopback },
  { how: "loops", label: "module: 6 loops of mu.upload, defaults", kind: "loops", n: 6, rows: onLoopback },
  { how: "plain", label: "plain fetch: start + 1 PUT, 6 loops", kind: "plain", n: 6, rows: onLoopback },
  { how: "media", label: "plain fetch: 1 media POST, 6 loops", kind: "media", n: 6, rows: everywhere },
  { how: "uppy", label: "Uppy 6 + @uppy/xhr-upload, limit 6", kind: "uppy", n: 6, rows: everywhere },
  ...[12, 24].flatMap((n) => [
    { how: `queue${n}`, label: `module: mu.queue({ concurrency: ${n} }), defaults`, kind: "queue", n, rows: overH2At60 },
    { how: `media${n}`, label: `plain fetch: 1 media POST, ${n} loops`, kind: "media", n, rows: overH2At60 },
  ]),
];
const CHOSEN = pickedIn("BENCH_FILES_WAYS");
if (CHOSEN && !ALL_WAYS.some((w) => CHOSEN.includes(w.how))) {
  throw new Error(`BENCH_FILES_WAYS names none of ${ALL_WAYS.map((w) => w.how).join(", ")}`);
}
// What the page needs of a way.
const forPage = ({ kind, n, options, blobs }) => ({ kind, n, options, blobs });
const waysFor = (link, version) => ALL_WAYS.filter((w) => (CHOSEN ? CHOSEN.includes(w.how) : w.rows(link, version)));
// The way every other is compared with: the plain one-request loop, the requests the module's
// default makes for a small file.
const BASE = "media";

// The files' sizes: log-uniform in [MIN, MAX], from a small seeded generator (mulberry32).
export function fileSizes(n = N, seed = SEED) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, () => Math.round(MIN * Math.exp(next() * Math.log(MAX / MIN))));
}

// Runs in the page. Wraps fetch before the module loads, to time every request; takes the
// files; runs each way.
const FILES_CODE = () => {
  const requests = []; // { name, call, answered } per fetch
  const orig = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const rec = { name: /[?&]name=([^&]+)/.exec(url)?.[1] ?? "", call: performance.now(), answered: 0 };
    requests.push(rec);
    const p = orig.apply(this, arguments);
    p.then(() => (rec.answered = performance.now()), () => (rec.answered = -1));
    return p;
  };
  let files = [];
  // The Files picked in #pick, in the order of their names' numbers; their sizes.
  window.takeFiles = () => {
    const index = (f) => Number(f.name.slice(1, -4));
    files = [...document.getElementById("pick").files].sort((a, b) => index(a) - index(b));
    return files.map((f) => f.size);
  };
  // The same files fetched from the page's origin into Files in memory: where nothing is
  // attached to the browser, nothing can pick a file on disk for the page.
  window.fetchFiles = async (n) => {
    files = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const blob = await (await fetch(`/bench-files/f${i}.bin`)).blob();
        return new File([blob], `f${i}.bin`, { type: blob.type });
      }),
    );
    return files.map((f) => f.size);
  };
  const startSession = async (url, size) => {
    const r = await fetch(url + "&uploadType=resumable", {
      method: "POST",
      headers: { "X-Upload-Content-Type": "application/octet-stream", "X-Upload-Content-Length": String(size) },
    });
    if (r.status !== 200) throw new Error("start: " + r.status);
    await r.arrayBuffer();
    return r.headers.get("Location");
  };
  // n loops that take the next file until none is left; one(file) uploads it.
  const loops = async (n, one, mark) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        while (next < files.length) {
          const i = next++;
          mark[i].start = performance.now();
          await one(files[i]);
          mark[i].end = performance.now();
        }
      }),
    );
  };
  // Runs one way (see ALL_WAYS) over the files, to the bucket at base.
  window.filesRun = async (way, base) => {
    requests.length = 0;
    const url = (f) => `${base}?name=${f.name}`;
    const mark = files.map(() => ({ start: 0, end: 0 }));
    const t0 = performance.now();
    let setupMs = 0;
    const { kind, n, options } = way;
    if (kind === "queue") {
      const q = window.mu.queue({ concurrency: n });
      const idle = new Promise((r) => q.addEventListener("idle", r, { once: true }));
      const ups = files.map((f, i) => {
        const up = q.add(way.blobs ? f.slice() : f, { url: url(f), ...options });
        up.addEventListener("loadstart", () => (mark[i].start = performance.now()));
        up.addEventListener("loadend", () => (mark[i].end = performance.now()));
        return up;
      });
      await idle;
      const failed = (await Promise.allSettled(ups)).filter((r) => r.status === "rejected");
      if (failed.length) throw new Error(`${failed.length} uploads failed: ${failed[0].reason?.message}`);
    } else if (kind === "loops") {
      await loops(n, (f) => window.mu.upload(f, { url: url(f), ...options }).then(() => {}), mark);
    } else if (kind === "plain") {
      await loops(n, async (f) => {
        const session = await startSession(url(f), f.size);
        const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${f.size - 1}/${f.size}` }, body: f });
        if (r.status !== 200 && r.status !== 201) throw new Error("PUT: " + r.status);
        await r.arrayBuffer();
      }, mark);
    } else if (kind === "media") {
      // The module's request for a small file: its Content-Type the File's, else
      // application/octet-stream (which a preflight precedes).
      await loops(n, async (f) => {
        const headers = { "Content-Type": f.type || "application/octet-stream" };
        const r = await fetch(url(f) + "&uploadType=media", { method: "POST", headers, body: f });
        if (r.status !== 200) throw new Error("media: " + r.status);
        await r.arrayBuffer();
      }, mark);
    } else if (kind === "uppy") {
      // One media POST per file (the reference server stores a media body, not a form). Its
      // default form POST would be preflighted as well: XMLHttpRequest preflights a request
      // to another origin that has upload listeners (Fetch's use-CORS-preflight flag), and
      // Uppy listens for upload progress.
      const { Uppy, XHRUpload } = window.UppyLib;
      const uppy = new Uppy({ autoProceed: false }).use(XHRUpload, {
        endpoint: (file) => `${base}?uploadType=media&name=${file.name}`,
        method: "POST",
        formData: false,
        limit: n,
      });
      const byName = new Map(files.map((f, i) => [f.name, i]));
      uppy.on("upload-start", (fs) => { for (const f of fs) mark[byName.get(f.name)].start = performance.now(); });
      uppy.on("upload-success", (f) => (mark[byName.get(f.name)].end = performance.now()));
      uppy.addFiles(files.map((f) => ({ name: f.name, type: f.type, data: f, source: "bench" })));
      setupMs = performance.now() - t0;
      const result = await uppy.upload();
      if (result.failed?.length) throw new Error(`uppy: ${result.failed.length} failed: ${result.failed[0].error}`);
      uppy.destroy();
    }
    const ms = performance.now() - t0;
    return { ms, setupMs, mark, requests: requests.map((r) => [r.name, r.call, r.answered]) };
  };
};

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

// Writes a DevTools CPU profile of one way's round and prints its functions of most self time,
// in ms per file (n files).
function printProfile(name, profile, n) {
  writeFileSync(`${PROFILE}-${name}.cpuprofile`, JSON.stringify(profile));
  const self = new Map();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (let k = 1; k < profile.samples.length; k++) {
    const f = byId.get(profile.samples[k]).callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[k] / 1000);
  }
  const busy = sum([...self].filter(([k]) => k !== "(idle) :0").map(([, v]) => v));
  console.log(`  profile of ${name}: ${(busy / n).toFixed(2)} ms per file not idle; most self time, ms per file:`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`    ${(v / n).toFixed(3)}  ${k}`);
}

// CPU seconds so far of this process's descendants, from /proc: the reference servers' (`go run`
// and its binary), Chromium's processes' (with their kinds: Chromium's --type: renderer,
// utility (the network service), gpu-process, zygote; the browser process has none; a child
// writes its arguments over its command line, one space between) and the other browsers'
// (Firefox's; WebKit's with its driver and its Xvfb).
const TICK = 100; // USER_HZ on Linux
function kindOf(pid) {
  try {
    const type = readFileSync(`/proc/${pid}/cmdline`, "utf8").split(/[\0 ]/).find((a) => a.startsWith("--type="));
    return type ? type.slice("--type=".length) : "browser";
  } catch {
    return "gone";
  }
}
// A process's or a thread's name, parent and CPU seconds (user and system) from its stat
// file; null once gone.
function statOf(path) {
  try {
    const stat = readFileSync(path, "utf8");
    const close = stat.lastIndexOf(")");
    const f = stat.slice(close + 2).split(" ");
    return { comm: stat.slice(stat.indexOf("(") + 1, close), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / TICK };
  } catch {
    return null;
  }
}
// The CPU seconds of a WebKit web process's threads by kind: its main thread (the page's JS
// and the module's Go) and JavaScriptCore's optimizing WebAssembly compiler ("Wasm Worklist
// Helper Thread": WebKit keeps a thread name's last 15 characters).
function webkitThreads(pid) {
  const out = { main: 0, wasm: 0 };
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const s = statOf(`/proc/${pid}/task/${t}/stat`);
      if (s && t === String(pid)) out.main += s.cpu;
      else if (s?.comm === "t Helper Thread") out.wasm += s.cpu;
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

// cpuNow: per process, { group: "server", "chromium" or "other", kind (Chromium's; WebKit's
// "web" and "network" processes), cpu, main (a renderer's or web process's main thread's), wasm
// (a WebKit web process's WebAssembly compiler's) }.
function cpuNow() {
  const procs = new Map();
  for (const d of readdirSync("/proc")) {
    const p = /^\d+$/.test(d) ? statOf(`/proc/${d}/stat`) : null;
    if (p) procs.set(Number(d), p);
  }
  const mine = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 20; p = procs.get(p)?.ppid ?? 0, hops++) if (p === process.pid) return true;
    return false;
  };
  const out = new Map();
  for (const [pid, p] of procs) {
    if (pid === process.pid || !mine(pid)) continue;
    const group = /^go$|refserver/.test(p.comm) ? "server" : /chrom/i.test(p.comm) ? "chromium" : "other";
    const kind = group === "chromium" ? kindOf(pid) : p.comm === "WebKitWebProces" ? "web" : p.comm === "WebKitNetworkPr" ? "network" : undefined;
    // A renderer's main thread (the page's JS, the module's Go) is its task of its own pid.
    const main = kind === "renderer" ? (statOf(`/proc/${pid}/task/${pid}/stat`)?.cpu ?? 0) : 0;
    const wk = kind === "web" ? webkitThreads(pid) : { main, wasm: 0 };
    out.set(pid, { group, kind, cpu: p.cpu, main: wk.main, wasm: wk.wasm });
  }
  return out;
}

// The CPU seconds used from `before` to `after` (cpuNow's) by group and by Chromium's process
// kinds (main: the renderers' main threads); a process gone meanwhile is not counted.
function cpuUsed(before, after) {
  const used = { server: 0, chromium: 0, other: 0, kinds: {} };
  const add = (o, k, v) => (o[k] = (o[k] ?? 0) + v);
  for (const [pid, p] of after) {
    const was = before.get(pid);
    add(used, p.group, p.cpu - (was?.cpu ?? 0));
    if (p.kind) add(used.kinds, p.kind, p.cpu - (was?.cpu ?? 0));
    if (p.kind === "renderer" || p.kind === "web") add(used.kinds, "main", p.main - (was?.main ?? 0));
    if (p.kind === "web") add(used.kinds, "wasm", p.wasm - (was?.wasm ?? 0));
  }
  return used;
}

// The analysis of one run: per file, where its time went (see the file's comment).
function breakdown(run, slots) {
  const byName = new Map();
  for (const [name, call, answered] of run.requests) {
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name).push({ call, answered });
  }
  const toFirst = [], between = [], toEnd = [], server = [];
  run.mark.forEach((m, i) => {
    const rs = byName.get(`f${i}.bin`) ?? [];
    if (!rs.length) return;
    toFirst.push(rs[0].call - m.start);
    let gap = 0, inServer = 0;
    for (let k = 0; k < rs.length; k++) {
      inServer += rs[k].answered - rs[k].call;
      if (k) gap += rs[k].call - rs[k - 1].answered;
    }
    between.push(gap);
    server.push(inServer);
    toEnd.push(m.end - rs[rs.length - 1].answered);
  });
  // A slot freed by a file's end is taken by the next start: the k-th start after the first
  // `slots` follows the (k-slots)-th end.
  const starts = run.mark.map((m) => m.start).sort((a, b) => a - b);
  const ends = run.mark.map((m) => m.end).sort((a, b) => a - b);
  const slot = [];
  for (let k = slots; k < starts.length; k++) slot.push(starts[k] - ends[k - slots]);
  // How many files were in flight on average: their summed times over the round's.
  const inFlight = sum(run.mark.map((m) => m.end - m.start)) / run.ms;
  const duration = run.mark.map((m) => m.end - m.start);
  return { toFirst, between, toEnd, server, slot, inFlight, duration };
}

// A row of the output: one half's rounds (half: { name, engine }) over one link and HTTP
// version, each way's rounds' records (endStep) kept by round, and the problems seen.
function newRow(half, link, version, n) {
  const ways = waysFor(link, version);
  return { half, link, version, n, ways, rounds: new Map(ways.map((w) => [w.how, []])), problems: [] };
}

// The steps of a page's rows, in order: each row's rounds in turn, each round one way further on
// than the one before, so that a slow moment of the machine hits each way alike.
function stepsOf(rows, rounds) {
  const steps = [];
  for (const row of rows) {
    for (let i = 0; i < rounds; i++) {
      const order = [...row.ways];
      for (let k = 0; k < i % order.length; k++) order.push(order.shift());
      for (const way of order) steps.push({ row, way, i });
    }
  }
  return steps;
}

// Before a step: the reference server as the step finds it (nothing stored, the row's link),
// the bucket it uploads to, and the CPU times so far.
async function beginStep(env, { row, way, i }) {
  await env.ref.reset();
  const { bitsPerSecond, rttMs } = row.link;
  if (bitsPerSecond || rttMs) await env.ref.config({ link: { bitsPerSecond, rttMs } });
  // A bucket of its own for each row, way and round: browsers cache preflights by URL, and a
  // way must not find those of another one's uploads.
  const origin = row.version === H1 ? env.ref.httpURL : env.ref.url;
  const base = `${origin}/upload/storage/v1/b/files-${row.link.key}-${row.version === H1 ? "h1" : "h2"}-${way.how}-${i}/o`;
  return { base, cpu: cpuNow() };
}

// After a step: its round's record in its row (returned), or a problem where the page's run
// failed (run.error). The record holds the time, the requests and preflights per file and the
// HTTP version they went over (the server's log), the CPU used since cpu0, and where a file's
// time went (breakdown); every stored object's size and MD5 is checked.
async function endStep(env, { row, way, i }, run, cpu0, files) {
  const cpu = cpuUsed(cpu0, cpuNow());
  const problem = (what) => row.problems.push(`${way.label}, round ${i + 1}: ${what}`);
  if (run.error) return void problem(run.error);
  const log = await env.ref.log();
  const preflights = log.filter((e) => e.kind === "preflight").length;
  if (process.env.BENCH_FILES_TRACE === "1") {
    const sizeOf = (e) => files.sizes[Number(/(?:^|&)name=f(\d+)\.bin/.exec(e.query)?.[1])];
    const started = log.filter((e) => e.kind === "start").map((e) => `${(sizeOf(e) / 1e6).toFixed(2)} MB`);
    console.log(`    ${row.half.name}, ${row.link.name}, ${row.version}, ${way.label}, round ${i + 1}: ${started.length} sent resumable${started.length ? ` (${started.join(", ")})` : ""}`);
  }
  const want = row.version === H1 ? "HTTP/1.1" : "HTTP/2.0";
  const other = log.filter((e) => e.proto !== want);
  if (other.length) problem(`${other.length} of ${log.length} requests over ${other[0].proto}, not ${want}`);
  const objs = (await env.ref.objects()).filter((o) => /^f\d+\.bin$/.test(o.name));
  const bad = objs.filter((o) => {
    const size = files.sizes[Number(o.name.slice(1, -4))];
    return o.size !== String(size) || o.md5Hash !== files.md5.get(size);
  }).length;
  if (objs.length !== row.n || bad) problem(`${objs.length} objects stored, ${bad} wrong`);

  const record = {
    i,
    ms: run.ms,
    setupMs: run.setupMs,
    requests: (log.length - preflights) / row.n,
    preflights: preflights / row.n,
    browserCPU: row.half.engine === "chromium" ? cpu.chromium : cpu.other,
    serverCPU: cpu.server,
    kinds: cpu.kinds, // Chromium's and WebKit's
    ...breakdown(run, way.n),
  };
  row.rounds.get(way.how).push(record);
  return record;
}

const col = (s, w) => String(s).padStart(w);

// A way's files per second in a row (the median round's), or NaN where it has no round.
const rateOf = (row, how) => (row.rounds.get(how)?.length ? row.n / (median(row.rounds.get(how).map((r) => r.ms)) / 1000) : NaN);

// Each round's own ratio of a way's rate over another's in a row.
function roundRatios(row, how, over) {
  const base = row.rounds.get(over) ?? [];
  return (row.rounds.get(how) ?? []).flatMap((r) => base.filter((b) => b.i === r.i).map((b) => b.ms / r.ms));
}

// A way's rate over another's in a row: the median of each round's own ratio (a steadier figure
// than a ratio of medians: the machine's speed drifts between rounds), or NaN.
function ratioOf(row, how, over) {
  const ratios = roundRatios(row, how, over);
  return ratios.length ? median(ratios) : NaN;
}
const fixed = (v, digits) => (Number.isNaN(v) ? "-" : v.toFixed(digits));

// Prints a row: per way, files per second and MB/s, its rate over the plain one-request
// loop's (the median of each round's own ratio), the requests and preflights per file, the
// CPU per file; the CPU by Chromium's process kinds where known; where a file's time goes.
function printRow(row, files) {
  const { n, link } = row;
  const bytes = sum(files.sizes.slice(0, n));
  const rounds = Math.max(...[...row.rounds.values()].map((rs) => rs.length));
  console.log(
    `  ${row.half.name}, ${link.name}, ${row.version}: ${n} files (${(bytes / 1e6).toFixed(1)} MB` +
      `${link.bitsPerSecond ? `, ${((8 * bytes) / link.bitsPerSecond).toFixed(1)} s at the link's rate` : ""}), ${rounds} rounds, medians`,
  );
  const main = [...row.rounds.values()].some((rs) => rs.some((r) => r.mainMs !== undefined));
  console.log(
    `    ${"way".padEnd(48)}${col("files/s", 8)}${col("MB/s", 6)}${col("x 1-req", 8)}${col("req/file", 9)}${col("+preflights", 12)}` +
      `${col("browser CPU", 12)}${col("server CPU", 11)}${main ? col("main thr.", 10) : ""}   ms per file`,
  );
  for (const way of row.ways) {
    const rs = row.rounds.get(way.how);
    if (!rs.length) {
      console.log(`    ${way.label.padEnd(48)}${col("-", 8)}`);
      continue;
    }
    const rate = rateOf(row, way.how);
    const per = (k, scale = 1000) => ((median(rs.map((r) => r[k])) * scale) / n).toFixed(2);
    console.log(
      `    ${way.label.padEnd(48)}${col(rate.toFixed(1), 8)}${col(((rate * bytes) / n / 1e6).toFixed(1), 6)}` +
        `${col(fixed(ratioOf(row, way.how, BASE), 2), 8)}` +
        `${col(median(rs.map((r) => r.requests)).toFixed(2), 9)}${col(median(rs.map((r) => r.preflights)).toFixed(2), 12)}` +
        `${col(per("browserCPU"), 12)}${col(per("serverCPU"), 11)}${main ? col(per("mainMs", 1), 10) : ""}` +
        `${way.kind === "uppy" ? `   (addFiles ${median(rs.map((r) => r.setupMs)).toFixed(0)} ms of the time)` : ""}`,
    );
  }
  console.log(
    `    (x 1-req: the way's rate over the plain one-request loop's; req/file and preflights: the server's log; CPU: ms per ` +
      `file over the round, the browser's processes and the server's from /proc${main ? ", the page's main thread from DevTools' TaskDuration" : ""})`,
  );
  printKinds(row);
  printWhere(row);
  for (const p of row.problems) console.log(`    ${p}`);
}

// Where the CPU went, per file (medians of the rounds), by Chromium's process kinds, or by
// WebKit's.
function printKinds(row) {
  const { engine } = row.half;
  if (engine !== "chromium" && engine !== "webkit") return;
  const kinds = engine === "chromium" ? ["renderer", "main", "utility", "browser"] : ["web", "main", "wasm", "network"];
  console.log(
    engine === "chromium"
      ? "    CPU ms per file by process, medians: the renderers (all threads) / their main threads (the page's JS and the module's Go) / " +
          "utility (the network service) / the browser process / the server (a process gone in a round is not counted)"
      : "    CPU ms per file by process, medians: the web process (all threads) / its main thread (the page's JS and the module's Go) / " +
          "JavaScriptCore's optimizing WebAssembly compiler (its Wasm Worklist Helper Thread) / the network process / the server",
  );
  for (const way of row.ways) {
    const rs = row.rounds.get(way.how);
    if (!rs.length) continue;
    const per = [...kinds.map((k) => median(rs.map((r) => r.kinds[k] ?? 0))), median(rs.map((r) => r.serverCPU))];
    // The engines go on compiling the module's functions with their optimizing tiers over a
    // page's first uploads (WebKit over its first thousands): the rounds, in the order they
    // ran, show it wane. WebKit's compiler has a thread of its own; Chromium's shares the
    // renderer's other threads with the collector.
    const background = (r) => (engine === "webkit" ? r.kinds.wasm : (r.kinds.renderer ?? 0) - (r.kinds.main ?? 0));
    const compiler = rs.some((r) => background(r) > 0)
      ? `   ${engine === "webkit" ? "the compiler" : "other renderer threads"} by round: ${rs.map((r) => ((background(r) * 1000) / row.n).toFixed(2)).join(" / ")}`
      : "";
    console.log(`    ${way.label.padEnd(48)}${per.map((v) => ((v * 1000) / row.n).toFixed(2).padStart(7)).join("")}${compiler}`);
  }
}

// Prints where a file's time went, per way of a row.
function printWhere(row) {
  console.log(
    `    where a file's time goes, ms (medians over the files of every round): start -> first request, between its ` +
      `requests (sum), in the server (call to answer, summed), last answer -> its end; a file's end -> the next start in its slot`,
  );
  for (const way of row.ways) {
    const rs = row.rounds.get(way.how);
    if (way.kind === "uppy" || !rs.length) continue; // Uppy: XMLHttpRequest, not seen by the fetch wrapper
    const all = (k) => median(rs.flatMap((r) => r[k])).toFixed(2);
    console.log(
      `    ${way.label.padEnd(48)} first ${all("toFirst")}, between ${all("between")}, server ${all("server")}, ` +
        `to end ${all("toEnd")}; slot ${all("slot")}; whole file ${all("duration")}; in flight ${median(rs.map((r) => r.inFlight)).toFixed(1)}`,
    );
  }
}

// Runs in a page that drives itself (runFree): takes the first n files, then runs the ways in
// the order Node gives them, telling it (at path) how each went: its time, the files' marks and
// the requests' times, or its error.
const FREE_CODE = async (n, path) => {
  const post = async (what, body) => (await fetch(path + what, { method: "POST", body: JSON.stringify(body) })).json();
  try {
    if (window.ready !== "ok") throw new Error(window.ready);
    let step = await post("files", { sizes: await window.fetchFiles(n) });
    while (step.way) {
      let ran;
      try {
        ran = await window.filesRun(step.way, step.base);
      } catch (e) {
        ran = { error: String(e?.message ?? e) };
      }
      step = await post("ran", ran);
    }
  } catch (e) {
    await post("error", { message: String(e?.stack ?? e) });
  }
};

let freePages = 0;

// The rows of one half whose pages drive themselves (see the file's comment): per link, a page
// that open(url) opens ({ close(), failed }: failed rejects if the browser ends first), which
// fetches the link's files into Files in memory and runs every step Node gives it.
async function runFree(env, half, rounds, files, open) {
  const rows = [];
  for (const link of LINKS) {
    const n = filesFor(link, files.sizes);
    const linkRows = VERSIONS.map((v) => newRow(half, link, v, n));
    const steps = stepsOf(linkRows, rounds);
    const path = `/bench-free-${++freePages}/`;
    env.web.page(`/files-free-${freePages}.html`, filesPage(`(${FREE_CODE})(${n}, ${JSON.stringify(path)});`));
    let at = -1; // the step running
    let cpu0; // the CPU times when it began
    let finish, fail, watchdog;
    const finished = new Promise((resolve, reject) => ((finish = resolve), (fail = reject)));
    // Ten minutes without word from the page (a page that did not load, a step that never
    // ends) end the part.
    const watch = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => fail(new Error(`${half.name}: no word from the page in 10 minutes (step ${at + 1} of ${steps.length})`)), 600_000);
    };
    watch();
    // The next step for the page ({} after the last).
    const next = async () => {
      if (++at === steps.length) return finish(), {};
      watch();
      const { base, cpu } = await beginStep(env, steps[at]);
      cpu0 = cpu;
      return { way: forPage(steps[at].way), base };
    };
    env.web.route(path, async (req, res) => {
      const answer = (v) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(v));
      try {
        const body = JSON.parse((await readBody(req)).toString() || "{}");
        const what = req.url.slice(path.length);
        if (what === "error") throw new Error(`${half.name}: the page: ${body.message}`);
        if (what === "files" && body.sizes.join() !== files.sizes.slice(0, n).join()) throw new Error("the files fetched are not the files written");
        if (what === "ran") await endStep(env, steps[at], body, cpu0, files);
        answer(await next());
      } catch (err) {
        answer({});
        fail(err);
      }
    });
    const page = await open(`${env.web.url}/files-free-${freePages}.html`);
    try {
      await Promise.race([finished, page.failed]);
    } finally {
      clearTimeout(watchdog);
      await page.close();
      await env.ref.reset();
    }
    for (const row of linkRows) printRow(row, files);
    rows.push(...linkRows);
  }
  return rows;
}

// Opens the free page in a Chromium started with nothing attached (a process group of its own:
// close() ends the browser and its child processes), trusting the reference server's certificate.
const chromiumAlone = (env) => async (url) => {
  const profile = scratchDir("mediaupload-bench-unattached-");
  const browser = spawnGroup(process.env.CHROMIUM ?? "/usr/bin/chromium", [
    ...CHROMIUM_ARGS,
    ...chromiumTrustArgs({ spki: env.ref.spki }),
    `--user-data-dir=${profile.dir}`,
    url,
  ]);
  browser.child.stdout.resume(); // nothing reads what it logs
  browser.child.stderr.resume();
  const failed = new Promise((_, reject) => browser.child.on("exit", (code) => reject(new Error(`Chromium exited (${code}) before the end`))));
  failed.catch(() => {}); // it exits when closed, after the end
  return {
    failed,
    close: async () => {
      await browser.stop();
      profile.remove();
    },
  };
};

const UNATTACHED_HALF = { name: "Chromium, nothing attached", engine: "chromium" };

// The issue's targets for the module's defaults over the plain one-request loop: 0.95 at a 20
// and a 60 ms round trip, in every engine; 0.90 on loopback with nothing attached to the
// browser. None with a rate.
function targetOf(row) {
  const { link } = row;
  if (link.bitsPerSecond) return undefined;
  if (link.rttMs === 20 || link.rttMs === 60) return 0.95;
  if (!link.rttMs && row.half === UNATTACHED_HALF) return 0.9;
}

// The issue's floor for the default checksum over a link that bounds the rate: the defaults
// keep at least 0.97 of the files per second they make with checksum: false.
const SUM_TARGET = 0.97;

// One line per row: the module's defaults against the plain one-request loop, with and without
// the default checksum (checksum: false), the two against each other, with the targets, and
// Uppy beside.
function printSummary(rows) {
  rows = rows.filter((r) => r.rounds.has("queue") && r.rounds.has(BASE));
  if (!rows.length) return;
  console.log(
    `many files, the module's defaults (mu.queue({ concurrency: 6 }), no other option: a CRC32C) and the same with ` +
      `checksum: false, over the plain one-request loop (six loops of one media POST per file, with the module's ` +
      `Content-Type): files per second (median rounds) and the median of each round's own ratio, with the rounds' lowest ` +
      `and highest for the defaults; "sum/none": the defaults over checksum: false, each round's own ratio, median; Uppy + ` +
      `XHR upload beside (its POSTs are preflighted too: XMLHttpRequest preflights a request to another origin that has ` +
      `upload listeners)`,
  );
  console.log(
    `  ${"browser".padEnd(28)}${"link".padEnd(28)}${"HTTP".padEnd(9)}${col("files", 5)}${col("1-req", 8)}${col("queue", 8)}` +
      `${col("ratio", 7)}  ${"rounds".padEnd(11)}   ${"target".padEnd(17)}${col("no sum", 8)}${col("ratio", 7)}${col("sum/none", 10)}  ${"target".padEnd(17)}${col("Uppy", 7)}`,
  );
  for (const row of rows) {
    const ratio = ratioOf(row, "queue", BASE);
    // The rounds' lowest and highest ratio: on two shared cores they spread by a tenth or more
    // (docs/performance.md, "Many files"), which a single median hides.
    const each = roundRatios(row, "queue", BASE);
    const spread = each.length > 1 ? `${Math.min(...each).toFixed(2)}-${Math.max(...each).toFixed(2)}` : "";
    const verdict = (target, v) => (target === undefined || Number.isNaN(v) ? "-" : `>= ${target.toFixed(2)}: ${v >= target ? "met" : "not met"}`);
    const sum = ratioOf(row, "queue", "queueNoSum");
    console.log(
      `  ${row.half.name.padEnd(28)}${row.link.name.padEnd(28)}${row.version.padEnd(9)}${col(row.n, 5)}` +
        `${col(fixed(rateOf(row, BASE), 1), 8)}${col(fixed(rateOf(row, "queue"), 1), 8)}${col(fixed(ratio, 2), 7)}  ` +
        `${spread.padEnd(11)}   ${verdict(targetOf(row), ratio).padEnd(17)}` +
        `${col(fixed(rateOf(row, "queueNoSum"), 1), 8)}${col(fixed(ratioOf(row, "queueNoSum", BASE), 2), 7)}${col(fixed(sum, 2), 10)}  ` +
        `${verdict(row.link.bitsPerSecond ? SUM_TARGET : undefined, sum).padEnd(17)}${col(fixed(rateOf(row, "uppy"), 1), 7)}`,
    );
  }
}

// The queue and the plain one-request loop 6, 12 and 24 at a time, per row that ran them (over
// HTTP/2 at a 60 ms round trip): files per second, and the queue's over the loop's.
function printConcurrency(rows) {
  const ns = [6, 12, 24];
  const how = (kind, n) => (n === 6 ? kind : `${kind}${n}`);
  rows = rows.filter((r) => ns.some((n) => n !== 6 && r.rounds.has(how("queue", n))));
  if (!rows.length) return;
  console.log(`the queue's concurrency: files per second of mu.queue({ concurrency }) / of as many plain one-request loops (the queue's ratio)`);
  console.log(`  ${"browser".padEnd(28)}${"link".padEnd(28)}${"HTTP".padEnd(9)}${ns.map((n) => `${n} at a time`.padEnd(22)).join("")}`.trimEnd());
  for (const row of rows) {
    const cells = ns.map((n) => {
      const [q, m] = [how("queue", n), how("media", n)];
      return `${fixed(rateOf(row, q), 1)} / ${fixed(rateOf(row, m), 1)} (${fixed(ratioOf(row, q, m), 2)})`.padEnd(22);
    });
    console.log(`  ${row.half.name.padEnd(28)}${row.link.name.padEnd(28)}${row.version.padEnd(9)}${cells.join("")}`.trimEnd());
  }
}

/** Runs the files part in env (bench.mjs's: Chromium, the reference server with tls) and prints it. */
export async function benchFiles(env, rounds) {
  const sizes = fileSizes();
  // File i holds the first sizes[i] bytes of one block.
  const block = pseudoRandomBytes(Math.max(...sizes), SEED);
  const md5 = new Map(sizes.map((n) => [n, createHash("md5").update(block.subarray(0, n)).digest("base64")]));
  const folder = scratchDir("mediaupload-bench-files-");
  try {
    const paths = sizes.map((n, i) => {
      const path = join(folder.dir, `f${i}.bin`);
      writeFileSync(path, block.subarray(0, n));
      return path;
    });
    const files = { sizes, md5, paths };
    const total = sum(sizes);
    console.log(
      `many files: ${N} files of ${MIN / 1000} KB to ${MAX / 1e6} MB (log-uniform, seeded; ${(total / 1e6).toFixed(0)} MB, ` +
        `median ${(median(sizes) / 1e3).toFixed(0)} KB; over a link with a rate, the first of them that it carries in about ` +
        `${LINK_SECONDS} s, at least ${MIN_FILES}), from ${ENGINES_RUN.join(", ")} to the reference server over ${LINKS.map((l) => l.name).join(", ")} ` +
        `(HTTP/1.1 to its http origin, HTTP/2 to its https one; every request checked in its log to have gone over the version named), ` +
        `${rounds} rounds, medians; every object's size and MD5 checked`,
    );
    const serve = (env) => {
      env.web.dir("/bench-files/", folder.dir);
      env.web.dir("/node_modules/uppy/", join(REPO_ROOT, "node_modules/uppy"));
      env.web.page("/files.html", filesPage());
    };
    const rows = [];
    if (ENGINES_RUN.includes("chromium")) {
      serve(env);
      if (ATTACHED) rows.push(...(await runAttached(env, rounds, files)));
      if (UNATTACHED) rows.push(...(await runFree(env, UNATTACHED_HALF, rounds, files, chromiumAlone(env))));
    }
    // Firefox and WebKit: each with its own browser and servers (harness.mjs), the free page in
    // a tab of it.
    for (const engine of ENGINES_RUN.filter((e) => e !== "chromium")) {
      let e;
      try {
        e = await startAll({ engine, tls: true });
      } catch (err) {
        console.log(`  ${engine}: not measured: ${err?.message ?? err}`);
        continue;
      }
      try {
        serve(e);
        const half = { name: e.engineVersion, engine };
        const opened = await runFree(e, half, rounds, files, async (url) => {
          const page = await e.browser.newPage(url);
          return { failed: new Promise(() => {}), close: () => page.close() };
        });
        rows.push(...opened);
      } finally {
        await e.close();
      }
    }
    printSummary(rows);
    printConcurrency(rows);
  } finally {
    folder.remove();
  }
}

// The bench page: the ways (FILES_CODE), Uppy and the module loaded (window.ready: "ok", or
// what failed), then `then` (a script's text) run.
const filesPage = (then = "") => `<!doctype html><meta charset="utf-8"><title>files bench</title>
    <input type="file" id="pick" multiple>
    <script type="module">
      (${FILES_CODE})();
      try {
        window.UppyLib = await import("/node_modules/uppy/dist/uppy.min.mjs");
        const { load } = await import("/dist/mediaupload.js");
        window.mu = await load();
        window.ready = "ok";
      } catch (e) {
        window.ready = "load: " + (e && e.message || e);
      }
      ${then}
    </script>`;

// The attached half: bench.mjs's Chromium, driven through DevTools, the Files picked from disk;
// per link a page of its own (what the module learns of a link stays with its page).
async function runAttached(env, rounds, files) {
  const rows = [];
  for (const link of LINKS) {
    const n = filesFor(link, files.sizes);
    const linkRows = VERSIONS.map((v) => newRow({ name: "Chromium, DevTools attached", engine: "chromium" }, link, v, n));
    const page = await env.openPage("/files.html");
    const cdp = await env.browser.context.newCDPSession(page);
    try {
      const ready = await page.waitForFunction(() => window.ready, null, { timeout: 60_000 });
      if ((await ready.jsonValue()) !== "ok") throw new Error(`the files page: ${await ready.jsonValue()}`);
      await page.setInputFiles("#pick", files.paths.slice(0, n));
      const picked = await page.evaluate(() => window.takeFiles());
      if (picked.join() !== files.sizes.slice(0, n).join()) throw new Error("the files picked are not the files written");
      await cdp.send("Performance.enable");
      const mainThread = async () => {
        const { metrics } = await cdp.send("Performance.getMetrics");
        return Object.fromEntries(metrics.map((m) => [m.name, m.value])).TaskDuration;
      };
      for (const step of stepsOf(linkRows, rounds)) {
        const { base, cpu } = await beginStep(env, step);
        const main0 = await mainThread();
        const profiling = PROFILE && step.i === 0;
        if (profiling) await cdp.send("Profiler.enable"), await cdp.send("Profiler.start");
        const run = await page.evaluate(([way, base]) => window.filesRun(way, base), [forPage(step.way), base]).catch((err) => ({ error: err.message }));
        const name = `${link.key}-${step.row.version === H1 ? "h1" : "h2"}-${step.way.how}`;
        if (profiling) printProfile(name, (await cdp.send("Profiler.stop")).profile, n);
        const main1 = await mainThread();
        const record = await endStep(env, step, run, cpu, files);
        if (record) record.mainMs = (main1 - main0) * 1000;
      }
    } finally {
      await cdp.detach();
      await page.close();
      await env.ref.reset();
    }
    for (const row of linkRows) printRow(row, files);
    rows.push(...linkRows);
  }
  return rows;
}
