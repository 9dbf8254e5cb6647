// The emulated-link part of ./build.sh bench (issue 9, docs/protocol.md section 8): the reference
// server reads request bodies at a link's rate and answers one round trip late (its
// /_ref/config "link"); over each link, uploads of a file that takes about ten seconds there:
//   - one PUT of all of it (no progress until the end),
//   - the module at its defaults (chunkSize "auto"), at 256 KiB and at 8 MiB,
//   - @mux/upchunk 3.5 with dynamicChunkSize (XHR, progress inside a chunk), to a session the
//     page started.
// Printed for each: the share of the link's rate reached (the time the bytes alone take at the
// rate, over the whole upload's time, session start included) and the longest wait between two
// progress reports after the first (the end counts as a report). Several rounds, medians.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MiB, REPO_ROOT } from "../test/harness.mjs";

export const PROFILES = [
  { name: "100 Mbit/s up, 20 ms", bitsPerSecond: 100e6, rttMs: 20 },
  { name: "20 Mbit/s up, 60 ms", bitsPerSecond: 20e6, rttMs: 60 },
  { name: "3 Mbit/s up, 150 ms", bitsPerSecond: 3e6, rttMs: 150 },
];

// Runs in the page: each way of uploading, timed, with the times of its progress reports.
const LINK_CODE = () => {
  // The session start of bench.mjs's page code (window.startSession), called at run time.
  const start = (url, size) => window.startSession(url, size);
  // The longest gap between two reports after the first, the end included; null without any.
  const longestGap = (reports, end) => {
    const t = [...reports, end];
    if (reports.length === 0) return null;
    let gap = 0;
    for (let i = 1; i < t.length; i++) gap = Math.max(gap, t[i] - t[i - 1]);
    return gap;
  };
  window.linkRun = async (how, url, size) => {
    const blob = window.benchBlob(size);
    const reports = [];
    const t0 = performance.now();
    if (how === "whole") {
      const session = await start(url, size);
      const r = await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-${size - 1}/${size}` }, body: blob });
      if (r.status !== 200 && r.status !== 201) throw new Error("whole: " + r.status);
    } else if (how === "upchunk") {
      const session = await start(url, size);
      await new Promise((resolve, reject) => {
        const up = window.UpChunk.createUpload({
          endpoint: session,
          file: new File([blob], "bench.bin"),
          dynamicChunkSize: true,
          attempts: 1,
        });
        up.on("progress", (e) => e.detail > 0 && reports.push(performance.now()));
        up.on("success", resolve);
        up.on("error", (e) => reject(new Error("upchunk: " + (e.detail?.message ?? e.detail))));
      });
    } else {
      const options = { url };
      if (how !== "auto") options.chunkSize = Number(how);
      const up = window.mu.upload(blob, options);
      up.addEventListener("progress", (e) => e.loaded > 0 && e.loaded < size && reports.push(performance.now()));
      await up;
    }
    const end = performance.now();
    return { ms: end - t0, gap: longestGap(reports, end) };
  };
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The page code and the routes the link runs need: call before the bench page loads. */
export function prepareLinks(env) {
  const upchunk = join(REPO_ROOT, "node_modules/@mux/upchunk/dist/upchunk.js");
  env.web.route("/upchunk.js", (req, res) => {
    res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(upchunk));
  });
  return `<script src="/upchunk.js"></script><script>(${LINK_CODE})();</script>`;
}

/** Runs the profiles in page (the bench page, with mu and benchBlob) and prints the figures. */
export async function benchLinks(env, page, rounds) {
  const ways = [
    ["whole", "one PUT of all"],
    ["auto", "module, defaults"],
    [String(256 * 1024), "module, 256 KiB"],
    [String(8 * MiB), "module, 8 MiB"],
    ["upchunk", "@mux/upchunk, dynamicChunkSize"],
  ];
  console.log(
    `emulated links (the reference server reads bodies at the rate and answers one round trip late), ` +
      `${rounds} rounds each, medians: share of the link's rate, longest wait between progress reports after the first`,
  );
  for (const p of PROFILES) {
    const bytesPerSecond = p.bitsPerSecond / 8;
    // About ten seconds of the link, in whole MiB where that is not too coarse.
    const size = Math.round((10 * bytesPerSecond) / (256 * 1024)) * 256 * 1024;
    await page.evaluate((s) => window.makeBlob(s), size);
    await env.ref.reset();
    await env.ref.config({ link: { bitsPerSecond: p.bitsPerSecond, rttMs: p.rttMs } });
    const t = Object.fromEntries(ways.map(([k]) => [k, { share: [], gap: [] }]));
    for (let i = 0; i < rounds; i++) {
      const order = ways.map(([k]) => k);
      for (let k = 0; k < i % order.length; k++) order.push(order.shift());
      for (const how of order) {
        const name = `link-${how}-${i}`;
        const r = await page.evaluate(([how, url, size]) => window.linkRun(how, url, size), [how, env.ref.uploadURL(name), size]);
        t[how].share.push(size / bytesPerSecond / (r.ms / 1000));
        t[how].gap.push(r.gap);
        await env.ref.deleteObject(name).catch(() => {});
      }
    }
    console.log(`  ${p.name}, ${(size / MiB).toFixed(1)} MiB (${((size / bytesPerSecond)).toFixed(1)} s of the link):`);
    for (const [how, label] of ways) {
      const gaps = t[how].gap;
      const gap = gaps.some((g) => g === null) ? "no progress until the end" : `${(median(gaps) / 1000).toFixed(2)} s`;
      console.log(`    ${label.padEnd(34)} ${median(t[how].share).toFixed(3)} of the link, longest wait ${gap}`);
    }
  }
  await env.ref.reset();
}
