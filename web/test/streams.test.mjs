// Browser tests of uploads from a ReadableStream (docs/api.md, "Streams"; docs/protocol.md section 3:
// chunks say "bytes a-b/*" until the one that meets the stream's end states the total).
// Streams of every awkward size and piece size, with and without a checksum, on the reference
// server and on fake-gcs-server; faults mid-stream; pause, abort and a stream that errors;
// bad combinations; a 1 GiB generated stream whose memory stays bounded; a MediaRecorder
// recording uploaded while it is made.

import assert from "node:assert/strict";
import { CHUNK, md5Base64, MiB, pseudoRandomBytes, startServe, useEnv } from "./harness.mjs";


let env, ref, page;

// Page code: a ReadableStream of pseudoRandomBytes(size, seed) in pieces of the sizes `cut`
// gives (a function of the piece's index, or a number), counting what the consumer pulled and
// whether it cancelled.
const STREAM_CODE = () => {
  window.S = {
    make(size, seed, cut, stats = {}) {
      const bytes = T.bytes(size, seed);
      let at = 0;
      let i = 0;
      stats.pulled = 0;
      stats.cancelled = null;
      return new ReadableStream({
        pull(c) {
          if (at >= size) return c.close();
          const n = Math.max(1, Math.min(typeof cut === "function" ? cut(i++) : cut, size - at));
          c.enqueue(bytes.subarray(at, at + n));
          at += n;
          stats.pulled = at;
        },
        cancel(reason) {
          stats.cancelled = String(reason?.message ?? reason);
        },
      }, { highWaterMark: 0 });
    },
    // A generator of random piece sizes from 1 byte to 3 MiB, seeded.
    pieces(seed) {
      let x = seed >>> 0 || 1;
      return () => {
        x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
        // Small pieces are common, large ones rare: 1 B .. 3 MiB, log-uniform.
        return Math.max(1, Math.floor(Math.exp((x / 2 ** 32) * Math.log(3 * 1024 * 1024))));
      };
    },
  };
};

const { test, unique } = useEnv(async (e) => {
  env = e;
  ({ ref } = env);
  page = await env.openPage();
  await page.evaluate(STREAM_CODE);
}, { timeout: 120_000 });

// Uploads a stream of `size` bytes (seed) cut by `cut`, with options; returns the outcome and
// the Content-Range of every request the server saw.
async function upload(name, size, seed, cut, options = {}) {
  await ref.clearLog();
  const out = await page.evaluate(
    async ({ url, size, seed, cut, options }) => {
      const cutFn = typeof cut === "string" ? S.pieces(Number(cut.slice(7))) : cut;
      const stats = {};
      const r = await T.run(S.make(size, seed, cutFn, stats), { url, ...options });
      const progress = r.events.filter((e) => e.type === "progress");
      return { ...r, stats, progress };
    },
    { url: ref.uploadURL(name), size, seed, cut, options },
  );
  const ranges = (await ref.log())
    .filter((e) => e.method === "PUT")
    .map((e) => e.contentRange ?? e.headers?.["content-range"] ?? "");
  return { ...out, ranges };
}

for (const checksum of [undefined, "both"]) {
  const label = checksum ? `, checksum ${checksum}` : "";
  test(`streams of 0 B, 1 B, 3 × 256 KiB, odd sizes and random pieces land byte-exact${label}`, async () => {
    const cases = [
      { size: 0, cut: 1000 },
      { size: 1, cut: 1 },
      { size: 3 * CHUNK, cut: CHUNK },
      { size: 3 * CHUNK, cut: 100_000 },
      { size: CHUNK + 17, cut: 4096, chunkSize: CHUNK },
      { size: 5 * MiB + 3, cut: "random:7" },
      { size: 9 * MiB + 12345, cut: "random:11", chunkSize: 2 * CHUNK },
    ];
    for (const [i, c] of cases.entries()) {
      const name = unique("st");
      const seed = 100 + i;
      const opts = { checksum, ...(c.chunkSize ? { chunkSize: c.chunkSize } : {}) };
      const r = await upload(name, c.size, seed, c.cut, opts);
      assert.ok(r.ok, `${c.size} B: ${JSON.stringify(r.error)}`);
      assert.deepEqual(await env.checkStored(name, c.size, seed), [], `${c.size} B cut ${c.cut}`);
      // Every chunk but the last says "/*"; the last states the total (docs/protocol.md section 3).
      const ranges = r.ranges.filter((x) => x);
      assert.match(ranges.at(-1), new RegExp(`/${c.size}$`), `last Content-Range of ${c.size} B: ${ranges}`);
      for (const x of ranges.slice(0, -1)) assert.match(x, /\/\*$/, `a non-final Content-Range of ${c.size} B: ${ranges}`);
      if (c.size === 0) assert.deepEqual(ranges, ["bytes */0"]);
      // Until the end is read the total is unknown; the last progress event knows it.
      const last = r.progress.at(-1);
      assert.equal(last.loaded, c.size);
      if (c.size > 0) assert.equal(last.total, c.size);
      // A stream sent in more than one chunk of bytes reports progress before its end, of
      // unknown total (one chunk of all of it and the empty final request show none).
      // (At "auto" the first chunk is sized from the link the page measured: on loopback it
      // may take all of a small stream.)
      if (ranges.filter((x) => !x.startsWith("bytes */")).length > 1) {
        const early = r.progress.find((e) => e.loaded > 0 && e.loaded < c.size);
        assert.ok(early, `progress before the end of ${c.size} B`);
        assert.equal(early.lengthComputable, false, "the total is not known before the end");
        assert.equal(early.total, 0);
      }
    }
  });
}

