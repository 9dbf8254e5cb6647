// The TypeScript declarations (web/js/mediaupload.d.ts, web/js/uppy.d.ts) checked against the
// JavaScript itself, not only against examples:
//
//   1. strict tsc over the typed usage examples (web/test/types/: example.ts), and over every
//      code sample of the docs (README.md, docs/*.md, web/js/README.md: web/test/types/samples.mjs);
//   2. the members each object has at runtime in the browser, compared with the members the
//      .d.ts declares for it: `mu`, an Upload, a queued upload, the queue, an unfinished upload, the XMLHttpRequest
//      facade, its class and its `upload`, MediaUploadError, the events and the objects handed
//      to callbacks, the module's exports, the classic script's global, the Uppy plugin, and
//      the error codes. A member on one side only fails the test.
//   3. the URL options: whether the JS takes a URL object for wasmURL, workerURL, url and
//      sessionURL, compared with whether the declared type takes one.
//
// Beside the samples, the same docs' links to each other: every file and heading a link
// names is there (a heading renamed or a section moved breaks none unnoticed).
//
// How 2 and 3 read the declarations: TypeScript 7's package exposes no compiler API under
// `import ts from "typescript"` (only its version; the Go-based compiler's API is
// "typescript/unstable/…"), so the test lets tsc itself do it. It writes a probe .ts holding the
// runtime lists as string-literal unions and, per object, two assignments to `never`:
//   Exclude<keyof Declared, Runtime>   declared but not at runtime
//   Exclude<Runtime, keyof Declared>   at runtime but not declared
// tsc (noErrorTruncation) names every member left over in its TS2322 error, which the test
// maps back to the object. Inheritance (extends EventTarget, Error, …), optional members and
// unions are resolved by the compiler, not by a parser of ours.
//
// Runtime members are every string-named property (methods and accessors included) of the
// object and of its prototypes up to the first built-in one (EventTarget's, Error's,
// Object's), without `constructor` and the names every object has (toString, …). The built-in's
// own members are the platform's, and lib.dom's to declare (Chromium's EventTarget has a
// `when` that lib.dom lacks): the declared type must extend that built-in instead. The error
// codes are errors.js's ERROR_CODES, the list MediaUploadError checks every code against.
// What a .d.ts should not declare (the queue's own plumbing on a queued upload, say) is listed
// in INTERNAL with its reason; an entry there that is no longer at runtime fails too.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize, relative } from "node:path";
import { test as nodeTest } from "node:test";
import { DIST_DIR, REPO_ROOT, useEnv } from "./harness.mjs";
import { ERROR_CODES } from "../js/src/errors.js";
import { checkSamples, documents } from "./types/samples.mjs";

const TSC = join(REPO_ROOT, "node_modules/.bin/tsc");

// Runtime members a declaration leaves out on purpose, per object, with the reason.
const INTERNAL = {
  QueuedUpload: {
    run: "the queue starts the upload through it (queue.js)",
    started: "the queue counts its running slots with it",
    waiting: "the queue picks the next upload to start with it",
  },
  XMLHttpRequest: { listened: "the upload-listener flag of the XMLHttpRequest standard, read by send()" },
  "window.MediaUpload": { __esModule: "esbuild's marker on the namespace object of an iife bundle" },
  "XMLHttpRequest.upload": { listened: "the upload-listener flag of the XMLHttpRequest standard, read by send()" },
};

