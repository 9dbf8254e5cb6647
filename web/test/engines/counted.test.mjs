// Progress inside a chunk (issue "Slow links", docs/protocol.md section 8), in every engine,
// over an emulated link (the reference server reads bodies at its rate: /_ref/config "link").
// Where the engine sends a ReadableStream request body (Chromium, over HTTP/2 only), the module
// sends each chunk's bytes as a counted stream and `loaded` moves inside the chunk; `confirmed`
// moves only with the server's answers, and `loaded` never goes back. Over HTTP/1.1 the stream
// fails before a byte goes and the same chunk goes again at once as a Blob: no retry, no extra
// request at the server, byte-exact. Engines that take no stream bodies (Firefox, WebKit) send
// Blobs from the start, and their progress moves at the answers only.
// Run: node --test web/test/engines/counted.test.mjs   (MEDIAUPLOAD_ENGINES=chromium for one)

import assert from "node:assert/strict";
import { MiB, forEachEngine, useEnv } from "../harness.mjs";

// 16 Mbit/s (2 MB/s) and 20 ms: a 4 MiB chunk takes about 2.1 s of the link.
const LINK = { bitsPerSecond: 16_000_000, rttMs: 20 };
const CHUNK = 4 * MiB;
const SIZE = 2 * CHUNK + 100_000; // three chunks, the last short

// What the progress events of an upload show: the longest wait between them while it ran, the
// reports inside a chunk (loaded not at a chunk's end), and the rules every report keeps.
// bounds: where the chunks sent ended (the server confirms no other offsets here).
function progressOf(events, bounds) {
  const p = events.filter((e) => e.type === "progress");
  let gap = 0;
  for (let i = 1; i < p.length; i++) gap = Math.max(gap, p[i].t - p[i - 1].t);
  const back = p.filter((e, i) => i > 0 && e.loaded < p[i - 1].loaded);
  const ahead = p.filter((e) => e.confirmed > e.loaded);
  const unconfirmed = p.filter((e) => !bounds.has(e.confirmed));
  return { count: p.length, inside: p.filter((e) => !bounds.has(e.loaded)).length, gap, back, ahead, unconfirmed, last: p.at(-1) };
}

