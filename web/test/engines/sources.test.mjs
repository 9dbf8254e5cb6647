// Sources in every engine: a ReadableStream of unknown length, and a File picked in the page
// (through a real <input type="file">) that changes on disk while it uploads. Engines show such
// a change differently (web/js/src/engine/file-watch.js): whatever they show, the upload must end in
// source_error within seconds, store nothing, and never hang; with resume: true, its record is
// not listed from then on (and is deleted from the store a moment later).
// Run: node --test web/test/engines/sources.test.mjs

import assert from "node:assert/strict";
import { after } from "node:test";
import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scratchDir } from "../browsers.mjs";
import { MiB, forEachEngine, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env, ref, page, files;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
    files = scratchDir();
  }, { engine, timeout: 90_000 });

  test("a ReadableStream of odd-sized pieces: byte-exact, total told at the end", async () => {
    const name = unique("stream");
    const size = 3 * MiB + 777;
    const out = await page.evaluate(async ({ url, size }) => {
      const bytes = T.bytes(size, 51);
      let at = 0;
      const stream = new ReadableStream({
        pull(c) {
          if (at >= bytes.length) return c.close();
          const n = Math.min(1 + ((at * 7919) % 90_001), bytes.length - at); // odd sizes, some tiny
          c.enqueue(bytes.slice(at, at + n));
          at += n;
        },
      });
      return T.run(stream, { url, contentType: "application/octet-stream" });
    }, { url: ref.uploadURL(name), size });
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.deepEqual(await env.checkStored(name, size, 51), []);
    const progress = out.events.filter((e) => e.type === "progress");
    assert.ok(progress.some((p) => !p.lengthComputable && p.loaded > 0), "progress of unknown total before the end");
    assert.equal(progress.at(-1).total, size);
  });

  // Picked through an <input type="file">, then changed on disk mid-upload (a slow link keeps
  // it going): overwritten with other bytes of the same size, or cut shorter.
  for (const mode of ["page", "worker"]) {
    for (const change of ["overwritten", "shrunk"]) {
      test(`a File ${change} on disk during its upload (${mode} mode): source_error within seconds, nothing stored`, async () => {
        const path = join(files.dir, unique("picked") + ".bin");
        writeFileSync(path, Buffer.alloc(8 * MiB, 1));
        const name = unique("changed");
        const p = await env.openPage();
        try {
          await p.evaluate(() => {
            const input = Object.assign(document.createElement("input"), { type: "file", id: "pick" });
            document.body.append(input);
          });
          await p.setInputFiles("#pick", path);
          await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 20 } }); // 2 MB/s: 8 MiB takes 4 s
          await p.evaluate(async ({ url, worker }) => {
            await T.load(worker ? { worker: true } : undefined);
            window.result = null;
            window.confirmed = 0;
            const file = document.getElementById("pick").files[0];
            // resume: true: the record goes with the upload, and is not listed from the
            // moment the promise rejects (docs/api.md, "What each ending does to the record").
            const listed = async () => (await (await T.load()).unfinished()).some((u) => u.url === url);
            T.run(file, { url, resume: true, chunkSize: 1024 * 1024, onProgress: (q) => (window.confirmed = q.confirmed) })
              .then(async (r) => (window.result = { ...r, listed: await listed() }));
          }, { url: ref.uploadURL(name), worker: mode === "worker" });
          // Changed once the server holds a first chunk of it.
          await p.waitForFunction(() => window.confirmed > 0 || window.result, undefined, { timeout: 30_000 });
          if (change === "overwritten") writeFileSync(path, Buffer.alloc(8 * MiB, 2));
          else truncateSync(path, 3 * MiB);
          const t0 = Date.now();
          const out = await p.waitForFunction(() => window.result, undefined, { timeout: 60_000 });
          const took = Date.now() - t0;
          assert.equal(out.ok, false, "the upload must not succeed");
          assert.equal(out.error.code, "source_error", out.error.message);
          assert.ok(took < 5000, `source_error ${took} ms after the change`);
          assert.equal(await ref.object(name), undefined, "nothing stored");
          assert.equal(out.listed, false, "listed by unfinished() as the promise rejected");
          if (mode === "page" && change === "overwritten") {
            // A source_error is what a page on its way out makes too (WebKit): the record is
            // deleted from the store a moment later, unless the page hides first. It did not.
            await new Promise((r) => setTimeout(r, 800));
            const other = await env.openPage();
            try {
              const url = ref.uploadURL(name);
              assert.equal(await other.evaluate(async (url) => (await (await T.load()).unfinished()).some((u) => u.url === url), url), false, "still in the store");
            } finally {
              await other.close();
            }
          }
          console.log(`# ${env.engineVersion}: File ${change}, ${mode} mode: source_error after ${took} ms: ${out.error.message}`);
        } finally {
          await p.close();
        }
      });
    }
  }

  after(() => files?.remove());
});
