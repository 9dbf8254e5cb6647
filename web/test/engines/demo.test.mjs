// The demo page and fake-gcs-server (the independent server, embedded in web/cmd/serve) in
// every engine. The demo loads with no error in its console (seen through a proxy that adds
// the error hook at the top of the page: ../harness.mjs, startErrorsProxy), files picked in its
// input arrive intact on both of its targets (fake-gcs-server's sessions started by the demo's
// own backend, /api/gcs/session, for the page's origin), and a screenshot per engine lands in
// test-output/ (MEDIAUPLOAD_TEST_OUT). From a page of another origin, the module uploads to
// fake-gcs-server at "auto" with a checksum, in fixed chunks, as media, multipart and a stream.
// An upload a reload left paused is listed under "Unfinished uploads" and, picked again (in its
// row, or in the page's input), goes on, its Unfinished row giving way to the upload's own. The
// network speed picked stays across a reload. The header says where the module runs.
// Run: node --test web/test/engines/demo.test.mjs

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { scratchDir } from "../browsers.mjs";
import { CHUNK, MiB, forEachEngine, md5Base64, pseudoRandomBytes, startErrorsProxy, startServe, useEnv } from "../harness.mjs";

const OUT_DIR = process.env.MEDIAUPLOAD_TEST_OUT ?? join(tmpdir(), "mediaupload-test-out");

let serve, proxy, files;
before(async () => {
  mkdirSync(OUT_DIR, { recursive: true });
  // The proxy's origin is another than the server's: the demo's backend is told to serve its
  // pages too (-allow-origin), as an app lists the origins of its pages.
  proxy = await startErrorsProxy(() => serve.url);
  serve = await startServe(["-allow-origin", proxy.url]);
  files = scratchDir();
});
after(async () => {
  await Promise.allSettled([proxy?.stop(), serve?.stop()]);
  files?.remove();
});

// The stored object on fake-gcs-server (its JSON API), or undefined.
async function gcsObject(name) {
  const r = await fetch(`${serve.url}/storage/v1/b/demo/o/${encodeURIComponent(name)}`);
  return r.ok ? r.json() : undefined;
}

