// The Worker of worker mode (load({ worker: true }); dist/mediaupload.worker.js): the module
// runs here, off the page's main thread, and the page's engine (worker-engine.js) relays each
// upload's calls to it by message. Blobs and Files come by structured clone (no byte copied), a
// ReadableStream is transferred, or, where the browser cannot transfer one (WebKit), stays on
// the page, which answers this host's pulls (stream-relay.js); the reports of each upload go
// back as messages, and getHeaders and the session function, which are the page's, are asked
// for by message too (an endpoint's URL as session is POSTed to from here).
//
// Messages from the page:   { t: "init", wasmURL, given }
//                           { t: "start", id, source, options, getHeaders: bool, wantRequests: bool, ahead }
//                           { t: "start", id, source: null, relay: true, options, getHeaders, wantRequests }
//                           { t: "want", id, on }             whether the page listens to requests now
//                           { t: "start", id, check: true, size, options, getHeaders }   a check of a session
//                           { t: "pause" | "resume" | "abort", id }
//                           { t: "headers", req, ok, value | error }
//                           { t: "session", req, ok, value | error }   the page's session function's answer
//                           { t: "pulled", id, req, n, blob | error }   (stream-relay.js)
//                           { t: "online", on }            the page's navigator.onLine (online.js)
//                           { t: "ahead", key, blob, kinds } | { t: "dropAhead", key }
//                                                          a queue's hashing ahead (host.js)
// Messages to the page:     { t: "ready", version } | { t: "error", message }
//                           { t: "report", id, report }     (engine/host.js: state, progress, …, done, fail)
//                           { t: "getHeaders", id, req }
//                           { t: "askSession", id, req, info }   (the caller's session function, on the page)
//                           { t: "pull", id, req, start, end } | { t: "close", id, reason }

import { startCheck, startModule, startUpload } from "./module.js";
import { Online } from "./online.js";
import { StreamRelay } from "./stream-relay.js";

let mod = null;
const online = new Online(); // what the page says of being online
let nextReq = 0;
const asked = new Map(); // req -> { id, resolve, reject }: getHeaders and session calls the page answers

// Posts a message; what cannot be cloned (an odd object thrown by the page's code, the cause
// of a failure) goes as its name and message, so that no report, a failure least of all, is
// lost on the way.
function post(msg) {
  try {
    self.postMessage(msg);
  } catch {
    if (msg.report?.cause !== undefined) msg.report = { ...msg.report, cause: plain(msg.report.cause) };
    self.postMessage(msg);
  }
}

// A value that could not be posted, as { name, message } (undefined stays undefined).
function plain(a) {
  try {
    return a === undefined ? a : { name: String(a?.name ?? "Error"), message: String(a?.message ?? a) };
  } catch {
    return { name: "Error", message: "an error that cannot be described" };
  }
}

self.onmessage = async ({ data: m }) => {
  switch (m.t) {
    case "init":
      try {
        mod = await startModule(m.wasmURL, m.given, { worker: true, online });
        post({ t: "ready", version: mod.api.version });
      } catch (err) {
        post({ t: "error", message: String(err?.message ?? err) });
      }
      break;
    case "start":
      start(m);
      break;
    case "pause":
    case "resume":
    case "abort":
      mod?.api[m.t](m.id);
      break;
    case "online":
      online.told(m.on);
      break;
    case "ahead":
      mod?.host.ahead(m.key, m.blob, m.kinds);
      break;
    case "dropAhead":
      mod?.host.dropAhead(m.key);
      break;
    case "pulled":
      StreamRelay.answered(m);
      break;
    case "want":
      if (wanted.has(m.id)) wanted.set(m.id, m.on);
      break;
    case "headers":
    case "session": {
      const a = asked.get(m.req);
      asked.delete(m.req);
      if (m.ok) a?.resolve(m.value);
      else a?.reject(m.error);
      break;
    }
  }
};

// Whether anyone on the page listens to each upload's per-request reports (the page says so
// when it changes): each report costs a message.
const wanted = new Map(); // id -> bool

function start({ id, source, relay, options, getHeaders, wantRequests, check, size, ahead }) {
  wanted.set(id, wantRequests);
  const sink = {
    get wantRequests() {
      return wanted.get(id) ?? false;
    },
    report(r) {
      if (r.type === "done" || r.type === "checked" || r.type === "fail") {
        // Nothing of the upload stays here: getHeaders calls still unanswered are dropped.
        for (const [req, a] of asked) if (a.id === id) asked.delete(req);
        wanted.delete(id);
      }
      post({ t: "report", id, report: r });
    },
  };
  // Asks the page: t is the message's type, info goes with it; the answer resolves.
  const ask = (t, info) =>
    new Promise((resolve, reject) => {
      const req = ++nextReq;
      asked.set(req, { id, resolve, reject });
      post({ t, id, req, info });
    });
  const gh = getHeaders ? () => ask("getHeaders") : null;
  // The caller's session function runs on the page (host.session calls sink.session).
  if (options?.sessionFunction) sink.session = (info) => ask("askSession", info);
  try {
    if (check) startCheck(mod, id, size, options, sink, gh);
    else startUpload(mod, id, relay ? new StreamRelay(id, post) : source, options, sink, gh, ahead);
  } catch (err) {
    sink.report({ type: "fail", code: "invalid_argument", message: String(err?.message ?? err) });
  }
}