test("faults mid-stream (5xx, dropped connection, partial keep, 404 early): byte-exact", async () => {
  const cases = [
    [{ on: "chunk", action: "status", status: 503, times: 2, skip: 1 }],
    [{ on: "chunk", action: "close", afterBytes: 100_000, times: 2, skip: 2 }],
    [{ on: "chunk", action: "keep", keep: 12345, times: 1, skip: 1 }, { on: "chunk", action: "keep", keep: 0, times: 1, skip: 3 }],
    // Lost before the server confirmed anything: every byte is still kept, so it starts over.
    [{ on: "chunk", action: "expire", times: 1 }],
  ];
  for (const [i, rules] of cases.entries()) {
    await ref.reset();
    await ref.setFaults(rules);
    const name = unique("sf");
    const size = 2 * MiB + 999;
    const r = await upload(name, size, 300 + i, "random:3", { chunkSize: CHUNK, retry: { baseDelayMs: 50, maxDelayMs: 200 } });
    assert.ok(r.ok, `${JSON.stringify(rules)}: ${JSON.stringify(r.error)}`);
    assert.deepEqual(await env.checkStored(name, size, 300 + i), [], JSON.stringify(rules));
  }
});

test("a session lost after the server confirmed part of a stream: session_expired says why", async () => {
  await ref.setFaults([{ on: "chunk", action: "expire", times: 1, skip: 2 }]);
  const r = await upload(unique("sx"), 2 * MiB, 9, CHUNK, { chunkSize: CHUNK });
  assert.equal(r.ok, false);
  assert.equal(r.error.code, "session_expired");
  assert.match(r.error.message, /no longer kept/);
  assert.ok(r.stats.cancelled !== null, "the stream was cancelled");
});

test("pause stops reading the stream, resume goes on; abort cancels it; an erroring stream is source_error", async () => {
  const name = unique("sp");
  const size = 8 * CHUNK;
  const out = await page.evaluate(async ({ url, size }) => {
    const mu = await T.load();
    const stats = {};
    const up = mu.upload(S.make(size, 5, 65536, stats), { url, chunkSize: 262144 });
    await T.until(() => stats.pulled >= 262144, 20_000, "some reading");
    up.pause();
    await T.until(() => up.state === "paused", 5000, "paused");
    await T.sleep(300);
    const pulledAtPause = stats.pulled;
    await T.sleep(700);
    const pulledLater = stats.pulled;
    up.resume();
    await up;

    // Abort: the producer's cancel() is called.
    const s2 = {};
    const up2 = mu.upload(S.make(size, 6, 65536, s2), { url: url + "-abort", chunkSize: 262144 });
    await T.until(() => s2.pulled >= 262144, 20_000, "some reading");
    up2.abort();
    const aborted = await up2.then(() => null, (e) => T.errorData(e));
    await T.until(() => s2.cancelled !== null, 5000, "the stream cancelled");

    // A stream that errors, and one that gives strings.
    let n = 0;
    const bad = new ReadableStream({
      pull(c) {
        if (n++ < 3) c.enqueue(new Uint8Array(100_000));
        else c.error(new Error("the camera went away"));
      },
    });
    const errored = await T.run(bad, { url: url + "-err", chunkSize: 262144 });
    const strings = await T.run(new Blob(["abc"]).stream().pipeThrough(new TextDecoderStream()), { url: url + "-str" });
    return { pulledAtPause, pulledLater, aborted, cancelled: s2.cancelled, errored: errored.error, strings: strings.error };
  }, { url: ref.uploadURL(name), size });
  assert.equal(out.pulledLater, out.pulledAtPause, "nothing was read while paused");
  assert.ok(out.pulledAtPause < size, "the pause held the stream before its end");
  assert.deepEqual(await env.checkStored(name, size, 5), []);
  assert.equal(out.aborted?.code, "aborted");
  assert.ok(out.cancelled !== null, "abort cancelled the stream");
  assert.equal(out.errored?.code, "source_error", JSON.stringify(out.errored));
  assert.match(out.errored.message, /camera went away/);
  assert.equal(out.errored.cause?.message, "the camera went away");
  assert.equal(out.strings?.code, "source_error", JSON.stringify(out.strings));
  assert.match(out.strings.message, /not bytes/);
});

