// The settings panel: where uploads go (the targets), how (upload type, chunk size, checksum,
// retry waits), and the demo server's switches (network speed, flaky network), with the notes
// that say what a choice costs. settings() reads the panel as it is now; uploads.js takes it
// when files are added, so a batch keeps the settings it was added with.

import { fmtBytes, fmtRate } from "./format.js";
import { $ } from "./page.js";

// The serve command describes its targets at /api/config; these defaults match it, so the
// page still works when served some other way.
export const site = {
  config: {
    bucket: "demo",
    targets: {
      ref: { upload: "/ref/upload/storage/v1/b/demo/o", objects: "/ref/_ref/objects", faults: "/ref/_ref/faults" },
      gcs: { upload: "/upload/storage/v1/b/demo/o", objects: "/storage/v1/b/demo/o", session: "/api/gcs/session", sessionBucket: "demo" },
    },
  },
};

/** Asks the serve command for its targets (kept as they are when the page is served otherwise). */
export async function loadConfig() {
  try {
    const res = await fetch("/api/config", { cache: "no-store" });
    if (res.ok) site.config = await res.json();
  } catch {
    // served without the serve command: keep the defaults
  }
}

const targetNames = { ref: "the reference server", gcs: "fake-gcs-server", custom: "the custom target" };

/** The panel's choices, as they are now. */
export function settings() {
  return {
    target: $("input[name=target]:checked").value,
    customURL: $("#customURL").value.trim(),
    token: $("#customToken").value.trim(),
    uploadType: $("#uploadType").value,
    // "" is the module's default (sized to the link as it goes, where the module does that).
    chunkSize: $("#chunkSize").value === "" ? undefined : Number($("#chunkSize").value),
    checksum: $("#checksum").value,
    fastRetry: $("#retry").value === "fast",
    statusEachChunk: $("#statusEachChunk").checked,
    no308: $("#no308").checked,
    flaky: $("#flaky").checked,
    seed: Number($("#seed").value) || 0,
    gzip: $("#gzip").checked,
  };
}

/**
 * Where a file of that name goes with settings s: "" for the Cloud Storage target, whose
 * sessions the demo's backend starts (sessionEndpoint).
 */
export function uploadURL(s, name) {
  if (s.target === "gcs") return "";
  if (s.target === "custom") {
    const u = s.customURL;
    // GCS takes the object name from the query for media uploads; add it when the user's URL
    // is GCS shaped and has none.
    if (/\/upload\/storage\/v1\/b\/[^/]+\/o\/?(\?|$)/.test(u) && !/[?&]name=/.test(u)) {
      return u + (u.includes("?") ? "&" : "?") + "name=" + encodeURIComponent(name);
    }
    return u;
  }
  return location.origin + site.config.targets[s.target].upload + "?name=" + encodeURIComponent(name);
}

/**
 * The demo's backend (web/cmd/serve, package web/gcs) that starts the sessions of settings s's
 * target, for the module's `session` option; undefined where the page starts its own.
 */
export function sessionEndpoint(s) {
  return s.target === "gcs" ? site.config.targets.gcs.session : undefined;
}

/** Where uploads go, and which bucket names each target takes: the reference server any. */
function targetInfo(target) {
  const { bucket: b, targets } = site.config;
  const code = (text) => Object.assign(document.createElement("code"), { textContent: text });
  switch (target) {
    case "ref":
      return ["Uploads go to ", code(targets.ref.upload), ". The reference server takes any bucket name there (…/b/ANY/o): it keeps no list of buckets, and the table below lists all it holds."];
    case "gcs": {
      const g = targets.gcs;
      const where = g.sessionBucket && g.sessionBucket !== b ? `the bucket ${g.sessionBucket} on Cloud Storage` : `fake-gcs-server's one bucket, ${b}`;
      return ["The demo's backend (", code(`POST ${g.session}`), `, package web/gcs) starts each upload's session in ${where}, for this page's origin, and names the object: the page holds no credential and starts no session, it sends the bytes. So uploads here are resumable, whatever the upload type.`];
    }
    default:
      return ["Any upload URL, used as it is (a Cloud Storage one gets ", Object.assign(code("?name="), { className: "nowrap" }), " added). The local reference server takes any bucket name: ", code(`${location.origin}${targets.ref.upload.replace(`/b/${b}/`, "/b/ANY/")}`), "."];
  }
}

