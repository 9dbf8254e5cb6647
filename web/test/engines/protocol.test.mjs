// The protocol in every engine (Chromium, Firefox, WebKit: ../browsers.mjs), against the
// reference server: loading, resumable uploads at "auto" and in fixed chunks with getHeaders,
// extra headers and a checksum, media and multipart, a typed Blob's Content-Type, the
// protocol's 308 read with and without X-GUploader-No-308, faults, pause/resume/abort, and
// redirects that must never carry the file or a token elsewhere. Where the engines differ
// (docs/protocol.md section 6), each test says what it expects of which engine.
// Run: node --test web/test/engines/protocol.test.mjs   (MEDIAUPLOAD_ENGINES=firefox for one)

import assert from "node:assert/strict";
import { CHUNK, MiB, forEachEngine, useEnv } from "../harness.mjs";

// Short waits, so that retries take milliseconds.
const FAST_RETRY = { retries: 3, initialDelayMs: 20, maxDelayMs: 100, jitterMs: 0 };

forEachEngine((engine) => {
  let env, ref, page;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
  }, { engine, timeout: 90_000 });

  // T.run(T.blob(size, seed), options) in the shared page, with options.headers and a
  // getHeaders giving `token` where asked.
  const run = (size, seed, options, { token } = {}) =>
    page.evaluate(
      ({ size, seed, options, token }) =>
        T.run(T.blob(size, seed), token ? { ...options, getHeaders: async () => ({ Authorization: "Bearer " + token }) } : options),
      { size, seed, options, token },
    );
  const requests = async () => (await ref.log()).filter((e) => e.kind !== "preflight");
  const stored = async (name, size, seed) => assert.deepEqual(await env.checkStored(name, size, seed), [], `stored object ${name}`);
  const ok = (out) => assert.ok(out.ok, `upload failed: ${JSON.stringify(out.error)}`);
  const retries = (out) => out.events.filter((e) => e.type === "retry");

  test("loads as an ES module and as a classic script, and uploads from each", async () => {
    const name = unique("esm");
    const out = await run(300_000, 1, { url: ref.uploadURL(name), uploadType: "media" });
    ok(out);
    await stored(name, 300_000, 1);

    env.web.page(
      "/test/classic.html",
      `<!doctype html><meta charset="utf-8"><script src="/test/errors.js"></script>
       <script src="/dist/mediaupload.classic.js"></script>`,
    );
    const classic = await env.openPage("/test/classic.html");
    try {
      const cname = unique("classic");
      const r = await classic.evaluate(async (url) => {
        const mu = await window.MediaUpload.load();
        const res = await mu.upload(new Blob([new Uint8Array(700_000).fill(7)]), { url, chunkSize: 262144 });
        return { version: mu.version, status: res.status, isError: new window.MediaUpload.MediaUploadError("aborted", "x") instanceof Error };
      }, ref.uploadURL(cname));
      assert.equal(r.status, 201, "created");
      assert.ok(r.isError);
      assert.equal((await ref.object(cname))?.size, "700000");
      assert.deepEqual(await classic.errors(), []);
    } finally {
      await classic.close();
    }
  });

  test('resumable at "auto" with getHeaders, extra headers and both checksums: byte-exact, no retry', async () => {
    const name = unique("auto");
    const size = 6 * MiB + 12345;
    // (maxChunkSize: on loopback, after the page's earlier uploads, one chunk would take it all.)
    const out = await run(size, 2, { url: ref.uploadURL(name), headers: { "X-Extra": "e" }, checksum: "both", maxChunkSize: 4 * MiB }, { token: "t-auto" });
    ok(out);
    assert.deepEqual(retries(out), [], "no retry on a clean link");
    await stored(name, size, 2);
    const log = await requests();
    const chunks = log.filter((e) => e.kind === "chunk");
    assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
    assert.ok(log.every((e) => e.authorization === "Bearer t-auto"), "every request carries the token");
    assert.equal(log.filter((e) => e.kind === "query").length, 0, "no status query on a clean link");
  });

  test("fixed chunks with getHeaders and crc32c: every chunk answered, none retried", async () => {
    const name = unique("fixed");
    const size = 5 * CHUNK + 99;
    const out = await run(size, 3, { url: ref.uploadURL(name), chunkSize: CHUNK, checksum: "crc32c" }, { token: "t-fixed" });
    ok(out);
    await stored(name, size, 3);
    const log = await requests();
    assert.deepEqual(
      log.filter((e) => e.kind === "chunk").map((e) => e.contentRange),
      [0, 1, 2, 3, 4, 5].map((i) => `bytes ${i * CHUNK}-${Math.min(size, (i + 1) * CHUNK) - 1}/${size}`),
    );
    assert.deepEqual(retries(out), []);
  });

  test("media and multipart", async () => {
    for (const uploadType of ["media", "multipart"]) {
      const name = unique(uploadType);
      const out = await run(200_003, 4, {
        url: ref.uploadURL(name),
        uploadType,
        ...(uploadType === "multipart" ? { metadata: { name, contentType: "application/x-test" } } : {}),
      });
      ok(out);
      await stored(name, 200_003, 4);
      assert.deepEqual((await requests()).map((e) => e.kind), [uploadType]);
      await ref.clearLog();
    }
  });

  // A typed Blob sent whole goes as it is, its request's own Content-Type (the option's) over
  // the Blob's type, as the Fetch standard has it; in chunks, each slice carries it too
  // (docs/protocol.md sections 3 and 6).
  test("a typed Blob: every chunk and the stored object carry the contentType option, not the Blob's type", async () => {
    for (const chunkSize of [0, CHUNK]) {
      const name = unique(`typed-${chunkSize}`);
      const out = await page.evaluate(
        ({ url, chunkSize }) => T.run(T.blob(300_007, 5, "image/png"), { url, uploadType: "resumable", chunkSize, contentType: "text/csv" }),
        { url: ref.uploadURL(name), chunkSize },
      );
      ok(out);
      await stored(name, 300_007, 5);
      const chunks = (await requests()).filter((e) => e.kind === "chunk");
      assert.equal(chunks.length, chunkSize ? 2 : 1);
      assert.deepEqual(chunks.map((e) => e.contentType), chunks.map(() => "text/csv"), `chunkSize ${chunkSize}`);
      assert.equal((await ref.object(name)).contentType, "text/csv");
      await ref.clearLog();
    }
  });

  // Without X-GUploader-No-308 the server answers real 308s. Chromium and WebKit hand them over
  // in mode "error"; Firefox rejects them there, so the module learns that (at most one retry,
  // once per page) and then sends chunks in mode "manual" and asks at once with a status query
  // in mode "follow" (docs/protocol.md section 6).
  test("noRedirect308: false reads the real 308 in this engine, with and without extra headers", async () => {
    const shows = [];
    for (const [i, extra] of [{}, { headers: { "X-Extra": "e" } }, { token: "t308" }].entries()) {
      const name = unique("real308");
      const size = 4 * CHUNK + 5;
      const out = await run(size, 10 + i, { url: ref.uploadURL(name), chunkSize: CHUNK, noRedirect308: false, ...extra }, { token: extra.token });
      ok(out);
      await stored(name, size, 10 + i);
      const log = await requests();
      await ref.clearLog();
      const kinds = log.map((e) => `${e.kind}:${e.status}`);
      const queries = log.filter((e) => e.kind === "query").length;
      if (engine === "firefox") {
        // After the first upload of the page, each non-final chunk's 308 is hidden and asked
        // about at once: no retry at all.
        if (i > 0) assert.deepEqual(retries(out), [], kinds.join(" "));
        assert.ok(retries(out).length <= 1, kinds.join(" "));
        assert.ok(queries >= 4, `a status query after each hidden 308: ${kinds.join(" ")}`);
      } else {
        assert.deepEqual(retries(out), [], kinds.join(" "));
        assert.equal(queries, 0, `the 308s are read as they come: ${kinds.join(" ")}`);
        assert.deepEqual(log.filter((e) => e.kind === "chunk").map((e) => e.status), [308, 308, 308, 308, 201]);
      }
      shows.push(kinds.join(" "));
    }
    // What this engine showed, for the log of the run.
    console.log(`# ${env.engineVersion}: noRedirect308 false: ${shows.join(" | ")}`);
  });

  test("faults: 503, a closed connection, a partial keep and a lost session are survived", async () => {
    const size = 6 * CHUNK;
    for (const [i, rule] of [
      { on: "chunk", action: "status", status: 503, times: 1, skip: 1 },
      { on: "chunk", action: "close", afterBytes: 100_000, times: 1, skip: 2 },
      { on: "chunk", action: "keep", keep: 1000, times: 1, skip: 1 },
      { on: "chunk", action: "expire", times: 1, skip: 2 },
    ].entries()) {
      await ref.setFaults([rule]);
      const name = unique(rule.action);
      const out = await run(size, 20 + i, { url: ref.uploadURL(name), chunkSize: CHUNK, retry: FAST_RETRY });
      ok(out);
      await stored(name, size, 20 + i);
      const log = await requests();
      assert.ok(log.some((e) => e.fault), `the fault fired: ${rule.action}`);
      if (rule.action === "expire") {
        assert.ok(out.events.some((e) => e.type === "retry" && e.restart), "a lost session restarts");
        assert.equal(log.filter((e) => e.kind === "start").length, 2);
      }
      if (rule.action === "keep") assert.deepEqual(retries(out), [], "a short Range is no failure");
      await ref.clearFaults();
      await ref.clearLog();
    }
  });

  test("pause, resume and abort change state at once", async () => {
    await ref.config({ link: { bitsPerSecond: 40_000_000, rttMs: 10 } }); // 5 MB/s: 3 MiB takes ~0.6 s
    const name = unique("pause");
    const r = await page.evaluate(async ({ url, url2 }) => {
      const mu = await T.load();
      const up = mu.upload(T.blob(3 * 1024 * 1024, 30), { url, chunkSize: 262144 });
      const seen = [];
      await T.until(() => up.state === "uploading", 10000, "uploading");
      up.pause();
      seen.push(up.state);
      await T.sleep(300);
      seen.push(up.state);
      up.resume();
      seen.push(up.state);
      const res = await up;
      const up2 = mu.upload(T.blob(3 * 1024 * 1024, 31), { url: url2, chunkSize: 262144 });
      await T.until(() => up2.state === "uploading", 10000, "uploading");
      up2.abort();
      seen.push(up2.state);
      const err = await up2.then(() => null, (e) => e.code);
      return { seen, status: res.status, err };
    }, { url: ref.uploadURL(name), url2: ref.uploadURL(unique("abort")) });
    assert.deepEqual(r.seen, ["paused", "paused", "uploading", "aborted"]);
    assert.equal(r.status, 201);
    assert.equal(r.err, "aborted");
    await stored(name, 3 * MiB, 30);
  });

  // A 308 *with* a Location is a redirect: in no engine may it carry the file, or a token, or
  // a caller's header, to where it points; the upload ends at once with protocol_error.
  test("a redirect never carries the file or a token elsewhere", async () => {
    for (const [i, to] of [ref.altURL, ""].entries()) {
      for (const noRedirect308 of [true, false]) {
        await ref.setFaults([{ on: "chunk", action: "redirect", to, times: -1 }]);
        const name = unique("redirect");
        const t0 = Date.now();
        const out = await run(3 * CHUNK, 40 + i, { url: ref.uploadURL(name), chunkSize: CHUNK, noRedirect308, headers: { "X-Extra": "secret" }, retry: FAST_RETRY }, { token: "secret-token" });
        const what = `${to ? "to another origin" : "to the same origin"}, noRedirect308 ${noRedirect308}`;
        assert.equal(out.ok, false, what);
        const log = await ref.log();
        const there = log.filter((e) => e.path.startsWith("/redirected"));
        for (const e of there) {
          assert.ok(e.kind === "preflight" || e.contentLength <= 0, `${what}: bytes of the file reached the redirect's target: ${JSON.stringify(e)}`);
          if (to) assert.equal(e.authorization, "", `${what}: the token reached another origin`);
        }
        // With the no-308 header, a 3xx is a redirect for sure: reported at once.
        if (noRedirect308) assert.equal(out.error.code, "protocol_error", `${what}: ${out.error.message}`);
        console.log(`# ${env.engineVersion}: redirect ${what}: ${out.error.code} after ${Date.now() - t0} ms, ${there.length} requests at the target`);
        await ref.clearFaults();
        await ref.clearLog();
      }
    }
  });

  // A page that holds its thread while a request's answer arrives (a page busy rendering): the
  // time its timer was held is not counted against the request's bound, so the answer that came
  // meanwhile is taken (web/js/src/engine/host.js, HELD_MS). Before, Chromium and Firefox ran
  // the late timer first and gave the answered request up as stalled (the helper's repro: 935
  // of 1,000 files stored and reported network_error, in WebKit). On the page (worker: false):
  // the page cannot hold the module's Worker. The answer comes 400 ms after the request left,
  // within the 600 ms bound, so the test does not hang on when the engine lets the request
  // leave (Firefox on a busy machine sent it only after the hold, and with an answer slower
  // than the bound, the bound given back once could not cover it); without the time given
  // back, the late timer gives the request up before its answer is taken, and requests shows it.
  test("a thread held while the answer comes: the answer is taken, not a stall", async () => {
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 400 } });
    const p = await env.openPage();
    try {
      const out = await p.evaluate(async (url) => {
        const mu = await T.load({ worker: false });
        const requests = [];
        const up = mu.upload(T.blob(30_000, 9), { url, uploadType: "media", stallTimeoutMs: 600, retry: { retries: 2, initialDelayMs: 20, jitterMs: 0 }, onRequest: (r) => requests.push(r.error ?? r.status) });
        await T.sleep(100); // the request is on its way: its answer comes 400 ms after it left
        const end = performance.now() + 1500;
        while (performance.now() < end); // the page's thread held past the bound and the answer
        return { result: await up.then((r) => r.status, (e) => e.code), requests };
      }, ref.uploadURL(unique("held")));
      assert.deepEqual(out, { result: 200, requests: [200] });
    } finally {
      await p.close();
      await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    }
  });
});
