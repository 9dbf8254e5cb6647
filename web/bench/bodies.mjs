// The bodies part of ./build.sh bench (BENCH_ONLY=bodies): how long after fetch() a request
// with a body reaches the server, by the body's size and kind, in each engine, over HTTP/1.1
// and HTTP/2. Some engines hold a body back before its first byte leaves (they copy it
// first), the longer the larger it is; every chunk pays that, as one whole PUT does, and on a
// fast link it is time the link stands idle (docs/protocol.md section 6). No module here: one
// plain fetch POST each, to the reference server with a 40 Mbit/s link (bodies leave at once,
// answers one 20 ms round trip late), timed from the page's fetch() (performance.timeOrigin +
// now) to the server's log entry of the request's arrival: the two clocks are the machine's.
// Each request goes to a new URL, so each pays its preflight: the body-less rows show that part.
//
// The bodies: none; a File from disk (an <input type=file> given a file the bench wrote),
// sliced to the size; a Blob made in the page's memory; and the File sent by XMLHttpRequest
// rather than fetch (timed from send()), as other uploaders send it: whether the hold is
// fetch's alone. BENCH_BODY_ENGINES picks engines (default all three), BENCH_BODY_RUNS the
// rounds (default 3; medians).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES } from "../test/browsers.mjs";
import { MiB, startAll } from "../test/harness.mjs";
import { median, pickFile, pickedIn } from "./common.mjs";

// [size, kind]: the bodies, each timed.
const BODIES = [
  [0, "none"],
  [2 * MiB, "File"],
  [8 * MiB, "File"],
  [16 * MiB, "File"],
  [2 * MiB, "Blob"],
  [8 * MiB, "Blob"],
  [16 * MiB, "Blob"],
  [8 * MiB, "File by XMLHttpRequest"],
  [16 * MiB, "File by XMLHttpRequest"],
];

// Runs in the page: one POST of the body, the wall-clock time fetch() (or send()) was called.
const POST = async ([url, size, kind]) => {
  if (kind === "File by XMLHttpRequest") {
    const file = document.getElementById("bodies-file").files[0].slice(0, size);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("content-type", "application/octet-stream");
    const done = new Promise((resolve, reject) => ((xhr.onload = resolve), (xhr.onerror = () => reject(new Error("POST: network error")))));
    const t = performance.timeOrigin + performance.now();
    xhr.send(file);
    await done;
    if (xhr.status !== 200) throw new Error(`POST: ${xhr.status}`);
    return t;
  }
  const body =
    kind === "none"
      ? undefined
      : kind === "File"
        ? document.getElementById("bodies-file").files[0].slice(0, size)
        : new Blob([new Uint8Array(size).fill(7)]);
  const t = performance.timeOrigin + performance.now();
  const res = await fetch(url, { method: "POST", body, headers: { "content-type": "application/octet-stream" } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`POST: ${res.status}`);
  return t;
};

/** Runs the part and prints the figures. */
export async function benchBodies() {
  const engines = pickedIn("BENCH_BODY_ENGINES") ?? ENGINES;
  const runs = Number(process.env.BENCH_BODY_RUNS ?? 3);
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-bodies-"));
  const path = join(dir, "body.bin");
  writeFileSync(path, Buffer.alloc(Math.max(...BODIES.map(([n]) => n)), 7));
  console.log(
    `bodies: ms from fetch() to the request's arrival at the server (a new URL each: its preflight included), ` +
      `${runs} rounds, medians; a File from disk and a Blob in memory, by size; the File by XMLHttpRequest from send()`,
  );
  try {
    for (const engine of engines) {
      const env = await startAll({ engine, tls: true });
      try {
        const page = await env.openPage();
        await pickFile(page, "bodies-file", path);
        await env.ref.config({ link: { bitsPerSecond: 40e6, rttMs: 20 } });
        for (const [proto, over, v] of [["HTTP/1.1", { http: true }, "h1"], ["HTTP/2", {}, "h2"]]) {
          const cells = [];
          for (const [size, kind] of BODIES) {
            const took = [];
            for (let r = 0; r < runs; r++) {
              await env.ref.clearLog();
              const name = `bodies-${engine}-${v}-${kind}-${size}-${r}`;
              const sent = await page.evaluate(POST, [env.ref.uploadURL(name, over) + "&uploadType=media", size, kind]);
              const arrived = (await env.ref.log()).find((e) => e.kind !== "preflight");
              took.push(Date.parse(arrived.time) - sent);
              await env.ref.reset();
              await env.ref.config({ link: { bitsPerSecond: 40e6, rttMs: 20 } });
            }
            cells.push(`${kind === "none" ? "none" : `${kind} ${size / MiB} MiB`} ${Math.round(median(took))}`);
          }
          console.log(`  ${env.engineVersion}, ${proto}: ${cells.join(", ")}`);
        }
      } finally {
        await env.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
