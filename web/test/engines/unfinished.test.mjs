// Unfinished uploads survive the page (docs/api.md, "Unfinished uploads"), in every engine: an
// upload with resume: true left halfway by a reload is listed by mu.unfinished() with what its
// server holds, and goes on from there without a new session. Where the engine has the origin
// private file system (Chromium, Firefox: checked in the page), the source is a
// FileSystemFileHandle from it, kept with the record: resume() needs no file picker. Where it
// has not (WebKitGTK), the record says the file must be picked again, and resume({ file }) with
// the file picked again goes on. A file changed since is source_error, never mixed bytes (and
// its record goes where the file came from the record's own handle); a record forgotten, or
// whose session is gone, is not listed, nor is one whose upload was aborted or failed for good,
// from the moment its promise rejects, and after a reload right after; one an upload runs, or
// waits for, is listed as running (a resume() waiting behind an aborted upload goes on with its
// session).
// Run: node --test web/test/engines/unfinished.test.mjs

import assert from "node:assert/strict";
import { MiB, forEachEngine, useEnv } from "../harness.mjs";

const SIZE = 4 * MiB;

forEachEngine((engine) => {
  let env, ref;
  const { test, unique } = useEnv((e) => {
    env = e;
    ref = e.ref;
  }, { engine, timeout: 120_000 });

  // Opens a page, makes the file `name` (in the origin private file system where the engine
  // has one), starts its upload with resume: true over a slow link, and reloads the page once
  // the server holds at least 1 MiB of it. Resolves to { page, opfs }.
  async function leftHalfway(name, seed) {
    const page = await env.openPage();
    await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } }); // 2 MB/s: 4 MiB takes 2 s
    const opfs = await page.evaluate(async ({ name, seed, size, url }) => {
      const mu = await T.load();
      const opfs = typeof navigator.storage?.getDirectory === "function";
      let source;
      if (opfs) {
        const root = await navigator.storage.getDirectory();
        source = await root.getFileHandle(name, { create: true });
        const w = await source.createWritable();
        await w.write(T.bytes(size, seed));
        await w.close();
      } else {
        source = T.file(size, seed, name);
      }
      window.confirmed = 0;
      mu.upload(source, { url, resume: true, chunkSize: 512 * 1024, onProgress: (p) => (window.confirmed = p.confirmed) }).catch(() => {});
      return opfs;
    }, { name, seed, size: SIZE, url: ref.uploadURL(name) });
    await page.waitForFunction(() => window.confirmed >= 1024 * 1024, undefined, { timeout: 30_000 });
    await page.reload();
    await page.waitForFunction(() => window.T);
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    return { page, opfs };
  }

  // The page's list, as plain data.
  const list = (page) =>
    page.evaluate(async () =>
      (await (await T.load()).unfinished()).map(({ key, name, size, type, url, method, confirmed, canResume, running, startedAt, touchedAt }) => ({
        key, name, size, type, url, method, confirmed, canResume, running, startedAt, touchedAt,
      })),
    );

  test("listed after a reload with what the server holds; resumed without a new session, byte-exact", async () => {
    const name = unique("left") + ".bin";
    const { page, opfs } = await leftHalfway(name, 11);
    try {
      const rows = (await list(page)).filter((r) => r.name === name);
      assert.equal(rows.length, 1, `unfinished() lists ${name}: ${JSON.stringify(rows)}`);
      const [row] = rows;
      assert.equal(row.size, SIZE);
      assert.equal(row.url, ref.uploadURL(name));
      assert.ok(row.confirmed >= MiB && row.confirmed < SIZE, `confirmed ${row.confirmed}`);
      assert.ok(row.startedAt <= row.touchedAt && row.touchedAt <= Date.now());
      assert.equal(row.running, false, "the page that ran it is gone");
      // A handle from the origin private file system is kept where the engine has one.
      assert.equal(row.canResume, opfs, `canResume in ${engine}`);
      await ref.clearLog();
      const out = await page.evaluate(async ({ name, size, seed }) => {
        const mu = await T.load();
        const u = (await mu.unfinished()).find((r) => r.name === name);
        const r = { canResume: u.canResume };
        if (!u.canResume) {
          // Nothing to read the file by: it must be picked again.
          r.without = await u.resume().then(() => null, (e) => ({ code: e.code, message: e.message }));
          // Picked again: the same file.
          await u.resume({ file: T.file(size, seed, name) }).then((res) => (r.status = res.status));
        } else {
          await u.resume().then((res) => (r.status = res.status));
        }
        r.after = (await mu.unfinished()).filter((x) => x.name === name).length;
        return r;
      }, { name, size: SIZE, seed: 11 });
      assert.equal(out.status, 201, JSON.stringify(out));
      if (!out.canResume) {
        assert.equal(out.without.code, "invalid_argument");
        assert.match(out.without.message, /pick the file again/);
      }
      assert.equal(out.after, 0, "a finished upload is no longer listed");
      const log = (await ref.log()).filter((e) => e.kind !== "preflight" && e.path.includes("/upload/"));
      assert.equal(log.filter((e) => e.kind === "start").length, 0, `no new session: ${log.map((e) => e.kind).join(" ")}`);
      const sent = log.filter((e) => e.kind === "chunk").reduce((n, e) => n + e.contentLength, 0);
      assert.ok(sent <= SIZE - MiB, `only the rest was sent (${sent} bytes)`);
      assert.deepEqual(await env.checkStored(name, SIZE, 11), []);
      console.log(`# ${env.engineVersion}: origin private file system ${opfs ? "yes: resumed from its handle" : "no: the file picked again"}`);
    } finally {
      await page.close();
    }
  });

  test("a file changed since its upload began is source_error, and nothing is stored", async () => {
    const name = unique("changed") + ".bin";
    const { page, opfs } = await leftHalfway(name, 12);
    try {
      const out = await page.evaluate(async ({ name, size, opfs }) => {
        const mu = await T.load();
        let file;
        if (opfs) {
          // Rewritten in place: other bytes, a new modification time.
          await new Promise((r) => setTimeout(r, 20));
          const fh = await (await navigator.storage.getDirectory()).getFileHandle(name);
          const w = await fh.createWritable();
          await w.write(T.bytes(size, 99));
          await w.close();
        } else {
          file = T.file(size, 99, name, { lastModified: 1800000000000 });
        }
        const u = (await mu.unfinished()).find((r) => r.name === name);
        return u.resume(file ? { file } : {}).then(() => ({ ok: true }), (e) => ({ code: e.code, message: e.message }));
      }, { name, size: SIZE, opfs });
      assert.equal(out.code, "source_error", JSON.stringify(out));
      assert.match(out.message, /not the one this upload began with/);
      assert.equal(await ref.object(name), undefined, "nothing stored");
      // Its own handle's file changed: that upload can never be finished, and its record goes.
      // A file picked again that differs may be the wrong one picked: the record stays.
      const listed = (await list(page)).some((r) => r.name === name);
      assert.equal(listed, !opfs, opfs ? "a record whose handle's file changed is still listed" : "a record is gone after a wrong file was offered");
    } finally {
      await page.close();
    }
  });

  test("aborted, or failed for good: not listed once its promise rejects, nor after a reload right after; a failure a later try can mend keeps it", async () => {
    const page = await env.openPage();
    const names = { aborted: unique("aborted"), refused: unique("refused"), exhausted: unique("exhausted"), reloaded: unique("reloaded") };
    // Starts the upload of a File named name with resume: true (window.up), its failure or
    // success in window.ended: the code, and whether unfinished() listed it the moment the
    // promise settled. Resolves once the server has confirmed a first chunk, or it ended.
    const start = (name, seed, retry) =>
      page.evaluate(async ({ name, seed, url, retry }) => {
        const mu = await T.load();
        window.ended = null;
        let confirmed = 0;
        const up = (window.up = mu.upload(T.file(2 * 1024 * 1024, seed, name), { url, resume: true, chunkSize: 256 * 1024, retry, onProgress: (p) => (confirmed = p.confirmed) }));
        const listed = async () => (await mu.unfinished()).some((u) => u.name === name);
        up.then(
          async () => (window.ended = { code: "done", listed: await listed() }),
          async (e) => (window.ended = { code: e.code, listed: await listed() }),
        );
        await T.until(() => confirmed > 0 || window.ended, 20_000, "a first chunk confirmed");
        await T.sleep(50); // the record saved (IndexedDB) with the session
      }, { name, seed, url: ref.uploadURL(name), retry });
    const ended = () => page.waitForFunction(() => window.ended, undefined, { timeout: 30_000 });
    const seen = {}; // each case's end, and whether it was listed then; at the end, after a reload
    try {
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } }); // 2 MB/s: 2 MiB take 1 s
      await start(names.aborted, 31);
      await page.evaluate(() => window.up.abort());
      seen.aborted = await ended();

      await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
      await ref.setFaults([{ on: "chunk", action: "status", status: 403, skip: 1 }]);
      await start(names.refused, 32);
      seen.refused = await ended();

      const fast = { retries: 1, initialDelayMs: 10, maxDelayMs: 10, jitterMs: 0 };
      await ref.setFaults([{ on: "chunk", action: "status", status: 503, skip: 1, times: -1 }]);
      await start(names.exhausted, 33, fast);
      seen.exhausted = await ended();
      await ref.clearFaults();

      // Aborted, and the page reloaded at once: nothing brings the record back.
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } });
      await start(names.reloaded, 34);
      await page.evaluate(() => window.up.abort());
      await page.reload();
      await page.waitForFunction(() => window.T);
      await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
      const after = new Set((await list(page)).map((r) => r.name));
      seen.afterReload = Object.fromEntries(Object.entries(names).map(([k, n]) => [k, after.has(n)]));
      assert.deepEqual(seen, {
        aborted: { code: "aborted", listed: false },
        refused: { code: "http_error", listed: false },
        exhausted: { code: "retries_exhausted", listed: true }, // a later try can get past it
        afterReload: { aborted: false, refused: false, exhausted: true, reloaded: false },
      });
    } finally {
      await page.close();
    }
  });

  test("a resume() that waits in the same tab is listed running, and takes the session over when the upload it waits for is aborted", async () => {
    const page = await env.openPage();
    const name = unique("takeover") + ".bin";
    try {
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 10 } }); // 2 MB/s: 2 MiB take 1 s
      const out = await page.evaluate(async ({ name, url }) => {
        const mu = await T.load();
        const file = () => T.file(2 * 1024 * 1024, 35, name);
        const running = async () => (await mu.unfinished()).filter((u) => u.name === name).map((u) => u.running);
        let confirmed = 0;
        const a = mu.upload(file(), { url, resume: true, chunkSize: 256 * 1024, onProgress: (p) => (confirmed = p.confirmed) });
        a.catch(() => {});
        await T.until(() => confirmed > 0, 20_000, "a first chunk confirmed");
        await T.sleep(50); // the record saved with the session
        const r = { whileA: await running() };
        const [u] = (await mu.unfinished()).filter((x) => x.name === name);
        const b = u.resume({ file: file() });
        await T.sleep(100);
        r.b = b.state;
        r.whileBWaits = await running();
        a.abort();
        r.result = await b.then((res) => res.status, (e) => e.code);
        r.after = await running();
        return r;
      }, { name, url: ref.uploadURL(name) });
      assert.deepEqual(out, { whileA: [true], b: "queued", whileBWaits: [true], result: 201, after: [] });
      const starts = (await ref.log()).filter((e) => e.kind === "start").length;
      assert.equal(starts, 1, "the waiting upload went on with the aborted one's session");
      assert.deepEqual(await env.checkStored(name, 2 * MiB, 35), []);
    } finally {
      await page.close();
    }
  });

  test("forgotten, or its session gone: not listed any more", async () => {
    const a = unique("forget") + ".bin";
    const b = unique("gone") + ".bin";
    const first = await leftHalfway(a, 13);
    await first.page.close();
    const { page } = await leftHalfway(b, 14);
    try {
      const names = (await list(page)).map((r) => r.name);
      assert.ok(names.includes(a) && names.includes(b), JSON.stringify(names));
      await page.evaluate(async (a) => {
        const u = (await (await T.load()).unfinished()).find((r) => r.name === a);
        await u.forget();
      }, a);
      // b's session expires on the server: the next status query gets a 404.
      await ref.setFaults([{ on: "query", action: "expire", times: -1 }]);
      const after = (await list(page)).map((r) => r.name);
      assert.ok(!after.includes(a), "a forgotten record is not listed");
      assert.ok(!after.includes(b), "a record whose session is gone is not listed");
      await ref.clearFaults();
      assert.ok(!(await list(page)).map((r) => r.name).includes(b), "and it was dropped, not just hidden");
    } finally {
      await page.close();
    }
  });

  test("two tabs: the second waits showing the first's progress, and takes over when the first closes", async () => {
    const name = unique("tabs") + ".bin";
    const url = ref.uploadURL(name);
    await ref.config({ link: { bitsPerSecond: 8_000_000, rttMs: 10 } }); // 1 MB/s: 4 MiB takes 4 s
    // The same File (name, size, lastModified, type) in both tabs: the same record and lock.
    const start = ({ url, size }) =>
      T.load().then((mu) => {
        window.seen = { states: [], progress: [] };
        window.result = null;
        const up = mu.upload(T.file(size, 15, "tabs.bin"), { url, resume: true, chunkSize: 256 * 1024 });
        up.addEventListener("statechange", (e) => window.seen.states.push(e.state));
        up.addEventListener("progress", (e) => window.seen.progress.push([up.state, e.loaded]));
        up.then((r) => (window.result = { status: r.status }), (e) => (window.result = { code: e.code }));
      });
    const first = await env.openPage();
    const second = await env.openPage();
    try {
      await first.evaluate(start, { url, size: SIZE });
      await first.waitForFunction(() => window.seen.progress.some(([, loaded]) => loaded >= 512 * 1024), undefined, { timeout: 30_000 });
      // Listed in the other tab as running (the first holds its lock).
      const listed = (await list(second)).filter((r) => r.url === url);
      assert.deepEqual(listed.map((r) => r.running), [true], `listed while the first tab runs it: ${JSON.stringify(listed)}`);
      // ... and its session was not asked: a status query would cross the first tab's chunks.
      const queries = (await ref.log()).filter((e) => e.kind === "query");
      assert.equal(queries.length, 0, "a running upload's session was asked");
      await second.evaluate(start, { url, size: SIZE });
      // Queued behind the first tab, the second shows its progress as it goes.
      await second.waitForFunction(() => window.seen.progress.filter(([s, loaded]) => s === "queued" && loaded > 0).length >= 2, undefined, { timeout: 30_000 });
      await first.close(); // the first tab goes: its lock with it
      const out = await second.waitForFunction(() => window.result && { result: window.result, seen: window.seen }, undefined, { timeout: 60_000 });
      assert.equal(out.result.status, 201, JSON.stringify(out.result));
      assert.equal(out.seen.states[0], "queued");
      const queued = out.seen.progress.filter(([s]) => s === "queued").map(([, l]) => l);
      assert.ok(queued.length >= 2 && queued.at(-1) > queued[0], `the first tab's progress shown while queued: ${queued}`);
      assert.ok(out.seen.states.includes("uploading"), `took over: ${out.seen.states}`);
      const log = (await ref.log()).filter((e) => e.kind === "start");
      assert.equal(log.length, 1, "one session for both tabs");
      assert.deepEqual(await env.checkStored(name, SIZE, 15), []);
    } finally {
      await second.close();
    }
  });
});
