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
//   whenOnline(id, answer)            {kind: "ok"} once the browser is online (at once if it is)
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
// The loader's side (module.js): open(id, {blob | stream, sink, getHeaders}) before the Go side
// starts the upload (a check: no source), close(id) if it could not start it.

import { callSafely } from "../events.js";
import { carriedTo, countable, countedBody, noStreams, wholeAgain } from "./counted.js";
import { FileChangedError, FileWatch, unreadableFile } from "./file-watch.js";
import { Hashing } from "./hash.js";
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
// nudge of 64 MiB, or every 32 MiB, let it reach 270-300 MB). Files are read from disk: they
// hold no memory.
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

/** The host of one realm; worker: it runs in the module's Worker (see NUDGE_EVERY). */
export function createHost({ worker = false } = {}) {
  const entries = new Map(); // id -> { blob or stream, watch, sink, getHeaders, ac, online, cause, hashing, pulled }
  // Bytes of Blobs made in memory settled (or read for a checksum) since the last nudge
  // (NUDGE_EVERY).
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

  // Ends the entry of upload id: its request in flight aborted, its online listener removed,
  // its stream cancelled (the producer sees it) with reason. Every way an upload ends goes here.
  const end = (id, reason) => {
    const e = entries.get(id);
    if (!e) return null;
    entries.delete(id);
    e.ac?.abort();
    if (e.online) globalThis.removeEventListener("online", e.online);
    e.stream?.close(reason);
    e.hashing?.stop();
    if (e.blob && !(e.blob instanceof File)) letGo(e.blob.size);
    return e;
  };

  return {
    /** Opens the entry of upload id: { blob or stream (a StreamSource), sink, getHeaders }. */
    open(id, entry) {
      entries.set(id, { ...entry, ac: null, watch: entry.blob instanceof File ? new FileWatch(entry.blob) : null });
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
      // reported network_error while the server held them all).
      let stalled = false;
      let timer = 0;
      const arm = (ms) => {
        const due = performance.now() + ms;
        timer = setTimeout(() => {
          const late = performance.now() - due;
          if (late > HELD_MS) return void arm(late);
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
            if (counted && !ac.signal.aborted && !changed && globalThis.navigator?.onLine !== false && wholeAgain(url, counted)) {
              streamFailed = true;
              return void go();
            }
            finish();
            e.cause = err; // the cause of a network_error, should the retries run out
            if (changed) return void sourceFailed(changed);
            if (stalled) return void reply(id, e, answer, { kind: "stall", name: "TimeoutError", message: "the request stalled" });
            if (globalThis.navigator?.onLine === false) return void reply(id, e, answer, failed("offline", err));
            // A File that cannot be read any more fails fetch as a lost connection does. Only
            // a File: a Blob made in memory cannot change on disk, and Chromium now and then
            // fails a read of one for a moment (a retry then succeeds).
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
      if (globalThis.navigator?.onLine !== false) return void queueMicrotask(() => reply(id, e, answer, { kind: "ok" }));
      const on = () => {
        globalThis.removeEventListener("online", on);
        e.online = null;
        reply(id, e, answer, { kind: "ok" });
      };
      e.online = on;
      globalThis.addEventListener("online", on);
    },

    abort(id) {
      entries.get(id)?.ac?.abort();
    },

    pull(id, { start, end: stop }, answer) {
      const e = entries.get(id);
      if (!e?.stream) return void answer({ kind: "error", name: "Error", message: "no such stream upload" });
      // With a checksum, the bytes a pull read are hashed before the next pull may let them go
      // (the server holds them): each pull waits for the hashing of the one before.
      (e.pulled ?? Promise.resolve())
        .then(() => e.stream.pull(start, stop))
        .then(
          (n) => {
            const h = e.hashing;
            if (h && start + n > h.at) e.pulled = e.stream.body(h.at, start + n).arrayBuffer().then((buf) => h.add(new Uint8Array(buf)));
            reply(id, e, answer, { kind: "ok", n });
          },
          (err) => {
            if (err instanceof NotKeptError) return void reply(id, e, answer, { kind: "notkept" });
            e.cause = err; // the cause of the source_error
            reply(id, e, answer, failed("source", err));
          },
        );
    },

    hash(id, kinds) {
      const e = entries.get(id);
      if (!e || e.hashing) return;
      e.hashing = new Hashing(kinds === "both" ? ["crc32c", "md5"] : [kinds]);
      if (!e.blob) return;
      // The slices it reads of a Blob made in memory hold the Blob store too, until this
      // realm's collector runs: they count towards the next nudge (NUDGE_EVERY).
      const inMemory = !(e.blob instanceof File);
      e.hashing.readBlob(e.blob, async (start, end) => {
        const buf = await readRange(e.blob, start, end);
        if (inMemory) letGo(buf.byteLength);
        return buf;
      });
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

// Reads bytes [start, end) of a Blob for its checksum. A Blob made in memory can fail a read for
// a moment in Chromium (docs/protocol.md section 6): read again, twice, before giving up. A
// File that fails stays failed (it changed on disk): its error goes at once.
async function readRange(blob, start, end) {
  for (let tries = 0; ; tries++) {
    try {
      // The whole Blob as it is: a slice costs WebKit a call to another process (0.1-0.4 ms).
      return await (start === 0 && end >= blob.size ? blob : blob.slice(start, end)).arrayBuffer();
    } catch (err) {
      if (blob instanceof File || tries >= 2) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
