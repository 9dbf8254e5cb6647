// Prints the browser figures of the module's budgets (issue: the browser module):
//   - throughput over loopback in headless Chromium, the module against the same chunked
//     upload done with plain fetch PUTs (8 MiB, 1 MiB and 256 KiB chunks), and both against
//     one fetch PUT of the whole Blob;
//   - the module's WebAssembly memory after uploading a 1 GiB Blob (zero-copy: under 32 MiB).
//   - the client-side time per chunk: from one answer to the next request, plain and module
//     (a steadier figure than throughput on a shared machine).
//   - the module at its defaults against one whole PUT in Chromium, Firefox and WebKit, and
//     each engine's module time against Chromium's (engines.mjs).
//   - emulated links, over HTTP/1.1 and HTTP/2, in Chromium and (cheaper) Firefox and WebKit
//     (links.mjs; the reference server serves HTTPS with HTTP/2 beside HTTP: startAll's tls).
//   - links that change under an upload (a drop, a rise, a blackout, a longer round trip), in
//     Chromium, Firefox and WebKit, the module's defaults beside one whole PUT (changes.mjs).
//   - how long after fetch() a body reaches the server, by its size and kind (a File, a Blob in
//     memory), in Chromium, Firefox and WebKit (bodies.mjs).
//   - many files: up to 300 files through the module's queue, plain fetch and Uppy, over
//     loopback and emulated links, HTTP/1.1 and HTTP/2, in Chromium, Firefox and WebKit (files.mjs).
//   - checksums: each engine's ways to read a Blob or File, the module's CRC-32C and MD5 beside
//     hash-wasm's, uploads with the default CRC32C against none, load() and 1,000 small files,
//     with the page's worst event-loop delay (hashing.mjs).
//   - the backend package's session starts a second and their latency, 1,000 page requests at
//     once against fake-gcs-server, no browser (sessions.mjs runs web/bench/sessions); and what
//     asking the demo's backend for a session adds to an upload's first byte over emulated
//     links, in Chromium, Firefox and WebKit (sessions.mjs, benchSessionAsk).
//   - a thousand files set on the demo's input in Chromium: the page's worst delay, and whose
//     its long tasks are, from the DevTools trace (input.mjs).
// Run with ./build.sh bench. It prints figures; it asserts nothing (timings flake).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { startAll, MiB } from "../test/harness.mjs";
import { benchBodies } from "./bodies.mjs";
import { benchBusy } from "./busy.mjs";
import { benchChanges } from "./changes.mjs";
import { benchEngines } from "./engines.mjs";
import { benchFiles } from "./files.mjs";
import { benchHashing } from "./hashing.mjs";
import { benchInput } from "./input.mjs";
import { benchLinkEngines, benchLinks, prepareLinks } from "./links.mjs";
import { benchSessionAsk, benchSessions } from "./sessions.mjs";
import { BLOBS } from "./page-blobs.mjs";
import { median } from "./common.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 11);
// Rounds of the busy-page part (busy.mjs).
const BUSY_RUNS = Number(process.env.BENCH_BUSY_RUNS ?? 3);
// Rounds over each emulated link (each round uploads ten seconds' worth five ways).
const LINK_RUNS = Number(process.env.BENCH_LINK_RUNS ?? 3);
// Rounds over each link in Firefox and WebKit (links.mjs; BENCH_LINK_ENGINES chooses them, "" none).
const LINK_ENGINE_RUNS = Number(process.env.BENCH_LINK_ENGINE_RUNS ?? 2);
// Rounds of the many-files part (files.mjs).
const FILES_RUNS = Number(process.env.BENCH_FILES_RUNS ?? 5);
// Rounds of each size in each engine (engines.mjs; BENCH_ENGINES chooses the engines).
const ENGINE_RUNS = Number(process.env.BENCH_ENGINE_RUNS ?? 5);
// BENCH_ONLY=loopback, links, changes, bodies, drain, streams, busy, engines, files, hashing, sessions, ask or input runs that part alone
// (sessions: ask too).
// BENCH_PAGE_MODE=1 loads the module on the page ({ worker: false }) instead of in its Worker;
// BENCH_CHUNK=N runs only the fixed-chunk case of N bytes (262144, 1048576 or 8388608).
const ONLY = process.env.BENCH_ONLY ?? "";
const CASES = [
  { chunk: 8 * MiB, size: 256 * MiB },
  { chunk: 1 * MiB, size: 128 * MiB },
  { chunk: 256 * 1024, size: 32 * MiB },
];

