// The host: everything the Go side needs of the browser for an upload, asked for by the
// upload's numeric id. It runs in the module's own realm (the page, or the Worker of worker
// mode), and it is the only holder of what belongs to an upload: the source Blob or stream,
// the sink that the Upload object listens to, getHeaders, the AbortController of the request
// in flight. The Go side never holds any of them (jsbridge/doc.go, "Ownership"): it passes and
// receives objects of primitives only, so a finished upload's Blob is let go as soon as its
// entry here is deleted, which happens when the Go side reports the upload's end ("done" or
// "fail"), whatever Go's collector does.
//
// This comment is the contract between the Go side (jsbridge/host.go) and the host, written
// down once. The Go side calls, each with the upload's id (countable: a URL), and each call but
// abort, report, wantRequests and countable is answered by calling `answer` (the Go side's one
// callback of the upload) once, with an object whose `kind` says how it went:
//
//   send(id, method, url, headerLines, pre, start, end, post, session, timeoutMs, sent, answer)
//       one fetch, its fields positional (the call made most: no object to build in Go).
//       headerLines: "name\nvalue\n" for each header; the body is pre + source[start, end) + post (start
//       < 0: no bytes of the source; pre and post may be null; all empty: no body); session:
//       the request goes to a session URI, where a 308 is the protocol's answer (redirect
//       modes: below); unanswered after timeoutMs (> 0), it is aborted. sent (optional): a
//       function told the bytes of the body the network has taken so far, where the host can
//       count them (counted.js: a Blob's range sent as a stream), only before it answers;
//       from its first call on it decides instead of timeoutMs: false gives the request up
//       as stalled (the body stopped moving).
//       "ok\nstatus\nrange\nlocation\noverride\nretryAfter\nbody": the answer as one string
//                  (one value to cross instead of an object of seven; "" where absent; the
//                  header values hold no line break, the body is the rest)
//       {kind: "redirect", followed}   a redirect, never followed with a body (followed: a
//                                      body-less request followed one before it could tell)
//       {kind: "hidden"}   a session request answered with a 3xx whose headers fetch hides
//       {kind: "fetch" | "offline" | "stall" | "source" | "error", name, message}: no answer:
//       fetch rejected, while the browser said it was offline, unanswered in time, because
//       the File can no longer be read (no retry can mend that), or another failure
//   hash(id, kinds)                   starts hashing the source from byte 0 (kinds: "crc32c",
//                                     "md5" or "both"; hash.js): a Blob read ahead of the
//                                     chunks, a stream's bytes as pull reads them. No answer
//   digest(id, n, answer)             once bytes [0, n) are hashed: {kind: "ok", crc32c, md5}
//                                     (base64, "" where not asked)
//                                     | {kind: "source" | "error", name, message}
//   pull(id, {start, end}, answer)    a stream's source (stream.js): reads up to end, keeps
//                                     [start, …): {kind: "ok", n} | {kind: "notkept"}
//                                     | {kind: "source", name, message}
//   headers(id, answer)               calls getHeaders: {kind: "ok", headers: {name: value}}
//                                     | {kind: "bad", reason} | {kind: "error", name, message}
//   session(id, {endpoint, size, type, metadata}, answer)
//                                     asks the app's backend for a session (docs/api.md, "A
//                                     session from your backend") with the upload's
//                                     {name, size, type, metadata} (name: the File's; size
//                                     null for a stream; metadata: the JSON text, "" for none):
//                                     POSTs it as JSON to endpoint, or, where endpoint is "",
//                                     calls the page's function (sink.session) with it:
//                                     {kind: "ok", sessionURL, signedURL, headers} ("" and null
//                                     where absent) | {kind: "bad", reason} | {kind: "refused",
//                                     status, message, body} (the endpoint's 4xx or 5xx)
//                                     | {kind: "unreachable" | "threw", name, message}
//                                     | {kind: "offline", name, message}: either of those
//                                     while the browser is offline (core waits, asks again)
//   whenOnline(id, answer)            {kind: "ok"} once the browser is online (at once if it is;
//                                     online.js says how the host knows)
//   abort(id)                         aborts the request in flight, if any
//   wantRequests(id)                  whether anyone listens to per-request reports
//   countable(url)                    whether send would count a body to url (counted.js):
//                                     core sizes a first chunk by it
//   report(id, type, ...fields)       tells the sink (sink.report) what happened, as
//                                     {type, ...fields}: the fields come positional, in the
//                                     order below (REPORT_FIELDS):
//       {type: "state", state}
//       {type: "progress", loaded, total, confirmed, bytesPerSecond, secondsLeft}
//       {type: "retry", attempt, delayMs, status, error, restart}
//       {type: "session", url}
//       {type: "request", method, url, contentRange, status, ms, error}
//       {type: "done", status, body, sessionURL}
//       {type: "checked", held, complete}      the end of a check (api.check): what the session holds
//       {type: "fail", code, message, status, responseText, sessionURL, reason, serverMessage}
//       "done", "checked" and "fail" end the entry; "fail" gets the JS error behind it, if
//       any, as cause.
//
// The loader's side (module.js): open(id, {blob | stream, sink, getHeaders, ahead}) before the
// Go side starts the upload (a check: no source), close(id) if it could not start it.
// sink.session is the caller's session function, where the upload has one (upload.js).
//
// Hashing ahead (the queue's: queue.js): ahead(key, blob, kinds) starts hashing a Blob that a
// queue will upload next, before its upload starts; the upload opened with that key takes the
// hashing over when the Go side asks for the same kinds (hash), and lets go of it otherwise at
// its end; dropAhead(key) ends one no upload took (aborted, paused before its turn, or ended
// before it reached the Go side). A file sent in one request states its hash in that request,
// so its hash comes before its bytes: hashed while the files before it upload, it costs the
// file no time of its own.

