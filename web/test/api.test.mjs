// Browser tests of the public JS contract (docs/api.md) against the reference server.
// Run: node --test web/test/   (needs dist/ built by ./build.sh, and /usr/bin/chromium)
//
// One Chromium, one reference server and one page origin for the whole file; the reference
// server is reset before every test. Most tests share one page; those about loading open their
// own, since load() is once per page.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHUNK, DIST_DIR, KiB, MiB, crc32cBase64, pseudoRandomBytes, readBody, useEnv } from "./harness.mjs";

const XHR_EVENTS = ["loadstart", "progress", "load", "error", "abort", "loadend"];
// Short waits, so that retry tests take milliseconds.
const FAST_RETRY = { retries: 3, initialDelayMs: 20, maxDelayMs: 100, jitterMs: 0 };


let env, ref, web, page;

const { test, unique } = useEnv(async (e) => {
  env = e;
  ({ ref, web } = env);
  page = await env.openPage();
  installFakeServers();
}, { timeout: 60_000 });

// Runs T.run(T.blob(size, seed, type), options) in the shared page.
function run(size, seed, options, { type = "" } = {}) {
  return page.evaluate(({ size, seed, options, type }) => T.run(T.blob(size, seed, type), options), {
    size, seed, options, type,
  });
}

/** The log without preflights. */
async function requests() {
  return (await ref.log()).filter((e) => e.kind !== "preflight");
}

const chunks = (log) => log.filter((e) => e.kind === "chunk");
const xhrTypes = (events) => events.filter((e) => XHR_EVENTS.includes(e.type)).map((e) => e.type);
const progressOf = (events) => events.filter((e) => e.type === "progress");
const callsOf = (out, name) => out.calls.filter((c) => c.name === name).map((c) => c.arg);

// The XHR events in XMLHttpRequest.upload's order: one loadstart, progress events, the end.
function assertXHROrder(events, end) {
  const types = xhrTypes(events);
  const shape = types.join(" ").replace(/( progress)+/g, " progress…");
  const ok = new RegExp(`^loadstart( progress…)? ${end} loadend$`).test(shape);
  assert.ok(ok, `event order: ${shape}`);
  assert.equal(events[0].type, "loadstart", "the first event is loadstart");
}

function assertProgress(events, total) {
  const ps = progressOf(events);
  assert.ok(ps.length > 0, "at least one progress event");
  for (let i = 1; i < ps.length; i++) {
    assert.ok(ps[i].loaded >= ps[i - 1].loaded, `progress went backwards: ${ps[i - 1].loaded} -> ${ps[i].loaded}`);
  }
  for (const p of ps) {
    assert.ok(p.isProgressEvent, "a ProgressEvent");
    assert.equal(p.total, total);
    assert.equal(p.lengthComputable, total > 0);
    assert.ok(p.confirmed >= 0 && p.confirmed <= total, `confirmed ${p.confirmed} of ${total}`);
    assert.equal(typeof p.bytesPerSecond, "number");
    assert.ok(p.secondsLeft === null || typeof p.secondsLeft === "number");
  }
  const last = ps.at(-1);
  assert.equal(last.loaded, total, "progress ends at loaded == total");
}

async function assertStored(name, size, seed) {
  assert.deepEqual(await env.checkStored(name, size, seed), [], `stored object ${name}`);
}

// A successful upload: promise, events, progress and the stored bytes.
async function assertUploaded(out, name, size, seed) {
  assert.ok(out.ok, `upload failed: ${JSON.stringify(out.error)}`);
  assertXHROrder(out.events, "load");
  assertProgress(out.events, size);
  assert.equal(out.state, "done");
  await assertStored(name, size, seed);
}

// ---------------------------------------------------------------------------------------------
// Fake servers on the page's own origin, for answers the reference server never gives.

