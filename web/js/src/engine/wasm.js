// Finding, fetching and compiling mediaupload.wasm: beside this script unless `wasmURL` says
// otherwise, found the way bundlers understand, and, when it is not there, an error that names
// the URL tried and how to fix it.

// The URL of this script while it runs (document.currentScript is null later, and always in
// an ES module): the base in a classic script, where import.meta is empty. That is the classic
// build, and also an app bundled into a classic script (esbuild's default "iife" format).
const SCRIPT_URL = globalThis.document?.currentScript?.src || globalThis.location?.href || null;

/**
 * The absolute URL of one of the package's files: `given` (the caller's option, e.g. wasmURL)
 * resolved against the page; else `beside()`, which the caller writes as
 * `new URL("./file", import.meta.url)`, the form that Vite and webpack 5 recognise (they emit
 * the file with the app and rewrite the URL to where they put it); else, where import.meta.url
 * is undefined (this code bundled into a classic script), beside the script.
 */
export function packageFileURL(given, option, file, beside) {
  if (given !== undefined && given !== null) {
    return new URL(String(given), globalThis.document?.baseURI ?? globalThis.location?.href).href;
  }
  try {
    return beside().href;
  } catch {
    if (!SCRIPT_URL) throw new Error(`mediaupload: cannot tell where ${file} is: pass load({ ${option} })`);
    return new URL(file, SCRIPT_URL).href;
  }
}

/** The absolute URL of the wasm: `wasmURL` resolved against the page, or beside this script. */
export function wasmURLFor(wasmURL) {
  return packageFileURL(wasmURL, "wasmURL", "mediaupload.wasm", () => new URL("./mediaupload.wasm", import.meta.url));
}

/**
 * Fetches and compiles the wasm at `url` (from wasmURLFor) with Go's imports. `given` says
 * whether the URL came from the caller's `wasmURL`, which changes the advice on failure.
 */
export async function instantiateWasm(url, importObject, given) {
  const fix = given
    ? "check the wasmURL passed to load()"
    : "serve it beside mediaupload.js (a bundler that does not copy it needs a step of its own: see the " +
      "package's README) or pass load({ wasmURL })";
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new Error(`mediaupload: mediaupload.wasm could not be fetched from ${url} (${err?.message ?? err}): ${fix}`, {
      cause: err,
    });
  }
  if (!res.ok) {
    const what = res.status === 404 || res.status === 410 ? "not found at" : "could not be fetched from";
    throw new Error(`mediaupload: mediaupload.wasm ${what} ${url} (HTTP ${res.status}): ${fix}`);
  }
  // instantiateStreaming insists on the application/wasm MIME type; many static servers send
  // something else, so read the bytes in that case rather than fail.
  const type = (res.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/wasm" && WebAssembly.instantiateStreaming) {
    return WebAssembly.instantiateStreaming(res, importObject).catch(refused);
  }
  const bytes = await res.arrayBuffer();
  // A server that answers every unknown path with its index page (a single-page app's
  // fallback) sends HTML with status 200: say so, rather than "expected magic word".
  const head = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  if (String.fromCharCode(...head) !== "\0asm") {
    throw new Error(
      `mediaupload: ${url} is not mediaupload.wasm (the server sent ${type || "a file"} of ${bytes.byteLength} bytes, ` +
        `not WebAssembly; a server that answers unknown paths with a page does that): ${fix}`,
    );
  }
  return WebAssembly.instantiate(bytes, importObject).catch(refused);
}

// A page whose Content-Security-Policy does not let it compile WebAssembly gets a CompileError
// that each engine words its own way (Chromium and WebKit name 'unsafe-eval', Firefox "blocked
// by CSP"); the fix is 'wasm-unsafe-eval' (which allows WebAssembly and nothing else), or
// the default Worker: a Worker runs under the policy its own script is served with, not the page's.
function refused(err) {
  if (err instanceof WebAssembly.CompileError && /content.security.policy|\bCSP\b|unsafe-eval/i.test(String(err.message))) {
    throw new Error(
      "mediaupload: the page's Content-Security-Policy does not allow WebAssembly: add 'wasm-unsafe-eval' to its " +
        "script-src (not 'unsafe-eval', which allows eval too), or call load() without { worker: false }: its Worker runs " +
        `under the policy its own script is served with (${err.message.trim()})`,
      { cause: err },
    );
  }
  throw err;
}
