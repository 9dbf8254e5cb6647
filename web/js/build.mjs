#!/usr/bin/env node
// Builds the JS half of dist/ with esbuild (called by ./build.sh):
//
//   node web/js/build.mjs DIST_DIR WASM_EXEC_JS
//
//   DIST/mediaupload.js          ES module (load, MediaUploadError), Go's glue inside
//   DIST/mediaupload.classic.js  the same for a plain <script>: window.MediaUpload
//   DIST/mediaupload.worker.js   the Worker of worker mode (load({ worker: true }))
//   DIST/uppy.js, uppy.d.ts      the Uppy uploader plugin ("mediaupload/uppy")
//   DIST/react.js, react.d.ts    the React hooks ("mediaupload/react")
//   DIST/mediaupload.d.ts        the types, as written (web/js/mediaupload.d.ts)
//   DIST/mediaupload.wasm.d.ts   the type of `import url from "mediaupload/mediaupload.wasm"`
//   DIST/package.json            the npm manifest (web/js/package.json)
//   DIST/README.md               what npm shows (web/js/README.md)
//   DIST/LICENSE, THIRD_PARTY_NOTICES  the licences (the repository's root)
//
// and prints each script's size, raw and gzipped. WASM_EXEC_JS is the wasm_exec.js of the Go
// toolchain that built mediaupload.wasm: the two must match, so it is bundled, not fetched,
// with short ASCII strings taking a faster way through it (glue-strings.mjs).

import { build } from "esbuild";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { patchGlue } from "./glue-strings.mjs";

const [dist, wasmExec] = process.argv.slice(2);
if (!dist || !wasmExec) {
  console.error("usage: node web/js/build.mjs DIST_DIR WASM_EXEC_JS");
  process.exit(2);
}
const here = fileURLToPath(new URL(".", import.meta.url));

// "go:wasm_exec" is Go's glue as a module whose default export runs it (src/engine/go-runtime.js).
const goGlue = {
  name: "go-wasm-exec",
  setup(b) {
    b.onResolve({ filter: /^go:wasm_exec$/ }, () => ({ path: wasmExec, namespace: "go-glue" }));
    b.onLoad({ filter: /.*/, namespace: "go-glue" }, ({ path }) => ({
      contents: `export default function defineGo() {\n${patchGlue(readFileSync(path, "utf8"))}\n}\n`,
      loader: "js",
    }));
  },
};

const banner = `/*! mediaupload — MIT licence. Includes wasm_exec.js of Go (BSD-3-Clause, Copyright The Go Authors) and hash-wasm (MIT, Copyright Dani Biró): THIRD_PARTY_NOTICES. */`;
const common = {
  entryPoints: [join(here, "src/index.js")],
  bundle: true,
  minify: true,
  sourcemap: "linked",
  target: "es2022",
  plugins: [goGlue],
  banner: { js: banner },
  logLevel: "warning",
};

await build({
  ...common,
  format: "esm",
  outfile: join(dist, "mediaupload.js"),
});
await build({
  ...common,
  format: "iife",
  globalName: "MediaUpload",
  outfile: join(dist, "mediaupload.classic.js"),
  // The classic build takes its base URL from document.currentScript (src/engine/wasm.js).
  logOverride: { "empty-import-meta": "silent" },
});
// Worker mode's Worker (load({ worker: true })): the module and Go's glue, in a module worker.
await build({
  ...common,
  entryPoints: [join(here, "src/engine/worker.js")],
  format: "esm",
  outfile: join(dist, "mediaupload.worker.js"),
});
// The Uppy plugin: a module of its own (Uppy is the page's, never bundled).
await build({
  ...common,
  entryPoints: [join(here, "src/uppy.js")],
  plugins: [],
  banner: { js: "/*! mediaupload — MIT licence. */" },
  format: "esm",
  outfile: join(dist, "uppy.js"),
});
// The React hooks: a module of their own. React is the page's (external), and so is the module
// itself: src/react.js's "./index.js" is dist/mediaupload.js beside it, not a second copy
// bundled in (load() gives one module per page only if there is one mediaupload.js).
const besideModule = {
  name: "beside-module",
  setup(b) {
    b.onResolve({ filter: /^\.\/index\.js$/ }, () => ({ path: "./mediaupload.js", external: true }));
  },
};
await build({
  ...common,
  entryPoints: [join(here, "src/react.js")],
  plugins: [besideModule],
  external: ["react"],
  banner: { js: "/*! mediaupload — MIT licence. */" },
  format: "esm",
  outfile: join(dist, "react.js"),
});
copyFileSync(join(here, "mediaupload.d.ts"), join(dist, "mediaupload.d.ts"));
copyFileSync(join(here, "uppy.d.ts"), join(dist, "uppy.d.ts"));
copyFileSync(join(here, "react.d.ts"), join(dist, "react.d.ts"));
copyFileSync(join(here, "mediaupload.wasm.d.ts"), join(dist, "mediaupload.wasm.d.ts"));
copyFileSync(join(here, "package.json"), join(dist, "package.json"));
copyFileSync(join(here, "README.md"), join(dist, "README.md"));
for (const name of ["LICENSE", "THIRD_PARTY_NOTICES"]) copyFileSync(join(here, "../..", name), join(dist, name));

for (const name of ["mediaupload.js", "mediaupload.classic.js", "mediaupload.worker.js", "uppy.js", "react.js"]) {
  const bytes = readFileSync(join(dist, name));
  console.log(`js size: ${name} ${bytes.length} bytes raw, ${gzipSync(bytes, { level: 9 }).length} bytes gzip -9`);
}
