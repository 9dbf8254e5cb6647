// Browser tests of offline spells and stalled requests (docs/api.md, "Offline spells and
// stalled requests"): an upload offline for longer than its whole retry budget waits in state
// "offline" with no retry counted and finishes once online; a request whose answer never
// comes is given up after stallTimeoutMs and the upload goes on from the server's offset.

import assert from "node:assert/strict";
import { MiB, useEnv } from "./harness.mjs";

let env, ref;
const { test, unique } = useEnv((e) => {
  env = e;
  ref = e.ref;
});


test("offline for longer than the whole retry budget: the upload waits in offline, counts no retry, and finishes once online", async () => {
  const name = unique("offline");
  const size = 4 * MiB;
  // A slow link, so that the spell starts mid-upload.
  await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 0 } });
  const p = await env.openPage();
  try {
    // On the page (worker: false): playwright's offline emulation reaches the page's requests
    // and navigator.onLine, not a Worker's (the engines tell Workers of offline spells as they
    // tell pages, with WorkerNavigator.onLine and the Worker's online event).
    await p.evaluate(() => T.load({ worker: false }));
    await p.evaluate((url) => {
      window.moved = false;
      window.result = T.run(T.file(4 * 1024 * 1024, 51, "o.bin"), {
        url,
        chunkSize: 262144,
        // A short budget: two retries of 100-200 ms. Offline for 5 s is far longer.
        retry: { retries: 2, initialDelayMs: 100, maxDelayMs: 200 },
      }, { onStart: (up) => up.addEventListener("progress", (e) => (window.moved ||= e.confirmed > 0)) });
    }, ref.uploadURL(name));
    await p.waitForFunction(() => window.moved, null, { timeout: 30_000 });
    await p.context().setOffline(true);
    const offlineFor = 5000;
    await new Promise((r) => setTimeout(r, offlineFor));
    await p.context().setOffline(false);
    const r = await p.evaluate(() => window.result);
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.deepEqual(await env.checkStored(name, size, 51), []);
    const states = r.events.filter((e) => e.type === "statechange").map((e) => e.state);
    assert.ok(states.includes("offline"), `states: ${states}`);
    assert.deepEqual(r.events.filter((e) => e.type === "retry"), [], "no retry counted for the time offline");
    // After the spell: a status query before the next chunk (docs/protocol.md section 4).
    const i = states.indexOf("offline");
    assert.equal(states[i + 1], "uploading", `after offline: ${states.slice(i)}`);
  } finally {
    await p.context().setOffline(false);
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    await p.close();
  }
});

test("a stalled request is given up after stallTimeoutMs and the upload goes on from the server's offset", async () => {
  const name = unique("stall");
  const size = MiB + 7;
  // The second chunk's answer never comes: the server reads it and holds the request.
  await ref.setFaults([{ on: "chunk", action: "stall", times: 1, skip: 1 }]);
  const p = await env.openPage();
  try {
    const t0 = Date.now();
    const r = await p.evaluate(
      (url) => T.run(T.file(1048576 + 7, 52, "s.bin"), { url, chunkSize: 262144, stallTimeoutMs: 1500 }),
      ref.uploadURL(name),
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