import { callSafely } from "../events.js";
import { carriedTo, countable, countedBody, noStreams, wholeAgain } from "./counted.js";
import { FileChangedError, FileWatch, readAgain, unreadableFile } from "./file-watch.js";
import { Hashing } from "./hash.js";
import { Online } from "./online.js";
import { NotKeptError } from "./stream.js";

// The fields of each report (see report above), in the order the Go side passes them.
const REPORT_FIELDS = {
  state: ["state"],
  progress: ["loaded", "total", "confirmed", "bytesPerSecond", "secondsLeft"],
  retry: ["attempt", "delayMs", "status", "error", "restart"],
  session: ["url"],
  request: ["method", "url", "contentRange", "status", "ms", "error"],
  done: ["status", "body", "sessionURL"],
  checked: ["held", "complete"],
  fail: ["code", "message", "status", "responseText", "sessionURL", "reason", "serverMessage"],
};

// The headers object of a send's headerLines ("name\nvalue\n" each).
function headersOf(lines) {
  const headers = {};
  const parts = lines.split("\n");
  for (let i = 0; i + 1 < parts.length; i += 2) headers[parts[i]] = parts[i + 1];
  return headers;
}

// The most of an answer's body that is read into a string (jsbridge.MaxResponseBody).
const MAX_BODY = 1 << 20;

// Decodes every answer's body (made once: a new one for each answer cost Chromium 9-24 µs).
const utf8 = new TextDecoder();

const noop = () => {};

// A request's timer that fires later than this was held up by its thread: the time it was late
// is given back (send).
const HELD_MS = 25;

// Redirects (docs/protocol.md section 6). The protocol's 308 Resume Incomplete carries no
// Location, and engines differ in what fetch does with such a 3xx:
//   mode "error":  Chromium and WebKit hand it over; Firefox rejects (as the Fetch standard
//                  says for every redirect status), and then only mode "follow" hands it over;
//   mode "follow": every engine hands it over, but a 3xx *with* a Location is followed and
//                  the body sent again to the new URL, with every header but Authorization;
//   mode "manual": every engine hides every 3xx (status 0, no headers): nothing is followed.
// So nothing is ever sent in mode "follow" with a body, or with a header of the caller's but
// Authorization (which fetch drops on a redirect to another origin). The modes:
//   - a request not to a session URI (a session start, a media or multipart upload):
//     "manual". A 3xx is a redirect, reported, never followed.
//   - a session request with a body (a chunk) that asks for no 308 (X-GUploader-No-308, the
//     default: the server answers 200 + X-HTTP-Status-Code-Override, readable anywhere), or
//     in an engine that rejects a 3xx without Location in "error": "manual". A 3xx comes
//     back hidden, and core asks the session what it holds at once.
//   - any other session request: "error", except a body-less one (a status query) in an
//     engine known to reject there: "follow", with the headers that may follow. A body-less
//     request that "error" rejects is asked again at once in "follow", so: a 3xx it then
//     reads shows that this engine rejects them in "error" (errorModeRejects3xx), and one
//     it followed is reported as a redirect.
let errorModeRejects3xx = false;