function tsc(args, cwd = REPO_ROOT) {
  const r = spawnSync(TSC, args, { cwd, encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status, output: (r.stdout + r.stderr).trim() };
}

nodeTest("types: strict tsc over the typed examples (web/test/types)", () => {
  const { status, output } = tsc(["--noEmit", "-p", "web/test/types"]);
  assert.equal(status, 0, `tsc --noEmit -p web/test/types:\n${output}`);
});

nodeTest("types: strict tsc over every code sample of the docs (web/test/types/samples.mjs)", () => {
  const { status, errors, count, problems } = checkSamples({ tsc: TSC });
  assert.deepEqual(problems, [], "fences that name no language tsc checks or skips");
  assert.ok(count >= 15, `only ${count} samples found`);
  assert.equal(status, 0, `strict tsc over ${count} samples of ${documents().join(", ")}:\n${errors.join("\n")}`);
});

// The anchors a markdown file offers: its headings as GitHub names them (lower case, punctuation
// dropped, spaces to hyphens, a repeated name numbered) and any <a id>, outside code fences.
function anchorsOf(markdown) {
  const out = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const name = h[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/ /g, "-");
      const n = seen.get(name) ?? 0;
      seen.set(name, n + 1);
      out.add(n ? `${name}-${n}` : name);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(a[1]);
  }
  return out;
}

nodeTest("docs: every link between the docs goes to a file that is there, and to a heading it has", () => {
  // The npm package's README links the repository's docs by their address on GitHub.
  const REPO_URL = "https://github.com/mediaupload/mediaupload/blob/main/";
  const broken = [];
  for (const doc of documents()) {
    let fenced = false;
    readFileSync(join(REPO_ROOT, doc), "utf8").split("\n").forEach((line, i) => {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      if (fenced) return;
      for (const [, target] of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
        let to = target;
        if (to.startsWith(REPO_URL)) to = "/" + to.slice(REPO_URL.length);
        else if (/^[a-z]+:/.test(to)) continue;
        const [path, anchor] = to.split("#");
        const file = path === "" ? doc : path.startsWith("/") ? path.slice(1) : normalize(join(dirname(doc), path));
        const at = `${doc}:${i + 1}: ${target}`;
        if (!existsSync(join(REPO_ROOT, file))) broken.push(`${at}: no ${file}`);
        else if (anchor !== undefined && (statSync(join(REPO_ROOT, file)).isDirectory() || !anchorsOf(readFileSync(join(REPO_ROOT, file), "utf8")).has(anchor))) {
          broken.push(`${at}: ${file} has no heading #${anchor}`);
        }
      }
    });
  }
  assert.deepEqual(broken, []);
});

nodeTest("types: dist/ ships the declarations of web/js/", () => {
  for (const f of ["mediaupload.d.ts", "uppy.d.ts", "react.d.ts"]) {
    const want = readFileSync(join(REPO_ROOT, "web/js", f), "utf8");
    assert.equal(readFileSync(join(DIST_DIR, f), "utf8"), want, `${DIST_DIR}/${f} differs from web/js/${f}: run ./build.sh`);
  }
});

let env;
const { test, unique } = useEnv(async (e) => {
  env = e;
});

