// The host's hashing for checksums (web/js/src/engine/hash.js), in Node, whose Blob reads as a
// browser's does: every way of feeding it gives Cloud Storage's CRC32C and MD5 of the bytes
// (against Node's MD5 and the tests' own CRC-32C), a failed read fails the sums, stop() ends it.
// The browsers run it in every engine through the uploads of engines/checksum.test.mjs.
// Run: node --test web/test/hash.test.mjs

import assert from "node:assert/strict";
import { test } from "node:test";
import { Hashing, STEP } from "../js/src/engine/hash.js";
import { crc32cBase64, md5Base64, pseudoRandomBytes } from "./harness.mjs";

const MiB = 1 << 20;

test("a Blob read whole, each size around the steps", async () => {
  for (const size of [0, 1, 1000, STEP - 1, STEP, STEP + 1, 2 * STEP + 17, 5 * STEP + 3]) {
    const bytes = pseudoRandomBytes(size, size);
    for (const kinds of [["crc32c"], ["md5"], ["crc32c", "md5"]]) {
      const h = new Hashing(kinds);
      h.readBlob(new Blob([bytes]));
      const sums = await h.sum(size);
      h.stop();
      assert.equal(sums.crc32c, kinds.includes("crc32c") ? crc32cBase64(bytes) : "", `crc32c of ${size} bytes`);
      assert.equal(sums.md5, kinds.includes("md5") ? md5Base64(bytes) : "", `md5 of ${size} bytes`);
    }
  }
});

test("bytes added in order (a stream's), in pieces of any size; the sums asked before the bytes are there", async () => {
  const bytes = pseudoRandomBytes(3 * MiB + 5, 9);
  const h = new Hashing(["crc32c", "md5"]);
  const early = h.sum(bytes.length); // asked first: answered once every byte is hashed
  for (let at = 0; at < bytes.length; ) {
    const n = Math.min(bytes.length - at, 1 + ((at * 7919) % 300_000));
    h.add(bytes.subarray(at, at + n));
    at += n;
  }
  assert.deepEqual(await early, { crc32c: crc32cBase64(bytes), md5: md5Base64(bytes) });
  assert.deepEqual(await h.sum(bytes.length), await early, "asked again: the same sums");
  await assert.rejects(h.sum(bytes.length - 1), /taken at/, "sums of another length, once taken: an error");
  h.stop();
});

test("a read that fails fails the sums; stop() ends a hashing under way", async () => {
  const h = new Hashing(["crc32c"]);
  const blob = new Blob([new Uint8Array(3 * STEP)]);
  h.readBlob(blob, (start) => (start >= STEP ? Promise.reject(new Error("NotReadableError: gone")) : blob.slice(start, start + STEP).arrayBuffer()));
  await assert.rejects(h.sum(blob.size), /gone/);
  assert.match(String(h.error), /gone/);

  // A stream's bytes, as a promise of them (host.js, pull): one that rejects fails the sums.
  const a = new Hashing(["crc32c"]);
  await a.add(new Uint8Array(10));
  const failed = Promise.reject(new Error("NotReadableError: a stream's bytes"));
  failed.catch(() => {});
  await a.add(failed);
  a.add(new Uint8Array(10)); // after the failure: not hashed
  await assert.rejects(a.sum(20), /a stream's bytes/);
  a.stop();

  const s = new Hashing(["md5"]);
  s.readBlob(new Blob([new Uint8Array(64 * MiB)]));
  const sum = s.sum(64 * MiB);
  s.stop();
  await assert.rejects(sum, /ended/);
});
