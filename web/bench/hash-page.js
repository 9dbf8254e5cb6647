// The page's (and its Worker's) half of the checksum bench (hashing.mjs), bundled by esbuild
// at the bench's start: how fast each engine hands a Blob's or File's bytes to script, read
// each way, and how fast the module's own hashing (web/js/src/engine/hash.js) goes against
// hash-wasm's over the same bytes read the same way. Each function resolves to MB/s (10^6).
//
// In a Worker (this file is its module too), messages { fn, args } are answered with
// { ok, value } or { ok: false, error }.

import { createCRC32, createMD5 } from "hash-wasm";
import { Hashing, STEP } from "../js/src/engine/hash.js";

const MB = (bytes, ms) => Math.round(bytes / 1e3 / ms);

// Reads blob whole, `step` bytes at a time with the next read in flight, handing each piece to use.
async function inSlices(blob, step, use) {
  const size = blob.size;
  let next = blob.slice(0, Math.min(step, size)).arrayBuffer();
  for (let at = 0; at < size; ) {
    const buf = await next;
    at += buf.byteLength;
    next = at < size ? blob.slice(at, Math.min(at + step, size)).arrayBuffer() : null;
    use(new Uint8Array(buf));
  }
}

async function viaStream(blob, use) {
  const r = blob.stream().getReader();
  for (;;) {
    const { done, value } = await r.read();
    if (done) return;
    use(value);
  }
}

function viaFileReader(blob, step, use) {
  return (async () => {
    for (let at = 0; at < blob.size; at += step) {
      const buf = await new Promise((resolve, reject) => {
        const fr = new FileReader();
        fr.onload = () => resolve(fr.result);
        fr.onerror = () => reject(fr.error);
        fr.readAsArrayBuffer(blob.slice(at, at + step));
      });
      use(new Uint8Array(buf));
    }
  })();
}

async function timed(blob, f) {
  let n = 0;
  const t0 = performance.now();
  await f((b) => (n += b.byteLength));
  const ms = performance.now() - t0;
  if (n !== blob.size) throw new Error(`read ${n} bytes of ${blob.size}`);
  return MB(n, ms);
}

/** MB/s of reading blob each way: stream(), arrayBuffer() of slices (two in flight), FileReader, FileReaderSync (Workers). */
export async function reads(blob) {
  const out = {};
  out.stream = await timed(blob, (use) => viaStream(blob, use));
  for (const mib of [1, 8, 16]) out[`slices ${mib} MiB`] = await timed(blob, (use) => inSlices(blob, mib << 20, use));
  out["FileReader 8 MiB"] = await timed(blob, (use) => viaFileReader(blob, 8 << 20, use));
  if (typeof FileReaderSync === "function") {
    out["FileReaderSync 8 MiB"] = await timed(blob, async (use) => {
      const fr = new FileReaderSync();
      for (let at = 0; at < blob.size; at += 8 << 20) use(new Uint8Array(fr.readAsArrayBuffer(blob.slice(at, at + (8 << 20)))));
    });
  }
  return out;
}

/**
 * MB/s of hashing blob whole: the module's (Hashing: slices of STEP bytes, the next read in
 * flight while one is hashed) and hash-wasm's own, over stream() and over the module's reads.
 */
export async function hashes(blob) {
  const out = {};
  for (const kind of ["crc32c", "md5"]) {
    let t0 = performance.now();
    const h = new Hashing([kind]);
    h.readBlob(blob);
    await h.sum(blob.size);
    h.stop();
    out[`module ${kind}`] = MB(blob.size, performance.now() - t0);
    const hw = kind === "crc32c" ? await createCRC32(0x82f63b78) : await createMD5();
    hw.init();
    t0 = performance.now();
    await viaStream(blob, (b) => hw.update(b));
    hw.digest();
    out[`hash-wasm ${kind}, stream()`] = MB(blob.size, performance.now() - t0);
    hw.init();
    t0 = performance.now();
    await inSlices(blob, STEP, (b) => hw.update(b));
    hw.digest();
    out[`hash-wasm ${kind}, slices`] = MB(blob.size, performance.now() - t0);
  }
  return out;
}

const FNS = { reads, hashes };

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  self.onmessage = async ({ data: { fn, args } }) => {
    try {
      self.postMessage({ ok: true, value: await FNS[fn](...args) });
    } catch (err) {
      self.postMessage({ ok: false, error: String(err?.message ?? err) });
    }
  };
} else {
  /** Runs FNS[fn](...args) in a new module Worker of this script (a Blob or File crosses by clone). */
  const inWorker = (url, fn, ...args) =>
    new Promise((resolve, reject) => {
      const w = new Worker(url, { type: "module" });
      w.onmessage = ({ data }) => {
        w.terminate();
        data.ok ? resolve(data.value) : reject(new Error(data.error));
      };
      w.onerror = (e) => {
        w.terminate();
        reject(new Error(`the bench's Worker failed: ${e.message}`));
      };
      w.postMessage({ fn, args });
    });
  window.hashBench = { ...FNS, inWorker };
}