let fakeState = new Map();
function installFakeServers() {
  // POST starts a session; the answer has no Location (docs/protocol.md section 2: protocol_error).
  web.route("/fake/nolocation/", async (req, res) => {
    await readBody(req);
    res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
  });
  // A session whose first 308 claims more bytes than were sent.
  web.route("/fake/overrange/", async (req, res) => {
    await readBody(req);
    if (req.method === "POST") {
      res.writeHead(200, { Location: `${web.url}/fake/overrange/session?upload_id=x` }).end();
    } else {
      res.writeHead(308, { Range: "bytes=0-99999999" }).end();
    }
  });
  // A session that stores correctly but reports wrong hashes in the final metadata.
  web.route("/fake/badhash/", async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url, web.url);
    if (req.method === "POST") {
      const id = String(fakeState.size + 1);
      fakeState.set(id, 0);
      res.writeHead(200, { Location: `${web.url}/fake/badhash/session?upload_id=${id}` }).end();
      return;
    }
    const id = url.searchParams.get("upload_id");
    let held = fakeState.get(id) ?? 0;
    const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(req.headers["content-range"] ?? "");
    const total = m ? Number(m[3]) : /\/(\d+)$/.exec(req.headers["content-range"] ?? "")?.[1];
    if (m && Number(m[1]) === held) held += body.length;
    if (!req.headers["content-range"]) held = body.length;
    fakeState.set(id, held);
    if (total !== undefined && held === Number(total)) {
      res.writeHead(201, { "Content-Type": "application/json" }).end(JSON.stringify({
        kind: "storage#object", name: "badhash", size: String(held),
        md5Hash: "1B2M2Y8AsgTpgAmY7PhCfg==", crc32c: "AAAAAA==",
      }));
    } else {
      res.writeHead(308, held ? { Range: `bytes=0-${held - 1}` } : {}).end();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Loading

test("load: one instance for every call, concurrent ones too; version", async () => {
  const p = await env.browser.newPage(`${web.url}/test/blank.html`);
  const wasmFetches = [];
  p.on("request", (r) => r.url().endsWith(".wasm") && wasmFetches.push(r.url()));
  await p.waitForFunction(() => window.T);
  const out = await p.evaluate(async () => {
    const m = await import(T.dist);
    const [a, b] = await Promise.all([m.load(), m.load()]);
    const c = await m.load({ wasmURL: "/ignored.wasm" });
    return { same: a === b && b === c, version: a.version, upload: typeof a.upload };
  });
  await p.close();
  assert.ok(out.same, "load returns the same object every time");
  assert.match(out.version, /^0\.\d+\.\d+$/);
  assert.equal(out.upload, "function");
  assert.deepEqual(wasmFetches, [`${web.url}/dist/mediaupload.wasm`], "the wasm beside the module, fetched once");
});

test("load: wasmURL; a failed load is forgotten", async () => {
  web.route("/elsewhere/", (req, res) => {
    res.writeHead(200, { "Content-Type": "application/wasm" });
    res.end(readFileSync(join(DIST_DIR, "mediaupload.wasm")));
  });
  const p = await env.openPage();
  const wasmFetches = [];
  p.on("request", (r) => r.url().endsWith(".wasm") && wasmFetches.push(new URL(r.url()).pathname));
  const out = await p.evaluate(async (url) => {
    const m = await import(T.dist);
    let first;
    try {
      await m.load({ wasmURL: "/missing/nothing.wasm" });
      first = "resolved";
    } catch (e) {
      first = "rejected: " + e.message;
    }
    const mu = await m.load({ wasmURL: new URL("/elsewhere/x.wasm", location.href).href });
    const r = await mu.upload(new Blob(["elsewhere"]), { url, uploadType: "media" });
    return { first, status: r.status };
  }, ref.uploadURL("elsewhere"));
  await p.close();
  assert.equal(
    out.first,
    `rejected: mediaupload: mediaupload.wasm not found at ${web.url}/missing/nothing.wasm (HTTP 404): check the wasmURL passed to load()`,
  );
  assert.equal(out.status, 200);
  assert.deepEqual(wasmFetches, ["/missing/nothing.wasm", "/elsewhere/x.wasm"]);
});

test("load: a .wasm served with the wrong MIME type still loads", async () => {
  const p = await env.openPage();
  const types = [];
  p.on("response", (r) => r.url().endsWith(".wasm") && types.push(r.headers()["content-type"]));
  const out = await p.evaluate(async (url) => {
    const m = await import("/wrongmime/mediaupload.js");
    const mu = await m.load();
    return (await mu.upload(new Blob(["mime"]), { url, uploadType: "media" })).status;
  }, ref.uploadURL("wrongmime"));
  await p.close();
  assert.deepEqual(types, ["application/octet-stream"]);
  assert.equal(out, 200);
});

test("classic build: window.MediaUpload from a <script> in another folder", async () => {
  web.page("/test/classic/page.html", `<!doctype html><meta charset="utf-8">
    <script src="/dist/mediaupload.classic.js"></script>`);
  const p = await env.openPage("/test/classic/page.html");
  const out = await p.evaluate(async (url) => {
    const MU = window.MediaUpload;
    const mu = await MU.load();
    const r = await mu.upload(new Blob(["hello classic"], { type: "text/plain" }), { url, uploadType: "media" });
    const bad = await mu.upload("not a blob", { url }).then(() => null, (e) => e);
    return {
      keys: Object.keys(MU).sort(),
      version: mu.version,
      status: r.status,
      badCode: bad?.code,
      badIsError: bad instanceof MU.MediaUploadError,
      moduleGlobals: typeof window.load,
    };
  }, ref.uploadURL("classic"));
  await p.close();
  assert.deepEqual(out.keys, ["MediaUploadError", "load"]);
  assert.match(out.version, /^0\.\d+\.\d+$/);
  assert.equal(out.status, 200);
  assert.equal(out.badCode, "invalid_argument");
  assert.ok(out.badIsError);
  assert.equal(out.moduleGlobals, "undefined", "the classic build leaks nothing but MediaUpload");
  assert.equal((await ref.download("classic")).toString(), "hello classic");
});

test("module worker: load and upload from a Worker", async () => {
  web.page("/test/worker.js", `
    import { load } from "/dist/mediaupload.js";
    onmessage = async (e) => {
      try {
        const mu = await load();
        const r = await mu.upload(new Blob([e.data.text]), { url: e.data.url, uploadType: "resumable" });
        postMessage({ ok: true, status: r.status });
      } catch (err) {
        postMessage({ ok: false, error: String(err), code: err.code });
      }
    };`);
  const out = await page.evaluate((url) => new Promise((resolve) => {
    const w = new Worker("/test/worker.js", { type: "module" });
    w.onmessage = (e) => { resolve(e.data); w.terminate(); };
    w.onerror = (e) => resolve({ ok: false, error: "worker error: " + e.message });
    w.postMessage({ url, text: "from a worker" });
  }), ref.uploadURL("worker"));
  assert.ok(out.ok, JSON.stringify(out));
  assert.equal((await ref.download("worker")).toString(), "from a worker");
});

// ---------------------------------------------------------------------------------------------
// The upload options

test("uploadType: media, multipart, resumable and auto each use their requests", async () => {
  const cases = [
    { uploadType: "media", metadata: undefined, kinds: ["media"] },
    { uploadType: "multipart", metadata: { contentLanguage: "en" }, kinds: ["multipart"] },
    { uploadType: "resumable", metadata: undefined, kinds: ["start", "chunk"] },
    { uploadType: undefined, metadata: undefined, kinds: ["media"] }, // the default, "auto": a small file
    { uploadType: undefined, metadata: { contentLanguage: "en" }, kinds: ["multipart"] },
    { uploadType: "auto", metadata: undefined, kinds: ["media"] },
    { uploadType: "auto", metadata: { contentLanguage: "en" }, kinds: ["multipart"] },
  ];
  for (const c of cases) {
    await ref.clearLog();
    const name = unique("type");
    const size = 10 * KiB + 3;
    const out = await run(size, 11, { url: ref.uploadURL(name), uploadType: c.uploadType, metadata: c.metadata });
    await assertUploaded(out, name, size, 11);
    const kinds = (await requests()).map((e) => e.kind);
    assert.deepEqual(kinds, c.kinds, `uploadType ${c.uploadType} with metadata ${!!c.metadata}`);
    assert.equal(out.result.metadata.name, name);
    assert.equal(out.result.metadata.size, String(size));
    if (c.metadata) assert.equal((await ref.object(name)).contentLanguage, "en");
    assert.equal(typeof out.result.body, "string");
    assert.equal(JSON.parse(out.result.body).name, name);
    assert.equal(out.result.sessionURL === null, !c.kinds.includes("start"), "sessionURL only for resumable");
  }
});

test("uploadType auto: one request up to 256 KiB while nothing is known of the link, up to 5 MB once it is", async () => {
  const auto = async (size, options = {}) => {
    await ref.clearLog();
    const name = unique("auto");
    const out = await run(size, 12, { url: ref.uploadURL(name), ...options });
    await assertUploaded(out, name, size, 12);
    return (await requests())[0].kind;
  };
  // A fresh page each time: what the page's uploads measured of the link decides.
  for (const [size, kind] of [[CHUNK, "media"], [CHUNK + 1, "start"]]) {
    await page.reload();
    await page.waitForFunction(() => window.T);
    assert.equal(await auto(size), kind, `nothing known, ${size} bytes`);
  }
  // The page now knows loopback's rate (the resumable upload above measured it): what it sends
  // in a thirty-second of a progress interval (ten seconds here, whatever a busy machine makes
  // of loopback), never over the guide's 5 MB.
  for (const [size, kind] of [[5_000_000, "media"], [5_000_001, "start"]]) {
    assert.equal(await auto(size, { progressIntervalMs: 10_000 }), kind, `loopback known, ${size} bytes`);
  }
  assert.equal(await auto(5_000_000, { uploadType: "resumable" }), "start", "an explicit type stays");
});

test("metadata is sent as JSON; name from metadata when the URL has none", async () => {
  const name = unique("meta");
  const metadata = { name, metadata: { owner: "tests", n: "1" }, cacheControl: "no-cache" };
  for (const uploadType of ["resumable", "multipart"]) {
    const out = await run(3000, 13, {
      url: `${ref.url}/upload/storage/v1/b/test/o`, uploadType, metadata,
    });
    await assertUploaded(out, name, 3000, 13);
    const obj = await ref.object(name);
    assert.deepEqual(obj.metadata, metadata.metadata, uploadType);
    assert.equal(obj.cacheControl, "no-cache");
    const sent = typeof obj.metadataJSON === "string" ? JSON.parse(obj.metadataJSON) : obj.metadataJSON;
    // A multipart upload to Cloud Storage states its default CRC32C in the metadata it sends
    // (docs/protocol.md section 9); a session's is stated with its last chunk.
    const crc32c = uploadType === "multipart" ? { crc32c: crc32cBase64(pseudoRandomBytes(3000, 13)) } : {};
    assert.deepEqual(sent, { ...crc32c, ...metadata }, uploadType);
  }
});

test("contentType: the blob's type, else application/octet-stream, else the option", async () => {
  const cases = [
    { type: "image/png", contentType: undefined, want: "image/png" },
    { type: "", contentType: undefined, want: "application/octet-stream" },
    { type: "image/png", contentType: "text/csv", want: "text/csv" },
  ];
  for (const uploadType of ["resumable", "media", "multipart"]) {
    for (const c of cases) {
      const name = unique("ctype");
      await ref.clearLog();
      const out = await run(1000, 14, { url: ref.uploadURL(name), uploadType, contentType: c.contentType }, { type: c.type });
      assert.ok(out.ok, JSON.stringify(out.error));
      assert.equal((await ref.object(name)).contentType, c.want, `${uploadType} ${JSON.stringify(c)}`);
      // A chunk carries the media's type too (docs/protocol.md section 3), the option's over
      // the Blob's.
      for (const e of chunks(await requests())) assert.equal(e.contentType, c.want, `chunk ${e.contentRange}: ${JSON.stringify(c)}`);
    }
  }
});

for (const mode of ["page", "worker"]) {
  test(`a typed Blob sent in one PUT goes as it is (no slice to drop its type); in chunks, a slice each (${mode} mode)`, async () => {
    // (fetch gives a Blob body its type as Content-Type only where the request sets none, and
    // the module's requests set theirs: a slice per file cost the page's main thread up to 1 ms.)
    // The slices are counted where the host runs: on the page, or in the module's Worker (the
    // test's worker script counts them there: worker-hooks.js), and on the page too, which
    // then makes none. No checksum: one reads the Blob in slices of its own.
    const p = await env.openPage();
    const out = await p.evaluate(async ({ url, url2, worker }) => {
      if (worker) await T.loadHooked();
      else await T.load({ worker: false });
      const onPage = [];
      const slice = Blob.prototype.slice;
      Blob.prototype.slice = function (...args) {
        onPage.push([this.size, ...args]);
        return slice.apply(this, args);
      };
      const counted = async () => (worker ? (await T.workerCounts()).slices : onPage.splice(0));
      try {
        const whole = await T.run(T.blob(300_000, 1, "image/png"), { url, chunkSize: 0, checksum: false });
        const wholeSlices = await counted();
        const chunked = await T.run(T.blob(300_000, 2, "image/png"), { url: url2, chunkSize: 256 * 1024, checksum: false });
        return { mode: (await T.load()).mode, whole: whole.ok, wholeSlices, chunked: chunked.ok, chunkedSlices: await counted(), onPage };
      } finally {
        Blob.prototype.slice = slice;
      }
    }, { url: ref.uploadURL(unique("typed-whole")), url2: ref.uploadURL(unique("typed-chunks")), worker: mode === "worker" });
    await p.close();
    assert.equal(out.mode, mode);
    assert.ok(out.whole && out.chunked, JSON.stringify(out));
    assert.deepEqual(out.wholeSlices, [], "one PUT of all of it: no slice");
    assert.deepEqual(out.chunkedSlices, [[300_000, 0, 262_144], [300_000, 262_144, 300_000]], "two chunks: a slice each");
    if (mode === "worker") assert.deepEqual(out.onPage, [], "none on the page: the Worker's host made them");
  });
}

test("method: POST creates (201), PUT updates (200)", async () => {
  const name = unique("method");
  const created = await run(2000, 15, { url: ref.uploadURL(name), method: "POST", uploadType: "resumable" });
  await assertUploaded(created, name, 2000, 15);
  assert.equal(created.result.status, 201);
  await ref.clearLog();
  const updated = await run(3000, 16, { url: ref.uploadURL(name), method: "PUT", uploadType: "resumable" });
  await assertUploaded(updated, name, 3000, 16);
  assert.equal(updated.result.status, 200);
  const start = (await requests()).find((e) => e.kind === "start");
  assert.equal(start.method, "PUT");
  const media = await run(100, 17, { url: ref.uploadURL(name), method: "PUT", uploadType: "media" });
  assert.ok(media.ok);
  assert.equal((await requests()).at(-1).method, "PUT");
});

test("chunkSize: chunks of that size, the last one short; 0 sends the rest in one PUT", async () => {
  const size = MiB + 100;
  let name = unique("chunks");
  let out = await run(size, 18, { url: ref.uploadURL(name), chunkSize: 2 * CHUNK });
  await assertUploaded(out, name, size, 18);
  assert.deepEqual(chunks(await requests()).map((e) => e.contentRange), [
    `bytes 0-524287/${size}`, `bytes 524288-1048575/${size}`, `bytes 1048576-1048675/${size}`,
  ]);
  await ref.clearLog();
  name = unique("onechunk");
  // Resumable asked for: at "auto" a file this small goes in one request once the page has
  // measured the link (docs/api.md, uploadType), and the earlier tests in this page have.
  out = await run(size, 19, { url: ref.uploadURL(name), chunkSize: 0, uploadType: "resumable" });
  await assertUploaded(out, name, size, 19);
  const one = chunks(await requests());
  assert.equal(one.length, 1);
  assert.equal(one[0].contentLength, size);
});

test("a file of exactly 256 KiB × 3 in 256 KiB chunks: three PUTs, no empty fourth", async () => {
  const size = 3 * CHUNK;
  const name = unique("exact");
  const out = await run(size, 20, { url: ref.uploadURL(name), chunkSize: CHUNK });
  await assertUploaded(out, name, size, 20);
  const log = await requests();
  assert.deepEqual(chunks(log).map((e) => e.contentRange), [
    `bytes 0-262143/${size}`, `bytes 262144-524287/${size}`, `bytes 524288-786431/${size}`,
  ]);
  assert.equal(log.filter((e) => e.kind === "query").length, 0);
  // 200: the server's 308 in the no-308 form the module asks for by default (the log records
  // the status sent); docs/protocol.md section 6.
  assert.deepEqual(chunks(log).map((e) => e.status), [200, 200, 201]);
});

test("a 0-byte file, resumable, media and multipart", async () => {
  for (const uploadType of ["resumable", "media", "multipart"]) {
    const name = unique("empty");
    const out = await run(0, 21, { url: ref.uploadURL(name), uploadType, chunkSize: CHUNK });
    await assertUploaded(out, name, 0, 21);
    const ps = progressOf(out.events);
    assert.ok(ps.every((p) => p.loaded === 0 && p.total === 0 && !p.lengthComputable), uploadType);
  }
});

test("headers and getHeaders: Authorization on the requests, getHeaders merged over headers", async () => {
  let name = unique("hdr");
  let out = await run(1000, 22, { url: ref.uploadURL(name), uploadType: "media", headers: { Authorization: "Bearer static" } });
  assert.ok(out.ok);
  assert.equal((await requests())[0].authorization, "Bearer static");

  await ref.clearLog();
  name = unique("hdr");
  const got = await page.evaluate(async (url) => {
    let calls = 0;
    const out = await T.run(T.blob(300 * 1024, 23), {
      url, chunkSize: 262144,
      headers: { Authorization: "Bearer static" },
      getHeaders: async () => ({ Authorization: `Bearer dynamic${++calls}` }),
    });
    return { out, calls };
  }, ref.uploadURL(name));
  await assertUploaded(got.out, name, 300 * KiB, 23);
  assert.equal(got.calls, 1, "getHeaders called once before the session starts");
  const start = (await requests()).find((e) => e.kind === "start");
  assert.equal(start.authorization, "Bearer dynamic1");
});

test("a 401 calls getHeaders again and the upload goes on", async () => {
  for (const on of ["start", "media"]) {
    await ref.reset();
    await ref.setFaults([{ on, action: "unauthorized", times: 1 }]);
    const name = unique("401");
    const got = await page.evaluate(async ([url, uploadType]) => {
      let calls = 0;
      const out = await T.run(T.blob(5000, 24), {
        url, uploadType, retry: { retries: 3, initialDelayMs: 20, maxDelayMs: 100, jitterMs: 0 },
        getHeaders: () => ({ Authorization: `Bearer t${++calls}` }),
      });
      return { out, calls };
    }, [ref.uploadURL(name), on === "start" ? "resumable" : "media"]);
    await assertUploaded(got.out, name, 5000, 24);
    assert.ok(got.calls >= 2, `getHeaders called ${got.calls} times`);
    const first = (await requests()).filter((e) => e.kind === on);
    assert.deepEqual(first.map((e) => [e.status, e.authorization]).slice(0, 2), [
      [401, "Bearer t1"], [on === "start" ? 200 : 200, `Bearer t${got.calls}`],
    ]);
  }
});

test("Authorization is not sent to a session URI on another origin", async () => {
  await ref.config({ sessionOrigin: ref.altURL });
  const name = unique("alt");
  const size = 600 * KiB;
  const out = await run(size, 25, {
    url: ref.uploadURL(name), chunkSize: CHUNK, queryStatusEachChunk: true,
    headers: { Authorization: "Bearer secret" },
  });
  await assertUploaded(out, name, size, 25);
  assert.ok(out.result.sessionURL.startsWith(ref.altURL + "/"), out.result.sessionURL);
  const log = await requests();
  assert.equal(log.find((e) => e.kind === "start").authorization, "Bearer secret");
  const session = log.filter((e) => e.kind === "chunk" || e.kind === "query");
  assert.ok(session.length >= 3);
  assert.deepEqual(session.map((e) => e.authorization), session.map(() => ""));
});

test("sessionURL: resumes a session held by the caller, without starting a new one", async () => {
  const name = unique("sess");
  const size = MiB;
  const first = await page.evaluate(async (url) => {
    const blob = T.blob(1024 * 1024, 26);
    let up;
    const out = await T.run(blob, {
      url, chunkSize: 262144,
      onProgress: (p) => p.confirmed >= 262144 && up.abort(),
    }, { onStart: (u) => { up = u; } });
    return out;
  }, ref.uploadURL(name));
  assert.equal(first.error?.code, "aborted");
  assert.ok(first.error.sessionURL, "the abort error carries the session URI");
  assert.equal(await ref.object(name), undefined, "not complete yet");
  await ref.clearLog();
  const second = await run(size, 26, { url: ref.uploadURL(name), chunkSize: CHUNK, sessionURL: first.error.sessionURL });
  await assertUploaded(second, name, size, 26);
  const log = await requests();
  assert.equal(log.filter((e) => e.kind === "start").length, 0, "no new session");
  assert.ok(!chunks(log)[0].contentRange.startsWith("bytes 0-"), `resumed at ${chunks(log)[0].contentRange}`);
  assert.equal(second.result.sessionURL, first.error.sessionURL);
});

test("resume: true picks the session up again after a reload", async () => {
  const p = await env.openPage();
  const name = unique("reload");
  const url = ref.uploadURL(name);
  let before = await p.evaluate(async (url) => {
    const mu = await T.load();
    const file = T.file(1024 * 1024, 27, "reload.bin", { type: "application/x-test" });
    const up = mu.upload(file, { url, resume: true, chunkSize: 262144 });
    up.addEventListener("progress", (e) => e.confirmed >= 262144 && up.pause());
    const failed = up.then(() => "done", (e) => e.message);
    await Promise.race([T.until(() => up.state === "paused", 10000, "paused"), failed]);
    return { state: up.state, sessionURL: up.sessionURL, failed: up.state === "paused" ? "" : await failed };
  }, url);
  assert.equal(before.state, "paused", before.failed);
  before = before.sessionURL;
  assert.ok(before);
  await ref.clearLog();
  await p.reload();
  await p.waitForFunction(() => window.T);
  const out = await p.evaluate(async (url) => {
    const file = T.file(1024 * 1024, 27, "reload.bin", { type: "application/x-test" });
    return T.run(file, { url, resume: true, chunkSize: 262144 });
  }, url);
  await p.close();
  await assertUploaded(out, name, MiB, 27);
  const log = await requests();
  assert.equal(log.filter((e) => e.kind === "start").length, 0, "no new session after the reload");
  assert.equal(out.result.sessionURL, before);
  assert.ok(!chunks(log)[0].contentRange.startsWith("bytes 0-"), `resumed at ${chunks(log)[0].contentRange}`);
});

test("resume: true forgets the session of a finished upload, and needs a File and a resumable upload", async () => {
  const p = await env.openPage();
  const name = unique("forget");
  const out = await p.evaluate(async (url) => {
    // The records (IndexedDB "mediaupload", store "sessions") that are not marked done.
    const remembered = () =>
      new Promise((resolve) => {
        const req = indexedDB.open("mediaupload", 1);
        req.onsuccess = () => {
          const all = req.result.transaction("sessions").objectStore("sessions").getAll();
          all.onsuccess = () => resolve(all.result.filter((r) => !r.done).map((r) => r.sessionURL));
        };
        req.onerror = () => resolve(["no database"]);
      });
    const file = T.file(300000, 31, "forget.bin");
    const first = await T.run(file, { url, resume: true, chunkSize: 262144 });
    const afterDone = await remembered();
    const mu = await T.load();
    const codeOf = (up) => up.then(() => "ok", (e) => e.code);
    return {
      first: first.ok,
      afterDone,
      blob: await codeOf(mu.upload(new Blob(["x"]), { url, resume: true })),
      media: await codeOf(mu.upload(file, { url, resume: true, uploadType: "media" })),
    };
  }, ref.uploadURL(name));
  await p.close();
  assert.ok(out.first, "the first upload failed");
  assert.deepEqual(out.afterDone, [], "a finished upload's session is still remembered");
  assert.equal(out.blob, "invalid_argument");
  assert.equal(out.media, "invalid_argument");
});

test("request events reach a listener added after upload(), without onRequest", async () => {
  const p = await env.openPage();
  const name = unique("reqlisten");
  await ref.clearLog();
  const out = await p.evaluate(async (url) => {
    const mu = await T.load();
    const up = mu.upload(T.file(3 * 262144 + 5, 33, "r.bin"), { url, chunkSize: 262144 });
    const seen = [];
    up.addEventListener("request", (e) => seen.push([e.method, e.contentRange, e.status]));
    await up;
    return seen;
  }, ref.uploadURL(name));
  await p.close();
  const log = (await requests()).filter((e) => e.method !== "OPTIONS");
  assert.equal(out.length, log.length, JSON.stringify(out));
  assert.deepEqual(out.map((r) => r[2]), log.map((e) => e.status));
  assert.equal(out[0][0], "POST");
});

test("queryStatusEachChunk: a status query after every chunk", async () => {
  const name = unique("query");
  const size = MiB;
  const out = await run(size, 28, { url: ref.uploadURL(name), chunkSize: CHUNK, queryStatusEachChunk: true });
  await assertUploaded(out, name, size, 28);
  const kinds = (await requests()).map((e) => e.kind).join(" ");
  assert.match(kinds, /^start chunk query chunk query chunk query chunk( query)?$/);
  const queries = (await requests()).filter((e) => e.kind === "query");
  assert.ok(queries.every((q) => q.contentRange === `bytes */${size}`), JSON.stringify(queries.map((q) => q.contentRange)));
});

test("noRedirect308: the server answers 200 + override instead of 308, and that works", async () => {
  for (const noRedirect308 of [false, true]) {
    await ref.clearLog();
    const name = unique("no308");
    const out = await run(MiB, 29, { url: ref.uploadURL(name), chunkSize: CHUNK, noRedirect308 });
    await assertUploaded(out, name, MiB, 29);
    const statuses = chunks(await requests()).map((e) => e.status);
    const mid = noRedirect308 ? 200 : 308;
    assert.deepEqual(statuses, [mid, mid, mid, 201], `noRedirect308 ${noRedirect308}`);
  }
});

test('the 308 Range in the "plain" form (0-N) is understood', async () => {
  await ref.config({ rangeForm: "plain" });
  const name = unique("plain");
  const out = await run(MiB, 30, { url: ref.uploadURL(name), chunkSize: CHUNK });
  await assertUploaded(out, name, MiB, 30);
});

test("checksum: crc32c, md5 and both are sent and match the server's", async () => {
  for (const checksum of ["crc32c", "md5", "both"]) {
    const name = unique("sum");
    const size = 700 * KiB + 1;
    const out = await run(size, 31, { url: ref.uploadURL(name), chunkSize: CHUNK, checksum });
    await assertUploaded(out, name, size, 31);
  }
});

// ---------------------------------------------------------------------------------------------
// Faults, retries and every error code

test("retry after a 503: onRetry, the retry event, the retrying state, a status query", async () => {
  await ref.setFaults([{ on: "chunk", action: "status", status: 503, times: 1, skip: 1 }]);
  const name = unique("503");
  const size = MiB;
  const out = await run(size, 32, { url: ref.uploadURL(name), chunkSize: CHUNK, retry: { ...FAST_RETRY, initialDelayMs: 30 } });
  await assertUploaded(out, name, size, 32);
  const retries = callsOf(out, "onRetry");
  assert.equal(retries.length, 1);
  assert.equal(retries[0].attempt, 1);
  assert.equal(retries[0].status, 503);
  assert.equal(retries[0].delayMs, 30);
  const ev = out.events.filter((e) => e.type === "retry");
  assert.deepEqual(ev.map((e) => [e.attempt, e.status, e.delayMs]), [[1, 503, 30]]);
  const states = callsOf(out, "onStateChange");
  assert.ok(states.includes("retrying"), states.join());
  assert.equal(states.at(-1), "done");
  const kinds = (await requests()).map((e) => `${e.kind}:${e.status}`);
  const i = kinds.indexOf("chunk:503");
  // query:200, the status query's 308 in the no-308 form (the default).
  assert.equal(kinds[i + 1], "query:200", `docs/protocol.md section 4: ask for the status (${kinds.join(" ")})`);
});

test("retries_exhausted: waits double, never above maxDelayMs", async () => {
  await ref.setFaults([{ on: "chunk", action: "status", status: 503, times: -1 }]);
  const out = await run(10 * KiB, 33, {
    url: ref.uploadURL(unique("exhaust")),
    uploadType: "resumable",
    retry: { retries: 4, initialDelayMs: 20, maxDelayMs: 50, jitterMs: 0 },
  });
  assert.equal(out.ok, false);
  assert.equal(out.error.code, "retries_exhausted");
  assert.equal(out.error.status, 503);
  assert.ok(out.error.sessionURL);
  assert.equal(out.state, "failed");
  assertXHROrder(out.events, "error");
  const retries = callsOf(out, "onRetry");
  assert.deepEqual(retries.map((r) => r.attempt), [1, 2, 3, 4]);
  assert.deepEqual(retries.map((r) => r.delayMs), [20, 40, 50, 50]);

  // With jitter, a wait still never exceeds maxDelayMs.
  const jit = await run(10 * KiB, 33, {
    url: ref.uploadURL(unique("exhaust")),
    uploadType: "resumable",
    retry: { retries: 3, initialDelayMs: 10, maxDelayMs: 30, jitterMs: 1000 },
  });
  assert.equal(jit.error?.code, "retries_exhausted");
  const delays = callsOf(jit, "onRetry").map((r) => r.delayMs);
  assert.equal(delays.length, 3);
  assert.ok(delays.every((d) => d >= 10 && d <= 30), delays.join());
});

test("resume after a dropped connection", async () => {
  // Chromium silently re-sends a request whose reused connection closed before any answer,
  // so the connection is dropped twice for the script to see it fail once.
  await ref.setFaults([{ on: "chunk", action: "close", afterBytes: 100000, times: 2, skip: 1 }]);
  const name = unique("drop");
  const size = MiB;
  const out = await run(size, 34, { url: ref.uploadURL(name), chunkSize: CHUNK, retry: FAST_RETRY });
  await assertUploaded(out, name, size, 34);
  const failed = out.events.filter((e) => e.type === "request" && e.status === 0);
  assert.ok(failed.length >= 1 && failed[0].error, "the script saw the connection fail");
  const log = await requests();
  const i = log.findLastIndex((e) => e.fault.startsWith("close"));
  assert.ok(i > 0, "the fault fired");
  assert.equal(log[i + 1].kind, "query", `a status query after the lost connection: ${log.map((e) => e.kind)}`);
  assert.equal(log[i + 1].contentRange, `bytes */${size}`);
});

test("network_error when the connection keeps dropping", async () => {
  await ref.setFaults([{ on: "any", action: "close", afterBytes: 0, times: -1 }]);
  const out = await run(1000, 35, { url: ref.uploadURL(unique("net")), uploadType: "media", retry: FAST_RETRY });
  assert.equal(out.error?.code, "network_error");
  assert.equal(out.error.status, 0);
  assertXHROrder(out.events, "error");
  assert.ok(callsOf(out, "onRetry").length >= 1, "retried before giving up");
});

test("the server keeps fewer bytes than sent: go on from its offset, progress never backwards", async () => {
  await ref.setFaults([{ on: "chunk", action: "keep", keep: 1000, times: 1 }]);
  const name = unique("keep");
  const size = MiB;
  const out = await run(size, 36, { url: ref.uploadURL(name), chunkSize: CHUNK });
  await assertUploaded(out, name, size, 36);
  const ranges = chunks(await requests()).map((e) => e.contentRange);
  assert.equal(ranges[0], `bytes 0-262143/${size}`);
  assert.match(ranges[1], /^bytes 1000-/, ranges.join(", "));
  assert.ok(progressOf(out.events).some((p) => p.confirmed === 1000), "confirmed follows the server's Range");
});

for (const action of ["expire", "gone"]) {
  test(`a ${action === "expire" ? "404" : "410"} on the session starts a new one from byte 0`, async () => {
    await ref.setFaults([{ on: "chunk", action, times: 1, skip: 1 }]);
    const name = unique(action);
    const size = MiB;
    const out = await run(size, 37, { url: ref.uploadURL(name), chunkSize: CHUNK, retry: FAST_RETRY });
    await assertUploaded(out, name, size, 37);
    const log = await requests();
    const starts = log.map((e, i) => [e, i]).filter(([e]) => e.kind === "start");
    assert.equal(starts.length, 2, "a second session");
    assert.match(log[starts[1][1] + 1].contentRange, /^bytes 0-/);
  });
}

test("session_expired when new sessions keep expiring", async () => {
  await ref.setFaults([{ on: "chunk", action: "expire", times: -1 }]);
  const out = await run(1000, 38, { url: ref.uploadURL(unique("expired")), uploadType: "resumable", retry: FAST_RETRY });
  assert.equal(out.error?.code, "session_expired");
  assert.equal(out.error.status, 404);
  assertXHROrder(out.events, "error");
});

test("http_error: a 404 on a plain request is not retried", async () => {
  for (const uploadType of ["media", "resumable"]) {
    await ref.clearLog();
    const out = await run(1000, 39, {
      url: ref.uploadURL(unique("http"), { path: "/notupload/b/test/o" }), uploadType, retry: FAST_RETRY,
    });
    assert.equal(out.ok, false);
    assert.equal(out.error.code, "http_error", uploadType);
    assert.equal(out.error.status, 404);
    assert.match(out.error.responseText, /not an upload path/);
    assert.ok(out.error.isMediaUploadError && out.error.isError);
    assert.equal(out.error.name, "MediaUploadError");
    assert.equal(callsOf(out, "onRetry").length, 0);
    assert.equal((await requests()).length, 1);
    assertXHROrder(out.events, "error");
    const err = out.events.find((e) => e.type === "error");
    assert.equal(err.error.code, "http_error", "the error event carries the error");
  }
});

test("protocol_error: no Location after starting a session; a Range beyond what was sent", async () => {
  for (const path of ["/fake/nolocation/upload", "/fake/overrange/upload"]) {
    const out = await run(MiB, 40, { url: `${web.url}${path}?uploadType=resumable&name=x`, chunkSize: CHUNK, retry: FAST_RETRY });
    assert.equal(out.error?.code, "protocol_error", `${path}: ${JSON.stringify(out.error)}`);
    assertXHROrder(out.events, "error");
  }
});

test("checksum_mismatch: the server's hashes differ from the file's", async () => {
  for (const checksum of ["crc32c", "md5", "both"]) {
    const out = await run(300 * KiB, 41, { url: `${web.url}/fake/badhash/upload?name=x`, chunkSize: CHUNK, checksum });
    assert.equal(out.error?.code, "checksum_mismatch", `${checksum}: ${JSON.stringify(out.error)}`);
  }
  // Without checksum the same answers are accepted.
  const out = await run(300 * KiB, 41, { url: `${web.url}/fake/badhash/upload?name=x`, chunkSize: CHUNK });
  assert.ok(out.ok, JSON.stringify(out.error));
});

test("invalid_argument: bad calls reject (never throw), fire error, send nothing", async () => {
  const url = ref.uploadURL("never");
  const results = await page.evaluate(async (url) => {
    const mu = await T.load();
    const cases = {
      "not a Blob": ["hello", { url }],
      "null blob": [null, { url }],
      "no options": [new Blob(["x"]), undefined],
      "no url": [new Blob(["x"]), {}],
      "chunkSize 1000": [new Blob(["x"]), { url, chunkSize: 1000 }],
      "negative chunkSize": [new Blob(["x"]), { url, chunkSize: -262144 }],
      "unknown uploadType": [new Blob(["x"]), { url, uploadType: "simple" }],
      "onProgress not a function": [new Blob(["x"]), { url, onProgress: 3 }],
    };
    const out = {};
    for (const [label, [blob, options]] of Object.entries(cases)) {
      let threw = null, up;
      try {
        up = mu.upload(blob, options);
      } catch (e) {
        threw = String(e);
      }
      if (threw) { out[label] = { threw }; continue; }
      const events = T.record(up);
      const err = await up.then(() => null, (e) => T.errorData(e));
      out[label] = { err, events: events.map((e) => e.type), state: up.state };
    }
    return out;
  }, url);
  for (const [label, r] of Object.entries(results)) {
    assert.equal(r.threw, undefined, `${label}: threw ${r.threw}`);
    assert.equal(r.err?.code, "invalid_argument", `${label}: ${JSON.stringify(r.err)}`);
    assert.ok(r.err.isMediaUploadError, label);
    assert.deepEqual(r.events, ["loadstart", "statechange", "error", "loadend"], label);
    assert.equal(r.state, "failed", label);
  }
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await ref.log(), [], "no request reached the server");
});

// ---------------------------------------------------------------------------------------------
// Events, state, pause, resume, abort

test("events: the XHR order, dispatched later, callbacks with them, the promise after loadend", async () => {
  const name = unique("events");
  const size = MiB + 5;
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const log = [];
    let inside = true;
    const up = mu.upload(T.blob(1024 * 1024 + 5, 42), {
      url, chunkSize: 262144,
      onProgress: (p) => log.push(["onProgress", inside, p.loaded]),
      onStateChange: (s) => log.push(["onStateChange", inside, s]),
      onRequest: (r) => log.push(["onRequest", inside, r.method, r.status]),
    });
    inside = false;
    const events = T.record(up);
    const stateRightAfter = up.state;
    await up;
    const atSettle = events.length;
    await T.sleep(100);
    return { log, events, atSettle, stateRightAfter, final: up.state, sessionURL: up.sessionURL };
  }, ref.uploadURL(name));
  assert.ok(out.log.every(([, inside]) => !inside), "nothing is called inside mu.upload");
  assert.equal(out.stateRightAfter, "starting");
  assertXHROrder(out.events, "load");
  assertProgress(out.events, size);
  assert.equal(out.atSettle, out.events.length, "no event after the promise settles");
  assert.equal(out.events.at(-1).type, "loadend");
  assert.equal(out.final, "done");
  assert.ok(out.sessionURL?.includes("upload_id="), out.sessionURL);
  // Callbacks and events agree.
  const progress = progressOf(out.events).map((e) => e.loaded);
  assert.deepEqual(out.log.filter((l) => l[0] === "onProgress").map((l) => l[2]), progress);
  const states = out.events.filter((e) => e.type === "statechange").map((e) => e.state);
  assert.deepEqual(out.log.filter((l) => l[0] === "onStateChange").map((l) => l[2]), states);
  assert.ok(states.includes("uploading"));
  assert.equal(states.at(-1), "done");
  assert.ok(out.events.findIndex((e) => e.state === "done") < out.events.findIndex((e) => e.type === "load"));
  // One request event per request the server saw.
  const reqs = out.events.filter((e) => e.type === "request");
  const log = await requests();
  assert.equal(reqs.length, log.length);
  assert.deepEqual(reqs.map((r) => [r.method, r.status]), log.map((e) => [e.method, e.status]));
  assert.ok(reqs.every((r) => r.url.startsWith(ref.url) && typeof r.ms === "number"));
  assert.deepEqual(reqs.map((r) => r.contentRange), log.map((e) => e.contentRange));
  assert.equal(out.log.filter((l) => l[0] === "onRequest").length, reqs.length);
  await assertStored(name, size, 42);
});

