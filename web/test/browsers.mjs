// The three browser engines the module is tested in, behind one small interface, so that a test
// written once runs in each (docs/protocol.md section 6 says what they differ in):
//
//   chromium  Debian's /usr/bin/chromium, driven by playwright-core (CDP), headless
//   firefox   Debian's /usr/bin/firefox-esr, driven by puppeteer-core over WebDriver BiDi, headless
//   webkit    Debian's WebKitGTK MiniBrowser, driven by its WebKitWebDriver (classic WebDriver,
//             selenium-webdriver); MiniBrowser has no headless mode, so it runs under an Xvfb
//             of its own
//
//   const browser = await launchEngine("firefox");
//   const page = await browser.newPage(url);
//   const out = await page.evaluate((arg) => …, arg);   // arg and result: JSON values
//   await browser.close();
//
// A page offers what the tests need and every driver can do: evaluate, waitForFunction, goto,
// reload, setInputFiles, screenshot, errors (uncaught errors and console.error calls seen so
// far), close. Values cross as JSON in every engine (undefined fields are dropped), so a test
// sees the same thing whichever engine ran it. `page.raw` is the driver's own page object, for
// what only one engine can do (Chromium's CDP, say); a test that uses it says so.
//
// Page errors: Chromium and Firefox report them to the driver. Classic WebDriver has no such
// channel, so pages that need them checked in WebKit load /test/errors.js first (the harness's
// pages do; ERRORS_HOOK is its text): it keeps what a page's scripts throw or log as errors in
// window.__muErrors, which errors() reads in every engine.
//
// HTTPS (test-only): launchEngine(engine, { trust: { spki } }) trusts the reference server's
// certificate, made at its start (web/refserver/tls.go): Chromium that one key alone
// (--ignore-certificate-errors-spki-list, the certificate is then as good as a real one),
// Firefox and WebKit any certificate (WebDriver's acceptInsecureCerts: neither has a flag for
// one key). Without `trust`, every engine checks certificates as it ships.
//
// Environment: MEDIAUPLOAD_ENGINES (a comma-separated subset, default all three),
// CHROMIUM, FIREFOX, WEBKIT_BROWSER (the binaries), MEDIAUPLOAD_TEST_VERBOSE=1 to echo the pages'
// console where the driver reports it.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ENGINES = ["chromium", "firefox", "webkit"];

