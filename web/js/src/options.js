import { MISSING_FILE, isFileHandle } from "./file-handle.js";

// What the page checks of the caller's arguments itself (what is JavaScript's own: a Blob or a
// stream, callbacks, a signal, a stream's limits in the browser), and the copy of the options
// that the Go side reads, where core checks every value (jsbridge/options.go converts it).

// The options the Go side reads (jsbridge/options.go). It gets a fresh copy of them, never the
// caller's object: nothing of the caller's (a getter, a Proxy, a callback) is reachable from
// it, and the copy is structured-clonable. getHeaders becomes true where a function was given
// (the host keeps the function itself).
const PROTOCOL_OPTIONS = [
  "url", "method", "uploadType", "metadata", "contentType", "chunkSize", "maxChunkSize", "headers", "retry",
  "queryStatusEachChunk", "noRedirect308", "checksum", "stallTimeoutMs", "progressIntervalMs",
];

export function wireOptions(options, sessionURL) {
  // The page's origin, for the message of a network error (a CORS refusal is the likely one).
  // (getHeaders: true where given; the Go side reads only the options there are.)
  const out = { origin: String(globalThis.location?.origin ?? "") };
  if (typeof options.getHeaders === "function") out.getHeaders = true;
  if (sessionURL !== undefined) out.sessionURL = absolute(sessionURL);
  // A session the resume store kept (resume: true), not the caller's: it may go with session.
  if (sessionURL !== undefined && sessionURL !== options.sessionURL) out.sessionKept = true;
  // session: a function (sessionFunction: the host keeps it, through the Upload's sink) or the
  // URL of the app's endpoint, resolved as url is; anything else goes as it is, for the Go side
  // to refuse.
  const { session } = options;
  if (typeof session === "function") out.sessionFunction = true;
  else if (session !== undefined && session !== null) {
    try {
      out.session = typeof session === "string" || session instanceof URL ? absolute(session) : structuredClone(session);
    } catch (err) {
      return { bad: `invalid session: ${err?.message ?? err}` };
    }
  }
  for (const name of PROTOCOL_OPTIONS) {
    try {
      let v = options[name];
      if (v === undefined) continue;
      if (name === "url") v = absolute(v);
      if (name === "metadata" && v !== null && !isPlainObject(v)) {
        return { bad: "invalid metadata: not a plain object" };
      }
      // (A string, number or boolean is its own copy; structuredClone refuses a function or a
      // symbol, and copies anything else.)
      const plain = typeof v === "string" || typeof v === "number" || typeof v === "boolean";
      out[name] = plain ? v : structuredClone(v);
    } catch (err) {
      return { bad: `invalid ${name}: ${err?.message ?? err}` };
    }
  }
  return { options: out };
}

// A relative url ("/upload/…") resolved against the page's base URL (a worker's location
// there); anything else is left to the Go side's check.
function absolute(url) {
  if (url instanceof URL) return url.href; // a URL object is as good as its text
  // Whitespace in a url is a mistake (a pasted sentence, say), not a path to resolve.
  if (typeof url !== "string" || url === "" || /\s/.test(url)) return url;
  const base = globalThis.document?.baseURI ?? globalThis.location?.href;
  try {
    return base ? new URL(url, base).href : url;
  } catch {
    return url;
  }
}

function isPlainObject(v) {
  if (typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

// The checks of what is JavaScript's own: the source, the callbacks, the signal, a stream's
// limits in the browser. Every protocol option's value is core's to check.
export function checkArguments(blob, options) {
  if (blob == null && options?.[MISSING_FILE]) return options[MISSING_FILE];
  const stream = typeof ReadableStream !== "undefined" && blob instanceof ReadableStream;
  if (!(blob instanceof Blob) && !stream && !isFileHandle(blob)) {
    return "the first argument must be a Blob, a File, a FileSystemFileHandle or a ReadableStream";
  }
  if (options == null || typeof options !== "object") {
    return "the options must be an object with at least a url";
  }
  if (stream) {
    // What only the page can say of a stream (docs/api.md, "Streams"); that data of unknown
    // length needs a resumable upload is core's rule.
    if (blob.locked) return "the stream is locked: something else is reading it already";
    if (options.resume) return "resume: true needs a File: a stream cannot be found again after a reload";
    // The host would hold the whole stream for one PUT (a Go program's transport can stream it).
    if (options.chunkSize === 0) return "a stream is sent in chunks: chunkSize 0 (one PUT of all) would hold all of it in memory";
  }
  for (const name of ["onProgress", "onRetry", "onStateChange", "onRequest", "getHeaders"]) {
    if (options[name] != null && typeof options[name] !== "function") {
      return `${name} must be a function`;
    }
  }
  const { signal } = options;
  if (signal != null && (typeof signal.addEventListener !== "function" || !("aborted" in signal))) {
    return "signal must be an AbortSignal";
  }
  return "";
}
