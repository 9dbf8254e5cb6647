// The demo and the example pages on a phone, and a thousand files dropped on the demo, in every
// engine (issue 40).
//
// A phone's viewport here is an iframe of its size (390 x 844, and 360 px wide) on a page of the
// demo server's own origin (harness.mjs: startErrorsProxy's /__test/frame.html): WebKitGTK's
// MiniBrowser cannot make its window narrower than 447 px, and the same frame in every engine
// measures the same thing. Inside it, the page lays out and its media queries match at the
// frame's width (a classic scrollbar, where the engine draws one, takes its width off the page's).
//
// - The demo at each width, with a row uploading, one paused with its request log open, one
//   done, one failed, and then (after a reload) the paused one under "Unfinished uploads": no
//   sideways scrolling (the document is no wider than the frame); every button and summary at
//   least 44 x 44 px; the request log no wider than its box; the name to pick again shown
//   whole. Every example page (/examples/, uppy, filepond, blueimp) at each width: no sideways
//   scrolling, and a <meta name="viewport"> (which a phone's browser reads from the page itself;
//   without it, it lays the page out at 980 px).
// - 1,000 files of 5-50 KB dropped on the demo at once at 390 x 844 (a drop event carrying
//   Files made in the page, as the demo's drop zone takes them): every one stored on the server
//   md5-exact and reported stored by its row (none failed), the overall line at 1,000 of 1,000.
//   The page's main thread is watched all along (web/test/probe.mjs): a 10 ms timer's worst
//   delay, raw, and less the time a Worker's timer beside it was late too; in Chromium the
//   DevTools trace's tasks of the page's thread, each with its wall and thread time, those that
//   ran the demo's or the module's scripts told apart; in Firefox and WebKit the system's count
//   of the thread's CPU time in each delay. All printed. What must be at most 50 ms, measured
//   once: in Chromium the thread time of each task of the demo's or the module's, elsewhere the
//   most the page's thread ran in one delay of its timer (its own work, whoever's it was).
//
// MEDIAUPLOAD_PHONE_FILES changes the thousand (a shorter run while working on the demo);
// MEDIAUPLOAD_PHONE_QUERY adds a query to the demo's URL for that run (worker=1: the module in a
// Worker). Run: node --test web/test/engines/phone.test.mjs

import assert from "node:assert/strict";
import { after, before, test as nodeTest } from "node:test";
import { launchEngine } from "../browsers.mjs";
import { forEachEngine, md5Base64, pseudoRandomBytes, startErrorsProxy, startServe } from "../harness.mjs";
import { pageFigures, startProbe, stopProbe, watchMainThread } from "../probe.mjs";

const WIDTHS = [[390, 844], [360, 740]];
const EXAMPLES = ["/examples/", "/examples/uppy.html", "/examples/filepond.html", "/examples/blueimp.html"];
const MANY = Number(process.env.MEDIAUPLOAD_PHONE_FILES ?? 1000);
const QUERY = process.env.MEDIAUPLOAD_PHONE_QUERY ? `?${process.env.MEDIAUPLOAD_PHONE_QUERY}` : "";

let serve, proxy;
before(async () => {
  serve = await startServe();
  proxy = await startErrorsProxy(serve.url);
});
after(async () => {
  await Promise.allSettled([proxy?.stop(), serve?.stop()]);
});

// The demo server's network speed (it outlives pages).
const throttle = (bytesPerSecond) => fetch(`${serve.url}/api/throttle`, { method: "POST", body: JSON.stringify({ bytesPerSecond, rttMs: 0 }) });

// ---------------------------------------------------------------------------------------------
// In the frame

/** Opens path in a frame of width x height and waits until ready(document) holds in it. */
async function openFramed(page, path, width, height, ready) {
  await page.goto(`${proxy.url}/__test/frame.html?${new URLSearchParams({ src: path, width, height })}`);
  await page.waitForFunction(
    (src) => {
      const doc = document.getElementById("frame")?.contentDocument;
      return doc && doc.readyState === "complete" && doc.location.href !== "about:blank" && new Function("document", `return (${src})(document)`)(doc);
    },
    ready.toString(),
    { timeout: 60_000 },
  );
}

/** Runs fn(arg) in the framed page's own realm (its document, its globals): resolves to its JSON result. */
const inFrame = (page, fn, arg) =>
  page.evaluate(({ src, arg }) => document.getElementById("frame").contentWindow.eval(`(${src})`)(arg), { src: fn.toString(), arg });