// The statuses fetch treats as redirects (the Fetch standard's "redirect status").
const REDIRECT = new Set([301, 302, 303, 307, 308]);

// The headers a status query may carry into mode "follow": the protocol's own, and
// Authorization, which fetch removes on a redirect to another origin (the Fetch standard,
// HTTP-redirect fetch); on the same origin it stays with the server it was meant for.
const MAY_FOLLOW = new Set(["content-range", "content-type", "x-guploader-no-308", "authorization"]);
const mayFollow = (headers) => Object.fromEntries(Object.entries(headers).filter(([k]) => MAY_FOLLOW.has(k.toLowerCase())));

// The redirect mode of a request (see above).
function redirectMode(session, hasBody, no308) {
  if (!session) return "manual";
  if (hasBody) return no308 || errorModeRejects3xx ? "manual" : "error";
  return errorModeRejects3xx ? "follow" : "error";
}

// fetch with the mode redirectMode chose, and the one second try that learns the engine's way
// (see above). Resolves to the Response; rejects as fetch does.
async function exchange(url, init, session) {
  const res = await fetch(url, init.redirect === "follow" ? { ...init, headers: mayFollow(init.headers) } : init).catch(async (err) => {
    if (!session || init.redirect !== "error" || init.body !== undefined || init.signal.aborted) throw err;
    let again;
    try {
      again = await fetch(url, { ...init, redirect: "follow", headers: mayFollow(init.headers) });
    } catch {
      throw err; // not a 3xx that "error" refused: the failure it was
    }
    if (!again.redirected && REDIRECT.has(again.status)) errorModeRejects3xx = true;
    return again;
  });
  return res;
}

// Blobs made in memory live in the browser's Blob store, which is bounded (a few hundred MB),
// while any script object of this realm refers to them, however long ago it was dropped, until
// the realm's collector finds it: the engine sees a Blob as a small object, not its bytes
// (docs/protocol.md section 6). On the page, the page's own allocations prompt a collection
// now and then; a Worker allocates next to nothing, and there its collector ran so rarely that
// every Blob uploaded stayed held (Chromium 156, 30 uploads of 16 MB Blobs: 109 Blobs, 990 MB,
// the same 5 s later). So in a Worker, after each 8 MiB of settled Blobs made in memory (or of
// slices of them read for a checksum: hash.js), the host makes an allocation the engine does
// count, an ArrayBuffer of 256 MiB let go at once (pages the system maps lazily and that are
// never written: 0-3 ms in every engine), which prompts a full collection; a task later, so
// that the settled entry is out of reach by then. With it the store stays at what Chromium
// keeps of recent requests' bodies (web/test/memory.test.mjs: 230-240 MB, as on the page; a
// nudge of 64 MiB, or every 32 MiB, let it reach 270-300 MB).
//
// A File is no sign of where its bytes are. One picked from disk (an <input>, a drop, a file
// handle) holds none of the store; one made in script (`new File([bytes])`) is in it as any
// Blob made in memory, and no engine lets script tell the two apart (no property, no read
// differs). So the host treats every File as possibly both, which costs nothing wrong either
// way: it counts towards the nudge (a File from disk then prompts a collection the Worker did
// not need, 0-3 ms of the Worker's own thread), its reads for a checksum are tried again as a
// Blob's are (a File changed on disk fails them all the same, 100 ms later), and it is watched
// for changes on disk (file-watch.js: a File made in memory never changes, and its reads that
// fail for a moment are tried again there too).
const NUDGE_EVERY = 8 << 20;
const NUDGE_BYTES = 256 << 20;