// Page side: the runtime members of everything the .d.ts declares.
async function runtimeMembers(page, url) {
  return page.evaluate(async (url) => {
    // The module's own members: up to the first built-in prototype (EventTarget, Error,
    // Object), whose members are the platform's (and lib.dom's) business, not the module's; a
    // built-in of this browser may have more than lib.dom knows (Chromium's EventTarget.when).
    const native = (f) => typeof f === "function" && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f));
    const builtinPrototype = (o) => Object.hasOwn(o, "constructor") && native(o.constructor) && o.constructor.prototype === o;
    const members = (obj) => {
      const names = new Set();
      let o = obj;
      for (; o != null && !builtinPrototype(o); o = Object.getPrototypeOf(o)) {
        for (const k of Object.getOwnPropertyNames(o)) if (k !== "constructor" && !(k in Object.prototype)) names.add(k);
      }
      return { names: [...names], base: o == null ? null : o.constructor.name };
    };
    // A class's static members, up to the built-in it extends (Function's own are left out).
    const statics = (cls) => {
      const names = new Set();
      for (let c = cls; c && !native(c); c = Object.getPrototypeOf(c)) {
        for (const k of Object.getOwnPropertyNames(c)) if (!["length", "name", "prototype"].includes(k)) names.add(k);
      }
      return [...names];
    };
    const union = (a, b) => ({ names: [...new Set([...a.names, ...b.names])], base: a.base === b.base ? a.base : "?" });
    const fields = (o) => Object.keys(o);
    const added = (e) => Object.keys(e).filter((k) => k !== "isTrusted"); // what the module put on an event

    const mu = await T.load();
    const ns = T.module;
    const out = { exports: members(ns), mu: members(mu) };

    // An Upload that retries once (a 503 the test's fault script sends), then succeeds.
    const cb = {};
    const up = mu.upload(T.blob(300_000, 1), {
      url,
      chunkSize: 262144,
      retry: { initialDelayMs: 10, jitterMs: 0 },
      onProgress: (p) => (cb.progress ??= fields(p)),
      onRetry: (r) => (cb.retry ??= fields(r)),
      onRequest: (r) => (cb.request ??= fields(r)),
      onStateChange: () => {},
    });
    const ev = {};
    for (const t of ["loadstart", "progress", "load", "loadend", "retry", "statechange", "request"]) {
      up.addEventListener(t, (e) => (ev[t] ??= added(e)));
    }
    out.Upload = members(up);
    const result = await up;
    out.UploadResult = fields(result);
    out.callbacks = cb;

    // A failed upload's error, and events error and abort.
    const bad = mu.upload(T.blob(10, 2), { url: "https://example.invalid/upload?name=x", chunkSize: 1 });
    bad.addEventListener("error", (e) => (ev.error ??= added(e)));
    const err = await bad.then(() => null, (e) => e);
    const aborted = mu.upload(T.blob(10, 3), { url });
    aborted.addEventListener("abort", (e) => (ev.abort ??= added(e)));
    aborted.abort();
    await aborted.catch(() => {});
    out.events = ev;
    out.MediaUploadError = union(members(err), members(new ns.MediaUploadError("http_error", "m", { cause: new Error("c") })));

    const q = mu.queue({ concurrency: 1 });
    out.UploadQueue = members(q);
    const qu = q.add(T.blob(10, 4), { url });
    out.QueuedUpload = members(qu);
    qu.abort();
    await qu.catch(() => {});

    // An unfinished upload (mu.unfinished): one with resume: true whose second chunk meets a
    // 503 with no retries left (retries_exhausted keeps its record).
    const faults = new URL("/_ref/faults", url);
    const set = await fetch(faults, { method: "POST", body: JSON.stringify({ rules: [{ on: "chunk", action: "status", status: 503, skip: 1 }] }) });
    if (!set.ok) throw new Error(`POST ${faults}: ${set.status}`);
    const name = `unfinished-${Math.random().toString(36).slice(2)}.bin`;
    const left = await T.run(T.file(600_000, 6, name), { url: url + "-left", resume: true, chunkSize: 262144, retry: { retries: 0 } });
    await fetch(faults, { method: "DELETE" });
    const item = (await mu.unfinished()).find((u) => u.name === name);
    if (!item) throw new Error(`mu.unfinished() does not list ${name}: the upload ended ${JSON.stringify(left)}`);
    out.UnfinishedUpload = members(item);
    await item.forget();

    const xhr = new mu.XMLHttpRequest();
    out.XMLHttpRequest = members(xhr);
    out["XMLHttpRequest.upload"] = members(xhr.upload);
    out.XMLHttpRequestConstructor = statics(mu.XMLHttpRequest);

    // The classic script's global, beside the ES module.
    await new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "/dist/mediaupload.classic.js";
      s.onload = resolve;
      s.onerror = () => reject(new Error("mediaupload.classic.js did not load"));
      document.head.append(s);
    });
    out.classicGlobal = members(window.MediaUpload);

    const uppy = await import("/dist/uppy.js");
    out.uppyExports = members(uppy);
    out.uppyPlugin = members(new uppy.MediaUpload({}, { load: mu, getOptions: () => ({ url }) }));
    out.uppyPluginStatics = statics(uppy.MediaUpload);
    return out;
  }, url);
}

