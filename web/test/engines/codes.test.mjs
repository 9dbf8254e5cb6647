// MediaUploadError.code is one of the codes of docs/api.md ("Errors") whatever failed
// underneath, in every engine, on the page and in worker mode: bad arguments, getHeaders
// that throws (an Error, and a DOMException, whose own `code` is a number) or answers wrongly
// (a number; a function, which cannot even be posted to a Worker), a session function that throws
// or answers a number, a bad session option, an HTTP 403, an unreachable
// server, abort, streams that error or give something that is not bytes; and in worker mode a
// stream handed to the Worker (transferred, or read by the page where it cannot be), a source
// that cannot be posted to the Worker (a DataCloneError, code 25) and a Worker that stops.

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, forEachEngine, useEnv } from "../harness.mjs";

// The codes of docs/api.md's "Errors" table, read from it: the reference the code follows.
const API = readFileSync(join(REPO_ROOT, "docs", "api.md"), "utf8");
const ERRORS_TABLE = API.slice(API.indexOf("| code | when |"), API.indexOf("\n\n", API.indexOf("| code | when |")));
const CODES = [...ERRORS_TABLE.matchAll(/^\| `([a-z_]+)` \| /gm)].map((m) => m[1]);
assert.equal(CODES.length, 12, `docs/api.md's Errors table: ${CODES}`);

// What each failure of failures() below must end with, the same on the page and in a Worker.
// A getHeaders that returns something other than an object of strings is a bad call.
const WANT = {
  notABlob: "invalid_argument",
  noOptions: "invalid_argument",
  badChunkSize: "invalid_argument",
  lockedStream: "invalid_argument",
  streamWithMedia: "invalid_argument",
  metadataNotPlain: "invalid_argument",
  headersThrow: "auth_error",
  headersDOMException: "auth_error",
  headersNumber: "invalid_argument",
  headersFunction: "invalid_argument",
  unreachable: "network_error",
  abort: "aborted",
  signalAborted: "aborted",
  streamErrors: "source_error",
  streamNotBytes: "source_error",
  sessionDOMException: "backend_error",
  sessionNumber: "backend_error",
  sessionAndSessionURL: "invalid_argument",
  sessionNotAFunction: "invalid_argument",
};

// A port on 127.0.0.1 that nothing listens on.
async function closedPort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

