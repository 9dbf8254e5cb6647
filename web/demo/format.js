// How the demo writes numbers, times, errors and requests for people. Plain functions: no
// state, no DOM.

export function fmtBytes(n) {
  if (!Number.isFinite(n)) return "";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}

export function fmtRate(bps) {
  if (!bps || !Number.isFinite(bps)) return "";
  const mb = bps / 1e6;
  return mb >= 1 ? `${mb.toFixed(mb < 10 ? 1 : 0)} MB/s` : `${(bps / 1e3).toFixed(0)} kB/s`;
}

/** A duration for people: "350 ms", "1.6 s", "12 s", "2:05". */
export function fmtDuration(ms) {
  if (ms == null || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 10) return `${sec.toFixed(1)} s`;
  if (sec < 90) return `${Math.round(sec)} s`;
  const m = Math.floor(sec / 60), r = Math.round(sec % 60);
  return `${m}:${String(r).padStart(2, "0")}`;
}

/** Time left: "< 1 s left", "12 s left", "2:05 left", "1:02:05 left". */
export function fmtLeft(sec) {
  if (sec == null || !Number.isFinite(sec)) return "";
  if (sec < 1) return "< 1 s left";
  if (sec < 90) return `${Math.round(sec)} s left`;
  const total = Math.round(sec), h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const mm = h > 0 ? `${h}:${String(m).padStart(2, "0")}` : String(m);
  return `${mm}:${String(s).padStart(2, "0")} left`;
}

/** A count with thousands grouped: "1,000" (toLocaleString's first call costs WebKit 15-20 ms). */
export const fmtCount = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * What a row says of a failure: the code, the status, the server's reason (Google's
 * error.errors[0].reason, "quotaExceeded") where there is one, and the module's message, which
 * is written for a person (docs/api.md, "Errors"). Never the raw responseText: a page of JSON
 * or HTML says less than the message, which names what the server said.
 */
export function fmtError(err) {
  if (err && typeof err === "object" && "code" in err) {
    return {
      code: String(err.code),
      text: String(err.message || ""),
      status: Number(err.status) || 0,
      reason: typeof err.reason === "string" ? err.reason : "",
    };
  }
  return { code: "error", text: String((err && err.message) || err), status: 0, reason: "" };
}

/** A URL as a row shows it: without its query (a session URI's is long, and a secret). */
export function withoutQuery(url) {
  const i = url.search(/[?#]/);
  return i < 0 ? url : url.slice(0, i);
}

/**
 * What a request's Content-Range says, for the request log: the byte range, the chunk's size,
 * and whether it was a status query ("bytes *\/total", docs/protocol.md section 4).
 */
export function describeRange(contentRange) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(contentRange || "");
  if (m) {
    const first = Number(m[1]), last = Number(m[2]);
    return { range: `${first}–${last}`, size: fmtBytes(last - first + 1), first, last, query: false };
  }
  if (/^bytes \*\/(\d+|\*)$/.test(contentRange || "")) return { range: "status query", size: "", query: true };
  // A final empty chunk of a stream, or a request without a range (the session start).
  return { range: contentRange || "—", size: "", query: false };
}