/** The notes under the panel: what the choices made cost, or where they do not apply. */
export function refreshNote() {
  const s = settings();
  $("#custom").hidden = s.target !== "custom";
  $("#storedOn").textContent = targetNames[s.target];
  $("#targetInfo").replaceChildren(...targetInfo(s.target));
  const notes = [];
  if (s.target === "gcs" && s.statusEachChunk) {
    notes.push("fake-gcs-server finishes the object when it receives a status query, so with this option it ends early with a short object (docs/protocol.md, section 7).");
  }
  if (s.target === "gcs" && !s.no308) {
    notes.push("Without X-GUploader-No-308 the server answers real 308s, which Firefox's fetch does not hand over: the module then asks with a status query, and fake-gcs-server finishes the object on it (docs/protocol.md, sections 6 and 7).");
  }
  if (s.target !== "ref" && s.flaky) notes.push("The flaky network applies to the reference server only.");
  if (s.target === "gcs" && (s.uploadType === "media" || s.uploadType === "multipart")) {
    notes.push(`The Cloud Storage target's sessions come from the demo's backend: ${s.uploadType} (one request, no session) does not apply there, and its uploads go resumable.`);
  }
  // A fixed small chunk costs a request (and, on a real server, a round trip) per chunk, and
  // the emulator is slow over each request.
  const resumable = s.target === "gcs" || (s.uploadType !== "multipart" && s.uploadType !== "media");
  const small = resumable && s.chunkSize > 0 && s.chunkSize < 8 << 20;
  if (small && s.target === "gcs") {
    notes.push(`Slow: fake-gcs-server takes long over every request, and ${fmtBytes(s.chunkSize)} chunks make many. Pick "module default" unless small chunks are what you want to see.`);
  } else if (small && s.target === "custom") {
    notes.push(`Each ${fmtBytes(s.chunkSize)} chunk costs a round trip to the server: on a real API, larger chunks (or the module's default) are much faster.`);
  }
  if (s.target === "gcs" && s.checksum === "both") notes.push("fake-gcs-server ignores X-Goog-Hash; the module still compares the hashes in its answer.");
  $("#note").hidden = notes.length === 0;
  $("#note").textContent = notes.join(" ");
}

/** Says something went wrong in the note under the panel. */
export function showNote(text) {
  $("#note").hidden = false;
  $("#note").textContent = text;
}

async function post(url, body, method = "POST") {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status}`);
}

// The reference server's seeded random fault mode: the same seed gives the same faults, so a
// run can be repeated. At 15 % some seeds draw no fault for a whole batch of small files:
// everyUpload gives each upload one early all the same (its first chunk, or a media or
// multipart upload's first try), so every row shows a retry or a resumed chunk
// (web/refserver/faults.go, Random).
export async function syncFlaky() {
  const s = settings();
  const url = site.config.targets.ref.faults;
  try {
    if (s.flaky) await post(url, { random: { seed: s.seed, rate: 0.15, everyUpload: true } });
    else await post(url, undefined, "DELETE");
    document.body.dataset.flaky = s.flaky ? "on" : "off";
  } catch (e) {
    showNote(`Could not switch the flaky network: ${e.message}`);
  }
  refreshNote();
}

// The network speed's options: "rate" or "rate rtt", bytes per second and the round trip in ms
// (an emulated link).
const speedOf = (value) => {
  const [bytesPerSecond, rttMs = 0] = value.split(" ").map(Number);
  return { bytesPerSecond, rttMs };
};

async function syncSpeed() {
  try {
    await post("/api/throttle", speedOf($("#speed").value));
  } catch (e) {
    showNote(`Could not set the network speed: ${e.message}`);
  }
}

/**
 * Shows the speed the server has (it outlives the page): a reload must neither show another one
 * nor set one the user did not pick (Chromium and WebKit restore no select on a reload).
 */
export async function showSpeed() {
  let now;
  try {
    const res = await fetch("/api/throttle", { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    now = await res.json();
  } catch {
    return void syncSpeed(); // served some other way: the page's choice it is
  }
  const select = $("#speed");
  let option = [...select.options].find((o) => {
    const s = speedOf(o.value);
    return s.bytesPerSecond === now.bytesPerSecond && s.rttMs === now.rttMs;
  });
  if (!option) {
    // Set some other way (a script posting to /api/throttle): shown as it is.
    const value = `${now.bytesPerSecond} ${now.rttMs}`;
    const rate = now.bytesPerSecond > 0 ? fmtRate(now.bytesPerSecond) : "unlimited";
    const text = `${rate}${now.rttMs ? `, ${now.rttMs} ms` : ""} (set elsewhere)`;
    option = new Option(text, value);
    select.append(option);
  }
  select.value = option.value;
}

/** Wires the panel; onTarget runs when the target changes (the objects table follows it). */
export function wireControls({ onTarget }) {
  for (const el of document.querySelectorAll("input[name=target]")) {
    el.addEventListener("change", () => {
      refreshNote();
      onTarget();
    });
  }
  for (const id of ["#statusEachChunk", "#no308", "#checksum", "#customURL", "#chunkSize", "#uploadType"]) $(id).addEventListener("change", refreshNote);
  $("#flaky").addEventListener("change", syncFlaky);
  $("#seed").addEventListener("change", () => settings().flaky && syncFlaky());
  $("#speed").addEventListener("change", syncSpeed);
}