test("pause stops after the request in flight; resume goes on", async () => {
  const name = unique("pause");
  const size = 4 * MiB;
  const out = await page.evaluate(async ([url, logURL]) => {
    const mu = await T.load();
    const up = mu.upload(T.blob(4 * 1024 * 1024, 43), { url, chunkSize: 262144 });
    const events = T.record(up);
    let paused = false;
    up.addEventListener("progress", (e) => {
      if (!paused && e.confirmed > 0) {
        paused = true;
        up.pause();
      }
    });
    await T.until(() => up.state === "paused", 10000, "paused");
    const count = async () => (await (await fetch(logURL)).json()).filter((e) => e.kind === "chunk").length;
    await T.sleep(300); // the request in flight ends (the log has a request once it is answered)
    const a = await count();
    await T.sleep(400);
    const b = await count();
    const pausedState = up.state;
    up.resume();
    const r = await up.then(() => "ok", (e) => e.code);
    return { a, b, pausedState, r, events, state: up.state };
  }, [ref.uploadURL(name), `${ref.url}/_ref/log`]);
  assert.equal(out.pausedState, "paused");
  assert.equal(out.a, out.b, "no chunk is sent while paused");
  assert.ok(out.a < 16, `paused after ${out.a} of 16 chunks`);
  assert.equal(out.r, "ok");
  const states = out.events.filter((e) => e.type === "statechange").map((e) => e.state);
  const p = states.indexOf("paused");
  assert.ok(p > 0 && states.slice(p + 1).includes("uploading"), states.join());
  assertXHROrder(out.events, "load");
  assertProgress(out.events, size);
  await assertStored(name, size, 43);
});