// The host's answer to an exchange's Response (see send in the file's opening comment).
async function readAnswer(res, session) {
  if (res.redirected) return { kind: "redirect", followed: true }; // a body-less request followed a Location
  if (res.type === "opaqueredirect") return session ? { kind: "hidden" } : { kind: "redirect", followed: false }; // mode "manual"
  // An absent field is "" (a 308 carries only Range).
  const get = (name) => res.headers.get(name) ?? "";
  const override = get("x-http-status-code-override");
  let text = "";
  if (res.status === 308 || override === "308" || get("content-length") === "0") {
    // Core reads nothing of a 308's body (docs/protocol.md section 3), and an empty body (a
    // session start's answer) has nothing to read: it is drained meanwhile, so that the request
    // ends normally rather than being cut, and the answer goes at once. (Waiting for an empty
    // body's end costs a task of the page's main thread: 5-6 ms per request with six uploads
    // at a time. Content-Length is a CORS-safelisted response header; where an engine hides
    // it, the body is read as any other.)
    res.arrayBuffer().then(noop, noop);
  } else {
    const buf = await res.arrayBuffer();
    text = utf8.decode(new Uint8Array(buf, 0, Math.min(buf.byteLength, MAX_BODY)));
  }
  // One string, not an object: each field of an object is a call of Go's into JS, and each
  // string one more (jsbridge/host.go, conn.deliver).
  return `ok\n${res.status}\n${get("range")}\n${get("location")}\n${override}\n${get("retry-after")}\n${text}`;
}

/**
 * The host of one realm; worker: it runs in the module's Worker (see NUDGE_EVERY); online: what
 * it knows of whether the browser is online (online.js: in a Worker, the page tells it).
 */
