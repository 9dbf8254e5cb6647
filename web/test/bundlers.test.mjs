// The npm package as apps use it: dist/mediaupload.tgz (what ./build.sh packs with `npm pack`,
// and README.md's Install says to install), installed with the commands README.md and
// web/js/README.md give, as written, into an empty folder; and installed with npm into the small
// apps of web/test/bundlers/ (Vite, webpack 5, esbuild), each built in production mode by its
// bundler, served, and made to upload a file from its built page in Chromium, byte for byte.
// Also a plain <script> page served from the installed package, and what load() says when the
// wasm is not where it looks.
//
// Each app's bundler comes from the npm registry at the versions of its package-lock.json. npm
// ci runs once per lock file into node_modules/.cache/mediaupload-bundlers/ (the slow part, and
// the only one that needs the registry); each run copies that into a fresh copy of the app, so
// the repository stays clean. Run: node --test web/test/bundlers.test.mjs (dist/ built).

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test as nodeTest } from "node:test";
import { promisify } from "node:util";
import {
  DIST_DIR, MiB, REPO_ROOT, launchBrowser, pseudoRandomBytes, startRefServer, startStaticServer,
} from "./harness.mjs";

const APPS_DIR = join(REPO_ROOT, "web/test/bundlers");
const CACHE_DIR = join(REPO_ROOT, "node_modules/.cache/mediaupload-bundlers");
const APPS = ["vite", "webpack", "esbuild"];
// What the package holds, and nothing else (web/js/package.json's "files", plus what npm adds).
const PACKAGE_FILES = [
  "LICENSE", "README.md", "THIRD_PARTY_NOTICES", "mediaupload.classic.js", "mediaupload.classic.js.map",
  "mediaupload.d.ts", "mediaupload.js", "mediaupload.js.map", "mediaupload.wasm", "mediaupload.wasm.d.ts",
  "mediaupload.worker.js", "mediaupload.worker.js.map",
  "package.json", "react.d.ts", "react.js", "react.js.map", "uppy.d.ts", "uppy.js", "uppy.js.map",
];

// A cold run installs three bundlers from the registry: give it time.
const test = (name, fn) => nodeTest(name, { timeout: 240_000 }, fn);
const run = promisify(execFile);
// The package ./build.sh packed, and the path the READMEs' install commands give for it.
const TARBALL = join(DIST_DIR, "mediaupload.tgz");
const DOCUMENTED_TARBALL = "/path/to/mediaupload/dist/mediaupload.tgz";
// How long a page may take to load the module, or to upload a few MiB.
const WAIT = 60_000;
// Child processes a test started: killed in after() too, should a test time out while one runs.
const children = new Set();
const spawned = (child) => (children.add(child), child.once("exit", () => children.delete(child)), child);
const npm = (args, cwd) => run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, maxBuffer: 1 << 24 });

let tmp, ref, web, browser, pack;
const built = {}; // app name -> promise of its built output folder

