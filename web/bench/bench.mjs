// Prints the browser figures of the module's budgets (issue: the browser module):
//   - throughput over loopback in headless Chromium, the module against the same chunked
//     upload done with plain fetch PUTs (8 MiB, 1 MiB and 256 KiB chunks), and both against
//     one fetch PUT of the whole Blob;
//   - the module's WebAssembly memory after uploading a 1 GiB Blob (zero-copy: under 32 MiB).
// Run with ./build.sh bench. It prints figures; it asserts nothing (timings flake).
import { startAll, MiB } from "../test/harness.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CASES = [
  { chunk: 8 * MiB, size: 256 * MiB },
  { chunk: 1 * MiB, size: 128 * MiB },
  { chunk: 256 * 1024, size: 32 * MiB },
];

// Runs in the page: the plain-fetch baseline (a minimal resumable client with no retries),
// the whole-Blob PUT, and the module, each timed.
const PAGE_CODE = () => {
  const blobs = new Map();
  window.makeBlob = (size) => {
    if (blobs.has(size)) return;
    const block = new Uint8Array(1 << 20);
    crypto.getRandomValues(block.subarray(0, 65536));
    for (let i = 65536; i < block.length; i += 65536) block.copyWithin(i, 0, 65536);
    const parts = [];
    for (let n = 0; n < size; n += block.length) parts.push(block.subarray(0, Math.min(block.length, size - n)));
    blobs.set(size, new Blob(parts));
  };
  async function start(url, size) {
    const r = await fetch(url + "&uploadType=resumable", {
      method: "POST",
      headers: { "X-Upload-Content-Type": "application/octet-stream", "X-Upload-Content-Length": String(size) },
    });
    if (r.status !== 200) throw new Error("start: " + r.status);
    return r.headers.get("Location");
  }
  // The same chunked upload as the module's, by hand: PUT each slice, go on from Range.
  window.plainChunked = async (url, size, chunk) => {
    const blob = blobs.get(size);
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
      off = Number(r.headers.get("Range").split("-")[1]) + 1;
    }
    return performance.now() - t0;
  };
  window.plainWhole = async (url, size) => {
    const blob = blobs.get(size);
    const t0 = performance.now();
    const session = await start(url, size);
    const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` }, body: blob });
    if (r.status !== 200 && r.status !== 201) throw new Error("whole: " + r.status);
    return performance.now() - t0;
  };
  window.viaModule = async (url, size, chunk) => {
    const blob = blobs.get(size);
    const t0 = performance.now();
    await window.mu.upload(blob, { url, chunkSize: chunk });
    return performance.now() - t0;
  };
  window.wasmMemory = () => window.__wasmMemory?.buffer.byteLength ?? -1;
};

// Captures the module's memory: Go's wasm exports it as "mem".
const CAPTURE_MEMORY = `
  for (const name of ["instantiate", "instantiateStreaming"]) {
    const orig = WebAssembly[name];
    WebAssembly[name] = async (...args) => {
      const r = await orig.apply(WebAssembly, args);
      window.__wasmMemory = (r.instance ?? r).exports.mem;
      return r;
    };
  }`;

const mbps = (size, ms) => size / MiB / (ms / 1000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const env = await startAll();
try {
  env.web.page("/bench.html", `<!doctype html><script>${CAPTURE_MEMORY}</script>
    <script type="module">
      import { load } from "/dist/mediaupload.js";
      (${PAGE_CODE})();
      window.mu = await load();
      window.ready = true;
    </script>`);
  const page = await env.openPage("/bench.html");
  await page.waitForFunction(() => window.ready, null, { timeout: 60000 });
  let n = 0;
  const url = () => env.ref.uploadURL(`bench-${n++}`);
  console.log(`throughput over loopback, headless Chromium, median of ${RUNS} runs`);
  for (const { chunk, size } of CASES) {
    await page.evaluate((s) => window.makeBlob(s), size);
    const t = { plain: [], module: [], whole: [] };
    for (let i = 0; i < RUNS; i++) {
      // Interleaved, so a slow moment of the machine hits all three alike.
      t.plain.push(await page.evaluate(([u, s, c]) => window.plainChunked(u, s, c), [url(), size, chunk]));
      t.module.push(await page.evaluate(([u, s, c]) => window.viaModule(u, s, c), [url(), size, chunk]));
      t.whole.push(await page.evaluate(([u, s]) => window.plainWhole(u, s), [url(), size]));
      await env.ref.reset();
    }
    const [p, m, w] = [median(t.plain), median(t.module), median(t.whole)].map((ms) => mbps(size, ms));
    const kib = chunk / 1024;
    console.log(
      `  ${kib >= 1024 ? kib / 1024 + " MiB" : kib + " KiB"} chunks, ${size / MiB} MiB: ` +
        `plain fetch ${p.toFixed(0)} MB/s, module ${m.toFixed(0)} MB/s, ratio ${(m / p).toFixed(3)} ` +
        `(budget >= 0.95); one whole PUT ${w.toFixed(0)} MB/s: plain ${(p / w).toFixed(2)}x, module ${(m / w).toFixed(2)}x of it`,
    );
  }
  const GiB = 1024 * MiB;
  await page.evaluate((s) => window.makeBlob(s), GiB);
  const before = await page.evaluate(() => window.wasmMemory());
  const ms = await page.evaluate(([u, s, c]) => window.viaModule(u, s, c), [url(), GiB, 8 * MiB]);
  const after = await page.evaluate(() => window.wasmMemory());
  console.log(
    `memory: 1 GiB Blob uploaded in 8 MiB chunks (${mbps(GiB, ms).toFixed(0)} MB/s); ` +
      `WebAssembly memory ${(before / MiB).toFixed(1)} MiB before, ${(after / MiB).toFixed(1)} MiB after (budget < 32 MiB)`,
  );
  await env.ref.reset();
} finally {
  await env.close();
}