export function createHost({ worker = false, online = new Online() } = {}) {
  const entries = new Map(); // id -> { blob or stream, watch, sink, getHeaders, ac, online, cause, hashing, ahead, pulled }
  const aheads = new Map(); // key -> { hashing, kinds }: hashed ahead, no upload opened with it yet
  // Bytes of Blobs and Files settled (or read for a checksum) since the last nudge
  // (NUDGE_EVERY: a File may be one made in memory).
  let settled = 0;
  const letGo = (bytes) => {
    if (!worker || (settled += bytes) < NUDGE_EVERY) return;
    settled = 0;
    // Later, once the entry that held the Blob is out of reach.
    setTimeout(() => {
      try {
        void new ArrayBuffer(NUDGE_BYTES);
      } catch {
        // an engine that will not map so much: its collector is left to itself
      }
    }, 0);
  };

  // Reads a range of blob for its checksum. The slices it reads of a Blob made in memory (or a
  // File: it may be one) hold the Blob store too, until this realm's collector runs: they count
  // towards the next nudge (NUDGE_EVERY).
  const readCounted = (blob) => async (start, end) => {
    const buf = await readRange(blob, start, end);
    letGo(buf.byteLength);
    return buf;
  };

  // Answers only while the entry is open: after the upload's end the Go side may have released
  // its callback.
  const reply = (id, e, answer, a) => {
    if (entries.get(id) === e) answer(a);
  };
  // A failure as {kind, name, message}; the File watch's own errors say all in their message.
  const failed = (kind, err) => ({
    kind,
    name: err instanceof FileChangedError ? "" : String(err?.name ?? ""),
    message: String(err?.message ?? err),
  });
  const noSuchUpload = { kind: "error", name: "Error", message: "mediaupload: no such upload" };

  // Ends the entry of upload id: its request in flight aborted, its wait to be online ended,
  // its stream cancelled (the producer sees it) with reason. Every way an upload ends goes here.
  const end = (id, reason) => {
    const e = entries.get(id);
    if (!e) return null;
    entries.delete(id);
    e.ac?.abort();
    e.online?.(); // no longer waiting for the browser to be online
    e.stream?.close(reason);
    e.hashing?.stop();
    e.ahead?.hashing.stop(); // hashed ahead for kinds the Go side did not ask for
    if (e.blob) letGo(e.blob.size); // a File too (see NUDGE_EVERY)
    return e;
  };

  return {
    /** Opens the entry of upload id: { blob or stream (a StreamSource), sink, getHeaders }. */
    open(id, entry) {
      const ahead = aheads.get(entry.ahead) ?? null;
      aheads.delete(entry.ahead);
      entries.set(id, { ...entry, ahead, ac: null, watch: entry.blob instanceof File ? new FileWatch(entry.blob) : null });
    },

    /** Starts hashing blob for an upload a queue starts later (see above); kinds as hash's. */
    ahead(key, blob, kinds) {
      if (aheads.has(key)) return;
      const hashing = new Hashing(hashKinds(kinds));
      hashing.readBlob(blob, readCounted(blob));
      aheads.set(key, { hashing, kinds });
    },

    /** Ends the hashing ahead of key, if no upload took it. */
    dropAhead(key) {
      aheads.get(key)?.hashing.stop();
      aheads.delete(key);
    },

    /** Drops the entry of upload id (the Go side could not start it). */
    close(id) {
      end(id, new Error("the upload has ended"));
    },

    send(id, method, url, headerLines, pre, start, stop, post, session, timeoutMs, sent, answer) {
      const e = entries.get(id);
      if (!e) return void answer(noSuchUpload);
      const headers = headersOf(headerLines);
      const parts = [];
      if (pre) parts.push(pre);
      // The Blob itself where the range is all of it, and either it has no type or the request
      // sets its own Content-Type (core's chunks and single requests do): fetch sends a Blob's
      // type as Content-Type only where the request has none. A slice made just to drop the
      // type cost the page's main thread 0.2-1 ms per file (many small files: section 8).
      const whole = !e.stream && start === 0 && stop >= e.blob?.size && (e.blob.type === "" || "content-type" in headers);
      if (start >= 0) parts.push(e.stream ? e.stream.body(start, stop) : whole ? e.blob : e.blob.slice(start, stop));
      if (post) parts.push(post);
      // One Blob or bytes: fetch adds no Content-Type of its own where core set one, nor for a
      // Blob without a type.
      const one = parts.length === 1 && (parts[0] instanceof Blob || ArrayBuffer.isView(parts[0]));
      const body = parts.length === 0 ? undefined : one ? parts[0] : new Blob(parts);
      // A range of a Blob, counted as the network takes it where the engine and the origin
      // allow (counted.js); the count stops when the request is answered.
      let counting = typeof sent === "function" && one && body instanceof Blob && body.size > 0 && countable(url);

      const ac = new AbortController();
      e.ac = ac;
      // fetch never times out on its own: a stalled connection would hang for ever. The bound
      // counts only time this realm was free to take the answer: a timer that fires late (the
      // thread was held: a page busy rendering, a thousand files at once) gives that time back,
      // for an answer may be waiting behind it. WebKit runs a due timer before an answer
      // already queued, and on a page held for seconds it took requests the server had answered
      // for stalled, then the status queries after them, and failed the uploads (935 of 1,000
      // reported network_error while the server held them all). What it gives back is at most
      // the bound itself, in all: a hidden page's timers all fire late (Chromium aligns them to
      // a second, to a minute under its intensive throttling), and a bound given back for as
      // long as its timer fired late never ran out, so a dead connection in a background tab
      // went unnoticed (web/test/background.test.mjs). An answer that arrived is queued by
      // then, and any timer set again lets it run first; so the cap loses no answer, and a
      // request is given up at most twice its bound (plus its timer's lateness) after it went.
      let stalled = false;
      let timer = 0;
      let given = 0; // the time given back so far
      const arm = (ms) => {
        const due = performance.now() + ms;
        timer = setTimeout(() => {
          const late = performance.now() - due;
          const back = Math.min(late, timeoutMs - given);
          if (late > HELD_MS && back > 0) {
            given += back;
            return void arm(back);
          }
          stalled = true;
          ac.abort();
        }, ms);
      };
      if (timeoutMs > 0) arm(timeoutMs);
      // From the first count that shows bytes still to take, the Go side watches the body
      // itself (core's Request.OnSent): the count, not the timer, says whether the request has
      // stalled (bytes that stop moving), so a link far slower than measured is not taken for a
      // dead one. (A body the browser took whole at once tells nothing: the timer stays.)
      const count = (n) => {
        if (e.ac !== ac || entries.get(id) !== e) return;
        if (n < body.size) clearTimeout(timer);
        if (sent(n) === false) {
          stalled = true;
          ac.abort();
        }
      };
      // A File changed on disk (file-watch.js): seen before the request, or while it is sent
      // (then the request is aborted), it is the source's failure, which no retry can mend.
      const watch = start >= 0 ? e.watch : null;
      let changed = null;
      let unwatch = noop;
      const changedBy = (err) => {
        changed ??= err;
        ac.abort();
      };
      const finish = () => {
        clearTimeout(timer);
        unwatch();
        if (e.ac === ac) e.ac = null;
      };
      const sourceFailed = (err) => reply(id, e, answer, failed("source", (e.cause = err)));

      const mode = redirectMode(session, body !== undefined, "x-guploader-no-308" in headers);
      let streamFailed = false; // a stream body failed at once: this is the Blob sent again
      const go = () => {
        const counted = counting ? countedBody(body, count) : null;
        const init = counted
          ? { method, headers, body: counted.stream, duplex: "half", redirect: mode, signal: ac.signal }
          : { method, headers, body, redirect: mode, signal: ac.signal };
        exchange(url, init, session)
          .then((res) => {
            counted?.stop(); // answered: nothing more is told
            if (counted) carriedTo(url);
            if (streamFailed) noStreams(url);
            return readAnswer(res, session);
          })
          .then((a) => {
            finish();
            if (changed) return void sourceFailed(changed);
            if (a.followed) ac.abort(); // the redirect's target: its answer is of no use
            e.cause = undefined; // an answer came: an earlier failure is not why the upload ends
            reply(id, e, answer, a);
          })
          .catch(async (err) => {
            counted?.stop();
            counting = false;
            // An origin that takes no stream bodies (Chromium over HTTP/1.1)? The same request
            // again at once, as a Blob (counted.js).
            if (counted && !ac.signal.aborted && !changed && online.now && wholeAgain(url, counted)) {
              streamFailed = true;
              return void go();
            }
            finish();
            e.cause = err; // the cause of a network_error, should the retries run out
            if (changed) return void sourceFailed(changed);
            if (stalled) return void reply(id, e, answer, { kind: "stall", name: "TimeoutError", message: "the request stalled" });
            if (!online.now) return void reply(id, e, answer, failed("offline", err));
            // A File that cannot be read any more fails fetch as a lost connection does. Only
            // a File: a Blob made in memory cannot change on disk, and Chromium now and then
            // fails a read of one for a moment (a retry then succeeds; the watch reads a File
            // made in script, which may be one, again before it says so: file-watch.js).
            const unreadable = watch && !ac.signal.aborted && (await watch.unreadable(start));
            if (unreadable) return void sourceFailed(unreadable);
            reply(id, e, answer, failed("fetch", err));
          });
      };

      // The File could not be read for its checksum (hash.js): the source's failure, before
      // more bytes go.
      const unhashable = e.hashing?.error && e.blob instanceof File ? unreadableFile(e.hashing.error) : null;
      if (unhashable) {
        finish();
        return void queueMicrotask(() => sourceFailed(unhashable));
      }
      if (!watch) return void go();
      const moved = watch.moved();
      if (moved) {
        finish();
        return void queueMicrotask(() => sourceFailed(moved));
      }
      unwatch = watch.during(start, stop, changedBy);
      if (stop >= e.blob.size) {
        // The request that completes the object: every sample is compared first.
        watch.check(start, stop, true).then((err) => (err ? (finish(), sourceFailed(err)) : go()));
      } else {
        go();
        watch.check(start, stop).then((err) => err && changedBy(err));
      }
    },

    whenOnline(id, answer) {
      const e = entries.get(id);
      if (!e) return void answer(noSuchUpload);
      if (online.now) return void queueMicrotask(() => reply(id, e, answer, { kind: "ok" }));
      e.online = online.wait(() => {
        e.online = null;
        reply(id, e, answer, { kind: "ok" });
      });
    },

    abort(id) {
      entries.get(id)?.ac?.abort();
    },

    pull(id, { start, end: stop }, answer) {
      const e = entries.get(id);
      if (!e?.stream) return void answer({ kind: "error", name: "Error", message: "no such stream upload" });
      // With a checksum, the bytes a pull read are hashed before the next pull may let them go
      // (the server holds them): each pull waits for the hashing of the one before. A read of
      // them that fails (at once, as body() does with bytes not kept, or later) stops the
      // hashing: the next pull, or the digest, fails with it, as the source's failure.
      (e.pulled ?? Promise.resolve())
        .then(() => e.stream.pull(start, stop))
        .then(
          (n) => {
            const h = e.hashing;
            if (h && start + n > h.at) {
              const from = h.at;
              const bytes = (async () => new Uint8Array(await e.stream.body(from, start + n).arrayBuffer()))();
              bytes.catch(noop); // its failure is the hashing's (Hashing.add)
              e.pulled = h.add(bytes).then(() => {
                if (h.error) throw h.error;
              });
              e.pulled.catch(noop); // met by the next pull, if any; the digest meets h.error
            }
            reply(id, e, answer, { kind: "ok", n });
          },
          (err) => {
            // Bytes let go before they were hashed are no NotKeptError of the Go side's asking.
            if (err instanceof NotKeptError && !e.hashing?.error) return void reply(id, e, answer, { kind: "notkept" });
            e.cause = err; // the cause of the source_error
            reply(id, e, answer, failed("source", err));
          },
        );
    },

    hash(id, kinds) {
      const e = entries.get(id);
      if (!e || e.hashing) return;
      // Hashed ahead (the queue's) for these kinds: taken over, however far it has come.
      if (e.ahead?.kinds === kinds) {
        [e.hashing, e.ahead] = [e.ahead.hashing, null];
        return;
      }
      e.hashing = new Hashing(hashKinds(kinds));
      if (e.blob) e.hashing.readBlob(e.blob, readCounted(e.blob));
    },

    digest(id, n, answer) {
      const e = entries.get(id);
      if (!e?.hashing) return void answer(noSuchUpload);
      e.hashing.sum(n).then(
        ({ crc32c, md5 }) => reply(id, e, answer, { kind: "ok", crc32c, md5 }),
        (err) => {
          // A File that can no longer be read is the source's failure, not the module's.
          const gone = e.blob instanceof File ? unreadableFile(err) : null;
          e.cause = gone ?? err;
          reply(id, e, answer, failed(gone || e.stream ? "source" : "error", e.cause));
        },
      );
    },

    headers(id, answer) {
      const e = entries.get(id);
      if (!e?.getHeaders) return void answer({ kind: "ok", headers: {} });
      Promise.resolve()
        .then(() => e.getHeaders())
        .then(
          (v) => reply(id, e, answer, headersAnswer(v)),
          (err) => {
            e.cause = err; // the cause of the auth_error
            reply(id, e, answer, failed("error", err));
          },
        );
    },

    session(id, ask, answer) {
      const e = entries.get(id);
      if (!e) return void answer(noSuchUpload);
      const info = sessionInfo(e.blob, ask);
      if (ask.endpoint) {
        // The POST is the upload's request in flight: aborted with the upload, or when its
        // entry ends (core bounds how long the backend may take).
        const ac = new AbortController();
        e.ac = ac;
        return void askEndpoint(ask.endpoint, info, ac.signal).then(({ a, cause }) => {
          if (e.ac === ac) e.ac = null;
          if (cause !== undefined) e.cause = cause; // the cause of the backend_error
          // Out of reach while the browser is offline: core asks again once it is online.
          reply(id, e, answer, a.kind === "unreachable" && !online.now ? { ...a, kind: "offline" } : a);
        });
      }
      Promise.resolve()
        .then(() => e.sink.session(info))
        .then(
          (v) => reply(id, e, answer, sessionAnswer(v)),
          (err) => {
            e.cause = err; // the cause of the backend_error
            // A function that failed while the browser is offline (its fetch, most likely):
            // core asks again once it is online.
            reply(id, e, answer, failed(online.now ? "threw" : "offline", err));
          },
        );
    },

    wantRequests(id) {
      return Boolean(entries.get(id)?.sink.wantRequests);
    },

    countable(url) {
      return countable(url);
    },

    report(id, type, ...fields) {
      const r = { type };
      REPORT_FIELDS[type]?.forEach((name, i) => (r[name] = fields[i]));
      const last = type === "done" || type === "checked" || type === "fail";
      const e = last ? end(id, r.type === "fail" ? new Error(r.message || "the upload failed") : undefined) : entries.get(id);
      if (!e) return;
      // A failure's JS cause (a fetch TypeError, what getHeaders threw) goes with it.
      if (r.type === "fail") r.cause = e.cause;
      // The sink is the loader's own; a throw there must not reach the Go side.
      callSafely(() => e.sink.report(r));
    },
  };
}

