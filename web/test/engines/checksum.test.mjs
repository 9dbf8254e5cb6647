// Checksums in every engine (docs/protocol.md section 9), against the reference server: a
// default upload to a Cloud Storage URL states a correct CRC32C (resumable and media in
// X-Goog-Hash, multipart in its metadata), hashed by the host beside the upload; other URLs
// get none; a byte changed on the way makes the server refuse the last request, which is
// checksum_mismatch (and without a checksum the changed object is stored, which is what the
// default guards against); md5 and both; a stream whose bytes cannot be read for the hash ends
// in source_error, never a hang; a File from disk hashed in worker and in page mode; a queue
// hashes its next files while the ones before them upload (hashed ahead), in worker and in page
// mode, and not at all with checksum: false.
// Run: node --test web/test/engines/checksum.test.mjs   (MEDIAUPLOAD_ENGINES=webkit for one)

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHUNK, MiB, crc32cBase64 as crc32c, forEachEngine, pseudoRandomBytes, useEnv } from "../harness.mjs";

const FAST_RETRY = { retries: 2, initialDelayMs: 20, maxDelayMs: 100, jitterMs: 0 };

const md5 = (bytes) => createHash("md5").update(bytes).digest("base64");

forEachEngine((engine) => {
  let env, ref, page;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
  }, { engine, timeout: 120_000 });

  const run = (size, seed, options) => page.evaluate(({ size, seed, options }) => T.run(T.blob(size, seed), options), { size, seed, options });
  const ok = (out) => assert.ok(out.ok, `upload failed: ${JSON.stringify(out.error)}`);
  const requests = async () => (await ref.log()).filter((e) => e.kind !== "preflight");

  test("a default upload to a Cloud Storage URL states a correct CRC32C: resumable and media in X-Goog-Hash, multipart in its metadata", async () => {
    const size = 3 * MiB + 17;
    const want = crc32c(pseudoRandomBytes(size, 71));
    const name = unique("resumable");
    ok(await run(size, 71, { url: ref.uploadURL(name), chunkSize: 4 * CHUNK }));
    const chunks = (await requests()).filter((e) => e.kind === "chunk");
    assert.equal(chunks.at(-1).googHash, `crc32c=${want}`, "the last chunk states the file's crc32c");
    assert.deepEqual(chunks.slice(0, -1).map((e) => e.googHash).filter(Boolean), [], "no other chunk states a hash");
    assert.equal((await ref.object(name)).crc32c, want);
    assert.deepEqual(await env.checkStored(name, size, 71), []);

    await ref.clearLog();
    const small = unique("media");
    ok(await run(100_000, 72, { url: ref.uploadURL(small) }));
    const [media] = await requests();
    assert.equal(media.kind, "media");
    assert.equal(media.googHash, `crc32c=${crc32c(pseudoRandomBytes(100_000, 72))}`);

    const multi = unique("multipart");
    ok(await run(50_000, 73, { url: ref.uploadURL(multi), metadata: { name: multi, contentLanguage: "en" } }));
    const sent = (await ref.object(multi)).metadataJSON;
    const stated = typeof sent === "string" ? JSON.parse(sent) : sent;
    assert.equal(stated.crc32c, crc32c(pseudoRandomBytes(50_000, 73)), "the metadata as sent states the crc32c");
    assert.equal(stated.contentLanguage, "en", "the caller's metadata kept");

    // Not Cloud Storage (Drive's upload path): no hash, and no header a preflight would meet.
    await ref.clearLog();
    ok(await run(3 * CHUNK, 74, { url: ref.uploadURL(unique("drive"), { path: "/upload/drive/v3/files" }), chunkSize: CHUNK }));
    assert.deepEqual((await requests()).map((e) => e.googHash).filter(Boolean), [], "no X-Goog-Hash elsewhere");
  });

  test("a byte changed on the way: the server refuses the last request, and the upload fails with checksum_mismatch", async () => {
    // A chunk's middle byte changes on its way in (the reference server's corrupt fault).
    await ref.setFaults([{ on: "chunk", action: "corrupt" }]);
    const name = unique("corrupt");
    const out = await run(3 * CHUNK + 5, 75, { url: ref.uploadURL(name), chunkSize: CHUNK, retry: FAST_RETRY });
    assert.ok(!out.ok, "the upload failed");
    assert.equal(out.error.code, "checksum_mismatch", JSON.stringify(out.error));
    assert.equal(out.error.status, 400);
    assert.match(out.error.message, /crc32c.*differs from the file's.*upload the file again/s);
    assert.match(out.error.serverMessage, /doesn't match calculated CRC32C/);
    assert.equal(await ref.object(name), undefined, "nothing stored");
    assert.equal((await requests()).filter((e) => e.status === 400).length, 1, "refused once, never retried");

    // The same in one request (media), and with md5 asked for by name.
    await ref.setFaults([{ on: "media", action: "corrupt" }]);
    const one = await run(200_000, 76, { url: ref.uploadURL(unique("corrupt-media")), uploadType: "media", checksum: "md5", retry: FAST_RETRY });
    assert.equal(one.error?.code, "checksum_mismatch", JSON.stringify(one.error));

    // Without a checksum the server cannot tell: the changed object is stored.
    await ref.setFaults([{ on: "chunk", action: "corrupt" }]);
    const bare = unique("corrupt-bare");
    ok(await run(3 * CHUNK + 5, 75, { url: ref.uploadURL(bare), chunkSize: CHUNK, checksum: false }));
    assert.notDeepEqual(await env.checkStored(bare, 3 * CHUNK + 5, 75), [], "stored with the changed byte");
  });

  test("md5 and both, by name: stated, and compared with the final metadata", async () => {
    for (const checksum of ["md5", "both"]) {
      await ref.clearLog();
      const size = 2 * MiB + 3;
      const bytes = pseudoRandomBytes(size, 77);
      const out = await run(size, 77, { url: ref.uploadURL(unique(checksum)), chunkSize: 2 * CHUNK, checksum });
      ok(out);
      const last = (await requests()).filter((e) => e.kind === "chunk").at(-1);
      assert.equal(last.googHash, checksum === "md5" ? `md5=${md5(bytes)}` : `crc32c=${crc32c(bytes)},md5=${md5(bytes)}`);
    }
  });

  // A stream's bytes are hashed as they are read, before the next read may let them go
  // (host.js, pull). A read of them that fails, at once or later, is the source's failure: the
  // upload ends in source_error, and never waits for ever for a hash. The read is made to fail
  // where the module runs (read-faults.js: in its Worker through the test's worker script), the
  // second read, which is the last (two pulls: the chunk, then the 5 bytes and the end).
  for (const mode of ["worker", "page"]) {
    for (const how of ["throw", "reject"]) {
      test(`a stream whose bytes cannot be read for the checksum (the read ${how === "throw" ? "throws at once" : "rejects"}, ${mode} mode): source_error, no hang`, async () => {
        const name = unique(`unreadable-${how}`);
        const p = await env.openPage();
        try {
          const out = await p.evaluate(async ({ url, worker, how }) => {
            if (worker) await T.loadHooked();
            else await T.load({ worker: false });
            await T.failReads(how, 1);
            const bytes = T.bytes(262144 + 5, 79);
            const stream = new ReadableStream({
              start(c) {
                c.enqueue(bytes.slice(0, 100_000));
                c.enqueue(bytes.slice(100_000));
                c.close();
              },
            });
            const t0 = performance.now();
            const run = T.run(stream, { url, chunkSize: 262144, checksum: "crc32c" });
            const r = await Promise.race([run, T.sleep(20_000).then(() => null)]);
            return { mode: (await T.load()).mode, hung: r === null, ms: Math.round(performance.now() - t0), code: r?.error?.code, message: r?.error?.message, cause: r?.error?.cause };
          }, { url: ref.uploadURL(name), worker: mode === "worker", how });
          console.log(`# ${env.engineVersion}, ${mode} mode, the read ${how}s: ${out.hung ? "no end in 20 s" : `${out.code} after ${out.ms} ms: ${out.message}`}`);
          assert.equal(out.mode, mode);
          assert.equal(out.hung, false, "the upload ended");
          assert.equal(out.code, "source_error", out.message);
          assert.match(out.cause?.message ?? "", /the test made read 2 of a Blob fail/, "the read's failure is the cause");
          assert.equal(await ref.object(name), undefined, "nothing stored");
        } finally {
          await p.close();
        }
      });
    }
  }

  test("a File from disk, in worker mode and in page mode: hashed beside the upload, byte-exact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mediaupload-checksum-"));
    const size = 24 * MiB + 99;
    const bytes = pseudoRandomBytes(size, 78);
    const path = join(dir, "disk.bin");
    writeFileSync(path, bytes);
    env.web.page("/test/pick.html", `<!doctype html><meta charset="utf-8"><script src="/test/errors.js"></script><input type="file" id="pick">`);
    try {
      for (const worker of [true, false]) {
        const p = await env.openPage("/test/pick.html");
        try {
          await p.setInputFiles("#pick", path);
          const name = unique(worker ? "file-worker" : "file-page");
          const out = await p.evaluate(async ({ url, worker, dist }) => {
            const { load } = await import(dist);
            const mu = await load({ worker });
            const res = await mu.upload(document.getElementById("pick").files[0], { url }).then((r) => ({ status: r.status }), (e) => ({ code: e.code, message: e.message }));
            return { mode: mu.mode, ...res };
          }, { url: ref.uploadURL(name), worker, dist: "/dist/mediaupload.js" });
          assert.equal(out.mode, worker ? "worker" : "page");
          assert.ok(out.status === 200 || out.status === 201, JSON.stringify(out));
          const last = (await requests()).filter((e) => e.kind === "chunk" || e.kind === "media").at(-1);
          assert.equal(last.googHash, `crc32c=${crc32c(bytes)}`);
          assert.deepEqual(await env.checkObject(name, bytes, { download: false }), []);
          await ref.clearLog();
        } finally {
          await p.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A queue, one file at a time, of small files that each go in one media request (whose
  // X-Goog-Hash must come before its bytes): the host reads each file for its hash (a Blob read
  // whole, arrayBuffer) before the file before it has ended, i.e. while that one uploads.
  // Without hashing ahead, file k is read only once the queue starts it, after file k-1's
  // loadend. The link's 50 ms round trip makes each upload last at least that long: the order
  // seen does not hang on how fast this machine is. Reads are timed on the epoch's clock, in
  // the realm where they are made (the Worker's, through its test hooks, or the page's).
  test("a queue hashes its next files while the ones before them upload, in worker and in page mode; with checksum: false, none", async () => {
    await ref.config({ link: { rttMs: 50 } });
    const sizes = [100_001, 100_002, 100_003, 100_004, 100_005, 100_006];
    for (const worker of [true, false]) {
      for (const checksum of [undefined, false]) {
        const p = await env.openPage();
        try {
          const names = sizes.map((_, i) => unique(`ahead-${worker ? "w" : "p"}-${checksum === false ? "none" : "crc"}-${i}`));
          const out = await p.evaluate(async ({ sizes, urls, worker, checksum }) => {
            const now = () => performance.timeOrigin + performance.now();
            let pageReads = [];
            if (worker) await T.loadHooked();
            else {
              const arrayBuffer = Blob.prototype.arrayBuffer;
              Blob.prototype.arrayBuffer = function () {
                pageReads.push([this.size, now()]);
                return arrayBuffer.call(this);
              };
            }
            const mu = await T.load({ worker });
            const q = mu.queue({ concurrency: 1 });
            const ends = [];
            const ups = sizes.map((size, i) => {
              const up = q.add(T.blob(size, 90 + i), { url: urls[i], ...(checksum === false ? { checksum } : {}) });
              up.addEventListener("loadend", () => (ends[i] = now()));
              return up;
            });
            const results = await Promise.allSettled(ups);
            const reads = worker ? (await T.hookedWorker.ask({ t: "test:counts" })).reads : pageReads;
            return { mode: mu.mode, ends, reads, failed: results.filter((r) => r.status === "rejected").map((r) => String(r.reason?.message)) };
          }, { sizes, urls: names.map((n) => ref.uploadURL(n)), worker, checksum });
          const how = `${out.mode} mode, checksum ${checksum ?? "default"}`;
          assert.equal(out.mode, worker ? "worker" : "page");
          assert.deepEqual(out.failed, [], how);
          const media = (await requests()).filter((e) => e.kind === "media");
          assert.equal(media.length, sizes.length, `${how}: each file in one media request`);
          if (checksum === false) {
            assert.deepEqual(out.reads.filter(([size]) => sizes.includes(size)), [], `${how}: no file read for a hash`);
            assert.deepEqual(media.map((e) => e.googHash).filter(Boolean), [], `${how}: no hash stated`);
          } else {
            // Each file read for its hash once, and file k before file k-1 had ended.
            const firstRead = sizes.map((size) => out.reads.find(([s]) => s === size)?.[1]);
            assert.ok(firstRead.every((t) => t !== undefined), `${how}: every file read for its hash: ${JSON.stringify(out.reads)}`);
            for (let k = 1; k < sizes.length; k++) {
              assert.ok(firstRead[k] < out.ends[k - 1], `${how}: file ${k} read for its hash ${(firstRead[k] - out.ends[k - 1]).toFixed(1)} ms after file ${k - 1} ended, not while it uploaded`);
            }
            for (let i = 0; i < sizes.length; i++) {
              assert.equal((await ref.object(names[i])).crc32c, crc32c(pseudoRandomBytes(sizes[i], 90 + i)), `${how}: file ${i}'s crc32c`);
            }
            const stated = media.map((e) => e.googHash);
            assert.ok(stated.every((h) => /^crc32c=/.test(h)), `${how}: each request states its crc32c: ${stated}`);
          }
          for (let i = 0; i < sizes.length; i++) assert.deepEqual(await env.checkStored(names[i], sizes[i], 90 + i), [], `${how}: file ${i} stored`);
          await ref.clearLog();
        } finally {
          await p.close();
        }
      }
    }
  });
});