test("a stream with media, multipart, resume: true, chunkSize 0 or locked is invalid_argument, before any request", async () => {
  const out = await page.evaluate(async (url) => {
    const results = [];
    for (const opts of [{ uploadType: "media" }, { uploadType: "multipart", metadata: { name: "x" } }, { resume: true }, { chunkSize: 0 }]) {
      results.push((await T.run(S.make(10, 1, 5), { url, ...opts })).error?.code);
    }
    const locked = S.make(10, 1, 5);
    locked.getReader();
    results.push((await T.run(locked, { url })).error?.code);
    return results;
  }, ref.uploadURL(unique("sbad")));
  assert.deepEqual(out, Array(5).fill("invalid_argument"));
  assert.deepEqual((await ref.log()).filter((e) => e.method !== "OPTIONS"), [], "no request");
});

test("streams land byte-exact on fake-gcs-server", async () => {
  const serve = await startServe();
  try {
    const p = await env.browser.newPage(serve.url + "/");
    const names = [unique("g0"), unique("g1"), unique("g2")];
    const sizes = [0, 3 * CHUNK, 3 * MiB + 77];
    const out = await p.evaluate(
      async ({ base, names, sizes, gen }) => {
        const make = new Function(`return (${gen})`)();
        const { load } = await import("/dist/mediaupload.js");
        const mu = await load();
        const results = [];
        for (let i = 0; i < names.length; i++) {
          const bytes = make(sizes[i], 700 + i);
          let at = 0;
          const stream = new ReadableStream({
            pull(c) {
              if (at >= bytes.length) return c.close();
              const n = Math.min(77777, bytes.length - at);
              c.enqueue(bytes.slice(at, at + n));
              at += n;
            },
          });
          const url = `${base}/upload/storage/v1/b/demo/o?name=${names[i]}`;
          try {
            await mu.upload(stream, { url, chunkSize: 262144, checksum: i === 2 ? "crc32c" : undefined });
            results.push("ok");
          } catch (e) {
            results.push(`${e.code}: ${e.message}`);
          }
        }
        return results;
      },
      { base: serve.url, names, sizes, gen: pseudoRandomBytes.toString().replace(/^function \w+/, "function") },
    ).catch((e) => [String(e)]);
    assert.deepEqual(out, ["ok", "ok", "ok"]);
    for (let i = 0; i < names.length; i++) {
      const o = await (await fetch(`${serve.url}/storage/v1/b/demo/o/${names[i]}`)).json();
      assert.equal(String(o.size), String(sizes[i]), `${names[i]} size`);
      assert.equal(o.md5Hash, md5Base64(pseudoRandomBytes(sizes[i], 700 + i)), `${names[i]} md5`);
    }
    await p.close();
  } finally {
    await serve.stop();
  }
});