// What getHeaders returned, as an answer: its fields as an object of strings (a copy, which
// reads each field once), or "bad" naming what is wrong: whether a name or value is allowed
// in a header is core's to say.
function headersAnswer(v) {
  if (v === undefined || v === null) return { kind: "ok", headers: {} };
  if (typeof v !== "object" || Array.isArray(v)) return { kind: "bad", reason: "not an object of strings" };
  try {
    const headers = {};
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== "string") return { kind: "bad", reason: `the value of "${k}" is not a string` };
      headers[k] = val;
    }
    return { kind: "ok", headers };
  } catch (err) {
    // A Proxy or a getter that throws: a bad answer, not an upload left waiting.
    return { kind: "bad", reason: `reading it threw ${err?.name ?? "an error"}: ${err?.message ?? err}` };
  }
}

// The hashes of hash's kinds ("crc32c", "md5" or "both"), as Hashing takes them.
const hashKinds = (kinds) => (kinds === "both" ? ["crc32c", "md5"] : [kinds]);

// Reads bytes [start, end) of a Blob for its checksum: the whole Blob as it is where the range
// is all of it (a slice costs WebKit a call to another process, 0.1-0.4 ms), through readAgain.
const readRange = (blob, start, end) => readAgain(() => (start === 0 && end >= blob.size ? blob : blob.slice(start, end)).arrayBuffer());