/** The engines to test: MEDIAUPLOAD_ENGINES, or all three. */
export function enginesUnderTest() {
  const want = (process.env.MEDIAUPLOAD_ENGINES ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (!want.length) return [...ENGINES];
  for (const e of want) if (!ENGINES.includes(e)) throw new Error(`MEDIAUPLOAD_ENGINES: unknown engine ${e} (one of ${ENGINES})`);
  return want;
}

const VERBOSE = !!process.env.MEDIAUPLOAD_TEST_VERBOSE;

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/**
 * The flags that make Chromium trust one test certificate, by the base64 SHA-256 of its public
 * key (the reference server's "spki"): that key is then as good as a publicly trusted one, so
 * HTTPS, HTTP/2 and what depends on them behave as on a real site. Chromium honours the flag
 * only with a profile folder of its own (--user-data-dir), which every launch here has.
 */
export function chromiumTrustArgs(trust) {
  return trust?.spki ? [`--ignore-certificate-errors-spki-list=${trust.spki}`] : [];
}

export const WEBKIT_BROWSER = process.env.WEBKIT_BROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

/** The script pages load first so that errors() sees their errors in every engine. */
export const ERRORS_HOOK = `(() => {
  if (window.__muErrors) return;
  const errors = (window.__muErrors = []);
  const text = (v) => (v instanceof Error ? v.name + ": " + v.message : typeof v === "string" ? v : (() => { try { return JSON.stringify(v); } catch { return String(v); } })());
  addEventListener("error", (e) => errors.push(e.error ? text(e.error) : e.target && e.target !== window ? "failed to load " + (e.target.src || e.target.href) : String(e.message)), true);
  addEventListener("unhandledrejection", (e) => errors.push("unhandled rejection: " + text(e.reason)));
  const error = console.error.bind(console);
  console.error = (...args) => { errors.push(args.map(text).join(" ")); error(...args); };
})();`;

/**
 * Launches `engine` with a fresh profile and resolves to { engine, version, newPage(url), close() }.
 * newPage opens a page (at url, if given) and resolves to a Page (see the file's comment).
 * trust: { spki } trusts a test server's self-signed certificate (see the file's comment).
 */
export async function launchEngine(engine, { trust } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `mediaupload-${engine}-`));
  const tmp = join(dir, "tmp");
  mkdirSync(tmp);
  try {
    const b = await { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit }[engine](dir, tmp, trust);
    return {
      engine,
      version: b.version,
      newPage: b.newPage,
      raw: b.raw,
      async close() {
        try {
          await b.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${engine} did not start: ${err?.message ?? err}`, { cause: err });
  }
}

// An expression that runs fn(arg) in the page and gives its result as JSON text: the same
// values cross in every engine, and no driver's own serialization shows through.
function evaluation(fn, arg) {
  return `(async () => { const v = await (${fn})(${arg === undefined ? "" : JSON.stringify(arg)}); return v === undefined ? "__undefined__" : JSON.stringify(v); })()`;
}
const fromJSON = (text) => (text === "__undefined__" || text === undefined || text === null ? undefined : JSON.parse(text));

// An expression that polls fn(arg) in the page until it is truthy, or throws after ms.
function polling(fn, arg, ms) {
  return `(async () => { const f = (${fn}); const end = performance.now() + ${ms};
    for (;;) { const v = await f(${arg === undefined ? "" : JSON.stringify(arg)}); if (v) return JSON.stringify(v);
      if (performance.now() > end) throw new Error("waitForFunction: timed out after ${ms} ms");
      await new Promise((r) => setTimeout(r, 20)); } })()`;
}

// The part of a Page that is the same for every driver: exec(expression) runs an async
// expression and resolves to its value (a string, from evaluation/polling).
function page(driver) {
  return {
    raw: driver.raw,
    evaluate: async (fn, arg) => fromJSON(await driver.exec(evaluation(fn, arg))),
    waitForFunction: async (fn, arg, { timeout = 30_000 } = {}) => fromJSON(await driver.exec(polling(fn, arg, timeout))),
    goto: (url) => driver.goto(url),
    reload: () => driver.reload(),
    url: () => driver.url(),
    setInputFiles: (selector, paths) => driver.setInputFiles(selector, [paths].flat()),
    screenshot: (path) => driver.screenshot(path),
    /** Uncaught errors and console.error calls seen so far (driver reports + window.__muErrors). */
    async errors() {
      let inPage = [];
      try {
        inPage = fromJSON(await driver.exec(evaluation(() => window.__muErrors ?? [], undefined))) ?? [];
      } catch {}
      return [...new Set([...driver.errors, ...inPage])];
    },
    close: () => driver.close(),
  };
}

// --- Chromium: playwright-core --------------------------------------------------------------

async function launchChromium(dir, tmp, trust) {
  const { chromium } = await import("playwright-core");
  const context = await chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [...CHROMIUM_ARGS, ...chromiumTrustArgs(trust)],
    env: { ...process.env, TMPDIR: tmp },
  });
  return {
    version: `Chromium ${context.browser()?.version() ?? (await chromiumVersion(context))}`,
    raw: context,
    newPage: (url) => devtoolsPage(context.newPage(), "chromium", url, (p, sel, paths) => p.setInputFiles(sel, paths)),
    close: () => context.close(),
  };
}

async function chromiumVersion(context) {
  const p = await context.newPage();
  try {
    return (await p.evaluate(() => navigator.userAgent)).match(/Chrome\/([\d.]+)/)?.[1] ?? "?";
  } finally {
    await p.close();
  }
}

// A page of playwright's or puppeteer's, whose APIs agree on what is used here but for setting
// a file input's files.
async function devtoolsPage(opening, engine, url, setInputFiles) {
  const p = await opening;
  const errors = [];
  p.on("pageerror", (err) => errors.push(err.message.startsWith(err.name) ? err.message : `${err.name}: ${err.message}`));
  p.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
    if (VERBOSE) process.stderr.write(`[${engine} console.${m.type()}] ${m.text()}\n`);
  });
  const out = page({
    raw: p,
    errors,
    exec: (expr) => p.evaluate(expr),
    goto: (u) => p.goto(u).then(() => {}),
    reload: () => p.reload().then(() => {}),
    url: () => p.url(),
    setInputFiles: (sel, paths) => setInputFiles(p, sel, paths),
    screenshot: (path) => p.screenshot({ path }).then(() => {}),
    close: () => p.close(),
  });
  if (url) await out.goto(url);
  return out;
}

// --- Firefox: puppeteer-core over WebDriver BiDi -----------------------------------------------

async function launchFirefox(dir, tmp, trust) {
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({
    browser: "firefox",
    // A test server's self-signed certificate: WebDriver BiDi's acceptInsecureCerts (the
    // session's, for every certificate; Firefox has no flag for one key).
    ...(trust ? { acceptInsecureCerts: true } : {}),
    executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
    headless: true,
    userDataDir: join(dir, "profile"),
    env: { ...process.env, TMPDIR: tmp, MOZ_CRASHREPORTER_DISABLE: "1" },
    // No network but the tests' own: Firefox's background services would reach for the
    // internet, which this machine does not have.
    extraPrefsFirefox: {
      "network.captive-portal-service.enabled": false,
      "network.connectivity-service.enabled": false,
      "browser.safebrowsing.update.enabled": false,
      "app.update.enabled": false,
      "datareporting.policy.dataSubmissionEnabled": false,
      "toolkit.telemetry.enabled": false,
    },
  });
  return {
    version: `Firefox ${(await browser.version()).replace(/^firefox\//i, "")}`,
    raw: browser,
    newPage: (url) =>
      devtoolsPage(browser.newPage(), "firefox", url, async (p, sel, paths) => {
        const input = await p.$(sel);
        if (!input) throw new Error(`no element ${sel}`);
        await input.uploadFile(...paths);
      }),
    close: () => browser.close(),
  };
}

// --- WebKit: WebKitWebDriver and MiniBrowser under Xvfb ----------------------------------------

async function launchWebKit(dir, tmp, trust) {
  const display = await startXvfb();
  const port = await freePort();
  const env = { ...process.env, DISPLAY: display.name, TMPDIR: tmp };
  const driver = spawn("WebKitWebDriver", [`--port=${port}`, "--host=127.0.0.1"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let driverLog = "";
  driver.stderr.on("data", (d) => (driverLog += d));
  const stop = () => {
    driver.kill("SIGKILL");
    display.stop();
  };
  try {
    const server = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${server}/status`)).ok, 15_000, `WebKitWebDriver on ${server} (${driverLog})`);
    const { Builder, By } = await import("selenium-webdriver");
    const d = await new Builder()
      .usingServer(server)
      .withCapabilities({
        browserName: "MiniBrowser",
        "webkitgtk:browserOptions": { binary: WEBKIT_BROWSER, args: ["--automation"] },
        // A test server's self-signed certificate: WebKitWebDriver turns TLS errors off for
        // the automation session (WebKit has no flag for one key).
        ...(trust ? { acceptInsecureCerts: true } : {}),
      })
      .build();
    await d.manage().setTimeouts({ script: 600_000, pageLoad: 60_000 });
    const caps = await d.getCapabilities();
    const version = `WebKitGTK ${caps.get("browserVersion")}`;
    // Classic WebDriver drives one window here; every page after the first is a new window.
    let windows = 0;
    return {
      version,
      raw: d,
      async newPage(url) {
        let handle;
        if (windows++ === 0) handle = await d.getWindowHandle();
        else {
          await d.switchTo().newWindow("tab");
          handle = await d.getWindowHandle();
        }
        const use = () => d.switchTo().window(handle);
        const exec = async (expr) => {
          await use();
          const r = await d.executeAsyncScript(
            `const done = arguments[arguments.length - 1];
             Promise.resolve().then(() => ${expr}).then((v) => done({ v }), (e) => done({ e: String(e && e.stack ? e.name + ": " + e.message + "\\n" + e.stack : e) }));`,
          );
          if (r && "e" in r) throw new Error(r.e);
          return r?.v;
        };
        const out = page({
          raw: d,
          errors: [],
          exec,
          goto: async (u) => {
            await use();
            await d.get(u);
          },
          reload: async () => {
            await use();
            await d.navigate().refresh();
          },
          url: async () => {
            await use();
            return d.getCurrentUrl();
          },
          async setInputFiles(sel, paths) {
            await use();
            await (await d.findElement(By.css(sel))).sendKeys(paths.join("\n"));
          },
          async screenshot(path) {
            await use();
            writeFileSync(path, Buffer.from(await d.takeScreenshot(), "base64"));
          },
          async close() {
            if (windows <= 1) return void (windows = 0); // the first window stays: closing it ends the session
            await use();
            await d.close();
            windows--;
            const rest = await d.getAllWindowHandles();
            if (rest.length) await d.switchTo().window(rest[0]);
          },
        });
        if (url) await out.goto(url);
        return out;
      },
      async close() {
        try {
          await d.quit();
        } catch {}
        stop();
      },
    };
  } catch (err) {
    stop();
    throw err;
  }
}

// An Xvfb on a display number of its own choosing (-displayfd); stop() ends it.
async function startXvfb() {
  const x = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"], {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  let err = "";
  x.stderr.on("data", (d) => (err += d));
  const number = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`Xvfb printed no display in 15 s: ${err}`)), 15_000);
    x.stdio[3].on("data", (d) => {
      out += d;
      if (out.includes("\n")) {
        clearTimeout(timer);
        resolve(out.trim());
      }
    });
    x.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb exited (${code}): ${err}`));
    });
  });
  return { name: `:${number}`, stop: () => x.kill("SIGTERM") };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {}
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A temporary folder for a test's files (removed by the returned function). */
export function scratchDir(prefix = "mediaupload-files-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
