// What the module says when something is wrong, in every engine: each message names what
// failed, where, and what to do (docs/api.md, "Errors"). A 403 with Google's JSON error, a
// 404, the two CORS configurations done by half (Location not exposed, Range not exposed), a
// strict Content-Security-Policy, and a final answer cut off on its way with a checksum asked.
// A hidden Range is found after two chunks.
// Run: node --test web/test/engines/messages.test.mjs

import assert from "node:assert/strict";
import { CHUNK, forEachEngine, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env, ref, page;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
    // A page whose policy allows its own scripts and nothing else: no 'wasm-unsafe-eval'.
    e.web.route("/csp/", (req, res) => {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "script-src 'self'" });
      res.end(`<!doctype html><meta charset="utf-8"><script src="/test/errors.js"></script><script type="module" src="/test/helpers.js"></script>`);
    });
    // A page whose policy allows WebAssembly and no Worker at all.
    e.web.route("/noworker/", (req, res) => {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "script-src 'self' 'wasm-unsafe-eval'; worker-src 'none'" });
      res.end(`<!doctype html><meta charset="utf-8"><script src="/test/errors.js"></script><script type="module" src="/test/helpers.js"></script>`);
    });
  }, { engine, timeout: 90_000 });

  const run = (size, seed, options) => page.evaluate(({ size, seed, options }) => T.run(T.blob(size, seed), options), { size, seed, options });
  // The MediaUploadError's fields as the page sees them.
  const failed = (out) => {
    assert.equal(out.ok, false, "the upload must fail");
    return out.error;
  };

  test("a 403 with Google's JSON error: the method, the URL, the server's message and reason, as fields too", async () => {
    await ref.setFaults([{ on: "start", action: "status", status: 403, message: "The project exceeded its storage quota.", reason: "quotaExceeded" }]);
    const url = ref.uploadURL(unique("quota"));
    const err = failed(await run(1000, 1, { url, uploadType: "resumable" }));
    assert.equal(err.code, "http_error");
    assert.equal(err.status, 403);
    assert.equal(err.reason, "quotaExceeded");
    assert.equal(err.serverMessage, "The project exceeded its storage quota.");
    for (const want of ["POST", url.split("?")[0], "403 Forbidden", "The project exceeded its storage quota.", "quotaExceeded"]) {
      assert.ok(err.message.includes(want), `"${want}" in: ${err.message}`);
    }
    assert.ok(!err.message.includes("{"), `no raw JSON in: ${err.message}`);
    console.log(`# ${env.engineVersion}: ${err.message}`);
  });

  test("a 404 on a wrong URL: the method and the URL, and to check it", async () => {
    const url = ref.url + "/uplod/storage/v1/b/test/o?name=" + unique("nf"); // a typo in the path
    const err = failed(await run(1000, 2, { url, uploadType: "media" }));
    assert.equal(err.code, "http_error");
    assert.match(err.message, new RegExp(`POST ${url.replace(/[?.]/g, "\\$&")}&uploadType=media with 404 Not Found.*check the URL`));
  });

  test("CORS without Location exposed: a protocol_error that names Access-Control-Expose-Headers and Location", async () => {
    await ref.config({ expose: "Range, X-HTTP-Status-Code-Override" });
    const err = failed(await run(1000, 3, { url: ref.uploadURL(unique("noloc")), uploadType: "resumable" }));
    assert.equal(err.code, "protocol_error");
    assert.match(err.message, /no Location.*CORS configuration hides it.*Access-Control-Expose-Headers/);
    assert.ok(err.message.includes("Location in Access-Control-Expose-Headers"), err.message);
  });

  test("CORS without Range exposed: a protocol_error after two chunks that names Access-Control-Expose-Headers and Range", async () => {
    await ref.config({ expose: "Location, X-HTTP-Status-Code-Override" });
    // The default retries (5): a hidden Range is told apart from a server keeping nothing now
    // and then, and not given a chunk per retry.
    const err = failed(await run(3 * CHUNK, 4, { url: ref.uploadURL(unique("norange")), chunkSize: CHUNK }));
    assert.equal(err.code, "protocol_error");
    assert.match(err.message, /kept none of 2 chunks in a row, its answers showing no Range.*Range in Access-Control-Expose-Headers/);
    const chunks = (await ref.log()).filter((e) => e.kind === "chunk").length;
    assert.equal(chunks, 2, "chunks sent before the upload ended");
  });

  test("CORS without X-HTTP-Status-Code-Override exposed: a protocol_error that names it", async () => {
    await ref.config({ expose: "Location, Range" });
    const err = failed(await run(3 * CHUNK, 5, { url: ref.uploadURL(unique("nooverride")), chunkSize: CHUNK }));
    assert.equal(err.code, "protocol_error");
    assert.match(err.message, /finished the upload before the last byte.*X-HTTP-Status-Code-Override \(and Range\) in Access-Control-Expose-Headers/);
  });

  test("a strict Content-Security-Policy: load() runs the module in its Worker; on the page it rejects with load_error naming 'wasm-unsafe-eval'", async () => {
    const p = await env.openPage("/csp/page.html");
    try {
      await p.waitForFunction(() => window.T);
      const out = await p.evaluate(async (url) => {
        const m = await import(T.dist);
        const e = await m.load({ worker: false }).then(() => null, (e) => e);
        const r = { isMediaUploadError: e instanceof m.MediaUploadError, code: e?.code, message: e?.message, cause: e?.cause?.name };
        const mu = await m.load(); // a failed load is forgotten: the default, in a Worker
        const res = await mu.upload(new Blob([new Uint8Array(1000)]), { url }).then((res) => res.status, (err) => err.code);
        return { ...r, mode: mu.mode, res };
      }, ref.uploadURL(unique("csp")));
      assert.equal(out.isMediaUploadError, true);
      assert.equal(out.code, "load_error");
      assert.equal(out.cause, "CompileError");
      assert.match(out.message, /Content-Security-Policy.*'wasm-unsafe-eval'.*load\(\) without \{ worker: false \}/);
      assert.equal(out.mode, "worker", "the default loads under the same page's policy, in its Worker");
      assert.equal(out.res, 200);
      console.log(`# ${env.engineVersion}: ${out.message}`);
    } finally {
      await p.close();
    }
  });

  test("a policy that forbids Workers: load() runs the module on the page, and worker: true rejects saying why", async () => {
    const p = await env.openPage("/noworker/page.html");
    try {
      await p.waitForFunction(() => window.T);
      const out = await p.evaluate(async (url) => {
        const m = await import(T.dist);
        const e = await m.load({ worker: true }).then(() => null, (e) => e);
        const mu = await m.load();
        const res = await mu.upload(new Blob([new Uint8Array(1000)]), { url }).then((res) => res.status, (err) => err.code);
        return { code: e?.code, message: e?.message, mode: mu.mode, res };
      }, ref.uploadURL(unique("noworker")));
      assert.equal(out.code, "load_error");
      assert.match(out.message, /could not start its Worker.*worker-src/);
      assert.equal(out.mode, "page", "the default falls back to the page");
      assert.equal(out.res, 200);
      console.log(`# ${env.engineVersion}: worker-src 'none': load() on the page; worker: true: ${out.message}`);
    } finally {
      await p.close();
    }
  });

  test("a final answer cut off on its way, with a checksum: the session is asked again, no mismatch", async () => {
    const name = unique("cut");
    const size = 3 * CHUNK + 7;
    await ref.setFaults([{ on: "chunk", action: "cutbody", skip: 3 }]);
    const out = await run(size, 6, { url: ref.uploadURL(name), chunkSize: CHUNK, checksum: "both" });
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.equal(out.result.metadata?.name, name, "the result's metadata is the whole one");
    const log = (await ref.log()).filter((e) => e.kind !== "preflight");
    assert.ok(log.some((e) => e.fault === "cutbody"), "the final answer was cut");
    assert.equal(log.at(-1).kind, "query", "the session was asked for the whole answer");
    assert.deepEqual(await env.checkStored(name, size, 6), []);
  });
});