// What the backend is told of an upload (host.session): the File's name, the size (null for a
// stream, whose length is not known), the upload's type and metadata; nothing of the bytes.
function sessionInfo(blob, { size, type, metadata }) {
  return {
    name: typeof blob?.name === "string" ? blob.name : "",
    size: size < 0 ? null : size,
    type,
    metadata: metadata ? JSON.parse(metadata) : null,
  };
}

// POSTs info to the app's endpoint as JSON (fetch's default credentials: the page's cookies go
// to its own origin) and resolves to { a: host.session's answer, cause }: the session it
// answered; "refused" for a 4xx or 5xx, with its JSON error's message ({"error": {"code",
// "message"}}, as the Go backend package answers); "bad" for a 2xx that is not JSON;
// "unreachable", its cause the fetch's error, where no answer came.
async function askEndpoint(url, info, signal) {
  let res, text;
  try {
    res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(info), signal });
    text = await res.text();
  } catch (err) {
    return { a: { kind: "unreachable", name: String(err?.name ?? ""), message: String(err?.message ?? err) }, cause: err };
  }
  if (!res.ok) return { a: { kind: "refused", status: res.status, message: errorMessage(text), body: text.slice(0, MAX_BODY) } };
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return { a: { kind: "bad", reason: `its answer (${res.status}) is not JSON: ${JSON.stringify(text.slice(0, 80))}` } };
  }
  return { a: sessionAnswer(v) };
}