before(async () => {
  if (!existsSync(join(DIST_DIR, "mediaupload.wasm"))) {
    throw new Error(`${DIST_DIR}/mediaupload.wasm is missing: run ./build.sh first (or set MEDIAUPLOAD_DIST)`);
  }
  if (!existsSync(TARBALL)) throw new Error(`${TARBALL} is missing: run ./build.sh first (it packs the package)`);
  tmp = mkdtempSync(join(tmpdir(), "mediaupload-bundlers-"));
  pack = run("tar", ["-tzf", TARBALL]).then(({ stdout }) => ({
    tarball: TARBALL,
    files: stdout.split("\n").filter((p) => p && !p.endsWith("/")).map((p) => p.replace(/^package\//, "")).sort(),
  }));
  for (const app of APPS) built[app] = pack.then(({ tarball }) => buildApp(app, tarball));
  // Unhandled until a test awaits them: a failed build fails its own test, not the others.
  for (const p of [pack, ...Object.values(built)]) p.catch(() => {});
  [ref, web, browser] = await Promise.all([startRefServer(), startStaticServer(), launchBrowser()]);
  web.dir("/app/", APPS_DIR); // page.js, for the plain <script> page
});
after(async () => {
  for (const child of children) child.kill();
  await Promise.allSettled([browser?.close(), web?.stop(), ref?.stop(), ...Object.values(built)]);
  rmSync(tmp, { recursive: true, force: true });
});

/** The app's dependencies installed once per lock file (npm ci), in the cache; resolves to its node_modules. */
async function installed(app) {
  const lock = readFileSync(join(APPS_DIR, app, "package-lock.json"));
  const key = `${app}-${createHash("sha256").update(lock).digest("hex").slice(0, 16)}-${process.platform}-${process.arch}`;
  const dir = join(CACHE_DIR, key);
  if (!existsSync(join(dir, "ok"))) {
    mkdirSync(CACHE_DIR, { recursive: true });
    for (const old of readdirSync(CACHE_DIR)) if (old.startsWith(`${app}-`)) rmSync(join(CACHE_DIR, old), { recursive: true, force: true });
    mkdirSync(dir);
    for (const f of ["package.json", "package-lock.json"]) cpSync(join(APPS_DIR, app, f), join(dir, f));
    await npm(["ci", "--prefer-offline"], dir);
    writeFileSync(join(dir, "ok"), "");
  }
  return join(dir, "node_modules");
}

/** Copies the app, installs its bundler and the packed package, builds it; resolves to the output folder. */
async function buildApp(app, tarball) {
  const dir = join(tmp, app);
  // What a developer may have left in the app's folder is not the app.
  const own = (src) => !/[/\\](node_modules|dist)([/\\]|$)/.test(src.slice(APPS_DIR.length));
  cpSync(join(APPS_DIR, app), dir, { recursive: true, filter: own });
  cpSync(join(APPS_DIR, "page.js"), join(tmp, "page.js"));
  cpSync(await installed(app), join(dir, "node_modules"), { recursive: true, verbatimSymlinks: true });
  await npm(["install", "--no-save", "--prefer-offline", tarball], dir);
  try {
    await npm(["run", "build"], dir);
  } catch (err) {
    throw new Error(`${app}: npm run build failed\n${err.stdout}\n${err.stderr}`);
  }
  web.dir(`/${app}/`, join(dir, "dist"));
  return join(dir, "dist");
}

/** A free port on 127.0.0.1, for a server that wants one named. */
function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(String(port)));
    });
  });
}

/**
 * Opens the app's page at `path` (with ?upload=), waits until it is ready, chooses a file of
 * `size` bytes, and resolves to { status, wasm } once it is uploaded or has failed: status is
 * the page's #status text, wasm the paths of the .wasm requests.
 */
async function uploadFrom(path, name, size, seed, query = {}, origin = web.url) {
  const page = await browser.newPage();
  const wasm = [];
  page.on("request", (r) => {
    const { pathname } = new URL(r.url());
    if (pathname.endsWith(".wasm")) wasm.push(pathname);
  });
  try {
    const params = new URLSearchParams({ upload: ref.uploadURL(name), ...query });
    await page.goto(`${origin}${path}?${params}`);
    const status = () => page.locator("#status").textContent();
    await page.waitForFunction(() => document.getElementById("status")?.textContent !== "loading", null, { timeout: WAIT });
    if ((await status()) !== "ready") return { status: await status(), wasm };
    const buffer = Buffer.from(pseudoRandomBytes(size, seed));
    await page.setInputFiles("#file", { name, mimeType: "application/octet-stream", buffer });
    await page.waitForFunction(() => /^(done|failed)/.test(document.getElementById("status").textContent), null, { timeout: WAIT });
    return { status: await status(), wasm };
  } finally {
    await page.close();
  }
}

async function assertUploads(path, name, query, origin) {
  const size = 3 * MiB + 123;
  const out = await uploadFrom(path, name, size, name.length, query, origin);
  assert.match(out.status, new RegExp(`^done 20[01] ${name}$`));
  const stored = await ref.download(name);
  assert.ok(stored.equals(Buffer.from(pseudoRandomBytes(size, name.length))), `the stored bytes of ${name} differ`);
  return out;
}

