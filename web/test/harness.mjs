// Shared helpers for the browser tests in web/test/ (run with `node --test web/test/`).
//
// A test file typically does:
//
//   import { startAll } from "./harness.mjs";
//   let env;
//   before(async () => { env = await startAll(); });
//   after(() => env?.close());
//   test("…", async () => {
//     const page = await env.openPage();            // a page on the static origin, window.T ready
//     const out = await page.evaluate(async (url) => { … window.T … }, env.ref.uploadURL("name"));
//   });
//
// Pieces, each usable alone:
//   startRefServer()    the reference server (web/cmd/refserver), and its control API
//   startStaticServer() the page origin: dist/ under /dist/, test pages under /test/, and
//                       routes a test adds (fake servers); a different origin from the
//                       reference server, so CORS is real
//   launchBrowser()     headless Chromium (/usr/bin/chromium) through playwright-core
//   pseudoRandomBytes() the file contents, made the same way in Node and in the page (T.blob)
//
// Environment: MEDIAUPLOAD_DIST (default <repo>/dist, must be built), MEDIAUPLOAD_REFSERVER (a
// prebuilt refserver binary; default `go run ./web/cmd/refserver`), CHROMIUM (default
// /usr/bin/chromium), MEDIAUPLOAD_TEST_VERBOSE=1 to echo the pages' console.

import { spawn, spawnSync } from "node:child_process";
import { after, before, beforeEach, describe, test as nodeTest } from "node:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { POOL_SEED, POOL_SIZE, pseudoRandomBytes } from "./random.mjs";
import { CHROMIUM_ARGS, ERRORS_HOOK, chromiumTrustArgs, enginesUnderTest, launchEngine } from "./browsers.mjs";

export const REPO_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const DIST_DIR = resolve(process.env.MEDIAUPLOAD_DIST ?? join(REPO_ROOT, "dist"));
const VERBOSE = !!process.env.MEDIAUPLOAD_TEST_VERBOSE;

export const KiB = 1024;
export const MiB = 1024 * KiB;
/** The protocol's chunk unit (docs/protocol.md section 3). */
export const CHUNK = 256 * KiB;

export { POOL_SIZE, pseudoRandomBytes };

// ---------------------------------------------------------------------------------------------
// File contents

// pooledBytes(offset, size): what a Blob of T.pooled(offset, size) holds (random.mjs).
let pool = null;
export function pooledBytes(offset, size) {
  if (offset < 0 || size < 0 || offset + size > POOL_SIZE) throw new RangeError(`pool: ${offset}+${size} > ${POOL_SIZE}`);
  pool ??= pseudoRandomBytes(POOL_SIZE, POOL_SEED);
  return pool.subarray(offset, offset + size);
}

/** The base64 MD5, as in GCS's md5Hash. */
export function md5Base64(bytes) {
  return createHash("md5").update(bytes).digest("base64");
}

// CRC-32C (Castagnoli, reflected), a byte at a time: the tests' own, apart from the module's.
const CRC32C_TABLE = Array.from({ length: 256 }, (_, i) => {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  return c >>> 0;
});

/** The base64 of the big-endian CRC-32C, as in GCS's crc32c and X-Goog-Hash. */
export function crc32cBase64(bytes) {
  let c = ~0;
  for (let i = 0; i < bytes.length; i++) c = CRC32C_TABLE[(c ^ bytes[i]) & 255] ^ (c >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE(~c >>> 0);
  return out.toString("base64");
}

// ---------------------------------------------------------------------------------------------
// Processes

export function spawnGroup(cmd, args, opts) {
  // A process group of its own, so stop() ends `go run` and the binary it started.
  const child = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  // If the test process dies first, do not leave the group behind.
  const onExit = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  };
  process.once("exit", onExit);
  child.once("exit", () => process.off("exit", onExit));
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, 3000);
    return exited.finally(() => clearTimeout(timer));
  };
  return { child, stop };
}