/** Waits until fn(arg) in the frame is truthy; resolves to it. */
function untilInFrame(page, fn, arg, timeout = 60_000) {
  return page.waitForFunction(
    ({ src, arg }) => document.getElementById("frame").contentWindow.eval(`(${src})`)(arg),
    { src: fn.toString(), arg },
    { timeout },
  );
}

const demoReady = (doc) => doc.body.dataset.ready === "yes";

/**
 * What a phone user would meet in the framed page: how much wider than the frame the document
 * is (and the widest elements), the buttons and summaries smaller than 44 x 44 px, and request
 * logs wider than their box. Runs in the frame.
 */
function measure() {
  const root = document.documentElement;
  const describe = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""} "${(el.getAttribute("aria-label") ?? el.textContent).trim().slice(0, 40)}"`;
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const wide = [...document.body.querySelectorAll("*")]
    .filter((el) => shown(el) && el.getBoundingClientRect().right > root.clientWidth + 0.5)
    .slice(0, 6)
    .map((el) => `${describe(el)} right ${Math.round(el.getBoundingClientRect().right)}`);
  const small = [...document.querySelectorAll("button, label.button, summary, [role=button], input[type=button], input[type=submit]")]
    .filter(shown)
    .map((el) => ({ el, r: el.getBoundingClientRect() }))
    .filter(({ r }) => r.width < 44 || r.height < 44)
    .map(({ el, r }) => `${describe(el)} ${r.width.toFixed(0)}x${r.height.toFixed(0)}`);
  const logs = [...document.querySelectorAll(".log[open] .log-wrap")].map((w) => w.scrollWidth - w.clientWidth).filter((d) => d > 0);
  const viewport = document.querySelector('meta[name="viewport"]')?.getAttribute("content") ?? "";
  return { width: root.clientWidth, overflow: root.scrollWidth - root.clientWidth, wide, small, logs, viewport };
}

/** Makes Files in the page (specs: { name, size, seed }), for dropMade to drop. Runs in the frame. */
function makeFiles(specs) {
  // The tests' bytes (web/test/random.mjs, pseudoRandomBytes): xorshift32, Node makes the same.
  const bytes = (size, seed) => {
    const out = new Uint8Array(size);
    let x = seed >>> 0 || 0x9e3779b9;
    for (let i = 0; i < size; i += 4) {
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      for (let k = 0; k < 4 && i + k < size; k++) out[i + k] = (x >>> (8 * k)) & 0xff;
    }
    return out;
  };
  const dt = new DataTransfer();
  for (const f of specs) dt.items.add(new File([bytes(f.size, f.seed)], f.name, { type: "application/octet-stream", lastModified: 1700000000000 }));
  window.__made = dt;
}

/** Drops the Files makeFiles made on the demo's drop zone, as a drop from the desktop would. Runs in the frame. */
function dropMade() {
  const dt = window.__made;
  delete window.__made;
  document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
}

/** Makes the Files and drops them. */
async function dropFiles(page, specs) {
  await inFrame(page, makeFiles, specs);
  await inFrame(page, dropMade);
}

forEachEngine((engine) => {
  let browser;
  before(async () => {
    browser = await launchEngine(engine);
  });
  after(() => browser?.close());
  const test = (name, fn, ms = 240_000) => nodeTest(name, { timeout: ms }, fn);

  test("on a phone: the demo scrolls no sideways, its buttons are 44 px, and a file to pick again shows its whole name", async () => {
    const page = await browser.newPage();
    const stamp = Date.now().toString(36);
    try {
      for (const [width, height] of WIDTHS) {
        const long = `phone-${width}-${stamp}-a-photo-of-the-harbour-at-dusk-taken-from-the-ferry-deck.bin`;
        const done = `phone-${width}-${stamp}-done.txt`, failed = `phone-${width}-${stamp}-failed.bin`;
        await openFramed(page, "/", width, height, demoReady);
        const seen = [];
        const check = async (when) => {
          const m = await inFrame(page, measure);
          console.log(`# ${browser.version}, ${width}x${height}, ${when}: ${m.width} px laid out, ${m.overflow} px too wide`);
          assert.equal(m.overflow, 0, `${width} px, ${when}: the page scrolls sideways by ${m.overflow} px: ${m.wide.join("; ")}`);
          assert.deepEqual(m.small, [], `${width} px, ${when}: buttons smaller than 44 x 44 px`);
          assert.deepEqual(m.logs, [], `${width} px, ${when}: request logs wider than their box`);
          seen.push(when);
        };
        // A failed upload: a port nothing listens on (its message is long, with the URL in it).
        await inFrame(page, () => document.querySelector("input[name=target][value=custom]").click());
        await inFrame(page, () => {
          const u = document.getElementById("customURL");
          u.value = "http://127.0.0.1:9/upload/storage/v1/b/phone/o";
          u.dispatchEvent(new Event("change", { bubbles: true }));
        });
        await dropFiles(page, [{ name: failed, size: 1000, seed: 1 }]);
        await untilInFrame(page, (n) => [...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n)?.dataset.state === "failed", failed);
        await inFrame(page, () => document.querySelector("input[name=target][value=ref]").click());
        // One file done, one long-named one slowed down and paused with its request log open.
        await throttle(256 << 10);
        await dropFiles(page, [{ name: done, size: 2000, seed: 2 }, { name: long, size: 3 << 20, seed: 3 }]);
        await untilInFrame(page, (n) => parseInt([...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n)?.querySelector(".pct").textContent) >= 10, long);
        await check("uploading");
        await inFrame(page, (n) => [...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n).querySelector(".pause").click(), long);
        await untilInFrame(page, (n) => [...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n)?.dataset.state === "paused", long);
        await throttle(0);
        await untilInFrame(page, (n) => [...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n)?.dataset.md5 === "match", done);
        await inFrame(page, (n) => [...document.querySelectorAll("li.file")].find((l) => l.dataset.name === n).querySelector(".log summary").click(), long);
        await check("paused, done and failed rows, a request log open");

        // A reload: the paused upload is listed under "Unfinished uploads", to be picked again.
        await openFramed(page, "/", width, height, demoReady); // the demo loaded anew, in the same size
        const item = await untilInFrame(page, (n) => {
          const li = [...document.querySelectorAll("#unfinished li.left")].find((l) => l.dataset.name === n);
          if (!li || document.getElementById("unfinished").hidden) return null;
          const name = li.querySelector(".name");
          const r = name.getBoundingClientRect(), box = li.getBoundingClientRect();
          return {
            text: name.textContent,
            cut: name.scrollWidth > name.clientWidth + 1 || r.right > box.right + 0.5 || getComputedStyle(name).textOverflow === "ellipsis" && getComputedStyle(name).whiteSpace === "nowrap",
            pick: !li.querySelector(".pick").hidden || !li.querySelector(".go").hidden,
          };
        }, long);
        assert.deepEqual(item, { text: long, cut: false, pick: true }, `${width} px: the unfinished upload's name, whole`);
        await check("unfinished uploads listed");
        await inFrame(page, (n) => [...document.querySelectorAll("#unfinished li.left")].find((l) => l.dataset.name === n).querySelector(".forget").click(), long);
        assert.equal(seen.length, 3);
      }
    } finally {
      await throttle(0);
      await page.close();
    }
  });

  test("on a phone: every example page scrolls no sideways and has a viewport meta tag", async () => {
    const page = await browser.newPage();
    try {
      for (const [width, height] of WIDTHS) {
        for (const path of EXAMPLES) {
          await openFramed(page, path, width, height, (doc) => doc.body?.dataset.ready === "1" || doc.location.pathname.endsWith("/examples/"));
          const m = await inFrame(page, measure);
          console.log(`# ${browser.version}, ${width}x${height}, ${path}: ${m.width} px laid out, ${m.overflow} px too wide`);
          assert.match(m.viewport, /width=device-width/, `${path}: no <meta name="viewport" content="width=device-width, …">`);
          assert.equal(m.overflow, 0, `${path} at ${width} px scrolls sideways by ${m.overflow} px: ${m.wide.join("; ")}`);
        }
      }
    } finally {
      await page.close();
    }
  });

  test(`${MANY} files dropped on the demo at once at 390x844: all stored md5-exact and reported stored, the page's thread never held over 50 ms by our work`, async () => {
    const page = await browser.newPage();
    const stamp = Date.now().toString(36);
    // 5-50 KB each, as the issue's.
    const specs = Array.from({ length: MANY }, (_, i) => ({ name: `many-${stamp}-${String(i).padStart(4, "0")}.bin`, size: 5000 + ((i * 7919) % 45001), seed: 5000 + i }));
    try {
      await openFramed(page, `/${QUERY}`, 390, 844, demoReady);
      // The Files are made first (and the DataTransfer a drop carries); then the probe starts,
      // then the drop.
      await inFrame(page, makeFiles, specs);
      await new Promise((r) => setTimeout(r, 500));
      const watch = await watchMainThread(page, (fn) => inFrame(page, fn));
      const t0 = Date.now();
      await inFrame(page, startProbe);
      await inFrame(page, dropMade);
      // Until the overall line says every file has ended (read cheaply, every second).
      const overall = await untilInFrame(page, (n) => {
        const d = document.getElementById("overall").dataset;
        return Number(d.files) === n && Number(d.live) === 0 && { ...d };
      }, MANY, 600_000);
      const probe = await inFrame(page, stopProbe);
      const seconds = (Date.now() - t0) / 1000;
      // Ours: the demo's scripts and the module's (the test's own come from eval, with no URL).
      const origin = new URL(await page.evaluate(() => location.href)).origin;
      const figures = pageFigures({ probe, ...(await watch.stop(probe, (url) => url.startsWith(origin + "/") && /\.js$/.test(new URL(url).pathname))) });
      // What the demo says of each file: its state as the rows draw it (a long list has only
      // the rows near the screen in the page: the rest are read from what they are drawn from),
      // and the last rows as drawn, once scrolled to.
      const rows = await inFrame(page, () => window.demo.entries.map((e) => [e.file.name, e.state, e.md5, e.error ? `${e.error.code} ${e.error.text}`.slice(0, 200) : ""]));
      const drawn = await inFrame(page, async (last) => {
        window.scrollTo(0, document.getElementById("uploads").getBoundingClientRect().bottom + scrollY);
        for (let i = 0; i < 50 && document.querySelector("#uploads li.file:last-child")?.dataset.name !== last; i++) await new Promise((r) => setTimeout(r, 50));
        return [...document.querySelectorAll("#uploads li.file")].slice(-5).map((li) => [li.dataset.name, li.dataset.state, li.querySelector(".md5").textContent]);
      }, specs.at(-1).name);
      console.log(`# ${browser.version}: ${MANY} files dropped on the demo${QUERY ? ` (${QUERY})` : ""}: ${overall.done} done, ${overall.failed} failed in ${seconds.toFixed(1)} s`);
      for (const line of figures.lines) console.log(`# ${browser.version}: ${MANY} files dropped on the demo: ${line}`);

      const stored = new Map((await (await fetch(`${serve.url}/ref/_ref/objects`)).json()).map((o) => [o.name, o]));
      const shown = new Map(rows.map(([name, state, md5, error]) => [name, { state, md5, error }]));
      const wrong = [];
      for (const f of specs) {
        const o = stored.get(f.name);
        const want = md5Base64(pseudoRandomBytes(f.size, f.seed));
        if (!o || o.md5Hash !== want || Number(o.size) !== f.size) wrong.push(`${f.name}: stored ${o ? `${o.size} bytes, md5 ${o.md5Hash}` : "nothing"}, want ${f.size}, ${want}`);
        const row = shown.get(f.name);
        if (row?.state !== "done" || row.md5 !== "match") wrong.push(`${f.name}: the row says ${row ? `${row.state} ${row.md5} ${row.error}` : "nothing"}`);
      }
      assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} files not stored md5-exact or not reported stored`);
      assert.equal(drawn.at(-1)?.[0], specs.at(-1).name, `the last row, scrolled to: ${JSON.stringify(drawn)}`);
      for (const [name, state, md5] of drawn) assert.ok(state === "done" && /^md5 ✓ match/.test(md5), `the row of ${name}: ${state}, ${md5}`);
      assert.deepEqual([overall.done, overall.failed], [String(MANY), "0"], "the overall line");
      // The demo's and the module's tasks (Chromium's trace), or all the page's thread ran in one
      // delay of its timer (elsewhere): at most 50 ms, measured once.
      assert.ok(figures.own <= 50, `${figures.own.toFixed(1)} ms, over 50 ms: ${figures.ownIs}`);
    } finally {
      await page.close();
    }
  }, 900_000);
});
