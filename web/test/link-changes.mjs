// Links that change under an upload (issue "Links that change", docs/protocol.md section 8):
// the scenarios that web/test/engines/links.test.mjs runs in every engine and `./build.sh bench`
// (web/bench/changes.mjs) runs at full length, as schedules for the reference server's emulated
// link (/_ref/config "link": rates and round trips that change at given times, blackouts),
// and the figures of one upload: from its events (the page's clock) and the server's log.

const mbit = (n) => n * 1e6;

/**
 * What a request given up still delivers over the emulated link (/_ref/config link "queueMs",
 * netlink's queue): the oldest bytes it had handed over, for up to a second of the link, the
 * requests after it waiting behind them, as a real uplink sends what sat in its bottleneck
 * queue and the sender's kernel buffer (consumer connections hold 0.2-2 s). The tests and the
 * bench run under it; 0 is the kinder model from before 2026-11-28 (all dropped at once).
 */
export const QUEUE_MS = 1000;

/** The reference server's link config for a schedule, under the queue. */
export const linkConfig = (schedule, queueMs = QUEUE_MS) => ({ link: { schedule, queueMs } });

/** A link step: from atMs on (from the first request after it was set), this rate and round trip. */
const step = (atMs, mbits, rttMs) => ({ atMs, bitsPerSecond: mbit(mbits), rttMs });
const blackout = (atMs) => ({ atMs, blackout: true });
/** Loopback as it is: no rate, no round trip (the demo's "unlimited"). */
const loopback = [step(0, 0, 0)];
/** A rate in the demo's KiB a second (its "256 KB/s" is 262144 bytes a second). */
const kib = (n) => (n * 1024 * 8) / 1e6;
const MiB = 2 ** 20;

/**
 * The scenarios. Each: name; before (optional): a link and a size uploaded first, at the
 * defaults, whose measure the page keeps (what the page learnt); schedule: the link of the
 * upload measured; size in bytes; options (optional): the upload's options beside the
 * defaults; changeMs: when the link changes (from the upload's start); checks: the issue's
 * targets (firstMs: progress within this after the change; gapMs: the longest wait after it;
 * ratio: the whole upload within this many times the ideal; retries; twice: bytes the server
 * read twice, "chunk" for at most the largest chunk). full: the bench's length; else the tests'
 * shorter one, which leaves out the scenarios marked benchOnly.
 */
export function scenarios({ full = false } = {}) {
  // Every tenth of a second of round trips before a 20x drop costs two seconds after it: the
  // slow part is the longer, as it is for a phone that left Wi-Fi for the rest of an upload.
  const slowS = full ? 30 : 5;
  const fastMs = full ? 3000 : 2000;
  // After a fast upload on loopback (the demo's "unlimited", then a slower speed picked), a file
  // the default sends resumable (over 5 MB: oneRequestBound) is tens of seconds at 256 KB/s; the
  // tests' shorter one asks for resumable (its first chunk is what they check).
  const afterFast = (kibs, fullSize, shortSize) => ({
    name: `${kibs >= 1024 ? kibs / 1024 + " MB/s" : kibs + " KB/s"} after a fast upload`,
    before: { schedule: loopback, size: full ? 100e6 : 20e6 },
    schedule: [step(0, kib(kibs), 20)],
    size: full ? fullSize : shortSize,
    options: full ? {} : { uploadType: "resumable" },
    changeMs: 0,
    checks: { firstMs: 3000, gapMs: 3000, retries: 0, twice: "chunk" },
  });
  const all = [
    {
      name: "40x slower than the upload before",
      before: { schedule: [step(0, 40, 20)], size: 8e6 },
      schedule: [step(0, 1, 20)],
      // Above what the default sends in one request after a 40 Mbit/s upload (a quarter of a
      // second of it, 1.25 MB): resumable, its first chunk a probe.
      size: 1.6e6,
      changeMs: 0,
      checks: { firstMs: 3000, retries: 0, twice: 0 },
    },
    afterFast(256, 12 * MiB, 1.5 * MiB),
    afterFast(1024, 40 * MiB, 4 * MiB),
    {
      name: "3 Mbit/s, 150 ms after a fast upload",
      benchOnly: true,
      before: { schedule: loopback, size: 100e6 },
      schedule: [step(0, 3, 150)],
      size: 8 * MiB,
      changeMs: 0,
      checks: { firstMs: 3000, gapMs: 3000, retries: 0, twice: "chunk" },
    },
    {
      name: "20x drop mid-upload",
      schedule: [step(0, 40, 20), step(fastMs, 2, 20)],
      size: (fastMs / 1000) * 5e6 + slowS * 250e3,
      changeMs: fastMs,
      checks: { firstMs: 3000, gapMs: 3000, ratio: full ? 1.25 : 0, retries: 0, twice: "chunk" },
    },
    {
      // The same drop from a faster link, with more of the file after it.
      name: "20x drop mid-upload, 10 MB/s to 500 KB/s",
      benchOnly: true,
      schedule: [step(0, 80, 20), step(3000, 4, 20)],
      size: 48 * MiB,
      changeMs: 3000,
      checks: { firstMs: 3000, gapMs: 3000, ratio: 1.25, retries: 0, twice: "chunk" },
    },
    {
      name: "20x rise mid-upload",
      schedule: [step(0, 2, 20), step(fastMs, 40, 20)],
      size: (fastMs / 1000) * 250e3 + (full ? 7 : 3) * 5e6,
      changeMs: fastMs,
      checks: { ratio: 1.3, retries: 0, twice: 0 },
    },
    {
      // The tests' blackout is 11 s: longer than the 10 s after which a counted body whose
      // bytes stopped is taken for stalled, so that path runs too.
      name: `${full ? 20 : 11} s blackout`,
      schedule: [step(0, 20, 40), blackout(2000), step(2000 + (full ? 20000 : 11000), 20, 40)],
      size: (full ? 10 : 3.5) * 2.5e6,
      changeMs: 2000,
      checks: { retries: 1, twice: "chunk" },
    },
    {
      name: "round trip from 40 to 600 ms",
      schedule: [step(0, 20, 40), step(2000, 20, 600)],
      size: (full ? 10 : 4) * 2.5e6,
      changeMs: 2000,
      checks: { gapMs: 4000, retries: 0, twice: 0 },
    },
  ];
  return full ? all : all.filter((sc) => !sc.benchOnly);
}

