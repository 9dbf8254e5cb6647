// Offline spells and stalled requests in every engine (docs/api.md, "Offline spells and stalled
// requests"), with the module in its Worker (the default) and on the page: an upload offline for
// longer than its whole retry budget waits in state "offline" with no retry counted, and goes on
// once online, byte-exact; a request whose answer never comes is given up after stallTimeoutMs
// and the upload goes on from the server's offset.
//
// How a test takes the browser offline is its driver's to offer: Chromium through playwright's
// context.setOffline (CDP's network emulation), Firefox through puppeteer's page.setOfflineMode
// (WebDriver BiDi's emulation.setNetworkConditions); classic WebDriver has nothing of the kind,
// so WebKit is not taken offline, and says so. A second spell runs in every engine: the page
// says it is offline (its navigator.onLine false, an offline event) while the server drops
// every connection. That is what a page whose engine tells no Worker of a spell shows the
// module, and the path by which the page tells its Worker (worker-engine.js).
//
// Each spell prints what the engine showed: the page's online and offline events, and the events
// and navigator.onLine of a Worker of the page's own (what reaches a Worker differs by engine
// and emulation).

import assert from "node:assert/strict";
import { CHUNK, MiB, forEachEngine, useEnv } from "../harness.mjs";

forEachEngine((engine) => {
  let env, ref;
  const { test, unique } = useEnv((e) => {
    env = e;
    ref = e.ref;
  }, { engine, timeout: 120_000 });

  // The issue's spell: 12 chunks of 256 KiB, a short retry budget (two retries of 50-100 ms),
  // offline for 4 s once the third progress report is in.
  const SIZE = 12 * CHUNK;
  const SEED = 61;
  const SPELL_MS = 4000;

  // The driver's way to take a page's browser offline ({ how, set(page, on) }), as tried on p,
  // or { why } it has none.
  async function offlineSwitch(p) {
    const raw = p.raw;
    if (typeof raw?.context === "function" && typeof raw.context()?.setOffline === "function") {
      return { how: "playwright's context.setOffline", set: (page, on) => page.raw.context().setOffline(on) };
    }
    if (typeof raw?.setOfflineMode === "function") {
      try {
        await raw.setOfflineMode(false);
        return { how: "puppeteer's page.setOfflineMode (WebDriver BiDi)", set: (page, on) => page.raw.setOfflineMode(on) };
      } catch (err) {
        return { why: `puppeteer's page.setOfflineMode failed: ${err?.message ?? err}` };
      }
    }
    return { why: "classic WebDriver (WebKitWebDriver) has no command to take the browser offline" };
  }

  // A page with the module loaded in `mode`, what it sees of online and offline noted (its own
  // events, and a Worker's of its own), and the upload started: 12 chunks, counting its
  // progress reports (window.reports) until window.result.
  async function startUpload(name, mode) {
    const p = await env.openPage();
    const loaded = await p.evaluate(async ({ url, worker }) => {
      const mu = await T.load(worker ? undefined : { worker: false });
      const seen = (window.seen = []);
      for (const type of ["online", "offline"]) addEventListener(type, () => seen.push(`${type}(${navigator.onLine})`));
      // A Worker of the page's own: its events and whether its navigator.onLine was ever false.
      const src = `const seen = []; let wentOffline = !navigator.onLine;
        for (const type of ["online", "offline"]) addEventListener(type, () => seen.push(type + "(" + navigator.onLine + ")"));
        setInterval(() => { wentOffline ||= !navigator.onLine; }, 20);
        onmessage = () => postMessage({ seen, wentOffline, now: navigator.onLine });`;
      const probe = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
      window.workerSaw = () => new Promise((r) => ((probe.onmessage = (e) => r(e.data)), probe.postMessage(0)));
      window.reports = 0;
      window.result = null;
      T.run(T.file(12 * 262144, 61, "o.bin"), {
        url,
        chunkSize: 262144,
        retry: { retries: 2, initialDelayMs: 50, maxDelayMs: 100 },
        onProgress: () => window.reports++,
      }, { onStart: (up) => (window.events = T.record(up)) }).then((r) => (window.result = r));
      return mu.mode;
    }, { url: ref.uploadURL(name), worker: mode === "worker" });
    assert.equal(loaded, mode);
    return p;
  }

  // Waits for the upload's end and checks what the spell did: byte-exact, state "offline" with
  // no retry counted, then a status query before the next chunk (docs/protocol.md section 4).
  // Prints what the engine showed.
  async function checkSpell(p, name, mode, how, wentOnline) {
    // Its end, or what it had come to 30 s after going online (the bug this catches: still
    // "offline" with no request made).
    const r = await p.waitForFunction(() => window.result, undefined, { timeout: 30_000 }).catch(() => null);
    const tookMs = Date.now() - wentOnline;
    const worker = await p.evaluate(() => window.workerSaw());
    const pageSaw = await p.evaluate(() => window.seen);
    const events = r?.events ?? (await p.evaluate(() => window.events));
    const states = events.filter((e) => e.type === "statechange").map((e) => e.state);
    const off = events.findIndex((e) => e.type === "statechange" && e.state === "offline");
    const failed = events.filter((e) => e.type === "request" && !(e.status > 0));
    const after = off < 0 ? [] : events.slice(off).filter((e) => e.type === "request");
    console.log(
      `# ${env.engineVersion}, ${mode} mode, ${how}: page events ${pageSaw.join(", ") || "none"}; ` +
        `a Worker of the page: events ${worker.seen.join(", ") || "none"}, navigator.onLine ${worker.wentOffline ? "false during the spell" : "true throughout"}; ` +
        `the upload: states ${states.join(" > ")}, ${failed.length} request(s) failed, then ${after.slice(0, 2).map((q) => `${q.contentRange} ${q.status}`).join(", ") || "nothing"}; ` +
        (r ? `done ${tookMs} ms after going online` : `not done ${tookMs} ms after going online`),
    );
    assert.ok(r, "the upload ended within 30 s of going online");
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.deepEqual(await env.checkStored(name, SIZE, SEED), []);
    assert.ok(states.includes("offline"), `states: ${states}`);
    assert.deepEqual(r.events.filter((e) => e.type === "retry"), [], "no retry counted for the time offline");
    const i = states.indexOf("offline");
    assert.equal(states[i + 1], "uploading", `after offline: ${states.slice(i)}`);
    assert.match(after[0]?.contentRange ?? "", /^bytes \*\//, "a status query first after the spell");
  }

  for (const mode of ["worker", "page"]) {
    test(`offline for 4 s after the third progress report (${mode} mode): waits in offline, counts no retry, goes on once online, byte-exact`, async (t) => {
      const name = unique("offline");
      // A link that keeps the upload going for a while (3 MiB at 2 MB/s), so that the spell
      // starts mid-upload.
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 0 } });
      const probe = await env.openPage();
      const sw = await offlineSwitch(probe);
      await probe.close();
      if (!sw.set) {
        console.log(`# ${env.engineVersion}, ${mode} mode: not taken offline: ${sw.why}; the spell the page tells (below) runs instead`);
        return void t.skip(sw.why);
      }
      const p = await startUpload(name, mode);
      try {
        await p.waitForFunction(() => window.reports >= 3, undefined, { timeout: 30_000 });
        await sw.set(p, true);
        await new Promise((r) => setTimeout(r, SPELL_MS));
        await sw.set(p, false);
        await checkSpell(p, name, mode, sw.how, Date.now());
      } finally {
        await sw.set(p, false);
        await p.close();
      }
    });

    test(`the page says it is offline while requests fail (${mode} mode): waits in offline, counts no retry, goes on once it says online`, async () => {
      const name = unique("told");
      await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 0 } });
      const p = await startUpload(name, mode);
      try {
        await p.waitForFunction(() => window.reports >= 3, undefined, { timeout: 30_000 });
        // The page's navigator.onLine as the test says, and its events, as a spell shows them.
        const say = (on) =>
          p.evaluate((on) => {
            Object.defineProperty(Navigator.prototype, "onLine", { configurable: true, get: () => on });
            dispatchEvent(new Event(on ? "online" : "offline"));
          }, on);
        await say(false);
        await ref.setFaults([{ on: "any", action: "close", times: -1 }]); // every request fails
        await new Promise((r) => setTimeout(r, SPELL_MS));
        await ref.clearFaults();
        await say(true);
        await checkSpell(p, name, mode, "the page saying so while the server drops every connection", Date.now());
      } finally {
        await p.close();
      }
    });

    test(`a stalled request is given up after stallTimeoutMs and the upload goes on from the server's offset (${mode} mode)`, async () => {
      const name = unique("stall");
      const size = MiB + 7;
      // The second chunk's answer never comes: the server reads it and holds the request.
      await ref.setFaults([{ on: "chunk", action: "stall", times: 1, skip: 1 }]);
      const p = await env.openPage();
      try {
        const t0 = Date.now();
        const r = await p.evaluate(
          async ({ url, worker }) => {
            await T.load(worker ? undefined : { worker: false });
            return T.run(T.file(1048576 + 7, 52, "s.bin"), { url, chunkSize: 262144, stallTimeoutMs: 1500 });
          },
          { url: ref.uploadURL(name), worker: mode === "worker" },
        );
        const seconds = (Date.now() - t0) / 1000;
        assert.ok(r.ok, JSON.stringify(r.error));
        assert.deepEqual(await env.checkStored(name, size, 52), []);
        const retries = r.events.filter((e) => e.type === "retry");
        assert.equal(retries.length, 1, "the stalled request counts as one lost connection");
        assert.match(retries[0].error ?? "", /no answer in 1\.5 s|stalled/);
        const log = (await ref.log()).filter((e) => e.method === "PUT");
        assert.ok(log.some((e) => e.fault === "stall"), "the stall fault was hit");
        assert.ok(log.some((e) => e.contentRange.startsWith("bytes */")), "a status query followed");
        assert.ok(seconds < 20, `took ${seconds} s`);
      } finally {
        await p.close();
      }
    });
  }

  test("stallTimeoutMs must be a number of milliseconds: anything else is invalid_argument before any request", async () => {
    const p = await env.openPage();
    try {
      const codes = await p.evaluate(async (url) => {
        const out = [];
        for (const v of [-1, "10", NaN]) out.push((await T.run(T.file(10, 1, "x"), { url, stallTimeoutMs: v })).error?.code);
        return out;
      }, ref.uploadURL(unique("bad")));
      assert.deepEqual(codes, ["invalid_argument", "invalid_argument", "invalid_argument"]);
      assert.deepEqual((await ref.log()).filter((e) => e.method !== "OPTIONS"), []);
    } finally {
      await p.close();
    }
  });
});
