// The busy-page part of ./build.sh bench (BENCH_ONLY=busy): a page whose main thread is
// blocked 80 ms of every 100 ms (a busy loop, as a framework re-rendering might), uploading
// 256 MiB to the sink at 1 MiB chunks and at each way's default chunks:
//   - the module in a worker (load({ worker: true })),
//   - the module on the main thread (load()),
//   - a plain fetch loop on the main thread (PUT each slice, 8 MiB by default),
//   - @mux/upchunk 3.5 on the main thread (its default 30 MiB chunks).
// Printed: each way's throughput on the busy page against the same way on an idle page, and
// the reverse: how much longer a fixed piece of the page's own work (the busy loop's slices,
// counted in iterations) takes while each way uploads, against the page with no upload.
// Target (printed, not asserted): the worker keeps >= 0.9 of its idle-page throughput.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MiB, REPO_ROOT } from "../test/harness.mjs";
import { median } from "./common.mjs";

const BUSY_CODE = () => {
  let source = null;
  window.sourceOf = (size) => {
    if (source?.size === size) return source;
    const block = new Uint8Array(MiB_);
    for (let i = 0; i < block.length; i += 65536) crypto.getRandomValues(block.subarray(i, i + 65536));
    const one = new Blob([block]);
    source = new Blob(Array.from({ length: Math.ceil(size / MiB_) }, () => one)).slice(0, size);
    return source;
  };
  // Blocks the main thread 80 ms of every 100 ms until stop() is called; counts the loop's
  // iterations, so that a fixed amount of the page's work can be timed.
  let spins = 0;
  const spin = (ms) => {
    const end = performance.now() + ms;
    while (performance.now() < end) spins++;
  };
  window.busy = () => {
    let on = true;
    const tick = () => {
      if (!on) return;
      spin(80);
      setTimeout(tick, 20);
    };
    tick();
    return () => (on = false);
  };
  // The page's own work: `units` iterations of the busy loop in 80 ms slices, timed.
  window.pageWork = async (units) => {
    const t0 = performance.now();
    const goal = spins + units;
    while (spins < goal) {
      for (let k = 0; k < 200 && spins < goal; k++) spin(0.4);
      await new Promise((r) => setTimeout(r, 0));
    }
    return performance.now() - t0;
  };
  window.spinsPerMs = () => {
    const s = spins;
    spin(200);
    return (spins - s) / 200;
  };
  async function start(url, size) {
    const r = await fetch(url, { method: "POST", headers: { "X-Upload-Content-Length": String(size) } });
    if (r.status !== 200) throw new Error("start: " + r.status);
    return r.headers.get("Location");
  }
  window.uploadWay = async (how, url, size, chunk) => {
    const blob = window.sourceOf(size);
    const t0 = performance.now();
    if (how === "module") {
      const options = { url };
      if (chunk) options.chunkSize = chunk;
      await window.mu.upload(blob, options);
    } else if (how === "fetch") {
      const session = await start(url, size);
      const step = chunk || 8 * MiB_;
      for (let off = 0; off < size; ) {
        const end = Math.min(off + step, size);
        const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes ${off}-${end - 1}/${size}` }, body: blob.slice(off, end) });
        if (r.status === 308) off = Number(/-(\d+)$/.exec(r.headers.get("Range") ?? "bytes=0--1")[1]) + 1;
        else if (r.status === 200 || r.status === 201) off = size;
        else throw new Error("fetch loop: " + r.status);
      }
    } else {
      const session = await start(url, size);
      await new Promise((resolve, reject) => {
        const options = { endpoint: session, file: new File([blob], "busy.bin"), attempts: 1 };
        if (chunk) options.chunkSize = chunk / 1024; // in KiB, a multiple of 256
        const up = window.UpChunk.createUpload(options);
        up.on("success", resolve);
        up.on("error", (e) => reject(new Error("upchunk: " + (e.detail?.message ?? e.detail))));
      });
    }
    return performance.now() - t0;
  };
};


/** Opens the two bench pages (worker mode and page mode) of the busy-page runs. */
async function openPages(env) {
  const upchunk = join(REPO_ROOT, "node_modules/@mux/upchunk/dist/upchunk.js");
  env.web.route("/busy-upchunk.js", (req, res) => {
    res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(upchunk));
  });
  const code = `const MiB_ = ${MiB}; (${BUSY_CODE})();`;
  const pages = {};
  for (const mode of ["worker", "page"]) {
    env.web.page(`/busy-${mode}.html`, `<!doctype html><script src="/busy-upchunk.js"></script><script>${code}</script>
      <script type="module">
        import { load } from "/dist/mediaupload.js";
        window.mu = await load({ worker: ${mode === "worker"} });
        window.ready = true;
      </script>`);
    pages[mode] = await env.openPage(`/busy-${mode}.html`);
    await pages[mode].waitForFunction(() => window.ready, null, { timeout: 60000 });
  }
  return pages;
}

/** Runs the busy-page bench against the sink at sinkURL and prints the figures. */
export async function benchBusy(env, sinkURL, rounds) {
  const size = 256 * MiB;
  const pages = await openPages(env);
  const ways = [
    ["worker", "module in a worker", "module"],
    ["page", "module on the main thread", "module"],
    ["page", "plain fetch loop, main thread", "fetch"],
    ["page", "@mux/upchunk, main thread", "upchunk"],
  ];
  for (const p of Object.values(pages)) await p.evaluate((s) => void window.sourceOf(s), size);
  // The page's own work: about two seconds of the loop on the idle page.
  const perMs = await pages.page.evaluate(() => window.spinsPerMs());
  const units = Math.round(perMs * 2000);
  const idleWork = [];
  for (let i = 0; i < rounds; i++) idleWork.push(await pages.page.evaluate((u) => window.pageWork(u), units));
  console.log(
    `busy page (main thread blocked 80 ms of every 100 ms), 256 MiB to the sink, ${rounds} rounds, medians; ` +
      `page work: ${(median(idleWork) / 1000).toFixed(2)} s alone`,
  );
  for (const [chunk, chunkName] of [[MiB, "1 MiB chunks"], [0, "default chunks"]]) {
    console.log(`  ${chunkName}:`);
    for (const [mode, label, how] of ways) {
      const p = pages[mode];
      const idle = [];
      const busy = [];
      const work = [];
      for (let i = 0; i < rounds; i++) {
        idle.push(await p.evaluate(([h, u, s, c]) => window.uploadWay(h, u, s, c), [how, sinkURL, size, chunk]));
        busy.push(
          await p.evaluate(async ([h, u, s, c]) => {
            const stop = window.busy();
            try {
              return await window.uploadWay(h, u, s, c);
            } finally {
              stop();
            }
          }, [how, sinkURL, size, chunk]),
        );
        // The reverse: the page's work while this way uploads (the upload runs on; its time
        // is not counted, and the next one waits for it).
        work.push(
          await p.evaluate(async ([h, u, s, c, n]) => {
            const up = window.uploadWay(h, u, s, c);
            const ms = await window.pageWork(n);
            await up;
            return ms;
          }, [how, sinkURL, size, chunk, units]),
        );
      }
      const rate = (ms) => size / MiB / (ms / 1000);
      const kept = median(idle.map((ms, i) => ms / busy[i]));
      const target = mode === "worker" ? ` (target >= 0.9: ${kept >= 0.9 ? "met" : "not met"})` : "";
      console.log(
        `    ${label.padEnd(32)} idle ${rate(median(idle)).toFixed(0)} MB/s, busy ${rate(median(busy)).toFixed(0)} MB/s: ` +
          `${kept.toFixed(2)} of idle${target}; page work ${(median(work) / median(idleWork)).toFixed(2)}x as long`,
      );
    }
  }
  for (const p of Object.values(pages)) await p.close();
}
