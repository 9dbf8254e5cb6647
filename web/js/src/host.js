// The host: everything the Go side needs of the browser for an upload, asked for by the
// upload's numeric id. It runs in the module's own realm (the page today; a worker later), and
// it is the only holder of what belongs to an upload: the source Blob, the sink that the Upload
// object listens to, getHeaders, the AbortController of the request in flight. The Go side
// never holds any of them (jsbridge/doc.go, "Ownership"): it passes and receives primitives
// only, so a finished upload's Blob is let go as soon as its entry here is deleted, which
// happens when the Go side reports the upload's end ("done" or "fail"), whatever Go's
// collector does.
//
// The calls the Go side makes (jsbridge/host.go), each answering through a callback `cb` that
// the Go side owns and calls with primitives:
//
//   send(id, method, url, headers, pre, start, end, post, session, timeoutMs, cb)
//       one fetch; headers is "name\nvalue\n…"; the body is pre + source[start, end) + post
//       (start < 0: no bytes of the source; pre and post may be null; all empty: no body);
//       session: the request goes to a session URI, where a 308 is the protocol's answer
//       (redirect modes: below); unanswered after timeoutMs (> 0) it is aborted: cb("stall", …).
//       cb("ok", status, range, location, override, retryAfter, body), null for an absent field
//       cb("redirect", how): a redirect, never followed with a body ("followed": a body-less
//       request followed one before it could tell; "refused": any other)
//       | cb("hidden"): a session request answered with a 3xx whose headers fetch hides
//       | cb("fetch", name, message) | cb("error", name, message)
//       | cb("source", name, message): the request failed because the File can no longer be
//       read (changed or removed on disk), which no retry can mend
//       | cb("offline", name, message): it failed while the browser said it was offline
//   whenOnline(id, cb)        cb("ok") once the browser is online (at once if it is)
//   abort(id)                 aborts the request in flight, if any
//   read(id, start, end, cb)  cb("ok", Uint8Array) | cb("error", name, message); the array's
//                             buffer is detached as soon as cb returns (Go has copied it)
//   pull(id, start, end, cb)  a stream's source (stream.js): reads up to end, keeps [start, …);
//                             cb("ok", n) | cb("notkept") | cb("source", name, message)
//   headers(id, cb)           calls getHeaders: cb("ok", "name\nvalue\n…") | cb("bad", reason)
//                             | cb("error", name, message)
//   wantRequests(id)          whether anyone listens to per-request reports
//   emit(id, type, ...args)   a report for the sink; "done" and "fail" end the entry ("fail"
//                             gets the JS error behind it, if any, as its sixth argument)

import { FileChangedError, FileWatch, unreadableFile } from "./file-watch.js";
import { NotKeptError } from "./stream.js";

// The most of an answer's body that is read into a string (jsbridge.MaxResponseBody).
const MAX_BODY = 1 << 20;

const noop = () => {};

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

// The host's answer to an exchange's Response (see send in the file's opening comment).
async function readAnswer(res, session) {
  if (res.redirected) return ["redirect", "followed"]; // a body-less request followed a Location
  if (res.type === "opaqueredirect") return session ? ["hidden"] : ["redirect", "refused"]; // mode "manual"
  // An absent field is null, not "": Go converts each string it receives with two calls, and
  // a 308 carries only Range.
  const get = (name) => res.headers.get(name) || null;
  const override = get("x-http-status-code-override");
  let text = null;
  if (res.status === 308 || override === "308") {
    // Core reads nothing of a 308's body (docs/protocol.md section 3): it is drained meanwhile, so
    // that the request ends normally rather than being cut.
    res.arrayBuffer().then(noop, noop);
  } else {
    const buf = await res.arrayBuffer();
    text = new TextDecoder().decode(new Uint8Array(buf, 0, Math.min(buf.byteLength, MAX_BODY))) || null;
  }
  return ["ok", res.status, get("range"), get("location"), override, get("retry-after"), text];
}