/**
 * Starts the reference server and resolves to a handle once it has printed its JSON line:
 *   url, altURL          its two origins (one state)
 *   uploadURL(name, {alt, path, http})  an upload URI: <url>/upload/storage/v1/b/test/o?name=<name>
 *   reset(), setFaults(rules, random), clearFaults(), config(obj), log(), clearLog(),
 *   objects(), object(name) -> the stored object's entry from GET /_ref/objects (or undefined),
 *   deleteObject(name), download(name) -> Buffer, stop()
 * Its stderr is kept (`stderr()`) for failure messages.
 *
 * With { tls: true } it also serves HTTPS with HTTP/2 (web/cmd/refserver -tls, a certificate
 * made at its start), and url and altURL are its https origins (uploadURL too); httpURL and
 * httpAltURL are the HTTP/1.1 ones, same state; h1TLSURL is HTTPS that offers HTTP/1.1 only;
 * spki is the certificate's key hash, for the browser's trust (browsers.mjs). The control
 * calls go over HTTP either way.
 */
export async function startRefServer({ tls = false } = {}) {
  const bin = process.env.MEDIAUPLOAD_REFSERVER;
  const args = ["-addr", "127.0.0.1:0", "-alt-addr", "127.0.0.1:0", ...(tls ? ["-tls"] : [])];
  const { child, stop } = bin
    ? spawnGroup(bin, args, { cwd: REPO_ROOT })
    : spawnGroup("go", ["run", "./web/cmd/refserver", ...args], { cwd: REPO_ROOT });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
    if (VERBOSE) process.stderr.write(`[refserver] ${d}`);
  });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`refserver: no address line after 180 s\n${stderr}`)), 180_000);
    rl.once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`refserver exited (${code}) before printing its address\n${stderr}`));
    });
  });
  const announced = JSON.parse(line);
  if (tls && !announced.tlsURL) {
    await stop();
    throw new Error(`refserver: no tlsURL in ${line} (an old MEDIAUPLOAD_REFSERVER binary?)`);
  }
  const httpURL = announced.url;
  const [url, altURL] = tls ? [announced.tlsURL, announced.altTLSURL] : [announced.url, announced.altURL];

  const call = async (method, path, body) => {
    const res = await fetch(httpURL + path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`refserver ${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  const json = async (method, path, body) => (await call(method, path, body)).json();

  return {
    url,
    altURL,
    httpURL,
    httpAltURL: announced.altURL,
    h1TLSURL: announced.h1TLSURL,
    tls,
    spki: announced.spki,
    stderr: () => stderr,
    /** http: the HTTP/1.1 origin even with tls (the same state); h1tls: the HTTPS one that offers HTTP/1.1 only. */
    uploadURL: (name, { alt = false, path = "/upload/storage/v1/b/test/o", http = false, h1tls = false } = {}) =>
      `${h1tls ? announced.h1TLSURL : http ? (alt ? announced.altURL : httpURL) : alt ? altURL : url}${path}?name=${encodeURIComponent(name)}`,
    reset: () => json("POST", "/_ref/reset"),
    /** Replaces the fault script: rules as in the refserver's Rule; random: {seed, rate}. */
    setFaults: (rules, random) => json("POST", "/_ref/faults", random ? { rules, random } : { rules }),
    clearFaults: () => json("DELETE", "/_ref/faults"),
    /** POST /_ref/config, e.g. { sessionOrigin: altURL } or { rangeForm: "plain" }. */
    config: (cfg) => json("POST", "/_ref/config", cfg),
    /** The requests seen, preflights included (kind "preflight"). */
    log: () => json("GET", "/_ref/log"),
    clearLog: () => json("DELETE", "/_ref/log"),
    objects: () => json("GET", "/_ref/objects"),
    object: async (name) => (await json("GET", "/_ref/objects")).find((o) => o.name === name),
    /** DELETE /_ref/objects/{name}: the object and the finished sessions that held it. */
    deleteObject: (name) => json("DELETE", `/_ref/objects/${encodeURIComponent(name)}`),
    download: async (name) =>
      Buffer.from(await (await call("GET", `/_ref/objects/${encodeURIComponent(name)}`)).arrayBuffer()),
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// The page origin

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".ts": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css",
};

// errors.js first: page.errors() sees what the page throws in every engine (browsers.mjs).
const BLANK_HTML = `<!doctype html><meta charset="utf-8"><title>mediaupload test</title>
<script src="/test/errors.js"></script>
<script type="module" src="/test/helpers.js"></script>`;

/**
 * Starts the page origin on 127.0.0.1 and resolves to
 *   { url, page(path, html), route(prefix, handler), dir(prefix, folder), stop() }.
 * Serves:
 *   /dist/…           the built dist/ (MIME types as a good static server sends them)
 *   /wrongmime/…      the same files, but .wasm as application/octet-stream
 *   /test/blank.html  an empty page that loads /test/helpers.js (window.T: see page-helpers.js)
 *   /test/hooked-worker.js  the module's worker script with a test's hooks first
 *                     (worker-hooks.js: T.loadHooked)
 *   pages added with page(path, html), and routes added with route(prefix, (req, res) => …)
 *   (a route is tried for every request whose path starts with prefix)
 *   folders added with dir(prefix, folder), as /dist/ (index.html for a path ending in /).
 * Nothing is cached (Cache-Control: no-store), so a reload fetches again.
 */
export async function startStaticServer({ dist = DIST_DIR } = {}) {
  const pages = new Map([
    ["/test/blank.html", { body: BLANK_HTML, type: TYPES[".html"] }],
    // The page's helpers (window.T), a real file, and what it shares with Node.
    ["/test/helpers.js", { file: join(REPO_ROOT, "web/test/page-helpers.js"), type: TYPES[".js"] }],
    ["/test/random.mjs", { file: join(REPO_ROOT, "web/test/random.mjs"), type: TYPES[".mjs"] }],
    ["/test/errors.js", { body: ERRORS_HOOK, type: TYPES[".js"] }],
    // The module's worker script with a test's hooks in front (worker-hooks.js; test-only).
    ["/test/worker-hooks.js", { file: join(REPO_ROOT, "web/test/worker-hooks.js"), type: TYPES[".js"] }],
    ["/test/read-faults.js", { file: join(REPO_ROOT, "web/test/read-faults.js"), type: TYPES[".js"] }],
    ["/test/hooked-worker.js", { body: 'import "/test/worker-hooks.js";\nimport "/dist/mediaupload.worker.js";\n', type: TYPES[".js"] }],
  ]);
  const routes = [];
  const dirs = [["/dist/", dist, false], ["/wrongmime/", dist, true]]; // [prefix, folder, wrong .wasm type]
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const route = routes.find((r) => path.startsWith(r.prefix));
    if (route) {
      return void Promise.resolve()
        .then(() => route.handler(req, res))
        .catch((err) => {
          process.stderr.write(`[static server] ${req.method} ${path}: ${err.stack ?? err}\n`);
          if (!res.headersSent) res.writeHead(500);
          res.end(String(err));
        });
    }
    const send = (status, body, type = "text/plain") => {
      res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    const page = pages.get(path);
    if (page) return send(200, page.file ? readFileSync(page.file) : page.body, page.type);
    for (const [prefix, root, wrong] of dirs) {
      if (!path.startsWith(prefix)) continue;
      const rel = path.slice(prefix.length);
      const file = normalize(join(root, rel === "" || rel.endsWith("/") ? rel + "index.html" : rel));
      if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) break;
      const ext = extname(file);
      const type = wrong && ext === ".wasm" ? "application/octet-stream" : TYPES[ext] ?? "application/octet-stream";
      return send(200, readFileSync(file), type);
    }
    send(404, "not found");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    page: (path, html) => void pages.set(path, { body: html, type: TYPES[extname(path)] ?? TYPES[".html"] }),
    route: (prefix, handler) => void routes.push({ prefix, handler }),
    dir: (prefix, folder) => void dirs.unshift([prefix, resolve(folder), false]),
    stop: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Reads a request's whole body into a Buffer (for routes). */
export async function readBody(req) {
  const parts = [];
  for await (const p of req) parts.push(p);
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------
// The browser

export { CHROMIUM_ARGS }; // browsers.mjs: the flags every Chromium of the tests starts with

/**
 * Launches headless Chromium with a fresh profile and TMPDIR (removed by close()) and resolves
 * to { context, newPage(url), errors, blobMemory(), collectGarbage(page), close() }. Pages
 * opened with newPage echo uncaught page errors to stderr and collect them in `errors`.
 * trust: { spki } trusts a test server's certificate (browsers.mjs).
 */
export async function launchBrowser({ trust } = {}) {
  const { chromium } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "mediaupload-chromium-"));
  const tmp = join(dir, "tmp");
  mkdirSync(tmp);
  const context = await chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [...CHROMIUM_ARGS, ...chromiumTrustArgs(trust)],
    env: { ...process.env, TMPDIR: tmp },
  });
  const errors = [];
  return {
    context,
    errors,
    async newPage(url) {
      const page = await context.newPage();
      page.on("pageerror", (err) => {
        errors.push(err);
        process.stderr.write(`[page error] ${err.stack ?? err}\n`);
      });
      if (VERBOSE) page.on("console", (m) => process.stderr.write(`[console.${m.type()}] ${m.text()}\n`));
      if (url) await page.goto(url);
      return page;
    },
    /**
     * What the browser's Blob store holds, read from chrome://blob-internals in a tab of its
     * own: { blobs, bytes } (bytes: the sum of every listed blob's items, so a slice counts
     * apart from its parent; an upper bound of the memory held). Blob data lives outside the
     * JS heap, where performance.memory and CDP's heap figures do not see it.
     */
    async blobMemory() {
      const tab = await context.newPage();
      try {
        await tab.goto("chrome://blob-internals");
        return await tab.evaluate(() => {
          const text = document.body.innerText;
          let bytes = 0;
          // "Length: 8,388,608": the digits, whatever the locale groups them with.
          for (const m of text.matchAll(/^Length: (.+)$/gm)) bytes += Number(m[1].replace(/\D/g, ""));
          return { blobs: document.querySelectorAll("body > b").length, bytes };
        });
      } finally {
        await tab.close();
      }
    },
    /** Runs V8's garbage collector in page (CDP HeapProfiler.collectGarbage). */
    async collectGarbage(page) {
      const cdp = await context.newCDPSession(page);
      try {
        await cdp.send("HeapProfiler.collectGarbage");
      } finally {
        await cdp.detach();
      }
    },
    async close() {
      try {
        await context.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// All of it

/**
 * Starts the reference server, the page origin and the browser (one of each per test file) and
 * resolves to { ref, web, browser, openPage(path), checkStored(name, size, seed),
 * checkObject(name, bytes, {download}), close() }. openPage opens a new page at web.url + path
 * (default /test/blank.html) and waits for window.T. checkStored and checkObject resolve to a
 * list of problems (empty when the object is as uploaded): the stored object's size and md5,
 * and its bytes unless download is false (for objects too big to fetch back cheaply).
 *
 * Without `engine`, the browser is Chromium through playwright (launchBrowser: its pages are
 * playwright's, with CDP at hand). With `engine` ("chromium", "firefox" or "webkit"), it is
 * that engine through browsers.mjs, and pages are the engine-neutral ones described there.
 *
 * With `tls`, the reference server serves HTTPS with HTTP/2 (startRefServer({ tls })): ref.url
 * is its https origin, ref.httpURL the HTTP/1.1 one, and the browser trusts its certificate
 * (the browser starts once the server has said which).
 */
export async function startAll({ engine, tls = false } = {}) {
  if (!existsSync(join(DIST_DIR, "mediaupload.wasm"))) {
    throw new Error(`${DIST_DIR}/mediaupload.wasm is missing: run ./build.sh first (or set MEDIAUPLOAD_DIST)`);
  }
  const launch = (trust) => (engine ? launchEngine(engine, { trust }) : launchBrowser({ trust }));
  // With tls the browser needs the certificate's hash, known once the server is up.
  const refStarted = startRefServer({ tls });
  const browserStarted = tls ? refStarted.then((ref) => launch({ spki: ref.spki })) : launch();
  const started = await Promise.allSettled([refStarted, startStaticServer(), browserStarted]);
  const failed = started.find((r) => r.status === "rejected");
  if (failed) {
    // What did start is stopped: a listening server would keep the test process alive.
    await Promise.allSettled(started.filter((r) => r.status === "fulfilled").map((r) => (r.value.stop ?? r.value.close)()));
    throw failed.reason;
  }
  const [ref, web, browser] = started.map((r) => r.value);
  const checkObject = async (name, want, { download = true } = {}) => {
    const obj = await ref.object(name);
    if (!obj) return [`no object ${name}`];
    const problems = [];
    if (obj.size !== String(want.length)) problems.push(`size ${obj.size}, want ${want.length}`);
    if (obj.md5Hash !== md5Base64(want)) problems.push(`md5Hash ${obj.md5Hash}, want ${md5Base64(want)}`);
    if (!download) return problems;
    const got = await ref.download(name);
    if (!got.equals(want)) problems.push(`stored bytes differ (${got.length} bytes)`);
    return problems;
  };
  return {
    ref,
    web,
    browser,
    async openPage(path = "/test/blank.html") {
      const page = await browser.newPage(web.url + path);
      if (path === "/test/blank.html") await page.waitForFunction(() => window.T);
      return page;
    },
    /** The engine's name and version ("Firefox 153.7.0"), or "" for launchBrowser's Chromium. */
    get engineVersion() {
      return browser.version ?? "";
    },
    checkStored: (name, size, seed) => checkObject(name, pseudoRandomBytes(size, seed)),
    checkObject,
    async close() {
      await Promise.allSettled([browser.close(), web.stop(), ref.stop()]);
    },
  };
}

/**
 * Builds (unless MEDIAUPLOAD_SERVE names a binary) and starts the demo's serve program
 * (web/cmd/serve: the demo, dist/, the reference server under /ref/ and fake-gcs-server) on a
 * free port, with args added to its flags (["-allow-origin", url], say). Resolves to { url,
 * stderr(), stop() }; stop also removes what the build made.
 */
export async function startServe(args = []) {
  let buildDir = null;
  let bin = process.env.MEDIAUPLOAD_SERVE;
  if (!bin) {
    buildDir = mkdtempSync(join(tmpdir(), "mediaupload-serve-"));
    bin = join(buildDir, "serve");
    const r = spawnSync("go", ["build", "-o", bin, "./web/cmd/serve"], { cwd: REPO_ROOT, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`go build ./web/cmd/serve failed:\n${r.stderr}`);
  }
  const child = spawn(bin, ["-addr", "127.0.0.1:0", "-dist", DIST_DIR, ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 30 s\n${stderr}`)), 30_000);
    createInterface({ input: child.stdout }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before printing its URL\n${stderr}`));
    });
  });
  const m = /(http:\/\/127\.0\.0\.1:(\d+))\//.exec(line);
  if (!m || m[2] === "0") throw new Error(`serve's first line has no real URL: ${line}`);
  return {
    url: m[1],
    stderr: () => stderr,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGTERM");
        setTimeout(() => child.exitCode === null && child.kill("SIGKILL"), 3000).unref();
      }).finally(() => buildDir && rmSync(buildDir, { recursive: true, force: true })),
  };
}

