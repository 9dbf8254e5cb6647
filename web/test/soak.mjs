// The random-fault soak (issue 8): many uploads in one page against the reference server with
// its random fault injector on, checked byte for byte on the server (size and MD5), with a
// report of what was lost, what arrived corrupt, how often the module retried and which faults
// the server injected. Used by soak.test.mjs (a bounded run in ./build.sh test) and by
// `./build.sh soak`, which runs this file:
//
//   node web/test/soak.mjs        MEDIAUPLOAD_SOAK_N uploads (default 400),
//                                 MEDIAUPLOAD_SOAK_SEED (default: the time), dist/ built
//
// Each upload draws, from one seeded generator: a size of 0 to 16 MiB (one in ten empty, one
// in five an exact multiple of 256 KiB), a chunk size (a multiple of 256 KiB up to 8 MiB, 0 for
// one PUT, or none: the module's default), and whether it asks for a crc32c checksum. Half of
// the uploads run one after another, half four at a time. getHeaders is always given. The
// Blobs are made in the page from the harness's pool, so the expected bytes are known here.

import { MiB, POOL_SIZE, md5Base64, pooledBytes, startAll } from "./harness.mjs";

const CHUNK = 256 * 1024;
// Short retry waits, so that hundreds of faults cost seconds, not hours; the counts are the
// protocol's (docs/protocol.md section 5).
const RETRY = { initialDelayMs: 20, maxDelayMs: 500, jitterMs: 20 };

/** A small seeded generator (an LCG): next(n) is an integer in [0, n). */
function generator(seed) {
  let x = seed >>> 0;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return Math.floor((x / 2 ** 32) * n);
  };
}

/** The uploads of a run: { name, size, offset, chunkSize (undefined: the default), checksum }. */
export function plan(n, seed) {
  const next = generator(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const kind = next(10);
    let size;
    if (kind === 0) size = 0;
    else if (kind <= 2) size = CHUNK * (1 + next(64)); // an exact multiple of 256 KiB, up to 16 MiB
    else size = next(16 * MiB + 1);
    const c = next(8);
    const chunkSize = c === 0 ? 0 : c === 1 ? undefined : CHUNK * (1 + next(32));
    out.push({
      name: `soak-${seed}-${i}`,
      size,
      offset: next(POOL_SIZE - size + 1),
      chunkSize,
      checksum: next(4) === 0 ? "crc32c" : undefined,
    });
  }
  return out;
}

/**
 * Runs the soak in env (from startAll) and resolves to its figures:
 *   { seed, uploads, bytes, ok, lost: [...], corrupt: [...], retries, restarts, faults: {kind: n},
 *     requests, seconds }
 * lost: uploads that failed (name, code, message); corrupt: uploads stored with other bytes.
 */
export async function soak(env, { n, seed, rate = 0.15, log = () => {} }) {
  const { ref } = env;
  const uploads = plan(n, seed);
  const page = await env.openPage();
  const figures = { seed, uploads: n, bytes: 0, ok: 0, lost: [], corrupt: [], retries: 0, restarts: 0, faults: {}, requests: 0 };
  const t0 = performance.now();
  try {
    await page.evaluate(() => T.load());
    await ref.reset();
    await ref.setFaults([], { seed, rate });

    const one = async (u) => {
      const out = await page.evaluate(
        async ({ u, url, retry }) => {
          const mu = await T.load();
          const options = { url, retry, getHeaders: async () => ({ Authorization: "Bearer soak" }) };
          if (u.chunkSize !== undefined) options.chunkSize = u.chunkSize;
          if (u.checksum) options.checksum = u.checksum;
          const up = mu.upload(T.pooled(u.offset, u.size), options);
          let retries = 0;
          let restarts = 0;
          up.addEventListener("retry", (e) => (e.restart ? restarts++ : retries++));
          try {
            await up;
            return { ok: true, retries, restarts };
          } catch (e) {
            return { ok: false, retries, restarts, code: e.code, message: e.message };
          }
        },
        { u, url: ref.uploadURL(u.name), retry: RETRY },
      );
      figures.retries += out.retries;
      figures.restarts += out.restarts;
      figures.bytes += u.size;
      if (!out.ok) {
        figures.lost.push({ name: u.name, size: u.size, chunkSize: u.chunkSize, code: out.code, message: out.message });
        log(`lost ${u.name} (${u.size} bytes, chunkSize ${u.chunkSize}): ${out.code}: ${out.message}`);
        return;
      }
      const want = pooledBytes(u.offset, u.size);
      const obj = await ref.object(u.name);
      if (!obj || obj.size !== String(u.size) || obj.md5Hash !== md5Base64(want)) {
        figures.corrupt.push({ name: u.name, size: u.size, stored: obj ? `${obj.size} bytes, md5 ${obj.md5Hash}` : "nothing" });
        log(`corrupt ${u.name}: ${obj ? obj.size : "no"} bytes stored of ${u.size}`);
        return;
      }
      figures.ok++;
      // The server keeps objects in memory: let this one go.
      await ref.deleteObject(u.name);
    };

    const half = Math.ceil(n / 2);
    // One after another…
    for (const [i, u] of uploads.slice(0, half).entries()) {
      await one(u);
      if ((i + 1) % 50 === 0) log(`${i + 1} of ${n} done`);
    }
    // …then four at a time.
    const rest = uploads.slice(half);
    let nextIndex = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (nextIndex < rest.length) await one(rest[nextIndex++]);
      }),
    );

    for (const e of await ref.log()) {
      if (e.kind === "preflight") continue;
      figures.requests++;
      if (!e.fault) continue;
      // "random status 503", "random close after 1234 bytes", "random keep 100", …: the kind.
      const kind = e.fault.replace(/^random /, "").replace(/ after \d+ bytes$/, "").replace(/^keep \d+$/, "keep").replace(/ retry-after \d+$/, "");
      figures.faults[kind] = (figures.faults[kind] ?? 0) + 1;
    }
  } finally {
    await ref.clearFaults().catch(() => {});
    await page.close();
  }
  figures.seconds = Math.round((performance.now() - t0) / 100) / 10;
  return figures;
}

/** The figures as lines for a person. */
export function report(f) {
  const faults = Object.entries(f.faults).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v}`).join(", ");
  const total = Object.values(f.faults).reduce((a, b) => a + b, 0);
  return [
    `soak seed ${f.seed}: ${f.uploads} uploads, ${(f.bytes / MiB).toFixed(1)} MiB in ${f.seconds} s (half sequential, half 4 at a time)`,
    `  ok ${f.ok}, lost ${f.lost.length}, corrupt ${f.corrupt.length}`,
    `  retries ${f.retries}, sessions restarted ${f.restarts}`,
    `  requests ${f.requests}, faults injected ${total} (${faults})`,
  ];
}

// `./build.sh soak`: run, print, and fail on anything lost or corrupt.
if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.env.MEDIAUPLOAD_SOAK_N ?? 400);
  const seed = Number(process.env.MEDIAUPLOAD_SOAK_SEED ?? Date.now() % 1_000_000);
  const env = await startAll();
  let f;
  try {
    f = await soak(env, { n, seed, log: (l) => console.log(l) });
  } finally {
    await env.close();
  }
  for (const line of report(f)) console.log(line);
  for (const l of f.lost) console.log(`  lost: ${JSON.stringify(l)}`);
  for (const c of f.corrupt) console.log(`  corrupt: ${JSON.stringify(c)}`);
  process.exit(f.lost.length + f.corrupt.length === 0 ? 0 : 1);
}