forEachEngine((engine) => {
  let env;
  const { test, unique } = useEnv(async (e) => {
    env = e;
  }, { engine, timeout: 120_000 });

  test("the demo loads with no error, and files picked in it arrive intact on both targets", async () => {
    const page = await env.browser.newPage(proxy.url + "/");
    try {
      await page.waitForFunction(() => document.body.dataset.ready === "yes", undefined, { timeout: 30_000 });
      // The header says where the module runs (mu.mode): at the defaults, in a Worker.
      assert.match(await page.evaluate(() => document.querySelector("#version").textContent), /^Module \S+, in a Worker\.$/);
      const list = [
        [unique("demo-odd") + ".bin", 1.5 * MiB + 17, 3],
        [unique("demo-three") + ".bin", 3 * MiB + 1, 4],
      ].map(([name, size, seed]) => {
        const bytes = pseudoRandomBytes(size, seed);
        writeFileSync(join(files.dir, name), bytes);
        return { name, size, md5: md5Base64(bytes) };
      });
      for (const target of ["ref", "gcs"]) {
        // As a user would: the target's radio button, then the file input.
        await page.evaluate((t) => document.querySelector(`input[name=target][value=${t}]`).click(), target);
        await page.setInputFiles("#files", list.map((f) => join(files.dir, f.name)));
        const rows = await page.waitForFunction(
          (names) => {
            const rows = names.map((n) => [...document.querySelectorAll("li.file")].filter((li) => li.dataset.name === n).at(-1));
            if (!rows.every((li) => li && (li.dataset.state === "failed" || (li.dataset.md5 && li.dataset.md5 !== "pending")))) return null;
            return rows.map((li) => ({
              state: li.dataset.state, md5: li.dataset.md5, pct: li.querySelector(".pct").textContent, error: li.querySelector(".error").textContent,
              methods: [...li.querySelectorAll(".log tbody tr")].map((tr) => tr.cells[1].textContent),
            }));
          },
          list.map((f) => f.name),
          { timeout: 60_000 },
        );
        for (const [i, r] of rows.entries()) {
          assert.equal(r.state, "done", `${target} ${list[i].name}: ${r.error}`);
          assert.equal(r.md5, "match", `${target} ${list[i].name}: the page's md5 check`);
          assert.equal(r.pct, "100 %");
        }
        if (target === "gcs") {
          // The demo's backend (POST /api/gcs/session) started each session: the page sends the
          // chunks only, and the object is named as the backend decided (the file's name).
          for (const [i, r] of rows.entries()) assert.deepEqual([...new Set(r.methods)], ["PUT"], `${list[i].name}: the page started no session: ${r.methods}`);
          for (const f of list) assert.equal((await gcsObject(f.name))?.md5Hash, f.md5, `fake-gcs-server holds ${f.name}`);
        }
      }
      await page.screenshot(join(OUT_DIR, `demo-${engine}.png`));
      assert.deepEqual(await page.errors(), [], "errors in the demo's console");
    } finally {
      await page.close();
    }
  });

  // The demo's network speed, set as the page sets it (POST /api/throttle), or read.
  const throttle = (bytesPerSecond) => fetch(`${serve.url}/api/throttle`, { method: "POST", body: JSON.stringify({ bytesPerSecond, rttMs: 0 }) });
  const speed = async () => (await (await fetch(`${serve.url}/api/throttle`)).json()).bytesPerSecond;
  const ready = (page) => page.waitForFunction(() => document.body.dataset.ready === "yes", undefined, { timeout: 30_000 });
  const row = (n) => `li.file[data-name="${n}"]`;
  // The network speed, picked as a user would: an option of the select.
  const pickSpeed = (page, value) =>
    page.evaluate((v) => {
      const select = document.querySelector("#speed");
      select.value = v;
      select.dispatchEvent(new Event("change"));
    }, value);

  // Opens the demo, picks the file name (made on disk) in its input with the reference server as
  // the target, 256 KiB chunks, at 1 MB/s, pauses it at a fifth or more, and reloads the page.
  // Resolves to the page, and what the Unfinished row of name then says.
  async function leftPaused(name, size, seed) {
    const page = await env.browser.newPage(proxy.url + "/");
    try {
      writeFileSync(join(files.dir, name), pseudoRandomBytes(size, seed));
      await ready(page);
      await page.evaluate((size) => {
        document.querySelector("input[name=target][value=ref]").click();
        const cs = document.querySelector("#chunkSize");
        cs.value = String(size);
        cs.dispatchEvent(new Event("change"));
      }, CHUNK);
      await throttle(1 << 20); // 1 MB/s: 3 MiB take 3 s
      await page.setInputFiles("#files", join(files.dir, name));
      // Paused at a fifth or so (a paused upload is not "running": the reload asks nothing).
      await page.waitForFunction((sel) => parseInt(document.querySelector(sel)?.querySelector(".pct").textContent) >= 20, row(name), { timeout: 30_000 });
      await page.evaluate((sel) => document.querySelector(`${sel} .pause`).click(), row(name));
      await page.waitForFunction((sel) => document.querySelector(sel).dataset.state === "paused", row(name));
      await throttle(0);
      await page.reload();
      await ready(page);
      const item = await page.waitForFunction((n) => {
        const li = document.querySelector(`#unfinished li.left[data-name="${n}"]`);
        return li && !document.querySelector("#unfinished").hidden && {
          held: li.querySelector(".held").textContent,
          how: li.querySelector(".how").textContent,
          resume: !li.querySelector(".go").hidden,
          pick: !li.querySelector(".pick").hidden,
        };
      }, name);
      return { page, item };
    } catch (err) {
      await page.close();
      throw err;
    }
  }

  test("an upload left paused by a reload is listed under Unfinished uploads, asks for the file again, and goes on from it", async () => {
    const name = unique("demo-left") + ".bin";
    const size = 3 * MiB + 9;
    const bytes = pseudoRandomBytes(size, 61);
    const { page, item } = await leftPaused(name, size, 61);
    try {
      // A File picked in an input: no engine gives a page a way back to it after a reload.
      assert.match(item.held, /^\d+ % on the server$/, JSON.stringify(item));
      assert.ok(parseInt(item.held) >= 8 && parseInt(item.held) < 100, item.held);
      assert.deepEqual([item.resume, item.pick], [false, true], `Pick again, not Resume: ${JSON.stringify(item)}`);
      assert.match(item.how, /pick the same file again/);
      await page.evaluate(() => document.querySelector("#unfinished").scrollIntoView());
      await page.screenshot(join(OUT_DIR, `demo-unfinished-${engine}.png`));
      await page.setInputFiles(`#unfinished li.left[data-name="${name}"] .pick input`, join(files.dir, name));
      const out = await page.waitForFunction((sel) => {
        const li = document.querySelector(sel);
        if (!li || !(li.dataset.state === "failed" || (li.dataset.md5 && li.dataset.md5 !== "pending"))) return null;
        return {
          state: li.dataset.state, md5: li.dataset.md5, resumedAt: Number(li.dataset.resumedAt ?? 0),
          error: li.querySelector(".error").textContent,
          methods: [...li.querySelectorAll(".log tbody tr")].map((tr) => [tr.cells[1].textContent, tr.cells[2].textContent]),
          listed: !document.querySelector("#unfinished").hidden,
        };
      }, row(name), { timeout: 60_000 });
      assert.equal(out.state, "done", out.error);
      assert.equal(out.md5, "match");
      assert.ok(out.resumedAt >= CHUNK, `went on from the server's offset: ${out.resumedAt}`);
      assert.deepEqual(out.methods[0], ["PUT", "status query"], "the first request asks the server");
      assert.ok(!out.methods.some(([m]) => m === "POST"), `no new session: ${JSON.stringify(out.methods)}`);
      assert.equal(out.listed, false, "no longer listed");
      const stored = await (await fetch(`${serve.url}/ref/_ref/objects`)).json();
      assert.equal(stored.find((o) => o.name === name)?.md5Hash, md5Base64(bytes));
      assert.deepEqual(await page.errors(), [], "errors in the demo's console");
    } finally {
      await throttle(0);
      await page.close();
    }
  });

  test("the same file picked again after a reload goes on, and its Unfinished row gives way to the upload's own", async () => {
    const name = unique("demo-again") + ".bin";
    const size = 3 * MiB + 11;
    const { page, item } = await leftPaused(name, size, 62);
    try {
      const held = parseInt(item.held);
      assert.ok(held >= 8 && held < 100, item.held);
      // Picked in the page's own input (as a drop would give it), not in the row: the upload
      // goes on with the record, slowly enough to be seen under way.
      await throttle(1 << 20);
      await page.setInputFiles("#files", join(files.dir, name));
      const mid = await page.waitForFunction(({ sel, n, held }) => {
        const li = document.querySelector(sel);
        const pct = parseInt(li?.querySelector(".pct").textContent);
        if (!(pct >= held + 10) && li?.dataset.state !== "done") return null;
        const left = document.querySelector(`#unfinished li.left[data-name="${n}"]`);
        return { state: li.dataset.state, pct, unfinishedRow: left ? left.querySelector(".held").textContent : null };
      }, { sel: row(name), n: name, held }, { timeout: 30_000 });
      assert.equal(mid.state, "uploading", `caught under way: ${JSON.stringify(mid)}`);
      assert.equal(mid.unfinishedRow, null, `the Unfinished row while the upload is at ${mid.pct} %: ${JSON.stringify(mid)}`);
      await throttle(0);
      const out = await page.waitForFunction((sel) => {
        const li = document.querySelector(sel);
        if (!(li.dataset.state === "failed" || (li.dataset.md5 && li.dataset.md5 !== "pending"))) return null;
        return { state: li.dataset.state, md5: li.dataset.md5, resumedAt: Number(li.dataset.resumedAt ?? 0), listed: document.body.dataset.unfinished };
      }, row(name), { timeout: 60_000 });
      assert.equal(out.state, "done");
      assert.equal(out.md5, "match");
      assert.ok(out.resumedAt >= CHUNK, `went on from the server's offset: ${out.resumedAt}`);
      assert.deepEqual(await page.errors(), [], "errors in the demo's console");
    } finally {
      await throttle(0);
      await page.close();
    }
  });

  test("the network speed picked stays across a reload, on the server and in the page", async () => {
    const page = await env.browser.newPage(proxy.url + "/");
    try {
      await ready(page);
      await pickSpeed(page, "1048576");
      for (let i = 0; (await speed()) !== 1048576; i++) {
        assert.ok(i < 100, "the page did not set the speed");
        await new Promise((r) => setTimeout(r, 20));
      }
      await page.reload();
      await ready(page);
      const shown = await page.evaluate(() => document.querySelector("#speed").selectedOptions[0].textContent);
      assert.deepEqual({ shown, server: await speed() }, { shown: "1 MB/s", server: 1048576 });
    } finally {
      await throttle(0);
      await page.close();
    }
  });

  // Links that change (docs/api.md): the page's Network speed switched while a file uploads, as
  // a user would, moves the bar within a few seconds (where progress comes only with answers, a
  // chunk late for the slower link is cut short and the server asked what it holds), down to
  // 256 KB/s and back to unlimited.
  test("switching the network speed mid-upload moves the bar within a few seconds, down and up", async () => {
    const name = unique("demo-switch") + ".bin";
    const size = 12 * MiB + 5;
    writeFileSync(join(files.dir, name), pseudoRandomBytes(size, 64));
    const page = await env.browser.newPage(proxy.url + "/");
    const pick = (value) => pickSpeed(page, value);
    // The row's percentage as it changes, with the page's clock.
    const pctAt = () =>
      page.evaluate((sel) => {
        const li = document.querySelector(sel);
        return { t: performance.now(), pct: parseInt(li?.querySelector(".pct").textContent) || 0, state: li?.dataset.state };
      }, row(name));
    const movesWithin = async (ms) => {
      const from = await pctAt();
      for (;;) {
        const now = await pctAt();
        if (now.pct > from.pct || now.state === "done") return now.t - from.t;
        if (now.t - from.t > ms) return null;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await ready(page);
      await pick("1048576"); // 1 MB/s
      await page.setInputFiles("#files", join(files.dir, name));
      await page.waitForFunction((sel) => parseInt(document.querySelector(sel)?.querySelector(".pct").textContent) >= 15, row(name), { timeout: 30_000 });
      await pick("262144"); // 256 KB/s: four times slower
      await new Promise((r) => setTimeout(r, 300));
      const down = await movesWithin(10_000);
      await pick("0"); // unlimited again
      const up = await movesWithin(10_000);
      const out = await page.waitForFunction((sel) => {
        const li = document.querySelector(sel);
        return li.dataset.md5 && li.dataset.md5 !== "pending" ? { state: li.dataset.state, md5: li.dataset.md5 } : null;
      }, row(name), { timeout: 60_000 });
      console.log(`# ${env.engineVersion}: the bar moved ${down === null ? "not at all" : `${(down / 1000).toFixed(1)} s`} after 256 KB/s was picked, ${up === null ? "not at all" : `${(up / 1000).toFixed(1)} s`} after unlimited`);
      assert.ok(down !== null, "the bar moved within 10 s of the switch to 256 KB/s");
      assert.ok(up !== null, "the bar moved within 10 s of the switch to unlimited");
      assert.deepEqual(out, { state: "done", md5: "match" });
      assert.deepEqual(await page.errors(), [], "errors in the demo's console");
    } finally {
      await throttle(0);
      await page.close();
    }
  });

  test("fake-gcs-server from another origin: auto with a checksum, fixed chunks, media, multipart, a stream", async () => {
    const page = await env.openPage();
    const base = `${serve.url}/upload/storage/v1/b/demo/o?name=`;
    const cases = [
      { name: unique("gcs-auto"), size: 5 * MiB + 3, options: { checksum: "both" } },
      { name: unique("gcs-fixed"), size: 4 * CHUNK + 9, options: { chunkSize: CHUNK, headers: { "X-Extra": "e" }, token: true } },
      { name: unique("gcs-media"), size: 300_001, options: { uploadType: "media" } },
      { name: unique("gcs-multipart"), size: 300_002, options: { uploadType: "multipart", metadata: {} } },
      { name: unique("gcs-stream"), size: 2 * MiB + 77, options: { chunkSize: CHUNK }, stream: true },
    ];
    try {
      for (const [i, c] of cases.entries()) {
        const out = await page.evaluate(
          ({ url, size, seed, options, stream }) => {
            const { token, ...opts } = options;
            if (opts.metadata) opts.metadata.name = new URL(url).searchParams.get("name");
            if (token) opts.getHeaders = () => ({ Authorization: "Bearer gcs" });
            const source = stream ? new Blob([T.bytes(size, seed)]).stream() : T.blob(size, seed);
            return T.run(source, { url, ...opts });
          },
          { url: base + encodeURIComponent(c.name), size: c.size, seed: 90 + i, options: c.options, stream: !!c.stream },
        );
        assert.ok(out.ok, `${c.name}: ${JSON.stringify(out.error)}`);
        const obj = await gcsObject(c.name);
        assert.equal(obj?.size, String(c.size), `${c.name}: size on fake-gcs-server`);
        assert.equal(obj?.md5Hash, md5Base64(pseudoRandomBytes(c.size, 90 + i)), `${c.name}: md5 on fake-gcs-server`);
        assert.deepEqual(out.events.filter((e) => e.type === "retry"), [], `${c.name}: no retry`);
      }
    } finally {
      await page.close();
    }
  });
});