test("abort: rejects with aborted, fires abort then loadend, stops sending", async () => {
  const name = unique("abort");
  const out = await page.evaluate(async ([url, logURL]) => {
    const mu = await T.load();
    const up = mu.upload(T.blob(4 * 1024 * 1024, 44), { url, chunkSize: 262144 });
    const events = T.record(up);
    up.addEventListener("progress", (e) => e.confirmed > 0 && up.abort());
    const err = await up.then(() => null, (e) => T.errorData(e));
    const count = async () => (await (await fetch(logURL)).json()).filter((e) => e.kind === "chunk").length;
    await T.sleep(100);
    const a = await count();
    await T.sleep(400);
    const b = await count();
    up.abort(); // again: nothing happens
    up.resume();
    await T.sleep(50);
    return { err, events, state: up.state, a, b, sessionURL: up.sessionURL };
  }, [ref.uploadURL(name), `${ref.url}/_ref/log`]);
  assert.equal(out.err.code, "aborted");
  assert.ok(out.err.isMediaUploadError);
  assert.equal(out.err.sessionURL, out.sessionURL);
  assert.equal(out.state, "aborted");
  assertXHROrder(out.events, "abort");
  assert.equal(out.events.filter((e) => e.type === "loadend").length, 1, "one loadend, even after abort again");
  assert.equal(out.a, out.b, "nothing is sent after abort");
  assert.ok(out.a < 16);
  assert.equal(await ref.object(name), undefined);
});

