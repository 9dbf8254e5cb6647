// A session asked of the app's backend (docs/api.md, "A session from your backend") in every
// engine, in worker and page mode, against the reference server: the backend is a route of the
// page's origin (POST /api/session) that starts a session on the reference server with the
// page's Origin, or signs a URL for the XML API's resumable start. Uploads whose sessions it
// gives land byte-exact, through its endpoint (the page's cookies go with the POST) and
// through a function of the page's; a session lost mid-upload is replaced by asking again;
// resume: true after a reload asks the backend only when the stored session is gone; a backend
// that fails, stalls, refuses or answers without a session fails the upload with
// backend_error, asked once, with no request to storage and nothing kept; a signed URL starts
// an XML API session from the page, its final answer (no body) reported as it is and its
// CRC32C stated with X-Goog-Hash (a mismatch: checksum_mismatch). fake-gcs-server 1.56.1 (the
// demo's) takes a signed URL's start too: what it does is said where it is tested. The demo's
// own backend (web/cmd/serve's /api/gcs/session: gcs.Handler in front of its fake-gcs-server)
// gives pages of its origin sessions that land byte-exact, named and described as it decides,
// and refuses a bad name with a backend_error that says why. A page that says it is offline
// while its backend cannot be reached waits in "offline" and asks again once online.
// Run: node --test web/test/engines/session.test.mjs   (MEDIAUPLOAD_ENGINES=firefox for one)

import assert from "node:assert/strict";
import { after, before, beforeEach } from "node:test";
import { CHUNK, MiB, crc32cBase64, forEachEngine, md5Base64, pseudoRandomBytes, readBody, startServe, useEnv } from "../harness.mjs";

let serve; // the demo's server, with fake-gcs-server (its signed-URL start)
before(async () => {
  serve = await startServe();
});
after(() => serve?.stop());

// The query of a URL signed for Cloud Storage's XML API's resumable start by V4 signing, now,
// for 15 minutes: every parameter there, well formed (the servers check no signature).
function v4Query(signedHeaders) {
  const date = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  return new URLSearchParams({
    "X-Goog-Algorithm": "GOOG4-RSA-SHA256",
    "X-Goog-Credential": `uploader@app.iam.gserviceaccount.com/${date.slice(0, 8)}/auto/storage/goog4_request`,
    "X-Goog-Date": date,
    "X-Goog-Expires": "900",
    "X-Goog-SignedHeaders": signedHeaders,
    "X-Goog-Signature": "5ca1ab1e".repeat(32),
  }).toString();
}