// Node side: the comparisons, as [name, declared type (TS), runtime list].
function comparisons(rt) {
  const M = "M";
  const U = "U";
  const ownFields = (decl, base) => `Omit<${decl}, keyof ${base}>`; // the fields the module adds
  return [
    ["mediaupload.js exports", `typeof ${M}`, rt.exports],
    ["mu (what load() resolves to)", `${M}.MediaUpload`, rt.mu],
    ["Upload (mu.upload)", `${M}.Upload`, rt.Upload],
    ["QueuedUpload (q.add, typed Upload)", `${M}.Upload`, rt.QueuedUpload, INTERNAL.QueuedUpload],
    ["UploadQueue (mu.queue)", `${M}.UploadQueue`, rt.UploadQueue],
    ["UnfinishedUpload (mu.unfinished)", `${M}.UnfinishedUpload`, rt.UnfinishedUpload],
    ["new mu.XMLHttpRequest()", `${M}.MediaUploadXMLHttpRequest`, rt.XMLHttpRequest, INTERNAL.XMLHttpRequest],
    ["new mu.XMLHttpRequest().upload", `${M}.MediaUploadXMLHttpRequest["upload"]`, rt["XMLHttpRequest.upload"], INTERNAL["XMLHttpRequest.upload"]],
    ["mu.XMLHttpRequest (static)", `${M}.MediaUploadXMLHttpRequestConstructor`, rt.XMLHttpRequestConstructor],
    ["MediaUploadError", `${M}.MediaUploadError`, rt.MediaUploadError],
    ["ErrorCode (errors.js ERROR_CODES)", `{ [K in ${M}.ErrorCode]: 0 }`, ERROR_CODES],
    ["UploadResult (the promise's value)", `${M}.UploadResult`, rt.UploadResult],
    ["onProgress's argument", `${M}.UploadProgress`, rt.callbacks.progress],
    ["onRetry's argument", `${M}.RetryInfo`, rt.callbacks.retry],
    ["onRequest's argument", `${M}.RequestInfo`, rt.callbacks.request],
    ["loadstart event (fields added)", ownFields(`${M}.UploadEventMap["loadstart"]`, "ProgressEvent"), rt.events.loadstart],
    ["progress event (fields added)", ownFields(`${M}.UploadEventMap["progress"]`, "ProgressEvent"), rt.events.progress],
    ["load event (fields added)", ownFields(`${M}.UploadEventMap["load"]`, "ProgressEvent"), rt.events.load],
    ["error event (fields added)", ownFields(`${M}.UploadEventMap["error"]`, "ProgressEvent"), rt.events.error],
    ["abort event (fields added)", ownFields(`${M}.UploadEventMap["abort"]`, "ProgressEvent"), rt.events.abort],
    ["loadend event (fields added)", ownFields(`${M}.UploadEventMap["loadend"]`, "ProgressEvent"), rt.events.loadend],
    ["retry event (fields added)", ownFields(`${M}.UploadEventMap["retry"]`, "Event"), rt.events.retry],
    ["statechange event (fields added)", ownFields(`${M}.UploadEventMap["statechange"]`, "Event"), rt.events.statechange],
    ["request event (fields added)", ownFields(`${M}.UploadEventMap["request"]`, "Event"), rt.events.request],
    ["window.MediaUpload (mediaupload.classic.js)", `${M}.MediaUploadGlobal`, rt.classicGlobal, INTERNAL["window.MediaUpload"]],
    ["uppy.js exports", `typeof ${U}`, rt.uppyExports],
    ["the Uppy plugin", `${U}.MediaUpload`, rt.uppyPlugin],
    ["the Uppy plugin (static)", `Omit<typeof ${U}.MediaUpload, "prototype">`, rt.uppyPluginStatics],
  ];
}