/**
 * A proxy on 127.0.0.1 in front of `target` (an origin) that passes every request through
 * and adds the error hook (browsers.mjs, ERRORS_HOOK) at the top of every HTML page, so that
 * page.errors() sees what a page of another server throws from its first script on, in every
 * engine (classic WebDriver has no console). It also serves a page of its own that frames a
 * page of the origin at a phone's size (framePage, below). `target` may be a function that
 * gives the origin when a request comes (a server started after the proxy, told the proxy's
 * origin). Resolves to { url, stop() }.
 */
export async function startErrorsProxy(targetOrFn) {
  const server = createServer((req, res) => {
    const target = typeof targetOrFn === "function" ? targetOrFn() : targetOrFn;
    const frame = framePage(req.url);
    if (frame) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
      return void res.end(frame);
    }
    const headers = { ...req.headers, host: new URL(target).host };
    if (/text\/html/.test(headers.accept ?? "")) delete headers["accept-encoding"]; // a page to edit comes plain
    const up = httpRequest(target + req.url, { method: req.method, headers }, (answer) => {
      const html = /^text\/html/.test(answer.headers["content-type"] ?? "");
      if (!html) {
        res.writeHead(answer.statusCode, answer.headers);
        return void answer.pipe(res);
      }
      const parts = [];
      answer.on("data", (d) => parts.push(d));
      answer.on("end", () => {
        const page = Buffer.concat(parts).toString("utf8");
        const at = page.search(/<head[^>]*>/i);
        const end = at < 0 ? 0 : at + page.match(/<head[^>]*>/i)[0].length;
        const body = page.slice(0, end) + `<script>${ERRORS_HOOK}</script>` + page.slice(end);
        const headers = { ...answer.headers, "content-length": Buffer.byteLength(body) };
        delete headers["content-encoding"];
        res.writeHead(answer.statusCode, headers);
        res.end(body);
      });
    });
    up.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The proxy's own page /__test/frame.html?src=PATH&width=W&height=H (else null): a page of the
 * proxied origin that shows PATH in an iframe of W x H CSS pixels, with nothing around it. A
 * phone's viewport where the browser's window cannot be made that narrow (WebKitGTK's
 * MiniBrowser stops at 447 px): the framed page lays out, and its media queries match, at W.
 * Same origin, so a test reaches into the frame (#frame) from the page's scripts.
 */
function framePage(url) {
  const u = new URL(url, "http://x");
  if (u.pathname !== "/__test/frame.html") return null;
  const width = Number(u.searchParams.get("width")), height = Number(u.searchParams.get("height"));
  const src = u.searchParams.get("src") ?? "/";
  if (!(width > 0 && height > 0) || !src.startsWith("/")) return null;
  const attr = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return `<!doctype html><meta charset="utf-8"><title>frame</title>
<style>html, body { margin: 0; padding: 0; } iframe { display: block; border: 0; width: ${width}px; height: ${height}px; }</style>
<iframe id="frame" src="${attr(src)}"></iframe>`;
}

/**
 * The hooks of a test file run against one environment: startAll() before its tests (then
 * started(env), where the file keeps env and env.ref), a reset of the reference server before
 * each test, close after. Returns { test(name, fn, ms = timeout), every test bounded, and
 * unique(prefix) for object names }. { tls: true }: startAll's (the reference server over
 * HTTPS with HTTP/2, trusted by the browser).
 */
export function useEnv(started, { timeout = 120_000, engine, tls = false } = {}) {
  let env = null;
  let seq = 0;
  before(async () => {
    env = await startAll({ engine, tls });
    await started(env);
  });
  after(() => env?.close());
  beforeEach(() => env.ref.reset());
  return {
    test: (name, fn, ms = timeout) => nodeTest(name, { timeout: ms }, fn),
    unique: (prefix) => `${prefix}-${++seq}-${Date.now().toString(36)}`,
  };
}

/**
 * Runs body(engine) inside a describe block per engine under test (browsers.mjs:
 * MEDIAUPLOAD_ENGINES, default Chromium, Firefox and WebKit). Inside, useEnv(started,
 * { engine }) gives each engine its own browser, reference server and page origin.
 */
export function forEachEngine(body) {
  for (const engine of enginesUnderTest()) describe(engine, () => body(engine));
}