forEachEngine((engine) => {
  let env, ref, page;
  // The app's backend: what it does (way), and what it was asked ({ body, contentType, cookie, origin }).
  const backend = { way: "session", calls: [] };
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    e.web.route("/api/session", answerSession);
    page = await env.openPage();
  }, { engine, timeout: 120_000 });
  beforeEach(() => {
    backend.way = "session";
    backend.calls = [];
  });

  // POST /api/session: { name, size, type, metadata } in, a session out, as backend.way says.
  async function answerSession(req, res) {
    const body = JSON.parse((await readBody(req)).toString() || "null");
    backend.calls.push({ body, contentType: req.headers["content-type"] ?? "", cookie: req.headers.cookie ?? "", origin: req.headers.origin ?? "" });
    const json = (status, v) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(v));
    };
    const name = body.metadata?.name ?? body.name;
    switch (backend.way) {
      case "session": {
        // Started for the page's Origin, as Cloud Storage needs it (README, "Cloud Storage set-up").
        const start = await fetch(ref.uploadURL(name) + "&uploadType=resumable", {
          method: "POST",
          headers: {
            Origin: req.headers.origin ?? env.web.url,
            "X-Upload-Content-Type": body.type,
            ...(body.size === null ? {} : { "X-Upload-Content-Length": String(body.size) }),
          },
        });
        return json(200, { sessionURL: start.headers.get("location") });
      }
      case "signed":
        return json(200, {
          signedURL: `${ref.url}/bkt/${encodeURIComponent(name)}?${v4Query("content-type;host;x-goog-resumable")}`,
          headers: { "Content-Type": body.type },
        });
      case "refuse":
        return json(403, { error: { code: 403, message: "not signed in" } });
      case "nonsense":
        return json(200, { url: "https://storage.example/session" });
      case "stall":
        return; // never answers (the module gives up, and aborts the POST)
      case "drop":
        // An answer cut short in its body: fetch's read of it rejects. (A connection closed
        // with no answer at all is sent again by the browser itself: the count would be the
        // browser's, not the module's.)
        return void req.socket.end("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    }
  }

  // The requests the reference server saw, preflights aside.
  const requests = async () => (await ref.log()).filter((e) => e.kind !== "preflight");
  const ok = (out) => assert.ok(out.ok, `upload failed: ${JSON.stringify(out.error)}`);

  // A page whose module runs in mode ("worker" or "page"), and which has T.ask: a session
  // function that asks the backend's endpoint (as an app's would) and records what it was told
  // and that it ran on the page (T.asked).
  async function pageIn(mode) {
    const p = await env.openPage();
    const got = await p.evaluate(async (mode) => {
      const mu = await T.load({ worker: mode === "worker" });
      T.asked = [];
      T.ask = async (info) => {
        T.asked.push({ info, onPage: typeof document !== "undefined" });
        const r = await fetch("/api/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(info) });
        return (await r.json()).sessionURL; // the answer as a plain string
      };
      return mu.mode;
    }, mode);
    assert.equal(got, mode);
    return p;
  }

  test("sessions from the backend's endpoint and from a function, in worker and page mode: byte-exact, one ask, no start from the page", async () => {
    for (const mode of ["worker", "page"]) {
      const p = await pageIn(mode);
      backend.calls = [];
      await ref.clearLog();
      try {
        // The endpoint: the page's cookie goes with the POST, the backend's session takes the chunks.
        const name = unique(`endpoint-${mode}`);
        const size = 2 * CHUNK + 99;
        await p.evaluate(() => (document.cookie = "sid=s1; path=/"));
        const out = await p.evaluate(
          ({ name, size }) => T.run(T.file(size, 11, name, { type: "video/mp4" }), { session: "/api/session", metadata: { name }, chunkSize: 262144 }),
          { name, size },
        );
        ok(out);
        assert.deepEqual(backend.calls.map((c) => c.body), [{ name, size, type: "video/mp4", metadata: { name } }], "the backend is told the file, nothing of its bytes");
        assert.equal(backend.calls[0].contentType, "application/json");
        assert.match(backend.calls[0].cookie, /sid=s1/, "same-origin credentials");
        assert.deepEqual(await env.checkStored(name, size, 11), []);
        const log = await requests();
        assert.deepEqual(log.map((e) => e.kind), ["start", "chunk", "chunk", "chunk"], "the backend's start, then the page's chunks");
        assert.equal(log[0].origin, env.web.url, "the session was started for the page's Origin");
        assert.ok(log.slice(1).every((e) => e.origin === env.web.url), "the chunks come from the page");
        assert.ok(out.result.sessionURL.includes("upload_id="), out.result.sessionURL);
        assert.equal(out.result.metadata.name, name);

        // A function of the page's, run on the page (in worker mode too).
        await ref.clearLog();
        backend.calls = [];
        const fname = unique(`function-${mode}`);
        const fout = await p.evaluate(({ name }) => T.run(T.file(300_001, 12, name), { session: T.ask, metadata: { name } }), { name: fname });
        ok(fout);
        const asked = await p.evaluate(() => T.asked);
        assert.deepEqual(asked, [{ info: { name: fname, size: 300_001, type: "application/octet-stream", metadata: { name: fname } }, onPage: true }]);
        assert.equal(backend.calls.length, 1);
        assert.deepEqual(await env.checkStored(fname, 300_001, 12), []);
        assert.equal((await requests()).filter((e) => e.kind === "start").length, 1, "the backend's start alone");
      } finally {
        await p.close();
      }
    }
  });

  test("a session lost mid-upload is replaced through the function: byte-exact, asked twice", async () => {
    for (const mode of ["worker", "page"]) {
      const p = await pageIn(mode);
      try {
        const name = unique(`lost-${mode}`);
        const size = 3 * CHUNK + 5;
        await ref.setFaults([{ on: "chunk", action: "expire", skip: 1 }]); // the second chunk: 404, the session gone
        const out = await p.evaluate(({ name, size }) => T.run(T.file(size, 21, name), { session: T.ask, metadata: { name }, chunkSize: 262144 }), { name, size });
        ok(out);
        assert.equal((await p.evaluate(() => T.asked)).length, 2, "asked when the upload started, and when its session was lost");
        const restarts = out.events.filter((e) => e.type === "retry");
        assert.deepEqual(restarts.map((e) => [e.restart, e.status]), [[true, 404]]);
        assert.deepEqual(await env.checkStored(name, size, 21), []);
        const log = await requests();
        assert.deepEqual(log.map((e) => `${e.kind}:${e.status}`), ["start:200", "chunk:200", "chunk:404", "start:200", "chunk:200", "chunk:200", "chunk:200", "chunk:201"]);
        await ref.clearFaults();
        await ref.clearLog();
      } finally {
        await p.close();
      }
    }
  });

  // resume: true keeps the backend's session; after a reload the same file goes on with it, and
  // the backend is asked only once it is gone (gone: the status query answered 404).
  for (const gone of [false, true]) {
    test(`resume: true after a reload asks the backend ${gone ? "once, its stored session gone" : "nothing, its stored session there"}`, async () => {
      const name = unique(gone ? "resume-gone" : "resume-kept");
      const size = 4 * MiB;
      const p = await env.openPage();
      try {
        await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } }); // 2 MB/s: 4 MiB takes 2 s
        const start = ({ name, size }) =>
          T.load().then((mu) => {
            window.result = null;
            window.confirmed = 0;
            const file = T.file(size, 31, name, { type: "application/octet-stream" });
            mu.upload(file, { session: "/api/session", metadata: { name }, resume: true, chunkSize: 512 * 1024, onProgress: (q) => (window.confirmed = q.confirmed) }).then(
              (r) => (window.result = { ok: true, status: r.status }),
              (e) => (window.result = { ok: false, code: e.code, message: e.message }),
            );
          });
        await p.evaluate(start, { name, size });
        await p.waitForFunction(() => window.confirmed >= 1024 * 1024, undefined, { timeout: 30_000 });
        await p.reload();
        await p.waitForFunction(() => window.T);
        await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
        assert.equal(backend.calls.length, 1, "asked once before the reload");
        backend.calls = [];
        await ref.clearLog();
        if (gone) await ref.setFaults([{ on: "query", action: "expire" }]);
        await p.evaluate(start, { name, size });
        const out = await p.waitForFunction(() => window.result, undefined, { timeout: 60_000 });
        assert.ok(out.ok, JSON.stringify(out));
        assert.deepEqual(await env.checkStored(name, size, 31), []);
        const log = await requests();
        assert.equal(log[0].kind, "query", "the stored session is asked first");
        if (gone) {
          assert.equal(log[0].status, 404);
          assert.equal(backend.calls.length, 1, "asked once its stored session was gone");
          assert.equal(log[1].kind, "start", "the backend's new session");
          assert.equal(log[2].contentRange.startsWith("bytes 0-"), true, "from byte 0");
        } else {
          assert.equal(backend.calls.length, 0, "not asked: its stored session goes on");
          assert.equal(log.filter((e) => e.kind === "start").length, 0);
          const sent = log.filter((e) => e.kind === "chunk").reduce((n, e) => n + e.contentLength, 0);
          assert.ok(sent <= size - MiB, `only the rest is sent after the reload (${sent} of ${size})`);
        }
      } finally {
        await p.close();
      }
    });
  }

  test("a backend that fails, stalls, refuses or answers without a session: backend_error, asked once, no request to storage, nothing kept", async () => {
    const cases = [
      { name: "throws", way: "", session: "throw", says: "the session function failed (TypeError: token service down)", cause: "TypeError: token service down" },
      { name: "refuses", way: "refuse", session: "/api/session", says: "refused the upload with 403 Forbidden: not signed in", status: 403, serverMessage: "not signed in" },
      { name: "stalls", way: "stall", session: "/api/session", says: "gave no session in 1.5 s", stallTimeoutMs: 1500 },
      { name: "answers no session", way: "nonsense", session: "/api/session", says: "neither a session URI nor a signedURL" },
      { name: "answers a number", way: "", session: "number", says: "not a session URI or an object but a number" },
      { name: "is unreachable", way: "", session: "http://127.0.0.1:9/api/session", says: "could not reach your backend (POST http://127.0.0.1:9/api/session)" },
    ];
    for (const c of cases) {
      backend.way = c.way;
      backend.calls = [];
      const name = unique("fails-" + c.name.replace(/ /g, "-"));
      const t0 = Date.now();
      const out = await page.evaluate(
        async ({ c, name }) => {
          let asked = 0;
          const session =
            c.session === "throw"
              ? () => (asked++, Promise.reject(new TypeError("token service down")))
              : c.session === "number"
                ? () => (asked++, 42)
                : c.session;
          const r = await T.run(T.file(262144, 41, name), { session, resume: true, metadata: { name }, ...(c.stallTimeoutMs ? { stallTimeoutMs: c.stallTimeoutMs } : {}) });
          const mu = await T.load();
          return { ...r, asked, unfinished: (await mu.unfinished()).map((u) => u.name) };
        },
        { c, name },
      );
      const took = Date.now() - t0;
      assert.equal(out.ok, false, c.name);
      assert.equal(out.error.code, "backend_error", `${c.name}: ${JSON.stringify(out.error)}`);
      assert.ok(out.error.message.includes(c.says), `${c.name}: ${out.error.message}`);
      assert.ok(out.error.message.includes("nothing was sent to storage"), out.error.message);
      assert.equal(out.state, "failed");
      if (c.status) {
        assert.equal(out.error.status, c.status);
        assert.equal(out.error.serverMessage, c.serverMessage);
      }
      if (c.cause) assert.equal(`${out.error.cause?.name}: ${out.error.cause?.message}`, c.cause, "the cause is attached");
      if (c.stallTimeoutMs) assert.ok(took < 15_000, `the stall ended the upload in ${took} ms`);
      const asked = c.way ? backend.calls.length : out.asked;
      assert.equal(asked, c.name === "is unreachable" ? 0 : 1, `${c.name}: asked once`);
      assert.deepEqual(await requests(), [], `${c.name}: no request to storage`);
      assert.deepEqual(await ref.objects(), []);
      assert.deepEqual(out.unfinished, [], `${c.name}: nothing kept for resume: true`);
    }
  });

  test("a signed URL: the page starts the XML API's session, its final answer as it is, CRC32C stated; a mismatch is checksum_mismatch", async () => {
    backend.way = "signed";
    const name = unique("signed");
    const size = 2 * CHUNK + 77;
    const out = await page.evaluate(({ name, size }) => T.run(T.file(size, 51, name, { type: "image/png" }), { session: "/api/session", chunkSize: 262144 }), { name, size });
    ok(out);
    assert.equal(out.result.status, 200, "the XML API's final answer");
    assert.equal(out.result.body, "");
    assert.equal(out.result.metadata, null);
    assert.deepEqual(await env.checkStored(name, size, 51), []);
    assert.equal((await ref.object(name)).contentType, "image/png", "the signed Content-Type went with the start");
    const log = await requests();
    assert.deepEqual(log.map((e) => `${e.method} ${e.kind}:${e.status}`), ["POST start:201", "PUT chunk:200", "PUT chunk:200", "PUT chunk:200"]);
    assert.equal(log[0].path, `/bkt/${name}`);
    assert.equal(log[0].origin, env.web.url, "the page's Origin went with the start");
    assert.equal(log[0].authorization, "", "no credential of the page's");
    assert.equal(log.at(-1).googHash, `crc32c=${crc32cBase64(pseudoRandomBytes(size, 51))}`, "the default checksum, stated as the XML API takes it");
    assert.ok(out.result.sessionURL.includes("X-Goog-Signature=") && out.result.sessionURL.includes("&upload_id="), out.result.sessionURL);

    // A byte changed on the way: the XML API refuses the last request (BadDigest), nothing stored.
    await ref.clearLog();
    const bad = unique("signed-bad");
    await ref.setFaults([{ on: "chunk", action: "corrupt", skip: 2 }]);
    const out2 = await page.evaluate(({ name, size }) => T.run(T.file(size, 52, name), { session: "/api/session", chunkSize: 262144 }), { name: bad, size });
    assert.equal(out2.ok, false);
    assert.equal(out2.error.code, "checksum_mismatch", JSON.stringify(out2.error));
    assert.equal(out2.error.status, 400);
    assert.equal(out2.error.reason, "BadDigest");
    assert.equal(await ref.object(bad), undefined);
    assert.equal((await requests()).filter((e) => e.kind === "chunk").length, 3, "never retried");
  });

  // fake-gcs-server 1.56.1 takes a POST to its object-insert routes whose query carries
  // X-Goog-Algorithm as a resumable start (it checks neither signature nor x-goog-resumable),
  // and answers 200 (not 201) with a JSON API session URI, whose final answer is JSON. Of its
  // routes the demo's server mounts the JSON API's upload path, which is where this goes; its
  // XML path (/BUCKET/OBJECT) is matched on its public host only (web/interop/fakegcs_test.go
  // covers that one natively).
  test("fake-gcs-server's own signed-URL start: byte-exact, its JSON final answer checked", async () => {
    const name = unique("fakegcs-signed");
    const size = 2 * CHUNK + 5;
    const signed = `${serve.url}/upload/storage/v1/b/demo/o?name=${encodeURIComponent(name)}&${v4Query("host;x-goog-resumable")}`;
    const out = await page.evaluate(
      ({ signed, name, size }) => T.run(T.file(size, 61, name), { session: async () => ({ signedURL: signed }), chunkSize: 262144 }),
      { signed, name, size },
    );
    ok(out);
    assert.equal(out.result.status, 200);
    assert.equal(out.result.metadata?.name, name);
    assert.equal(out.result.metadata?.crc32c, crc32cBase64(pseudoRandomBytes(size, 61)), "compared by the module too");
    const r = await fetch(`${serve.url}/download/storage/v1/b/demo/o/${encodeURIComponent(name)}?alt=media`);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(pseudoRandomBytes(size, 61)), "fake-gcs-server holds the bytes");
  });
  // The page says it is offline (its navigator.onLine false, an offline event: what every
  // engine's page shows of a spell, offline.test.mjs) while its backend cannot be reached: the
  // upload waits in "offline", counts no retry, and asks again once the page says it is online.
  test("a backend out of reach while offline is asked again once online, in worker and page mode: byte-exact, no retry, asked twice", async () => {
    for (const mode of ["worker", "page"]) {
      const p = await pageIn(mode);
      const say = (on) =>
        p.evaluate((on) => {
          Object.defineProperty(Navigator.prototype, "onLine", { configurable: true, get: () => on });
          dispatchEvent(new Event(on ? "online" : "offline"));
        }, on);
      try {
        const name = unique(`offline-${mode}`);
        const size = CHUNK + 3;
        backend.way = "drop";
        backend.calls = [];
        await say(false);
        await p.evaluate(({ name, size }) => {
          window.result = null;
          T.run(T.file(size, 71, name), { session: "/api/session", metadata: { name }, chunkSize: 262144 }, { onStart: (up) => (window.up = up) }).then((r) => (window.result = r));
        }, { name, size });
        await p.waitForFunction(() => window.up?.state === "offline", undefined, { timeout: 10_000 });
        await new Promise((r) => setTimeout(r, 1500)); // longer than the module's look at the link (a second)
        assert.equal(backend.calls.length, 1, "asked once while offline");
        assert.equal(await p.evaluate(() => window.result), null, "still waiting");
        backend.way = "session";
        await say(true);
        const out = await p.waitForFunction(() => window.result, undefined, { timeout: 30_000 });
        ok(out);
        assert.equal(backend.calls.length, 2, "asked again once online");
        const states = out.events.filter((e) => e.type === "statechange").map((e) => e.state);
        // (From "starting", where an upload begins: no event for it.)
        assert.deepEqual(states, ["offline", "starting", "uploading", "done"], `states: ${states}`);
        assert.deepEqual(out.events.filter((e) => e.type === "retry"), [], "no retry for the time offline");
        assert.deepEqual(await env.checkStored(name, size, 71), []);
      } finally {
        await say(true).catch(() => {});
        await p.close();
      }
    }
  });

  // The demo's own backend: a page of the demo server's origin (the backend serves its own
  // origins' pages only; its 404 page, where no module is loaded yet, so that either mode can
  // be asked for), the module loaded from its /dist/, bytes made as the tests make them.
  async function demoPage(mode) {
    const p = await env.browser.newPage(`${serve.url}/dist/no-such-page`);
    const got = await p.evaluate(async ({ mode, gen }) => {
      const { load } = await import("/dist/mediaupload.js");
      const mu = await load({ worker: mode === "worker" });
      const bytes = (0, eval)(`(${gen})`);
      // One upload: its result, or its error's code, message, status and serverMessage.
      window.up1 = (size, seed, opts) =>
        mu.upload(new File([bytes(size, seed)], opts.metadata?.name ?? "f.bin", { type: "image/png" }), opts).then(
          (r) => ({ ok: true, status: r.status, metadata: r.metadata, sessionURL: r.sessionURL }),
          (e) => ({ ok: false, error: { code: e.code, message: e.message, status: e.status, serverMessage: e.serverMessage } }),
        );
      return mu.mode;
    }, { mode, gen: pseudoRandomBytes.toString() });
    assert.equal(got, mode);
    return p;
  }
  const gcsObject = async (name) => {
    const r = await fetch(`${serve.url}/storage/v1/b/demo/o/${encodeURIComponent(name)}`);
    return r.ok ? r.json() : undefined;
  };

  test("the demo's backend (gcs.Handler before fake-gcs-server) starts the sessions, in worker and page mode: byte-exact, named and described as it decides", async () => {
    for (const mode of ["worker", "page"]) {
      const p = await demoPage(mode);
      try {
        const name = unique(`demo-backend-${mode}`);
        const size = 2 * CHUNK + 13;
        const out = await p.evaluate(
          ({ name, size }) => window.up1(size, 81, { session: "/api/gcs/session", metadata: { name, metadata: { owner: "ann" } }, chunkSize: 262144 }),
          { name, size },
        );
        assert.ok(out.ok, JSON.stringify(out.error));
        assert.equal(out.status, 200);
        assert.ok(out.sessionURL.startsWith(`${serve.url}/upload/storage/v1/b/demo/o?uploadType=resumable&`) && out.sessionURL.includes("upload_id="), `fake-gcs-server's session, as the backend started it: ${out.sessionURL}`);
        assert.equal(out.metadata?.name, name, "the object's name, as the backend decided (the page's wish)");
        assert.deepEqual(out.metadata?.metadata, { owner: "ann" }, "its metadata, as the backend passed it on");
        const obj = await gcsObject(name);
        assert.equal(obj?.contentType, "image/png");
        assert.equal(obj?.md5Hash, md5Base64(pseudoRandomBytes(size, 81)), "fake-gcs-server holds the bytes");
      } finally {
        await p.close();
      }
    }
  });

  test("the demo's backend refuses a bad object name: backend_error with its reason, no session, nothing stored", async () => {
    const p = await demoPage("worker");
    try {
      const name = `.well-known/acme-challenge/${unique("refused")}`;
      const out = await p.evaluate((name) => window.up1(1000, 82, { session: "/api/gcs/session", metadata: { name } }), name);
      assert.equal(out.ok, false);
      assert.equal(out.error.code, "backend_error", JSON.stringify(out.error));
      assert.equal(out.error.status, 400);
      assert.match(out.error.serverMessage, /acme-challenge/);
      assert.match(out.error.message, /nothing was sent to storage/);
      assert.equal(await gcsObject(name), undefined);
    } finally {
      await p.close();
    }
  });
});