forEachEngine((engine) => {
  let env, ref, page, streams;
  const { test, unique } = useEnv(async (e) => {
    env = e;
    ref = e.ref;
    page = await env.openPage();
    streams = await page.evaluate(() => T.streamBodies());
  }, { engine, tls: true, timeout: 120_000 });

  const upload = async (name, options, over = {}, on = page, link = LINK) => {
    await ref.clearLog();
    await ref.config({ link });
    const out = await on.evaluate(
      ({ url, size, options }) => T.run(T.blob(size, 81), { url, ...options }),
      { url: ref.uploadURL(name, over), size: SIZE, options },
    );
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.deepEqual(await env.checkStored(name, SIZE, 81), []);
    const log = (await ref.log()).filter((e) => e.kind !== "preflight");
    const chunks = log.filter((e) => e.kind === "chunk");
    const bounds = new Set([0, ...chunks.map((c) => Number(/-(\d+)\//.exec(c.contentRange)[1]) + 1)]);
    return { out, log, chunks, p: progressOf(out.events, bounds) };
  };

  const rules = (p) => {
    assert.deepEqual(p.back, [], "loaded never goes back");
    assert.deepEqual(p.ahead, [], "confirmed is never ahead of loaded");
    assert.deepEqual(p.unconfirmed, [], "confirmed moves only to what the server's answers confirmed");
    assert.equal(p.last.loaded, SIZE);
    assert.equal(p.last.confirmed, SIZE);
  };

  test("over HTTP/2: progress inside each chunk where the engine streams request bodies, at the answers elsewhere", async () => {
    const { out, chunks, p } = await upload(unique("counted-h2"), { chunkSize: CHUNK });
    rules(p);
    assert.equal(chunks.length, 3, "each chunk once");
    assert.ok(chunks.every((c) => c.proto === "HTTP/2.0"), chunks.map((c) => c.proto).join());
    assert.equal(out.events.filter((e) => e.type === "retry").length, 0, "no retry");
    console.log(
      `# ${env.engineVersion}: stream bodies ${streams ? "detected" : "not detected"}; over HTTP/2, 3 chunks of a ` +
        `16 Mbit/s link: ${p.count} progress reports, ${p.inside} inside a chunk, longest wait ${(p.gap / 1000).toFixed(2)} s; ` +
        `chunk bodies ${chunks.map((c) => (c.contentLength === -1 ? "streamed" : `Content-Length ${c.contentLength}`)).join(", ")}`,
    );
    if (streams) {
      // Every chunk streamed (no Content-Length), reported several times while under way.
      assert.ok(chunks.every((c) => c.contentLength === -1), "chunks sent as streams");
      assert.ok(p.inside >= 6, `${p.inside} reports inside chunks`);
      assert.ok(p.gap < 1000, `longest wait ${p.gap} ms with chunks of ~2 s`);
    } else {
      // Blob bodies: the bar moves at the answers, about 2 s apart here.
      assert.ok(chunks.every((c) => c.contentLength > 0), "chunks sent as Blobs");
      assert.equal(p.inside, 0, "no report inside a chunk");
      assert.ok(p.gap > 1000, `longest wait ${p.gap} ms`);
    }
  });

  // (Chromium's console shows the one stream that failed: "net::ERR_ALPN_NEGOTIATION_FAILED".)
  for (const mode of ["page", "worker"]) {
    test(`over HTTP/1.1: a stream the engine cannot send goes again at once as a Blob, at no cost in retries (${mode} mode)`, async () => {
      // HTTPS that offers HTTP/1.1 only: Chromium tries one stream, which fails before a byte
      // goes. On the page its console line tells; in the module's Worker the line is the
      // Worker's, which the drivers do not all report, so there the test's worker script counts
      // the stream bodies the host gave fetch (worker-hooks.js).
      const onPage = await env.openPage();
      try {
        await onPage.evaluate((worker) => (worker ? T.loadHooked() : T.load({ worker: false })), mode === "worker");
        const consoleErrors = async () => (await onPage.errors()).filter((e) => !/favicon/.test(e));
        const streamsTried = () => onPage.evaluate(async () => (T.workerCounts ? (await T.workerCounts()).streams : null));
        const before = (await consoleErrors()).length;
        await streamsTried(); // from here on
        const first = await upload(unique("counted-h1"), { chunkSize: CHUNK }, { h1tls: true }, onPage);
        rules(first.p);
        assert.equal(first.chunks.length, 3, "each chunk reached the server once");
        assert.ok(first.chunks.every((c) => c.proto === "HTTP/1.1" && c.contentLength > 0));
        assert.equal(first.out.events.filter((e) => e.type === "retry").length, 0, "no retry");
        assert.equal(first.out.events.filter((e) => e.type === "request").length, 4, "the page saw one start and three chunks");
        assert.equal(first.p.inside, 0, "nothing counted inside a Blob body");
        const tried = (await consoleErrors()).slice(before);
        const firstStreams = await streamsTried();
        // The origin is known now: the next upload sends Blobs from the start (the same
        // outcome, and no other failed stream). It and the next need no slow link to show it.
        const fast = { bitsPerSecond: 0, rttMs: 0 };
        const second = await upload(unique("counted-h1-again"), { chunkSize: CHUNK }, { h1tls: true }, onPage, fast);
        rules(second.p);
        assert.equal(second.chunks.length, 3);
        assert.equal(second.out.events.filter((e) => e.type === "retry").length, 0);
        // Plain http: is never HTTP/2 in a browser: no stream is tried at all.
        const plain = await upload(unique("counted-http"), { chunkSize: CHUNK }, { http: true }, onPage, fast);
        rules(plain.p);
        assert.equal(plain.chunks.length, 3);
        const after = (await consoleErrors()).slice(before);
        const laterStreams = await streamsTried();
        console.log(
          `# ${env.engineVersion}, ${mode} mode: HTTPS with HTTP/1.1 only: 3 chunks as Blobs, no retry, longest wait ${(first.p.gap / 1000).toFixed(2)} s; ` +
            `console: ${tried.length ? tried.join("; ") : "nothing"}` +
            (mode === "worker" ? `; stream bodies the Worker's host tried: ${firstStreams}, then ${laterStreams} in the next two uploads` : ""),
        );
        if (mode === "page") {
          assert.equal(tried.length, streams ? 1 : 0, `one stream tried where the engine has them: ${tried}`);
        } else {
          assert.equal(firstStreams, streams ? 1 : 0, "one stream tried where the engine has them");
          assert.equal(laterStreams, 0, "nothing more tried: not on the same origin, not over http:");
          assert.ok(tried.length <= (streams ? 1 : 0), `console: ${tried}`);
        }
        assert.deepEqual(after, tried, "nothing more tried: not on the same origin, not over http:");
      } finally {
        await onPage.close();
      }
    });
  }

  test('at "auto" over HTTP/2: long chunks where progress comes from inside them, short ones elsewhere', async () => {
    const { chunks, p } = await upload(unique("counted-auto"), {});
    rules(p);
    console.log(
      `# ${env.engineVersion}: "auto" over HTTP/2: ${chunks.length} chunks (${chunks.map((c) => c.contentLength === -1 ? "stream" : c.contentLength).join(", ")}), ` +
        `${p.count} progress reports, longest wait ${(p.gap / 1000).toFixed(2)} s (from the first report, at the upload's start)`,
    );
    // What the user sees is bounded, not the bytes: a chunk sized from a measured rate is no
    // exact figure (WebKit once sent 3,407,872 bytes, 1.7 s of this link). Each bound is twice
    // what the module aims at, its cost at half of it.
    if (streams) {
      // Counted chunks are sized for ~10 s of the link (the first, on a page that knows nothing
      // of it, 4 MiB: core/chunksize.go): the 8 MiB go in two or three, and progress comes from
      // inside them, a count every 200 ms paced by the link's rate: within 0.5 s (the session
      // start and the first PUT's preflight, two counts), at most 1 s apart.
      assert.ok(chunks.length <= 4, `${chunks.length} chunks`);
      assert.ok(p.gap <= 1000, `longest wait ${p.gap} ms`);
    } else {
      // Progress comes at the answers: chunks sized to keep the bar moving every 1-1.6 s
      // (progressIntervalMs's default, core/chunksize.go), each with its round trip: at most
      // 3.2 s apart, and short chunks, not one long one.
      assert.ok(chunks.length >= 4, `${chunks.length} chunks`);
      assert.ok(p.gap <= 3200, `longest wait ${p.gap} ms (chunks of ${chunks.map((c) => c.contentLength)})`);
    }
  });

  // The host runs in the Worker with the File there: it counts the same way.
  test("in worker mode, the same", async () => {
    const wpage = await env.openPage();
    try {
      await wpage.evaluate(() => {
        const load = T.load.bind(T);
        T.load = (options) => load({ ...options, worker: true });
      });
      const { chunks, p } = await upload(unique("counted-worker"), { chunkSize: CHUNK }, {}, wpage);
      rules(p);
      assert.equal(chunks.length, 3);
      console.log(`# ${env.engineVersion}: worker mode over HTTP/2: ${p.inside} progress reports inside a chunk, longest wait ${(p.gap / 1000).toFixed(2)} s`);
      if (streams) {
        assert.ok(chunks.every((c) => c.contentLength === -1), "chunks sent as streams");
        assert.ok(p.inside >= 6 && p.gap < 1000, `${p.inside} inside, longest wait ${p.gap} ms`);
      } else {
        assert.equal(p.inside, 0);
      }
    } finally {
      await wpage.close();
    }
  });
});