test("npm pack: the package holds the scripts, types, wasm, README and licences, and nothing else", async () => {
  const { files } = await pack;
  assert.deepEqual(files, PACKAGE_FILES);
});

/** The commands of the fenced block under the heading `heading` of a markdown file. */
function installCommands(file, heading) {
  const text = readFileSync(join(REPO_ROOT, file), "utf8");
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `${file} has no "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  assert.ok(block, `${file}: no sh block under "${heading}"`);
  return block.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()).filter(Boolean);
}

test("the install commands of README.md and web/js/README.md, as written, install the package into an empty folder", async () => {
  const root = installCommands("README.md", "## Install");
  const npmPage = installCommands("web/js/README.md", "## Install");
  assert.deepEqual(npmPage, root, "the two READMEs give the same commands");
  // The build is ./build.sh's (this test runs on what it wrote); the rest runs as written, in
  // a new folder, the repository's path put where the commands say /path/to/mediaupload.
  assert.equal(root[0], "./build.sh", `the commands start with the build: ${root}`);
  const installs = root.slice(1);
  assert.ok(installs.length > 0 && installs.every((c) => c.startsWith("npm install ") && c.includes(DOCUMENTED_TARBALL)), `install commands: ${installs}`);
  const app = mkdtempSync(join(tmp, "app-"));
  for (const command of installs) {
    const [cmd, ...args] = command.replace(DOCUMENTED_TARBALL, TARBALL).split(/\s+/);
    await run(cmd, [...args, "--no-audit", "--no-fund"], { cwd: app }).catch((err) => assert.fail(`${command}: ${err.stderr || err.message}`));
  }
  const installed = join(app, "node_modules/mediaupload");
  assert.equal(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).name, "mediaupload");
  assert.deepEqual(readdirSync(installed).sort(), PACKAGE_FILES, "what the install put in node_modules/mediaupload");
  // Resolved as an app's import resolves it: the ES module and its wasm.
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e",
    "const m = await import('mediaupload'); console.log(typeof m.load, import.meta.resolve('mediaupload/mediaupload.wasm'))"], { cwd: app });
  const [load, wasm] = stdout.trim().split(" ");
  assert.equal(load, "function");
  assert.ok(readFileSync(new URL(wasm)).equals(readFileSync(join(DIST_DIR, "mediaupload.wasm"))), "the installed wasm is the build's");
});

test("vite: the built app finds the wasm it emitted, and uploads", async () => {
  await built.vite;
  const { wasm } = await assertUploads("/vite/", "vite.bin");
  assert.equal(wasm.length, 1);
  assert.match(wasm[0], /^\/vite\/assets\/mediaupload-[\w-]+\.wasm$/, "the wasm Vite emitted, with a hashed name");
});

test("vite: load({ wasmURL }) overrides where the wasm is", async () => {
  await built.vite;
  web.route("/elsewhere/", (req, res) => {
    res.writeHead(200, { "Content-Type": "application/wasm" });
    res.end(readFileSync(join(DIST_DIR, "mediaupload.wasm")));
  });
  const { wasm } = await assertUploads("/vite/", "vite-wasmurl.bin", { wasmURL: "/elsewhere/mu.wasm" });
  assert.deepEqual(wasm, ["/elsewhere/mu.wasm"]);
});

test("vite: the dev server serves the app, and it uploads", async () => {
  const dist = await built.vite;
  const port = await freePort();
  const vite = spawned(spawn(process.execPath, ["node_modules/vite/bin/vite.js", "--host", "127.0.0.1", "--port", port, "--strictPort"], {
    cwd: join(dist, ".."),
    stdio: ["ignore", "pipe", "pipe"],
    // Vite colours its output where CI is set (as CI machines do), bolding the port in the URL.
    env: { ...process.env, NO_COLOR: "1" },
  }));
  let output = "";
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`vite did not start within 60 s\n${output}`)), 60_000);
      const seen = (d) => {
        output += d;
        if (output.replace(/\x1b\[[0-9;]*m/g, "").includes(`127.0.0.1:${port}`)) clearTimeout(timer), resolve();
      };
      vite.stdout.on("data", seen);
      vite.stderr.on("data", seen);
      vite.once("exit", (code) => (clearTimeout(timer), reject(new Error(`vite exited (${code})\n${output}`))));
    });
    const { wasm } = await assertUploads("/", "vite-dev.bin", {}, `http://127.0.0.1:${port}`);
    assert.ok(wasm.includes("/node_modules/mediaupload/mediaupload.wasm"), `the package's own wasm, not ${wasm}`);
  } catch (err) {
    err.message += `\nvite's output:\n${output}`;
    throw err;
  } finally {
    vite.kill();
  }
});

