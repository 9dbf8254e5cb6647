// What a developer meets first when something is wrong (issue: "clear errors"), in Chromium:
// a server without CORS, a getHeaders that throws, a relative url, a lost session, and the
// DevTools view of a straight upload. Run: node --test web/test/errors.test.mjs (dist/ built).

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after } from "node:test";
import { MiB, useEnv } from "./harness.mjs";

const PACKAGE_NAMES = /\b(core|jsbridge|wasm):/;

let env, ref, web, page, nocors;

const { test, unique } = useEnv(async (e) => {
  env = e;
  ({ ref, web } = env);
  page = await env.openPage();
  // A server that accepts uploads but sends no CORS headers: the most common first mistake.
  nocors = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json", Location: "http://127.0.0.1:1/nowhere" });
      res.end("{}");
    });
  });
  await new Promise((resolve) => nocors.listen(0, "127.0.0.1", resolve));
}, { timeout: 60_000 });
after(() => nocors?.close());

test("a server without CORS: network_error within seconds, naming the URL, the page's origin and CORS", async () => {
  const url = `http://127.0.0.1:${nocors.address().port}/upload/storage/v1/b/test/o?name=x`;
  const out = await page.evaluate(async (url) => {
    const t0 = performance.now();
    const out = await T.run(T.blob(1000, 1), { url });
    return { ...out, ms: performance.now() - t0 };
  }, url);
  assert.equal(out.error?.code, "network_error", JSON.stringify(out.error));
  assert.ok(out.ms < 15_000, `reported after ${Math.round(out.ms)} ms: a server never reached is told within seconds`);
  const { message } = out.error;
  assert.match(message, /CORS/);
  assert.ok(message.includes(web.url), `the page's origin ${web.url} in: ${message}`);
  assert.ok(message.includes(url.split("?")[0]), `the URL in: ${message}`);
  assert.doesNotMatch(message, PACKAGE_NAMES);
  assert.ok(out.error.cause, "the underlying error is the cause");
});

test("a getHeaders that throws: auth_error, its error as the cause, no request sent", async () => {
  const out = await page.evaluate(async (url) => {
    const mu = await T.load();
    const boom = new Error("token service is down");
    try {
      await mu.upload(T.blob(1000, 2), { url, getHeaders: () => { throw boom; } });
      return { ok: true };
    } catch (e) {
      return { ...T.errorData(e), causeIsTheThrown: e.cause === boom };
    }
  }, ref.uploadURL(unique("auth")));
  assert.equal(out.code, "auth_error", JSON.stringify(out));
  assert.ok(out.causeIsTheThrown, "error.cause is what getHeaders threw");
  assert.match(out.message, /getHeaders/);
  assert.doesNotMatch(out.message, PACKAGE_NAMES);
  assert.equal((await ref.log()).filter((e) => e.kind !== "preflight").length, 0, "no request was sent");

  const rejected = await page.evaluate(async (url) => {
    const mu = await T.load();
    return mu.upload(T.blob(10, 3), { url, getHeaders: () => Promise.reject(new Error("no token")) }).then(
      () => "done", (e) => e.code);
  }, ref.uploadURL(unique("auth")));
  assert.equal(rejected, "auth_error");
});

test("a relative url is resolved against the page's base URL", async () => {
  // The page's <base> points at the reference server, so "/upload/…" means it.
  await web.page("/relative.html", `<!doctype html><meta charset="utf-8"><base href="${ref.url}/">
<script type="module" src="${web.url}/test/helpers.js"></script>`);
  const p = await env.browser.newPage(`${web.url}/relative.html`);
  try {
    await p.waitForFunction(() => window.T, null, { timeout: 30_000 });
    const name = unique("relative");
    const relative = ref.uploadURL(name).slice(ref.url.length);
    assert.match(relative, /^\/upload\//);
    const out = await p.evaluate((url) => T.run(T.blob(300_000, 4), { url, chunkSize: 262144 }), relative);
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.deepEqual(await env.checkStored(name, 300_000, 4), []);
  } finally {
    await p.close();
  }
});

test("a lost session is told: a retry event with restart, state starting, confirmed back to 0", async () => {
  await ref.setFaults([{ on: "chunk", action: "expire", times: 1, skip: 1 }]);
  const name = unique("restart");
  const size = MiB;
  const out = await page.evaluate(({ url }) => T.run(T.blob(1024 * 1024, 5), { url, chunkSize: 262144 }), { url: ref.uploadURL(name) });
  assert.ok(out.ok, JSON.stringify(out.error));
  assert.deepEqual(await env.checkStored(name, size, 5), []);
  const events = out.events;
  const r = events.findIndex((e) => e.type === "retry" && e.restart === true);
  assert.ok(r >= 0, `a retry event with restart: true: ${JSON.stringify(events.filter((e) => e.type === "retry"))}`);
  assert.equal(events[r].status, 404);
  assert.ok(events.slice(r).some((e) => e.type === "statechange" && e.state === "starting"), "state goes back to starting");
  const before = events.slice(0, r).filter((e) => e.type === "progress").at(-1);
  const afterward = events.slice(r).filter((e) => e.type === "progress");
  assert.ok(afterward.some((p) => p.confirmed === 0 && p.loaded >= before.loaded), "confirmed drops to 0 while loaded stays");
  const retries = out.calls.filter((c) => c.name === "onRetry").map((c) => c.arg);
  assert.ok(retries.some((x) => x.restart === true), "onRetry is told the restart too");
});

test("DevTools sees no cancelled request on the straight path (every answer is read)", async () => {
  const cdp = await page.context().newCDPSession(page);
  const failed = [];
  const onFailed = (e) => failed.push(e);
  cdp.on("Network.loadingFailed", onFailed);
  await cdp.send("Network.enable");
  try {
    const name = unique("drain");
    const out = await page.evaluate((url) => T.run(T.blob(2 * 1024 * 1024 + 5, 6), { url, chunkSize: 262144 }), ref.uploadURL(name));
    assert.ok(out.ok, JSON.stringify(out.error));
    assert.equal(out.events.filter((e) => e.type === "request").length >= 9, true, "nine chunks and a session start");
    await new Promise((r) => setTimeout(r, 200)); // the last events reach the CDP session
    assert.deepEqual(failed.map((e) => `${e.errorText}${e.canceled ? " (cancelled)" : ""}`), [], "requests that failed or were cancelled");
  } finally {
    cdp.off("Network.loadingFailed", onFailed);
    await cdp.detach();
  }
});
