// Progress inside a request (docs/protocol.md section 8). fetch reports nothing while a body
// goes up; but a body given as a ReadableStream (fetch's `duplex: "half"`) is pulled by the
// browser as its network takes it, so counting what it pulls tells how far the request has
// got. A chunk can then be long (fewer round trips: more of a slow link) and the progress bar
// still moves several times a second.
//
// Only Chromium takes a stream as a request body (Firefox and WebKit do not: `streamBodies`
// finds out), and only over HTTP/2 or HTTP/3: over HTTP/1.1 its fetch fails at once
// (ERR_H2_OR_QUIC_REQUIRED, or ERR_ALPN_NEGOTIATION_FAILED in its console), before a byte goes.
// Browsers speak HTTP/2 only over TLS, so a body to an http: URL is never counted. Which
// protocol an https: origin speaks is not known beforehand (Resource Timing hides it
// cross-origin), so host.js tries: a stream body that
// fails before any of it was taken, to an origin where none has gone through yet, is sent
// again at once as the Blob it was (`wholeAgain`); if that one is answered, the origin takes
// no stream bodies and gets Blobs from then on (`noStreams`). The upload sees one request, and
// spends no retry; where the Blob fails too, the failure was the network's, and is reported.
//
// The bytes counted are those the browser has taken into its buffers, up to megabytes ahead
// of what the server has received (docs/protocol.md section 8 gives the lead measured), after
// which it waits for the answer with nothing more to take. So the count is told on a timer,
// the wait included, and core moves `loaded` with it no faster than the link's rate
// (core/resumable.go, pacer); `confirmed` waits for the server's answer.

// How often the count is told, in milliseconds: the page gets a progress event from each.
const EVERY_MS = 200;

// The most a stream body hands the browser at once, in bytes: what the count can be out by.
const PIECE = 64 * 1024;

/**
 * Whether this engine's fetch takes a ReadableStream as a request body: the Fetch standard's
 * test. Such an engine reads the `duplex` member of the request's init, and sets no
 * Content-Type (one that does not takes the stream for text: "[object ReadableStream]").
 */
export const streamBodies = (() => {
  try {
    let duplexRead = false;
    const typed = new Request("http://127.0.0.1/", {
      method: "POST",
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return "half";
      },
    }).headers.has("Content-Type");
    return duplexRead && !typed;
  } catch {
    return false;
  }
})();

const refused = new Set(); // origins where a stream body failed before any byte went
const carried = new Set(); // origins where one went through

const originOf = (url) => {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
};

/** Whether a body to url may go as a counted stream. */
export const countable = (url) => streamBodies && url.startsWith("https:") && !refused.has(originOf(url));

/**
 * A stream body that failed (not aborted): whether to send it again at once as a Blob, which
 * an origin that takes no stream bodies answers (see the file's comment). It must have failed
 * before any of it was taken, not for its source, to an origin where none went through.
 */
export const wholeAgain = (url, body) => body.taken() === 0 && !body.sourceFailed() && !carried.has(originOf(url));

/** A stream body failed where the same bytes as a Blob were answered: Blobs to that origin. */
export const noStreams = (url) => refused.add(originOf(url));

/** A stream body that was answered: its origin takes them. */
export const carriedTo = (url) => carried.add(originOf(url));

/**
 * blob as a stream body, pulled as the network takes it (a high-water mark of 0: nothing is
 * read ahead of the browser's own buffers). onCount(n) is told the bytes taken so far every
 * EVERY_MS until stop(). Returns { stream, taken(), sourceFailed(), stop() }.
 */
export function countedBody(blob, onCount) {
  let taken = 0;
  let reader = null;
  let failed = false;
  let rest = null; // what the last read gave beyond the pieces handed on so far
  const timer = setInterval(() => taken > 0 && onCount(taken), EVERY_MS);
  const stream = new ReadableStream(
    {
      start() {
        reader = blob.stream().getReader();
      },
      async pull(controller) {
        if (!rest?.byteLength) {
          let r;
          try {
            r = await reader.read();
          } catch (err) {
            failed = true; // the File could not be read: the source's failure, not the network's
            throw err;
          }
          if (r.done) return void controller.close();
          rest = r.value;
        }
        // A read gives megabytes at once (Chromium: 2 MiB); handed on in pieces, the count
        // follows what the network takes, not what the disk gave.
        const piece = rest.subarray(0, PIECE);
        rest = rest.subarray(piece.byteLength);
        controller.enqueue(piece);
        taken += piece.byteLength;
      },
      cancel(reason) {
        return reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, taken: () => taken, sourceFailed: () => failed, stop: () => clearInterval(timer) };
}