test("webpack: the built app finds the wasm it emitted, and uploads", async () => {
  await built.webpack;
  const { wasm } = await assertUploads("/webpack/", "webpack.bin");
  assert.equal(wasm.length, 1);
  assert.match(wasm[0], /^\/webpack\/[0-9a-f]+\.wasm$/, "the wasm webpack emitted, with a hashed name");
});

test("esbuild: the wasm imported with --loader:.wasm=file and passed as wasmURL; types check; uploads", async () => {
  const dist = await built.esbuild;
  // The app is TypeScript: its imports are typed by the package's "types" and "exports".
  await run(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", join(dist, "..")]).catch((err) =>
    assert.fail(`tsc over the esbuild app:\n${err.stdout}${err.stderr}`),
  );
  const { wasm } = await assertUploads("/esbuild/", "esbuild.bin");
  assert.equal(wasm.length, 1);
  assert.match(wasm[0], /^\/esbuild\/mediaupload-\w+\.wasm$/, "the wasm esbuild emitted, with a hashed name");
});

test("esbuild: the wasm copied beside a classic-script bundle; without it, load() says where it looked", async () => {
  const dist = await built.esbuild;
  const { wasm } = await assertUploads("/esbuild/copy/", "esbuild-copy.bin");
  assert.deepEqual(wasm, ["/esbuild/copy/mediaupload.wasm"]);

  rmSync(join(dist, "copy/mediaupload.wasm"));
  const out = await uploadFrom("/esbuild/copy/", "never.bin", 1, 1);
  assert.equal(
    out.status,
    `load failed: mediaupload: mediaupload.wasm not found at ${web.url}/esbuild/copy/mediaupload.wasm (HTTP 404): ` +
      "serve it beside mediaupload.js (a bundler that does not copy it needs a step of its own: see the package's README) " +
      "or pass load({ wasmURL })",
  );
});

test("load() says so when the server answers with a page instead of the wasm", async () => {
  await built.vite;
  web.route("/spa/", (req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<!doctype html><title>an app's fallback page</title>");
  });
  const out = await uploadFrom("/vite/", "never.bin", 1, 1, { wasmURL: "/spa/mediaupload.wasm" });
  assert.match(
    out.status,
    new RegExp(`^load failed: mediaupload: ${web.url}/spa/mediaupload.wasm is not mediaupload.wasm \\(the server sent text/html`),
  );
  assert.match(out.status, /: check the wasmURL passed to load\(\)$/);
});

test("plain <script>: mediaupload.classic.js of the installed package", async () => {
  const dist = await built.esbuild;
  web.dir("/pkg/", join(dist, "../node_modules/mediaupload"));
  web.page(
    "/script/index.html",
    `<!doctype html><meta charset="utf-8"><title>mediaupload from a plain script</title>
    <input type="file" id="file"><output id="status">loading</output>
    <script src="/pkg/mediaupload.classic.js"></script>
    <script type="module">import { uploadPage } from "/app/page.js"; uploadPage(MediaUpload.load);</script>`,
  );
  const { wasm } = await assertUploads("/script/index.html", "script.bin");
  assert.deepEqual(wasm, ["/pkg/mediaupload.wasm"]);
});