forEachEngine((engine) => {
  let env;
  const { test, unique } = useEnv((e) => {
    env = e;
  }, { engine, timeout: 60_000 });

  // A page on the module (page mode), or with T.load passing { worker: true } (worker mode,
  // the approach of web/test/worker.test.mjs).
  async function openPage(worker) {
    const page = await env.openPage();
    if (worker) {
      await page.evaluate(() => {
        const load = T.load.bind(T);
        T.load = (options) => load({ ...options, worker: true });
      });
    }
    return page;
  }

  // Runs every failure of WANT in the page and resolves to { name: errorData }.
  function failures(page, url, unreachable) {
    return page.evaluate(
      async ({ url, unreachable }) => {
        const mu = await T.load();
        const settle = (up) => up.then(() => ({ ok: true }), (e) => T.errorData(e));
        const run = (name, source, options) => settle(mu.upload(source, { url: url + "-" + name, ...options }));
        const blob = () => T.blob(300_000, 91);
        const stream = (pull) => new ReadableStream({ pull });
        const locked = new ReadableStream();
        locked.getReader();
        let sent = 0;
        const quick = { retries: 1, initialDelayMs: 10, maxDelayMs: 20, jitterMs: 0 };
        const out = {
          notABlob: await settle(mu.upload("not a blob", { url })),
          noOptions: await settle(mu.upload(blob(), null)),
          badChunkSize: await run("chunk", blob(), { chunkSize: 1000 }),
          lockedStream: await run("locked", locked, {}),
          streamWithMedia: await run("media", stream((c) => c.close()), { uploadType: "media" }),
          metadataNotPlain: await run("meta", blob(), { metadata: new Date(0) }),
          headersThrow: await run("throw", blob(), {
            getHeaders: () => {
              throw new Error("the token service is down");
            },
          }),
          // A DOMException's own code is a number (a DataCloneError's is 25).
          headersDOMException: await run("dom", blob(), {
            getHeaders: async () => {
              throw new DOMException("no token today", "DataCloneError");
            },
          }),
          headersNumber: await run("number", blob(), { getHeaders: () => 42 }),
          headersFunction: await run("function", blob(), { getHeaders: () => () => "Bearer x" }),
          unreachable: await run("unreachable", blob(), { url: unreachable, retry: quick }),
          abort: await (async () => {
            const up = mu.upload(blob(), { url: url + "-abort" });
            up.abort();
            return settle(up);
          })(),
          signalAborted: await run("signal", blob(), { signal: AbortSignal.abort() }),
          streamErrors: await run(
            "serr",
            stream((c) => {
              if (sent >= 400_000) return c.error(new Error("the producer failed"));
              c.enqueue(T.bytes(100_000, ++sent));
              sent += 100_000;
            }),
            { chunkSize: 262144 },
          ),
          streamNotBytes: await run("text", stream((c) => c.enqueue("not bytes")), {}),
          // The session function (docs/api.md, "A session from your backend"), which runs on
          // the page in both modes: what it throws, and a number, are the backend's failures.
          sessionDOMException: await run("sdom", blob(), {
            session: async () => {
              throw new DOMException("no session today", "DataCloneError");
            },
          }),
          sessionNumber: await run("snumber", blob(), { session: () => 42 }),
          sessionAndSessionURL: await run("sboth", blob(), { session: () => url, sessionURL: url }),
          sessionNotAFunction: await run("snot", blob(), { session: 42 }),
        };
        return out;
      },
      { url, unreachable },
    );
  }

  // One HTTP 403 from the server, as the session start's answer.
  async function forbidden(page, url) {
    await env.ref.setFaults([{ on: "start", action: "status", status: 403, times: -1 }]);
    try {
      return await page.evaluate((url) => T.run(T.blob(300_000, 92), { url }).then((r) => r.error ?? { ok: true }), url);
    } finally {
      await env.ref.clearFaults();
    }
  }

  function check(got, mode) {
    for (const [name, want] of Object.entries(WANT)) {
      const e = got[name];
      assert.ok(e && !e.ok, `${mode} ${name}: it did not fail`);
      assert.equal(e.isMediaUploadError, true, `${mode} ${name}: a MediaUploadError`);
      assert.ok(CODES.includes(e.code), `${mode} ${name}: code ${JSON.stringify(e.code)} is not documented (${e.message})`);
      if (Array.isArray(want)) assert.ok(want.includes(e.code), `${mode} ${name}: ${e.code}, want one of ${want}`);
      else assert.equal(e.code, want, `${mode} ${name}: ${e.message}`);
    }
  }

  test("page mode: every failure's code is a documented one", async () => {
    const page = await openPage(false);
    try {
      const got = await failures(page, env.ref.uploadURL(unique("pcode")), `http://127.0.0.1:${await closedPort()}/upload/storage/v1/b/test/o?name=x`);
      check(got, "page");
      const e = await forbidden(page, env.ref.uploadURL(unique("p403")));
      assert.equal(e.code, "http_error", e.message);
      assert.equal(e.status, 403);
    } finally {
      await page.close();
    }
  });

  test("worker mode: every failure's code is a documented one, and the same as on the page", async () => {
    const [onPage, inWorker] = [await openPage(false), await openPage(true)];
    try {
      const unreachable = `http://127.0.0.1:${await closedPort()}/upload/storage/v1/b/test/o?name=x`;
      const want = await failures(onPage, env.ref.uploadURL(unique("pcode")), unreachable);
      const got = await failures(inWorker, env.ref.uploadURL(unique("wcode")), unreachable);
      check(got, "worker");
      for (const name of Object.keys(WANT)) assert.equal(got[name].code, want[name].code, `${name}: worker mode and page mode agree`);
      const e = await forbidden(inWorker, env.ref.uploadURL(unique("w403")));
      assert.equal(e.code, "http_error", e.message);
      assert.equal(e.status, 403);
    } finally {
      await onPage.close();
      await inWorker.close();
    }
  });

  test("worker mode: a stream handed to the Worker, a source the Worker cannot be given, a Worker that stops", async (t) => {
    const page = await openPage(true);
    try {
      const out = await page.evaluate(
        async ({ url }) => {
          const mu = await T.load();
          const settle = (up) => up.then((r) => ({ ok: true, status: r.status }), (e) => T.errorData(e));
          // A stream to the Worker (transferred, or read by the page where it cannot be).
          const bytes = T.bytes(600_000, 93);
          let at = 0;
          const stream = new ReadableStream({
            pull(c) {
              if (at >= bytes.length) return c.close();
              c.enqueue(bytes.slice(at, (at += 77_777)));
            },
          });
          const streamed = await settle(mu.upload(stream, { url: url + "-stream", chunkSize: 262144 }));

          // postMessage refuses the source (as WebKit refused a stream before the relay): a
          // DataCloneError, whose own code is 25.
          const postMessage = Worker.prototype.postMessage;
          let worker = null;
          const source = T.blob(1000, 94);
          Worker.prototype.postMessage = function (msg, transfer) {
            worker = this;
            if (msg && typeof msg === "object" && Object.values(msg).includes(source)) {
              throw new DOMException("The object can not be cloned.", "DataCloneError");
            }
            return postMessage.call(this, msg, transfer);
          };
          let refused;
          try {
            refused = await settle(mu.upload(source, { url: url + "-refused" }));
          } finally {
            Worker.prototype.postMessage = postMessage;
          }

          // The Worker reports an error it did not catch: every upload in flight ends.
          const up = mu.upload(T.blob(4 * 1024 * 1024, 95), { url: url + "-stopped", chunkSize: 262144 });
          await T.until(() => up.state === "uploading", 20_000, "uploading");
          worker.dispatchEvent(new ErrorEvent("error", { message: "a test's error" }));
          const stopped = await settle(up);
          return { streamed, refused, stopped };
        },
        { url: env.ref.uploadURL(unique("wpath")) },
      );
      t.diagnostic(`${engine}: refused source: ${out.refused.code} (${out.refused.message}); stopped Worker: ${out.stopped.code}`);
      assert.equal(out.streamed.ok, true, JSON.stringify(out.streamed));
      for (const [name, e] of Object.entries({ refused: out.refused, stopped: out.stopped })) {
        assert.equal(e.isMediaUploadError, true, name);
        assert.ok(CODES.includes(e.code), `${name}: code ${JSON.stringify(e.code)} is not documented (${e.message})`);
      }
      assert.equal(out.refused.code, "source_error");
      assert.equal(out.refused.cause?.name, "DataCloneError");
      assert.equal(out.stopped.code, "network_error");
      assert.match(out.stopped.message, /Worker stopped/);
    } finally {
      await page.close();
    }
  });
});
