// HTTPS and HTTP/2 in every engine (issue "Slow links"): the reference server over TLS with a
// certificate made at its start (web/cmd/refserver -tls), which each engine trusts for the test
// only (../browsers.mjs). A page on the (HTTP) page origin uploads through the module to the
// https origin, byte-exact, and the server's log says which HTTP version the engine chose. Then
// whether the engine sends a fetch body that is a ReadableStream (duplex: "half"), over HTTP/2
// and over HTTP/1.1: detected as a page detects it, and tried.
// Run: node --test web/test/engines/h2.test.mjs   (MEDIAUPLOAD_ENGINES=firefox for one)

import assert from "node:assert/strict";
import { MiB, forEachEngine, pseudoRandomBytes, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env, ref, page;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
  }, { engine, tls: true, timeout: 90_000 });

  const requests = async () => (await ref.log()).filter((e) => e.kind !== "preflight");

  test("the module uploads over HTTPS, byte-exact, and the engine speaks HTTP/2 there", async () => {
    assert.match(ref.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const resumable = unique("h2-resumable");
    const size = 2 * MiB + 333;
    const out = await page.evaluate(
      ({ url, size }) => T.run(T.blob(size, 71), { url, chunkSize: 1024 * 1024 }),
      { url: ref.uploadURL(resumable), size },
    );
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.ok(out.sessionURL.startsWith(ref.url + "/"), `session URI ${out.sessionURL} on ${ref.url}`);
    assert.deepEqual(await env.checkStored(resumable, size, 71), []);
    const media = unique("h2-media");
    const m = await page.evaluate(({ url }) => T.run(T.blob(100_000, 72), { url, uploadType: "media" }), { url: ref.uploadURL(media) });
    assert.ok(m.ok, JSON.stringify(m.error));
    assert.deepEqual(await env.checkStored(media, 100_000, 72), []);

    const log = await ref.log();
    const protos = [...new Set(log.map((e) => e.proto))];
    const uploads = log.filter((e) => e.kind !== "preflight");
    console.log(
      `# ${env.engineVersion}: HTTPS to the reference server over ${protos.join(", ")}: ` +
        `${uploads.length} requests (${uploads.map((e) => e.kind).join(", ")}), ${log.length - uploads.length} preflights`,
    );
    assert.equal(uploads.length, 5, "start, three chunks, one media");
    // All three engines here negotiate h2 by ALPN (Chromium and Firefox natively, WebKitGTK
    // through libsoup 3): the HTTP/2 benches and tests rely on it.
    assert.deepEqual(protos, ["HTTP/2.0"]);
    // (A browser's own 404 for the page origin's favicon is not the page's error.)
    assert.deepEqual((await page.errors()).filter((e) => !/^Failed to load resource/.test(e)), [], "the page's errors");
  });

  // A page detects request streams by whether Request reads `duplex` and leaves the body
  // untyped (a stream it cannot send becomes the text "[object ReadableStream]", typed
  // text/plain). What the engine then does with one, over HTTP/2 (https) and HTTP/1.1 (http),
  // is recorded; the test holds the engine to what the detection said, and to never storing
  // other bytes than the stream's.
  test("a ReadableStream request body: detected, and sent or refused as detected", async () => {
    const size = 300_000;
    const want = pseudoRandomBytes(size, 73);
    const tried = {};
    for (const version of ["HTTP/2", "HTTP/1.1"]) {
      await ref.clearLog();
      const name = unique("stream-body");
      const r = await page.evaluate(
        async ({ url, size }) => {
          const out = { detected: T.streamBodies() };
          const start = await fetch(url + "&uploadType=resumable", { method: "POST", headers: { "X-Upload-Content-Length": String(size) } });
          const session = start.headers.get("Location");
          const bytes = T.bytes(size, 73);
          let at = 0;
          const body = new ReadableStream({
            pull(c) {
              if (at >= size) return c.close();
              c.enqueue(bytes.slice(at, at + 65536)); // several pieces, as a counted stream gives them
              at += 65536;
            },
          });
          try {
            const res = await fetch(session, { method: "PUT", body, duplex: "half", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` } });
            out.status = res.status;
            out.answer = res.status >= 400 ? (await res.json()).error?.message : "";
          } catch (e) {
            out.threw = `${e.name}: ${e.message}`;
          }
          return out;
        },
        { url: ref.uploadURL(name, { http: version === "HTTP/1.1" }), size },
      );
      const chunk = (await requests()).find((e) => e.kind === "chunk");
      const obj = await ref.object(name);
      r.stored = obj ? (await env.checkObject(name, want)).length === 0 ? "the stream's bytes" : "other bytes" : "nothing";
      r.sent = chunk ? `${chunk.proto}, Content-Length ${chunk.contentLength === -1 ? "none (streamed)" : chunk.contentLength}` : "no request";
      tried[version] = r;
      console.log(
        `# ${env.engineVersion}: ReadableStream body over ${version}: detected ${r.detected ? "supported" : "unsupported"}; ` +
          `${r.threw ? `fetch threw ${r.threw}` : `answered ${r.status}${r.answer ? ` (${r.answer})` : ""}`}; sent: ${r.sent}; stored: ${r.stored}`,
      );
      assert.notEqual(r.stored, "other bytes", "a stream body must never store other bytes than the stream's");
    }
    // Over HTTP/2, detection tells the truth: supported means the stream's bytes arrive,
    // streamed (no Content-Length), and are stored.
    const h2 = tried["HTTP/2"];
    assert.equal(h2.stored === "the stream's bytes", h2.detected, `over HTTP/2: detected ${h2.detected}, stored ${h2.stored}`);
    if (h2.detected) assert.match(h2.sent, /^HTTP\/2\.0, Content-Length none/);
    // Detection cannot see the HTTP version: an engine that streams only over HTTP/2
    // (Chromium) says "supported" over HTTP/1.1 as well, and there fails the fetch before
    // sending anything. A page must fall back to a Blob body when such a fetch fails.
    const h1 = tried["HTTP/1.1"];
    assert.equal(h1.detected, h2.detected, "the detection is the same whatever the server");
    if (h1.detected && h1.stored !== "the stream's bytes") {
      assert.match(h1.threw ?? "", /^TypeError/, "a stream the engine cannot send over HTTP/1.1 fails as a network error");
      assert.equal(h1.sent, "no request");
    }
  });
});
