// Worker mode's engine, on the page (load({ worker: true })): the module runs in a dedicated
// Worker (worker.js) and this relays the engine's calls to it, and each upload's reports and
// getHeaders back. The Upload objects on the page are the same as in page mode (upload.js talks
// only to an engine), so events, promise, pause/resume/abort, the queue and the XMLHttpRequest
// facade behave alike. A ReadableStream is transferred to the Worker where the browser can;
// elsewhere (WebKit) the page reads it and answers the Worker's pulls (stream-relay.js).

import { MediaUploadError } from "./errors.js";
import { callSafely } from "./events.js";
import { StreamSource } from "./engine/stream.js";
import { errorData, revive } from "./engine/stream-relay.js";
import { packageFileURL } from "./engine/wasm.js";

/** The worker's script: beside this one (the way bundlers understand), or `workerURL`. */
export function workerURLFor(workerURL) {
  return packageFileURL(workerURL, "workerURL", "mediaupload.worker.js", () => new URL("./mediaupload.worker.js", import.meta.url));
}

/**
 * Starts the Worker and the module in it; resolves to { version, engine } once it is ready.
 * A Worker that cannot start (a Content-Security-Policy without worker-src for it, a browser
 * without module workers, a wrong workerURL) rejects with an error that says so, marked
 * `workerNotStarted` (the default load() then runs the module on the page); a module that
 * fails to load in the Worker (its wasm not found, say) rejects with that failure.
 */
export async function startWorker(workerURL, wasmURL, givenWasm) {
  const why =
    "worker mode could not start its Worker: the page's Content-Security-Policy may not allow it (worker-src), " +
    "the browser may lack module workers, or mediaupload.worker.js is not beside mediaupload.js (pass load({ workerURL })); " +
    "load({ worker: false }) runs the module on the page";
  let worker;
  try {
    worker = new Worker(workerURL, { type: "module", name: "mediaupload" });
  } catch (err) {
    throw notStarted(new Error(`mediaupload: ${why} (${err?.name ?? "Error"}: ${err?.message ?? err})`, { cause: err }));
  }
  const version = await new Promise((resolve, reject) => {
    const fail = (message, cause, started = true) => {
      worker.terminate();
      const err = new Error(`mediaupload: ${message}`, cause === undefined ? undefined : { cause });
      reject(started ? err : notStarted(err));
    };
    worker.onerror = (e) => {
      e.preventDefault?.();
      fail(`${why} (${e.message || "the Worker's script failed to load"})`, undefined, false);
    };
    worker.onmessage = ({ data: m }) => {
      if (m.t === "ready") resolve(m.version);
      else if (m.t === "error") fail(m.message.replace(/^mediaupload: /, ""));
    };
    worker.postMessage({ t: "init", wasmURL, given: givenWasm });
  });
  return { version, engine: workerEngine(worker) };
}

/** Marks err as a Worker that could not start at all (load() then runs the module on the page). */
function notStarted(err) {
  err.workerNotStarted = true;
  return err;
}