// The message of a JSON error answer, {"error": {"message"}}, or "".
function errorMessage(text) {
  try {
    const m = JSON.parse(text)?.error?.message;
    return typeof m === "string" ? m : "";
  } catch {
    return "";
  }
}

// What the backend answered, as host.session's answer: a session URI (a string or a URL), or
// an object of sessionURL, or signedURL and headers. Whether they make a session is core's to
// say; here only their types are read.
function sessionAnswer(v) {
  const text = (u) => (u instanceof URL ? u.href : (u ?? ""));
  const what = (x) => (x === undefined ? "nothing" : x === null ? "null" : Array.isArray(x) ? "an array" : `a ${typeof x}`);
  const bad = (reason) => ({ kind: "bad", reason });
  if (typeof v === "string" || v instanceof URL) return { kind: "ok", sessionURL: text(v), signedURL: "", headers: null };
  if (v === null || typeof v !== "object" || Array.isArray(v)) return bad(`not a session URI or an object but ${what(v)}`);
  try {
    const sessionURL = text(v.sessionURL);
    const signedURL = text(v.signedURL);
    if (typeof sessionURL !== "string") return bad(`its sessionURL is ${what(sessionURL)}, not a string`);
    if (typeof signedURL !== "string") return bad(`its signedURL is ${what(signedURL)}, not a string`);
    let headers = null;
    if (v.headers !== undefined && v.headers !== null) {
      const h = headersAnswer(v.headers);
      if (h.kind !== "ok") return bad(`its headers: ${h.reason}`);
      headers = h.headers;
    }
    return { kind: "ok", sessionURL, signedURL, headers };
  } catch (err) {
    // A Proxy or a getter that throws: a bad answer, not an upload left waiting.
    return bad(`reading it threw ${err?.name ?? "an error"}: ${err?.message ?? err}`);
  }
}