export function createHost() {
  const entries = new Map(); // id -> { blob or stream, sink, getHeaders, ac }

  // Calls cb only while the entry is open: after the upload's end the Go side may have
  // released the function.
  const answer = (id, e, cb, ...args) => {
    if (entries.get(id) === e) cb(...args);
  };
  // An error as [name, message] for the Go side; the watch's own errors say all in their message.
  const failure = (err) => [err instanceof FileChangedError ? "" : String(err?.name ?? ""), String(err?.message ?? err)];

  return {
    /** Opens the entry of upload id: { blob or stream (a StreamSource), sink, getHeaders }. */
    open(id, entry) {
      entries.set(id, { ...entry, ac: null, watch: entry.blob instanceof File ? new FileWatch(entry.blob) : null });
    },

    /** Drops the entry of upload id, aborting its request in flight. */
    close(id) {
      const e = entries.get(id);
      if (!e) return;
      entries.delete(id);
      e.ac?.abort();
      e.stream?.close(new Error("the upload has ended"));
      if (e.online) globalThis.removeEventListener("online", e.online);
    },

    /** How many uploads hold an entry (for tests). */
    get size() {
      return entries.size;
    },

    send(id, method, url, headers, pre, start, end, post, session, timeoutMs, cb) {
      const e = entries.get(id);
      if (!e) return void cb("error", "Error", "mediaupload: no such upload");
      const parts = [];
      if (pre) parts.push(pre);
      if (start >= 0) parts.push(e.stream ? e.stream.body(start, end) : e.blob.slice(start, end));
      if (post) parts.push(post);
      // A Blob without a type, or bytes: fetch adds no Content-Type of its own (core sets it).
      const one = parts.length === 1 && (parts[0] instanceof Blob || ArrayBuffer.isView(parts[0]));
      const body = parts.length === 0 ? undefined : one ? parts[0] : new Blob(parts);
      const record = {};
      const h = headers === "" ? [] : headers.split("\n");
      for (let i = 0; i + 1 < h.length; i += 2) record[h[i]] = h[i + 1];

      const ac = new AbortController();
      e.ac = ac;
      // fetch never times out on its own: a stalled connection would hang for ever.
      let stalled = false;
      const timer = timeoutMs > 0 ? setTimeout(() => ((stalled = true), ac.abort()), timeoutMs) : 0;
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

      const mode = redirectMode(session, body !== undefined, "x-guploader-no-308" in record);
      const go = () =>
        exchange(url, { method, headers: record, body, redirect: mode, signal: ac.signal }, session)
          .then((res) => readAnswer(res, session))
          .then((args) => {
            finish();
            if (changed) return void answer(id, e, cb, "source", ...failure((e.cause = changed)));
            if (args[1] === "followed") ac.abort(); // the redirect's target: its answer is of no use
            e.cause = undefined; // an answer came: an earlier failure is not why the upload ends
            answer(id, e, cb, ...args);
          })
          .catch(async (err) => {
            finish();
            e.cause = err; // the cause of a network_error, should the retries run out
            if (changed) return void answer(id, e, cb, "source", ...failure((e.cause = changed)));
            if (stalled) return void answer(id, e, cb, "stall", "TimeoutError", `no answer in ${timeoutMs} ms`);
            if (globalThis.navigator?.onLine === false) return void answer(id, e, cb, "offline", ...failure(err));
            // A File that cannot be read any more fails fetch as a lost connection does. Only
            // a File: a Blob made in memory cannot change on disk, and Chromium now and then
            // fails a read of one for a moment (a retry then succeeds).
            const unreadable = watch && !ac.signal.aborted && (await watch.unreadable(start));
            if (unreadable) return void answer(id, e, cb, "source", ...failure((e.cause = unreadable)));
            answer(id, e, cb, "fetch", ...failure(err));
          });

      if (!watch) return void go();
      const moved = watch.moved();
      if (moved) {
        finish();
        return void queueMicrotask(() => answer(id, e, cb, "source", ...failure((e.cause = moved))));
      }
      unwatch = watch.during(start, end, changedBy);
      if (end >= e.blob.size) {
        // The request that completes the object: every sample is compared first.
        watch.check(start, end, true).then((err) => (err ? (finish(), answer(id, e, cb, "source", ...failure((e.cause = err)))) : go()));
      } else {
        go();
        watch.check(start, end).then((err) => err && changedBy(err));
      }
    },

    whenOnline(id, cb) {
      const e = entries.get(id);
      if (!e) return void cb("error", "Error", "no such upload");
      if (globalThis.navigator?.onLine !== false) return void queueMicrotask(() => answer(id, e, cb, "ok"));
      const on = () => {
        globalThis.removeEventListener("online", on);
        e.online = null;
        answer(id, e, cb, "ok");
      };
      e.online = on;
      globalThis.addEventListener("online", on);
    },

    abort(id) {
      const e = entries.get(id);
      e?.ac?.abort();
    },

    pull(id, start, end, cb) {
      const e = entries.get(id);
      if (!e?.stream) return void cb("error", "Error", "no such stream upload");
      e.stream.pull(start, end).then(
        (n) => answer(id, e, cb, "ok", n),
        (err) => {
          if (err instanceof NotKeptError) return void answer(id, e, cb, "notkept");
          e.cause = err; // the cause of the source_error
          answer(id, e, cb, "source", ...failure(err));
        },
      );
    },

    read(id, start, end, cb) {
      const e = entries.get(id);
      if (!e) return void cb("error", "Error", "mediaupload: no such upload");
      (e.stream ? e.stream.bytes(start, end) : e.blob.slice(start, end).arrayBuffer())
        .then(
          (buf) => {
            try {
              answer(id, e, cb, "ok", new Uint8Array(buf));
            } finally {
              // Go has copied the bytes: detach the buffer, so that the reference Go keeps
              // until its collector runs holds nothing.
              detach(buf);
            }
          },
          (err) => {
            // A File that can no longer be read is the source's failure, not the module's.
            const gone = e.blob instanceof File ? unreadableFile(err) : null;
            e.cause = gone ?? err;
            answer(id, e, cb, gone ? "source" : "error", ...failure(e.cause));
          },
        );
    },

    headers(id, cb) {
      const e = entries.get(id);
      if (!e?.getHeaders) return void cb("ok", "");
      Promise.resolve()
        .then(() => e.getHeaders())
        .then(
          (v) => {
            let flat;
            try {
              flat = flatHeaders(v);
            } catch (err) {
              // A Proxy or a getter that throws: a bad answer, not an upload left waiting.
              flat = { bad: `reading it threw ${err?.name ?? "an error"}: ${err?.message ?? err}` };
            }
            answer(id, e, cb, flat.bad ? "bad" : "ok", flat.bad ?? flat.text);
          },
          (err) => {
            e.cause = err; // the cause of the auth_error
            answer(id, e, cb, "error", ...failure(err));
          },
        );
    },

    wantRequests(id) {
      return Boolean(entries.get(id)?.sink.wantRequests);
    },

    emit(id, type, ...args) {
      const e = entries.get(id);
      if (!e) return;
      if (type === "done" || type === "fail") {
        entries.delete(id);
        e.ac?.abort();
        if (e.online) globalThis.removeEventListener("online", e.online);
        // An upload that failed or was aborted cancels its stream: the producer sees it.
        e.stream?.close(type === "fail" ? new Error(String(args[1] ?? "the upload failed")) : undefined);
      }
      // A failure's JS cause (a fetch TypeError, what getHeaders threw) goes with it.
      if (type === "fail") args[5] = e.cause;
      try {
        e.sink[type]?.(...args);
      } catch (err) {
        // The sink is the loader's own; a throw there must not reach the Go side.
        globalThis.reportError?.(err);
      }
    },
  };
}

// What getHeaders returned, as "name\nvalue\n…", or { bad } naming what is wrong.
function flatHeaders(v) {
  if (v === undefined || v === null) return { text: "" };
  if (typeof v !== "object" || Array.isArray(v)) return { bad: "not an object of strings" };
  const out = [];
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string") return { bad: `the value of "${k}" is not a string` };
    if (/[\n\r\0]/.test(k + val)) return { bad: `the header "${k}" holds a line break or a NUL` };
    out.push(k, val);
  }
  return { text: out.join("\n") };
}

function detach(buf) {
  try {
    if (typeof buf.transfer === "function") buf.transfer(0);
    else structuredClone(buf, { transfer: [buf] });
  } catch {
    // nothing to do: the buffer goes when Go's reference does
  }
}