function workerEngine(worker) {
  let last = 0;
  // id -> { sink, getHeaders, stream, cause, thrown }, until the upload's end is reported.
  // stream: the page's StreamSource of a relayed stream, until the Worker closes it; cause:
  // what that stream failed with, the cause of the source_error that follows; thrown: what
  // getHeaders threw, the cause of the auth_error that follows.
  const entries = new Map();
  const post = (msg) => worker.postMessage(msg);

  // The page's word on whether the browser is online, for the Worker's host (engine/online.js:
  // Chromium fires no online event in a Worker, and an emulation may not reach one): now, and
  // with each of the page's online and offline events, for as long as the page lives.
  const tellOnline = () => post({ t: "online", on: globalThis.navigator?.onLine !== false });
  tellOnline();
  globalThis.addEventListener("online", tellOnline);
  globalThis.addEventListener("offline", tellOnline);

  // Ends upload `id` on the page: its relayed stream is closed (cancelled, its Blobs let go).
  const end = (id, reason) => {
    const e = entries.get(id);
    if (!e) return null;
    entries.delete(id);
    e.stream?.close(reason);
    e.stream = null;
    return e;
  };

  // A Worker that dies (an error it did not catch, a crash) ends every upload in flight, so
  // that none waits for ever: each fails with a message saying so, as a network_error (the
  // session, if any, is still good: a later try with resume: true goes on with it).
  worker.onerror = (ev) => {
    ev.preventDefault?.();
    const message = `the module's Worker stopped (${ev.message || "an error in the Worker"})`;
    for (const id of [...entries.keys()]) {
      const e = end(id, new Error(message));
      callSafely(() => e.sink.report({ type: "fail", code: "network_error", message }));
    }
  };
  worker.onmessage = ({ data: m }) => {
    const e = entries.get(m.id);
    if (m.t === "pull") return void pull(m, e);
    if (!e) return;
    if (m.t === "report") {
      const r = m.report;
      if (r.type === "done" || r.type === "checked" || r.type === "fail") {
        end(m.id, r.type === "fail" ? new Error(r.message || "the upload failed") : undefined);
        // A relayed stream's own error, not the copy that came back by message.
        if (r.type === "fail" && r.code === "source_error" && e.cause !== undefined) r.cause = e.cause;
        // What the page's getHeaders threw, itself, not the copy that crossed by message.
        if (r.type === "fail" && r.code === "auth_error" && e.thrown !== undefined) r.cause = e.thrown;
        // So for the session function.
        if (r.type === "fail" && r.code === "backend_error" && e.sessionThrew !== undefined) r.cause = e.sessionThrew;
      } else if (e.wants !== Boolean(e.sink.wantRequests)) {
        // Someone began (or stopped) listening to requests: the Worker reports them (or not).
        e.wants = !e.wants;
        post({ t: "want", id: m.id, on: e.wants });
      }
      callSafely(() => e.sink.report(r));
    } else if (m.t === "close") {
      // The Worker's host let go of the relayed stream (the upload settled, or failed to start).
      e.stream?.close(m.reason ? revive(m.reason) : undefined);
      e.stream = null;
    } else if (m.t === "getHeaders") {
      // The page's getHeaders, asked by the Go side in the worker; its answer goes back.
      Promise.resolve()
        .then(() => e.getHeaders())
        .then(
          (value) => reply(m.req, { ok: true, value }),
          (error) => {
            e.thrown = error; // the cause of the auth_error that follows
            reply(m.req, { ok: false, error });
          },
        );
    } else if (m.t === "askSession") {
      // The page's session function, asked by the Go side in the worker (host.session).
      askSession(m, e);
    }
  };

  // Calls the caller's session function with the Worker's info and posts what it answered (a
  // URL object as its text: a URL cannot be cloned), or what it threw, which is kept as the
  // cause of the backend_error that follows.
  const askSession = ({ req, info }, e) =>
    Promise.resolve()
      .then(() => e.sink.session(info))
      .then(
        (value) => {
          const text = (u) => (u instanceof URL ? u.href : u);
          const v = text(value);
          try {
            const plain = v && typeof v === "object" && !Array.isArray(v) ? { ...v, sessionURL: text(v.sessionURL), signedURL: text(v.signedURL) } : v;
            post({ t: "session", req, ok: true, value: plain });
          } catch {
            // Unreadable or not cloneable (a function in it, say): an answer that names no
            // session, for the Worker to refuse.
            post({ t: "session", req, ok: true, value: {} });
          }
        },
        (error) => {
          e.sessionThrew = error;
          try {
            post({ t: "session", req, ok: false, error });
          } catch {
            post({ t: "session", req, ok: false, error: errorData(error) });
          }
        },
      );

  // The Worker's pull of a relayed stream (stream-relay.js), answered with the Blob of the
  // bytes; one for an upload closed since is answered with an error (the Worker may still wait).
  const pull = async ({ id, req, start, end: to }, e) => {
    const source = e?.stream;
    const answer = source ? await answerPull(source, start, to) : { error: errorData(new Error("the upload has ended")) };
    if (source && entries.get(id)?.stream !== source) return void post({ t: "pulled", id, req, error: errorData(new Error("the upload has ended")) });
    if (answer.cause !== undefined && answer.error.name !== "NotKeptError") e.cause = answer.cause;
    post({ t: "pulled", id, req, n: answer.n, blob: answer.blob, error: answer.error });
  };

  // Transfers the stream with the start message; false if the browser refused it all the same
  // (the feature test said it could), the stream untouched and left to the relay.
  const transferred = (msg, stream) => {
    try {
      worker.postMessage(msg, [stream]);
      return true;
    } catch (err) {
      if (stream.locked) throw err;
      return false;
    }
  };

  const reply = (req, answer) => {
    try {
      post({ t: "headers", req, ...answer });
      return;
    } catch {}
    // Not cloneable. What getHeaders returned is judged in the Worker as on the page (host.js:
    // an object of strings): its string fields go, any other field as null, and anything but an
    // object as its type's name, so that the Worker finds it as wrong as the page would (a
    // Proxy, a Headers object, a function). What it threw goes as its name and message.
    let error = answer.error;
    if (answer.ok) {
      try {
        const v = answer.value;
        const value =
          typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === "string" ? x : null]))
            : typeof v;
        return void post({ t: "headers", req, ok: true, value });
      } catch (err) {
        error = err;
      }
    }
    post({ t: "headers", req, ok: false, error: errorData(error) });
  };

  return {
    start(source, options, { sink, getHeaders, ahead }) {
      const id = ++last;
      const e = { sink, getHeaders, stream: null, cause: undefined, wants: Boolean(sink.wantRequests) };
      entries.set(id, e);
      const msg = { t: "start", id, source, options, getHeaders: !!getHeaders, wantRequests: e.wants, ahead };
      try {
        // A Blob or File is cloned (its bytes are not copied); a stream is transferred where
        // the browser can, else the page reads it and the Worker's host asks for its bytes.
        if (source instanceof Blob) post(msg);
        else if (!(streamsTransfer() && transferred(msg, source))) {
          e.stream = new StreamSource(source);
          post({ ...msg, source: null, relay: true });
        }
      } catch (err) {
        end(id, err);
        // The options are a structured-clonable copy (upload.js): what could not be posted is
        // the source. Its DOMException's code (DataCloneError: 25) is not one of ours.
        const why = `the source could not be handed to the module's Worker (${err?.name ?? "Error"}: ${err?.message ?? err})`;
        throw new MediaUploadError("source_error", why, { cause: err });
      }
      return id;
    },
    check(size, options, { sink, getHeaders }) {
      const id = ++last;
      entries.set(id, { sink, getHeaders, stream: null, cause: undefined, wants: false });
      post({ t: "start", id, check: true, size, options, getHeaders: !!getHeaders, wantRequests: false });
      return id;
    },
    ahead: (key, blob, kinds) => post({ t: "ahead", key, blob, kinds }),
    dropAhead: (key) => post({ t: "dropAhead", key }),
    pause: (id) => post({ t: "pause", id }),
    resume: (id) => post({ t: "resume", id }),
    abort: (id) => {
      // The page's stream is cancelled at once; the Worker's report of the end follows.
      const e = entries.get(id);
      e?.stream?.close(new Error("the upload was aborted"));
      if (e) e.stream = null;
      post({ t: "abort", id });
    },
  };
}

// The page's half of a relayed stream (engine/stream-relay.js has the Worker's).

let transfers; // whether this browser transfers a ReadableStream; asked once

/**
 * Whether a ReadableStream can be transferred to a Worker here: tried once on a fresh, empty
 * stream (a feature test, not the browser's name). Chromium and Firefox can; WebKit throws a
 * DataCloneError.
 */
export function streamsTransfer() {
  if (transfers === undefined) {
    try {
      const s = new ReadableStream();
      // The clone is a stream of this realm piped from the original: cancelled at once, so
      // that the pipe between them goes too.
      structuredClone(s, { transfer: [s] }).cancel().catch(() => {});
      transfers = true;
    } catch {
      transfers = false;
    }
  }
  return transfers;
}

/**
 * The page's half: the answer to the Worker's { start, end } pull of `source` (a
 * StreamSource), as the fields of a "pulled" message ({ n, blob } or { error }), and the
 * failure itself as `cause` (not posted: the page keeps it as the cause of the source_error).
 */
export async function answerPull(source, start, end) {
  try {
    const n = await source.pull(start, end);
    return { n, blob: n > 0 ? source.body(start, start + n) : null };
  } catch (err) {
    return { error: errorData(err), cause: err };
  }
}