const lit = (names) => (names.length ? names.map((n) => JSON.stringify(n)).join(" | ") : "never");

/**
 * Writes the probe and runs tsc over it. Resolves to { problems: [text], output }: one line per
 * object whose members differ, naming them; output is tsc's, for what the test cannot map.
 */
function compare(rows, urlChecks) {
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-types-"));
  try {
    const from = (f) => "./" + relative(dir, join(DIST_DIR, f)).replaceAll("\\", "/");
    const lines = [
      `import type * as M from ${JSON.stringify(from("mediaupload.js"))};`,
      `import type * as U from ${JSON.stringify(from("uppy.js"))};`,
      `type Keys<T> = keyof T & string;`,
      `type TakesURL<T> = URL extends T ? true : false;`,
    ];
    const where = new Map(); // line number (1-based) -> what a TS2322 there means
    const add = (line, meaning) => {
      lines.push(line);
      if (meaning) where.set(lines.length, meaning);
    };
    rows.forEach(([name, decl, runtime, base], i) => {
      add(`type R${i} = ${lit(runtime)};`);
      // A built-in base's members are on both sides by construction: the declared type must
      // extend that built-in, as the runtime object does.
      const inherited = base ? ` | keyof ${base}` : "";
      add(`export const declaredOnly${i}: never = null as unknown as Exclude<Keys<${decl}>, R${i}${inherited}>;`, { name, side: "declared in the .d.ts, not at runtime" });
      add(`export const runtimeOnly${i}: never = null as unknown as Exclude<R${i}, Keys<${decl}>>;`, { name, side: "at runtime, not declared in the .d.ts" });
      if (base) add(`export const extends${i}: true = null as unknown as (${decl} extends ${base} ? true : false);`, { name, base });
    });
    for (const [name, decl, takes] of urlChecks) {
      add(
        `export const takesURL_${name}: ${takes} = null as unknown as TakesURL<${decl}>;`,
        { name, url: takes ? "the JS takes a URL object, the .d.ts does not: declare string | URL" : "the JS rejects a URL object, the .d.ts takes one: declare string" },
      );
    }
    writeFileSync(join(dir, "probe.ts"), lines.join("\n") + "\n");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022", module: "ESNext", moduleResolution: "Bundler", lib: ["ES2022", "DOM"],
          strict: true, noEmit: true, noErrorTruncation: true, types: [], skipLibCheck: false,
        },
        files: ["probe.ts"],
      }),
    );
    const { status, output } = tsc(["-p", dir, "--pretty", "false"]);
    const problems = [];
    const unmapped = [];
    for (const l of output.split("\n").filter((l) => /error TS\d+/.test(l))) {
      const m = /^(?:.*[\\/])?probe\.ts\((\d+),\d+\): error TS2322: Type '(.*)' is not assignable to type '.*'\.$/.exec(l);
      const at = m && where.get(Number(m[1]));
      if (!at) unmapped.push(l);
      else if (at.url) problems.push(`${at.name}: ${at.url}`);
      else if (at.base) problems.push(`${at.name}: at runtime it extends ${at.base}, the declared type does not`);
      else problems.push(`${at.name}: ${at.side}: ${[...m[2].matchAll(/"([^"]+)"/g)].map((x) => x[1]).join(", ")}`);
    }
    if (status !== 0 && problems.length === 0 && unmapped.length === 0) unmapped.push(output);
    return { problems, unmapped, probe: lines.join("\n") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Fails with every difference found, then whatever else tsc said (an error in the .d.ts itself,
// say), with the probe for the latter.
function assertSame({ problems, unmapped, probe }) {
  if (problems.length === 0 && unmapped.length === 0) return;
  let msg = `the .d.ts and the JavaScript differ:\n  ${problems.join("\n  ") || "(nothing the test could map)"}`;
  if (unmapped.length) msg += `\ntsc also said:\n  ${unmapped.join("\n  ")}\n--- the probe tsc checked:\n${probe}`;
  assert.fail(msg);
}

test("types: every member the .d.ts declares is there at runtime, and every runtime member is declared", async () => {
  await env.ref.setFaults([{ on: "chunk", action: "status", status: 503 }]); // one retry, for onRetry's fields
  const page = await env.openPage();
  const rt = await runtimeMembers(page, env.ref.uploadURL(unique("members")));
  // The internal members are there (else the list is stale), and left out of the comparison.
  const rows = comparisons(rt).map(([name, decl, runtime, internal = {}]) => {
    assert.ok(runtime, `${name}: no runtime list (the page did not reach it)`);
    // A list of names (fields, statics, codes), or members(): names and the built-in base.
    const { names, base } = Array.isArray(runtime) ? { names: runtime, base: null } : runtime;
    assert.notEqual(base, "?", `${name}: the objects sampled have different built-in bases`);
    for (const k of Object.keys(internal)) assert.ok(names.includes(k), `${name}: INTERNAL lists ${k}, which is no longer at runtime`);
    // Object's members are every object's (and excluded from names already).
    return [name, decl, names.filter((k) => !(k in internal)), base === "Object" ? null : base];
  });
  assertSame(compare(rows, []));
});

test("types: wasmURL, workerURL, url and sessionURL take a URL object exactly where the JS does", async () => {
  const url = env.ref.uploadURL(unique("urlobj"));
  // Each load() in a page of its own: the module loads once per page.
  const takesURL = async (options) => {
    const page = await env.openPage();
    return page.evaluate(async (options) => {
      const abs = (p) => new URL(p, location.href);
      try {
        await T.load(Object.fromEntries(Object.entries(options).map(([k, v]) => [k, k.endsWith("URL") ? abs(v) : v])));
        return true;
      } catch (e) {
        return { error: T.errorData(e) };
      }
    }, options);
  };
  const wasm = await takesURL({ wasmURL: "/dist/mediaupload.wasm" });
  const worker = await takesURL({ worker: true, workerURL: "/dist/mediaupload.worker.js" });
  const page = await env.openPage();
  const upload = await page.evaluate(async (url) => {
    const mu = await T.load();
    // A URL object where a string works: accepted unless the upload fails as a bad argument.
    const run = async (options) => {
      const r = await T.run(T.blob(1000, 5), options);
      return r.ok || r.error.code !== "invalid_argument" ? true : { error: r.error };
    };
    const start = await fetch(url + "&uploadType=resumable", { method: "POST", headers: { "X-Upload-Content-Length": "1000" } });
    const session = start.headers.get("Location");
    return {
      asString: [await run({ url }), await run({ sessionURL: session })],
      url: await run({ url: new URL(url) }),
      sessionURL: await run({ sessionURL: new URL(session) }),
    };
  }, url);
  assert.deepEqual(upload.asString, [true, true], "the same uploads with strings work");
  // Only a rejection that names the option counts as "not taken".
  const took = (name, r) => {
    if (r === true) return true;
    assert.match(r.error.message, new RegExp(name), `${name}: failed for another reason: ${JSON.stringify(r.error)}`);
    return false;
  };
  assert.equal(took("wasmURL", wasm), true, "load({ wasmURL: URL })");
  assert.equal(took("workerURL", worker), true, "load({ worker: true, workerURL: URL })");
  const checks = [
    ["wasmURL", `M.LoadOptions["wasmURL"]`, took("wasmURL", wasm)],
    ["workerURL", `M.LoadOptions["workerURL"]`, took("workerURL", worker)],
    ["url", `Extract<M.UploadOptions, { url: unknown }>["url"]`, took("url", upload.url)],
    ["sessionURL", `Extract<M.UploadOptions, { sessionURL: unknown }>["sessionURL"]`, took("sessionURL", upload.sessionURL)],
  ];
  assertSame(compare([], checks));
});