test("signal: aborting it aborts; an already aborted signal sends nothing", async () => {
  const name = unique("signal");
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const c = new AbortController();
    const running = await T.run(T.blob(4 * 1024 * 1024, 45), {
      url, chunkSize: 262144, signal: c.signal, onProgress: (p) => p.confirmed > 0 && c.abort(),
    });
    const done = new AbortController();
    done.abort();
    const early = await T.run(T.blob(1000, 45), { url: url + "-early", signal: done.signal });
    return { running, early };
  }, ref.uploadURL(name));
  assert.equal(out.running.error?.code, "aborted");
  assertXHROrder(out.running.events, "abort");
  assert.equal(out.running.state, "aborted");
  assert.equal(out.early.error?.code, "aborted");
  assert.deepEqual(xhrTypes(out.early.events), ["loadstart", "abort", "loadend"]);
  const log = await requests();
  assert.ok(log.every((e) => !e.query.includes("-early")), "nothing sent for the aborted signal");
});

test("thenable: await, then, catch and finally; no unhandled rejection for event-only users", async () => {
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const unhandled = [];
    const onUnhandled = (e) => unhandled.push(String(e.reason?.code ?? e.reason));
    window.addEventListener("unhandledrejection", onUnhandled);
    const r = {};
    r.awaited = (await mu.upload(T.blob(100, 46), { url, uploadType: "media" })).status;
    r.then = await mu.upload(T.blob(100, 46), { url, uploadType: "media" }).then((x) => x.status);
    r.catch = await mu.upload("x", { url }).catch((e) => e.code);
    r.thenReject = await mu.upload("x", { url }).then(() => "resolved", (e) => e.code);
    r.finally = await mu.upload("x", { url }).finally(() => {}).then(() => "resolved", (e) => e.code);
    try {
      await mu.upload("x", { url });
    } catch (e) {
      r.tryCatch = e.code;
    }
    const up = mu.upload("x", { url });
    r.isPromise = up.promise instanceof Promise;
    // Event-only users: an error and an abort nobody awaits.
    let errors = 0;
    up.addEventListener("error", () => errors++);
    const up2 = mu.upload(T.blob(1000, 46), { url });
    up2.addEventListener("abort", () => errors++);
    up2.abort();
    await T.sleep(300);
    window.removeEventListener("unhandledrejection", onUnhandled);
    return { ...r, errors, unhandled };
  }, ref.uploadURL(unique("then")));
  assert.equal(out.awaited, 200);
  assert.equal(out.then, 200);
  assert.equal(out.catch, "invalid_argument");
  assert.equal(out.thenReject, "invalid_argument");
  assert.equal(out.finally, "invalid_argument");
  assert.equal(out.tryCatch, "invalid_argument");
  assert.ok(out.isPromise);
  assert.equal(out.errors, 2);
  assert.deepEqual(out.unhandled, []);
});

test("MediaUploadError is exported and carries its fields", async () => {
  const out = await page.evaluate(async () => {
    await T.load();
    const { MediaUploadError } = T.module;
    const e = new MediaUploadError("http_error", "core: forbidden", { status: 403, responseText: "no", sessionURL: "s" });
    const bare = new MediaUploadError("aborted", "m");
    return {
      isError: e instanceof Error, name: e.name, code: e.code, message: e.message, status: e.status,
      responseText: e.responseText, sessionURL: e.sessionURL, stack: typeof e.stack,
      bare: [bare.status, bare.responseText, bare.sessionURL],
    };
  });
  assert.deepEqual(out, {
    isError: true, name: "MediaUploadError", code: "http_error", message: "core: forbidden", status: 403,
    responseText: "no", sessionURL: "s", stack: "string", bare: [0, "", null],
  });
});