test("a 1 GiB generated stream: the page holds about two chunks, whatever the length (printed)", async () => {
  const name = unique("big");
  const PIECE = 1 << 20;
  const PIECES = 1024; // 1 GiB
  const MAX_CHUNK = 8 * MiB;
  const p = await env.openPage();
  // The Go module's memory, caught as it is instantiated (this page loads the module anew).
  await p.evaluate(() => {
    const keep = (r) => ((window.__wasmMemory = (r.instance ?? r).exports.mem), r);
    const [inst, stream] = [WebAssembly.instantiate, WebAssembly.instantiateStreaming];
    WebAssembly.instantiate = (...a) => inst(...a).then(keep);
    WebAssembly.instantiateStreaming = (...a) => stream(...a).then(keep);
  });
  const cdp = await p.context().newCDPSession(p);
  const samples = [];
  // Each sample is taken twice: as it is (garbage included: V8 collects dropped ArrayBuffers
  // on its own schedule) and after a collection (what the page still holds).
  const sample = async () => {
    const raw = (await cdp.send("Runtime.getHeapUsage"));
    await cdp.send("HeapProfiler.collectGarbage");
    // JS heap: V8's objects and the ArrayBuffers' backing stores (the stream's pieces).
    const { usedSize, backingStorageSize = 0 } = await cdp.send("Runtime.getHeapUsage");
    const wasm = await p.evaluate(() => window.__wasmMemory?.buffer.byteLength ?? 0);
    const blobs = await env.browser.blobMemory();
    samples.push({ heap: usedSize + backingStorageSize, raw: raw.usedSize + (raw.backingStorageSize ?? 0), wasm, blob: blobs.bytes });
  };
  try {
    await p.evaluate(() => T.load());
    await sample();
    const base = samples[0];
    let running = true;
    const sampler = (async () => {
      while (running) {
        await sample();
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const t0 = Date.now();
    const out = await p.evaluate(
      async ({ url, PIECE, PIECES, MAX_CHUNK }) => {
        const mu = await T.load();
        const template = T.bytes(PIECE, 4242);
        let i = 0;
        // Every piece is a new array, as a real producer's: piece i is the template with i in
        // its first four bytes.
        const stream = new ReadableStream({
          pull(c) {
            if (i === PIECES) return c.close();
            const piece = template.slice();
            new DataView(piece.buffer).setUint32(0, i++);
            c.enqueue(piece);
          },
        }, { highWaterMark: 0 });
        try {
          await mu.upload(stream, { url, maxChunkSize: MAX_CHUNK });
          return "ok";
        } catch (e) {
          return `${e.code}: ${e.message}`;
        }
      },
      { url: ref.uploadURL(name), PIECE, PIECES, MAX_CHUNK },
    );
    running = false;
    await sampler;
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(out, "ok");
    // What was stored: its size and md5, computed here piece by piece.
    const { createHash } = await import("node:crypto");
    const md5 = createHash("md5");
    const template = Buffer.from(pseudoRandomBytes(PIECE, 4242));
    for (let i = 0; i < PIECES; i++) {
      template.writeUInt32BE(i, 0);
      md5.update(template);
    }
    const obj = await ref.object(name);
    assert.equal(obj?.size, String(PIECE * PIECES));
    assert.equal(obj?.md5Hash, md5.digest("base64"));
    await ref.deleteObject(name);
    const peak = (k) => Math.max(...samples.map((s) => s[k])) - base[k];
    const mb = (n) => (n / 1e6).toFixed(1);
    const total = Math.max(...samples.map((s) => s.heap + s.wasm - base.heap - base.wasm));
    // The chunks' Blobs (each a copy of its pieces, in the browser's blob store) go when V8
    // collects them, which it does on its own schedule: after a collection they are gone.
    await env.browser.collectGarbage(p);
    const blobAfter = (await env.browser.blobMemory()).bytes - base.blob;
    console.log(
      `# 1 GiB stream, chunkSize "auto" up to ${MAX_CHUNK / MiB} MiB: ${seconds.toFixed(1)} s ` +
        `(${mb((PIECE * PIECES) / seconds)} MB/s), ${samples.length} samples; peak growth over the start: ` +
        `JS heap with its ArrayBuffers ${mb(peak("heap"))} MB held (${mb(peak("raw"))} MB with garbage), wasm memory ${mb(peak("wasm"))} MB, together ` +
        `${mb(total)} MB (two chunks: ${mb(2 * MAX_CHUNK)} MB); the Blob store ${mb(peak("blob"))} MB at its peak, ` +
        `${mb(blobAfter)} MB after a collection`,
    );
    // About two chunks plus a constant: a stream kept whole would be 1 GiB.
    assert.ok(total < 2 * MAX_CHUNK + 64 * MiB, `the page's JS heap and wasm memory grew by ${mb(total)} MB`);
    // Chromium keeps up to ~200 MB of recently sent request bodies whoever made them (a plain
    // fetch loop too: memory.test.mjs); what matters is that it does not grow with the stream.
    assert.ok(blobAfter < 256 * MiB, `the Blob store holds ${mb(blobAfter)} MB after a collection`);
  } finally {
    await cdp.detach().catch(() => {});
    await p.close();
  }
}, 300_000);

test("a MediaRecorder recording uploaded while it is made: done within seconds of stop(), a WebM that is whole", async () => {
  const name = unique("rec");
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    // A canvas animated by the page, recorded as WebM: what a screen or camera recorder gives.
    const canvas = Object.assign(document.createElement("canvas"), { width: 320, height: 240 });
    document.body.append(canvas);
    const g = canvas.getContext("2d");
    let frame = 0;
    // Noise, so that the encoder has plenty to say (a few hundred KB a second).
    const noise = g.createImageData(320, 240);
    const draw = setInterval(() => {
      for (let i = 0; i < noise.data.length; i += 65536) crypto.getRandomValues(noise.data.subarray(i, i + 65536));
      for (let i = 3; i < noise.data.length; i += 4) noise.data[i] = 255;
      g.putImageData(noise, 0, 0);
      g.fillText(`frame ${frame++}`, 20, 120);
    }, 33);
    const rec = new MediaRecorder(canvas.captureStream(30), { mimeType: "video/webm", videoBitsPerSecond: 4_000_000 });
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    let recorded = 0;
    let writes = Promise.resolve();
    rec.ondataavailable = (e) => {
      writes = writes.then(async () => {
        const bytes = new Uint8Array(await e.data.arrayBuffer());
        recorded += bytes.byteLength;
        await writer.write(bytes);
      });
    };
    const stopped = new Promise((r) => (rec.onstop = () => writes.then(() => writer.close()).then(r)));
    const up = mu.upload(readable, { url, contentType: "video/webm", chunkSize: 262144 });
    let sentWhileRecording = 0;
    up.addEventListener("progress", (e) => {
      if (rec.state === "recording") sentWhileRecording = e.loaded;
    });
    rec.start(200);
    await T.sleep(3000);
    const stopAt = performance.now();
    rec.stop();
    await stopped;
    clearInterval(draw);
    await up;
    return { recorded, sentWhileRecording, afterStopMs: performance.now() - stopAt };
  }, ref.uploadURL(name));
  const stored = await ref.download(name);
  console.log(
    `# MediaRecorder: ${out.recorded} bytes recorded in 3 s, ${out.sentWhileRecording} of them sent while recording; ` +
      `the upload ended ${out.afterStopMs.toFixed(0)} ms after stop()`,
  );
  assert.equal(stored.length, out.recorded, "every recorded byte is stored");
  assert.deepEqual([...stored.subarray(0, 4)], [0x1a, 0x45, 0xdf, 0xa3], "an EBML (WebM) header");
  assert.ok(out.sentWhileRecording > 0, "the upload went on while recording");
  assert.ok(out.afterStopMs < 5000, `the upload ended ${out.afterStopMs} ms after stop()`);
});

test("a File changed on disk during its upload fails with source_error, not network_error after every retry", async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-file-"));
  const path = join(dir, "clip.bin");
  writeFileSync(path, pseudoRandomBytes(4 * MiB, 77));
  // A slow link, so that the file changes while chunks are still to go.
  await ref.config({ link: { bitsPerSecond: 8_000_000, rttMs: 0 } });
  const p = await env.openPage();
  try {
    await p.evaluate(() => document.body.append(Object.assign(document.createElement("input"), { type: "file", id: "f" })));
    await p.setInputFiles("#f", path);
    await p.evaluate((url) => {
      const file = document.getElementById("f").files[0];
      window.moved = false;
      window.result = T.run(file, { url, chunkSize: 262144 }, {
        onStart: (up) => up.addEventListener("progress", (e) => (window.moved ||= e.loaded > 0)),
      });
    }, ref.uploadURL(unique("changed")));
    await p.waitForFunction(() => window.moved, null, { timeout: 30_000 });
    writeFileSync(path, pseudoRandomBytes(3 * MiB, 78)); // changed: another size, another time
    const t0 = Date.now();
    const r = await p.evaluate(() => window.result);
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(r.ok, false);
    assert.equal(r.error.code, "source_error", JSON.stringify(r.error));
    assert.equal(r.events.filter((e) => e.type === "retry").length, 0, "no retry");
    assert.ok(seconds < 15, `failed ${seconds} s after the change`);
  } finally {
    await p.close();
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    rmSync(dir, { recursive: true, force: true });
  }
});