/** How long size bytes take over schedule from its start, in ms: the bytes alone (a step without a rate: at once). */
export function idealMs(schedule, size) {
  let sent = 0;
  for (let t = 0; ; t += 10) {
    const s = schedule.filter((x) => x.atMs <= t).at(-1);
    if (!s.blackout) sent += s.bitsPerSecond > 0 ? (s.bitsPerSecond / 8) * 0.01 : size;
    if (sent >= size) return t + 10;
  }
}

/**
 * The figures of one upload: out (T.run's: events with the page's times), log (the server's
 * entries of this upload), the scenario. Times in ms from the upload's start (its loadstart).
 */
export function figures(out, log, sc) {
  const ev = out.events;
  const t0 = ev.find((e) => e.type === "loadstart")?.t ?? ev[0].t;
  const end = (ev.find((e) => e.type === "loadend")?.t ?? ev.at(-1).t) - t0;
  // The times loaded grew.
  const moves = [];
  let last = 0;
  for (const e of ev) {
    if (e.type === "progress" && e.loaded > last) {
      moves.push(e.t - t0);
      last = e.loaded;
    }
  }
  const change = sc.changeMs;
  const after = moves.filter((m) => m > change);
  let gap = 0;
  let prev = change;
  for (const m of [...after, end]) {
    gap = Math.max(gap, m - prev);
    prev = m;
  }
  // The requests that carried the file's bytes: chunks, or one media or multipart request.
  const chunks = log.filter((e) => e.kind === "chunk" || e.kind === "media" || e.kind === "multipart");
  const received = chunks.reduce((n, e) => n + (e.received ?? 0), 0);
  const sizes = chunks.map((e) => {
    const m = /^bytes (\d+)-(\d+)\//.exec(e.contentRange);
    return m ? Number(m[2]) - Number(m[1]) + 1 : e.received;
  });
  const ideal = idealMs(sc.schedule, sc.size);
  return {
    tookMs: end,
    idealMs: ideal,
    ratio: end / ideal,
    firstMs: after.length ? after[0] - change : null,
    gapMs: gap,
    retries: ev.filter((e) => e.type === "retry").length,
    cuts: ev.filter((e) => e.type === "request" && /cut short/.test(e.error?.message ?? e.error ?? "")).length,
    twice: received - sc.size,
    largest: Math.max(0, ...sizes),
    chunks: sizes,
  };
}

/** One line of figures for a report. */
export function describe(f) {
  const s = (ms) => (ms === null ? "-" : (ms / 1000).toFixed(2) + " s");
  return (
    `took ${s(f.tookMs)} (${f.ratio.toFixed(2)}x the ideal ${s(f.idealMs)}), first progress after the change ${s(f.firstMs)}, ` +
    `longest gap after it ${s(f.gapMs)}, ${f.retries} retries, ${f.cuts} cut short, ${f.twice} bytes the server read twice, ` +
    `${f.chunks.length} chunks (largest ${(f.largest / 2 ** 20).toFixed(2)} MiB)`
  );
}