// Runs in the page: the plain-fetch baseline (a minimal resumable client with no retries),
// the whole-Blob PUT, and the module, each timed.
const PAGE_CODE = () => {
  const start = (url, size) => window.startSession(url, size);
  // The same chunked upload as the module's, by hand: PUT each slice, go on from Range.
  // drain: read each 308's (empty) body as the module does, so the request ends normally.
  window.plainChunked = async (url, size, chunk, drain = false) => {
    const blob = window.benchBlob(size);
    const t0 = performance.now();
    const session = await start(url, size);
    let off = 0;
    for (;;) {
      const end = Math.min(off + chunk, size);
      const r = await fetch(session, {
        method: "PUT",
        headers: { "Content-Range": `bytes ${off}-${end - 1}/${size}` },
        body: blob.slice(off, end),
      });
      if (r.status === 200 || r.status === 201) break;
      if (r.status !== 308) throw new Error("chunk: " + r.status);
      if (drain) r.arrayBuffer().then(() => {}, () => {});
      off = Number(r.headers.get("Range").split("-")[1]) + 1;
    }
    return performance.now() - t0;
  };
  window.plainWhole = async (url, size) => {
    const blob = window.benchBlob(size);
    const t0 = performance.now();
    const session = await start(url, size);
    const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` }, body: blob });
    if (r.status !== 200 && r.status !== 201) throw new Error("whole: " + r.status);
    return performance.now() - t0;
  };
  window.retries = 0; // the module's retries, each a wait of a second or more
  window.viaModule = async (url, size, chunk) => {
    const blob = window.benchBlob(size);
    const t0 = performance.now();
    await window.mu.upload(blob, { url, chunkSize: chunk, onRetry: () => window.retries++ });
    return performance.now() - t0;
  };
  // The same bytes as a ReadableStream of 1 MiB pieces (views of the Blob's block, so that
  // making them costs next to nothing): the module gathers them into chunks.
  window.viaModuleStream = async (url, size) => {
    const block = new Uint8Array(await window.benchBlob(size).slice(0, 1 << 20).arrayBuffer());
    let at = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (at >= size) return c.close();
        const n = Math.min(block.length, size - at);
        c.enqueue(block.subarray(0, n));
        at += n;
      },
    }, { highWaterMark: 0 });
    const t0 = performance.now();
    await window.mu.upload(stream, { url, onRetry: () => window.retries++ });
    return performance.now() - t0;
  };
  // The floor: the same loop as plainChunked, in Go with syscall/js alone (web/bench/goloop).
  window.goLoop = async (url, size, chunk) => {
    if (!window.goChunked) {
      if (typeof Go !== "function") await import("/wasm_exec.js"); // Go's glue (the module keeps its own to itself)
      const go = new Go();
      const { instance } = await WebAssembly.instantiateStreaming(fetch("/goloop.wasm"), go.importObject);
      go.run(instance);
    }
    const blob = window.benchBlob(size);
    const t0 = performance.now();
    const session = await start(url, size);
    const how = await new Promise((done) => window.goChunked(session, blob, size, chunk, done));
    if (how !== "ok") throw new Error("goloop: " + how);
    return performance.now() - t0;
  };
  window.wasmMemory = () => window.__wasmMemory?.buffer.byteLength ?? -1;
};

// Captures the module's memory (Go's wasm exports it as "mem"), and wraps fetch before the
// module looks it up, to time each call and its answer (the same thin wrapper for both).
const CAPTURE_MEMORY = `
  {
    const orig = window.fetch;
    window.__fetches = [];
    window.fetch = function (...args) {
      const rec = { call: performance.now() };
      window.__fetches.push(rec);
      const p = orig.apply(this, args);
      p.then(() => { rec.answered = performance.now(); }, () => {});
      return p;
    };
    window.chunkGaps = () => {
      const f = window.__fetches.filter((r) => r.answered);
      const gaps = [];
      for (let i = 1; i < f.length; i++) gaps.push(f[i].call - f[i - 1].answered);
      window.__fetches = [];
      return gaps.sort((a, b) => a - b)[gaps.length >> 1];
    };
  }
  for (const name of ["instantiate", "instantiateStreaming"]) {
    const orig = WebAssembly[name];
    WebAssembly[name] = async (...args) => {
      const r = await orig.apply(WebAssembly, args);
      window.__wasmMemory = (r.instance ?? r).exports.mem;
      return r;
    };
  }`;

// startSink starts a resumable-upload endpoint on its own origin that keeps nothing: it
// tracks each session's offset (308 with Range, 200 at the total) and throws the bytes away,
// so the figures measure the browser and the module, not a server storing and hashing.
async function startSink() {
  const sessions = new Map();
  let next = 0;
  const server = createServer((req, res) => {
    const cors = {
      "Access-Control-Allow-Origin": req.headers.origin ?? "*",
      "Access-Control-Allow-Methods": "POST, PUT",
      "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
      "Access-Control-Expose-Headers": "Location, Range",
      "Access-Control-Max-Age": "600",
      "Access-Control-Allow-Private-Network": "true", // Chromium's Private Network Access
    };
    if (req.method === "OPTIONS") return void res.writeHead(204, cors).end();
    let n = 0;
    req.on("data", (b) => (n += b.length));
    req.on("end", () => {
      const url = new URL(req.url, "http://sink");
      if (req.method === "POST") {
        const id = String(++next);
        sessions.set(id, 0);
        return void res.writeHead(200, { ...cors, Location: `http://${req.headers.host}/s?upload_id=${id}` }).end();
      }
      const id = url.searchParams.get("upload_id");
      const query = /bytes \*\/(\d+|\*)/.exec(req.headers["content-range"] ?? "");
      if (query && sessions.has(id)) {
        // A status query (docs/protocol.md section 4): the module sends one after a failed request.
        // With the total stated and every byte held, it is the last request of an upload of
        // unknown length that ended on a chunk boundary: done.
        const held = sessions.get(id);
        if (query[1] !== "*" && held === Number(query[1])) {
          sessions.delete(id);
          return void res.writeHead(200, { ...cors, "Content-Type": "application/json" }).end(`{"size":"${held}"}`);
        }
        return void res.writeHead(308, held ? { ...cors, Range: `bytes=0-${held - 1}` } : cors).end();
      }
      // "bytes a-b/TOTAL", or "bytes a-b/*" while a stream's length is not known.
      const [, first, total] = /bytes (\d+)-\d+\/(\d+|\*)/.exec(req.headers["content-range"] ?? "") ?? [];
      // A chunk may start before the stored offset: Chromium re-sends a request silently when
      // a kept-alive connection closes under it. Overlapping bytes are stored once, as a
      // real server does (docs/protocol.md section 3); a gap is refused.
      if (!sessions.has(id) || first === undefined || Number(first) > sessions.get(id)) {
        return void res.writeHead(400, cors).end("bad chunk");
      }
      const stored = Math.max(sessions.get(id), Number(first) + n);
      sessions.set(id, stored);
      if (stored === Number(total)) {
        sessions.delete(id);
        return void res.writeHead(200, { ...cors, "Content-Type": "application/json" }).end(`{"size":"${stored}"}`);
      }
      res.writeHead(308, { ...cors, Range: `bytes=0-${stored - 1}` }).end();
    });
  });
  server.keepAliveTimeout = 120_000; // fewer connections closed under the browser's feet
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/upload?x=1`, stop: () => server.close() };
}

const mbps = (size, ms) => size / MiB / (ms / 1000);

// The engines, changes, bodies and hashing parts start their own browsers and servers
// (engines.mjs, changes.mjs, bodies.mjs, hashing.mjs, sessions.mjs); alone, they need none
// of the Chromium page below.
if (ONLY === "" || ONLY === "engines") await benchEngines(ENGINE_RUNS);
if (ONLY === "" || ONLY === "changes") await benchChanges();
if (ONLY === "" || ONLY === "bodies") await benchBodies();
if (ONLY === "" || ONLY === "hashing") await benchHashing();
if (ONLY === "" || ONLY === "sessions") benchSessions();
if (ONLY === "" || ONLY === "sessions" || ONLY === "ask") await benchSessionAsk();
if (ONLY === "" || ONLY === "input") await benchInput();
if (["engines", "changes", "bodies", "hashing", "sessions", "ask", "input"].includes(ONLY)) process.exit();

// tls: the reference server serves HTTPS with HTTP/2 beside HTTP (the links part uses both);
// everything else goes to its HTTP origin, as before.
const env = await startAll({ tls: true });
try {
  const goloop = process.env.BENCH_GOLOOP; // built by ./build.sh bench
  if (goloop) {
    env.web.route("/wasm_exec.js", (req, res) => {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(process.env.BENCH_WASM_EXEC));
    });
    env.web.route("/goloop.wasm", (req, res) => {
      res.writeHead(200, { "Content-Type": "application/wasm" }).end(readFileSync(goloop));
      return true;
    });
  }
  const linkScripts = prepareLinks(env);
  env.web.page("/bench.html", `<!doctype html><script>${CAPTURE_MEMORY}</script>${linkScripts}
    <script type="module">
      import { load } from "/dist/mediaupload.js";
      (${BLOBS})(); (${PAGE_CODE})();
      window.mu = await load(${process.env.BENCH_PAGE_MODE ? "{ worker: false }" : ""});
      window.ready = true;
    </script>`);
  const page = await env.openPage("/bench.html");
  await page.waitForFunction(() => window.ready, null, { timeout: 60000 });
  const sink = await startSink();
  const url = () => sink.url;
  if (ONLY === "" || ONLY === "loopback") console.log(
    `throughput over loopback to a sink that keeps nothing, headless Chromium: ${RUNS} rounds of plain fetch, ` +
      `module, one whole PUT${goloop ? " and the Go floor (the plain loop in Go, no module)" : ""} back to back; ` +
      `a ratio is the median of each round's own ratio (a steadier figure than a ratio of medians: ` +
      `the machine's speed drifts between rounds)`,
  );
  // The module at its defaults against one whole PUT, 256 MiB on loopback.
  if (ONLY === "" || ONLY === "loopback") {
    const size = 256 * MiB;
    await page.evaluate((s) => window.makeBlob(s), size);
    const t = { module: [], whole: [] };
    for (let i = 0; i < RUNS; i++) {
      const order = i % 2 ? ["whole", "module"] : ["module", "whole"];
      for (const name of order) {
        t[name].push(
          name === "whole"
            ? await page.evaluate(([u, s]) => window.plainWhole(u, s), [url(), size])
            : await page.evaluate(([u, s]) => window.viaModule(u, s, undefined), [url(), size]),
        );
      }
    }
    const ratios = t.whole.map((ms, i) => ms / t.module[i]).sort((a, b) => a - b);
    console.log(
      `  defaults (chunkSize "auto"), 256 MiB: module ${mbps(size, median(t.module)).toFixed(0)} MB/s, one whole PUT ` +
        `${mbps(size, median(t.whole)).toFixed(0)} MB/s: ${median(ratios).toFixed(3)} of one whole PUT ` +
        `(target >= 0.9; rounds ${ratios[0].toFixed(2)}-${ratios[ratios.length - 1].toFixed(2)})`,
    );
  }
  // What reading every 308's body costs (the module does, so that DevTools shows no request as
  // cancelled): the plain loop at 256 KiB chunks, the most requests per byte, with and without.
  if (ONLY === "" || ONLY === "loopback" || ONLY === "drain") {
    const size = 32 * MiB, chunk = 256 * 1024;
    await page.evaluate((s) => window.makeBlob(s), size);
    // A round whose upload fails ("Failed to fetch": an unread answer cuts its connection, and
    // now and then the next request meets the cut) is counted, not timed.
    const t = { cut: [], drained: [] }, failed = { cut: 0, drained: 0 };
    for (let i = 0; i < RUNS; i++) {
      const round = {};
      for (const name of i % 2 ? ["drained", "cut"] : ["cut", "drained"]) {
        try {
          round[name] = await page.evaluate(([u, s, c, d]) => window.plainChunked(u, s, c, d), [url(), size, chunk, name === "drained"]);
        } catch {
          failed[name]++;
        }
      }
      if (round.cut && round.drained) for (const name in round) t[name].push(round[name]);
    }
    const ratios = t.cut.map((ms, i) => ms / t.drained[i]);
    const perRequest = (median(t.drained) - median(t.cut)) / (size / chunk);
    console.log(
      `  308 bodies drained vs left unread, plain fetch, 256 KiB chunks, 32 MiB: drained runs at ` +
        `${ratios.length ? median(ratios).toFixed(3) : "?"} of the undrained throughput ` +
        `(${perRequest.toFixed(3)} ms per request, medians); uploads failed: ${failed.cut} of ${RUNS} undrained, ` +
        `${failed.drained} of ${RUNS} drained`,
    );
  }
  for (const { chunk, size } of ONLY === "" || ONLY === "loopback" ? CASES.filter((c) => !process.env.BENCH_CHUNK || c.chunk === Number(process.env.BENCH_CHUNK)) : []) {
    await page.evaluate((s) => window.makeBlob(s), size);
    const t = { plain: [], module: [], whole: [], goloop: [] };
    const runs = {
      plain: () => page.evaluate(([u, s, c]) => window.plainChunked(u, s, c), [url(), size, chunk]),
      module: () => page.evaluate(([u, s, c]) => window.viaModule(u, s, c), [url(), size, chunk]),
      whole: () => page.evaluate(([u, s]) => window.plainWhole(u, s), [url(), size]),
      goloop: () => page.evaluate(([u, s, c]) => window.goLoop(u, s, c), [url(), size, chunk]),
    };
    for (let i = 0; i < RUNS; i++) {
      // Interleaved, so a slow moment of the machine hits all three alike, and in a
      // rotating order, so that none always follows the same one.
      const order = goloop ? ["plain", "module", "whole", "goloop"] : ["plain", "module", "whole"];
      for (let k = 0; k < i % order.length; k++) order.push(order.shift());
      for (const name of order) t[name].push(await runs[name]());
    }
    const [p, m, w] = [median(t.plain), median(t.module), median(t.whole)].map((ms) => mbps(size, ms));
    const ratios = t.plain.map((ms, i) => ms / t.module[i]).sort((a, b) => a - b);
    const floor = goloop ? median(t.plain.map((ms, i) => ms / t.goloop[i])) : NaN;
    const retries = await page.evaluate(() => { const n = window.retries; window.retries = 0; return n; });
    if (process.env.BENCH_VERBOSE) {
      for (const k of ["plain", "module", "whole"]) console.log(`    ${k}: ${t[k].map((ms) => mbps(size, ms).toFixed(0)).join(" ")} MB/s`);
    }
    const kib = chunk / 1024;
    console.log(
      `  ${kib >= 1024 ? kib / 1024 + " MiB" : kib + " KiB"} chunks, ${size / MiB} MiB: ` +
        `plain fetch ${p.toFixed(0)} MB/s, module ${m.toFixed(0)} MB/s (medians); ratio ${median(ratios).toFixed(3)} ` +
        `(budget >= 0.95; rounds ${ratios[0].toFixed(2)}-${ratios[ratios.length - 1].toFixed(2)}` +
        `${retries ? `; the module retried ${retries} lost requests` : ""}); ` +
        `${goloop ? `Go floor ${floor.toFixed(3)} of plain; ` : ""}` +
        `one whole PUT ${w.toFixed(0)} MB/s: plain ${(p / w).toFixed(2)}x, module ${(m / w).toFixed(2)}x of it`,
    );
  }
  // A stream against a Blob of the same size, both at the defaults (docs/api.md, "Streams").
  if (ONLY === "" || ONLY === "streams") {
    const size = 256 * MiB;
    await page.evaluate((s) => window.makeBlob(s), size);
    const t = { blob: [], stream: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const name of i % 2 ? ["stream", "blob"] : ["blob", "stream"]) {
        t[name].push(
          name === "blob"
            ? await page.evaluate(([u, s]) => window.viaModule(u, s, undefined), [url(), size])
            : await page.evaluate(([u, s]) => window.viaModuleStream(u, s), [url(), size]),
        );
      }
    }
    const ratios = t.blob.map((ms, i) => ms / t.stream[i]);
    console.log(
      `  a ReadableStream (1 MiB pieces) against a Blob, 256 MiB, defaults: stream ${mbps(size, median(t.stream)).toFixed(0)} MB/s, ` +
        `Blob ${mbps(size, median(t.blob)).toFixed(0)} MB/s: ${median(ratios).toFixed(3)} of the Blob's throughput`,
    );
  }
  if (ONLY === "" || ONLY === "links") {
    await benchLinks(env, page, LINK_RUNS);
    await benchLinkEngines(LINK_ENGINE_RUNS);
  }
  if (ONLY === "" || ONLY === "files") await benchFiles(env, FILES_RUNS);
  if (ONLY === "" || ONLY === "busy") await benchBusy(env, sink.url, BUSY_RUNS);
  if (ONLY === "") {
    const size = 16 * MiB, chunk = 256 * 1024, g = { plain: [], module: [] };
    await page.evaluate((s) => window.makeBlob(s), size);
    for (let i = 0; i < RUNS; i++) {
      await page.evaluate(() => window.chunkGaps());
      await page.evaluate(([u, s, c]) => window.plainChunked(u, s, c), [url(), size, chunk]);
      g.plain.push(await page.evaluate(() => window.chunkGaps()));
      await page.evaluate(([u, s, c]) => window.viaModule(u, s, c), [url(), size, chunk]);
      g.module.push(await page.evaluate(() => window.chunkGaps()));
    }
    const [p, m] = [median(g.plain), median(g.module)];
    console.log(
      `client time per chunk (answer to next request, 256 KiB chunks): plain fetch ${p.toFixed(2)} ms, ` +
        `module ${m.toFixed(2)} ms: the module's own cost is ${(m - p).toFixed(2)} ms per chunk`,
    );
  }
  const GiB = 1024 * MiB;
  if (ONLY === "") {
    await page.evaluate((s) => window.makeBlob(s), GiB);
    const before = await page.evaluate(() => window.wasmMemory());
    const ms = await page.evaluate(([u, s, c]) => window.viaModule(u, s, c), [env.ref.uploadURL("bench-1gib", { http: true }), GiB, 8 * MiB]);
    const after = await page.evaluate(() => window.wasmMemory());
    console.log(
      `memory: 1 GiB Blob uploaded in 8 MiB chunks (${mbps(GiB, ms).toFixed(0)} MB/s); ` +
        `WebAssembly memory ${(before / MiB).toFixed(1)} MiB before, ${(after / MiB).toFixed(1)} MiB after (budget < 32 MiB)`,
    );
  }
  await env.ref.reset();
  sink.stop();
} finally {
  await env.close();
}
