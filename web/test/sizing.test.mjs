// chunkSize "auto", the default (issue 9), in Chromium against the reference server: chunks
// start small, grow with the link, stay multiples of 256 KiB, respect maxChunkSize, and the
// bytes land exactly. Timings are not asserted (the benchmark prints them); the chunk sizes
// the server saw are. Run: node --test web/test/sizing.test.mjs (dist/ built).

import assert from "node:assert/strict";
import { CHUNK, MiB, useEnv } from "./harness.mjs";

let env, ref, page;
const { test } = useEnv(async (e) => {
  env = e;
  ({ ref } = env);
  page = await env.openPage();
}, { timeout: 120_000 });

async function upload(name, size, seed, options = {}) {
  const out = await page.evaluate(({ url, size, seed, options }) => T.run(T.blob(size, seed), { url, ...options }), {
    url: ref.uploadURL(name), size, seed, options,
  });
  assert.ok(out.ok, JSON.stringify(out.error));
  assert.deepEqual(await env.checkStored(name, size, seed), [], `stored ${name}`);
  const log = (await ref.log()).filter((e) => e.kind === "chunk");
  const sizes = log.map((e) => {
    const m = /^bytes (\d+)-(\d+)\//.exec(e.contentRange);
    return m ? Number(m[2]) - Number(m[1]) + 1 : 0;
  });
  return { out, sizes };
}

function assertAligned(sizes) {
  for (const s of sizes.slice(0, -1)) assert.equal(s % CHUNK, 0, `a chunk of ${s} bytes before the last: ${sizes}`);
}

test("default chunks over an emulated 20 Mbit/s, 60 ms link: small first, then growing", async () => {
  await ref.config({ link: { bitsPerSecond: 20_000_000, rttMs: 60 } });
  const size = 6 * MiB + 12345;
  const { out, sizes } = await upload("auto-link.bin", size, 1);
  assertAligned(sizes);
  assert.equal(sizes[0], CHUNK, `the first chunk is 256 KiB, for a report at once: ${sizes}`);
  assert.ok(sizes.length >= 3, `several chunks, for progress on a slow link: ${sizes}`);
  assert.ok(Math.max(...sizes) > CHUNK, `the chunks grow: ${sizes}`);
  assert.ok(Math.max(...sizes) <= 8 * MiB, `no chunk of many seconds on a 20 Mbit/s link: ${sizes}`);
  const progress = out.events.filter((e) => e.type === "progress");
  assert.ok(progress.length >= sizes.length, "a progress report per chunk");
});

test("default chunks on loopback: a few large requests, not hundreds", async () => {
  const size = 64 * MiB;
  const { sizes } = await upload("auto-loopback.bin", size, 2);
  assertAligned(sizes);
  assert.ok(sizes.length <= 8, `${sizes.length} chunks for 64 MiB on loopback: ${sizes}`);
});

test('chunkSize "auto" with maxChunkSize: no chunk over it', async () => {
  const { sizes } = await upload("auto-max.bin", 5 * MiB, 3, { chunkSize: "auto", maxChunkSize: 2 * CHUNK });
  assertAligned(sizes);
  assert.ok(sizes.every((s) => s <= 2 * CHUNK), `sizes ${sizes}`);
  assert.ok(sizes.length >= 10);
});

test("a number keeps fixed chunks, 0 one PUT; a bad maxChunkSize fails before any request", async () => {
  const fixed = await upload("fixed.bin", 3 * CHUNK + 5, 4, { chunkSize: CHUNK });
  assert.deepEqual(fixed.sizes, [CHUNK, CHUNK, CHUNK, 5]);
  await ref.reset();
  const one = await upload("one.bin", 3 * CHUNK + 5, 5, { chunkSize: 0, uploadType: "resumable" });
  assert.deepEqual(one.sizes, [3 * CHUNK + 5]);
  await ref.reset();
  const bad = await page.evaluate((url) => T.run(T.blob(10, 6), { url, maxChunkSize: 1000 }), ref.uploadURL("bad.bin"));
  assert.equal(bad.error?.code, "invalid_argument");
  assert.match(bad.error.message, /maxChunkSize/);
  assert.equal((await ref.log()).filter((e) => e.kind !== "preflight").length, 0);
});
