#!/usr/bin/env node
// Generates the classic-script build of the loader from the ES module, so that there is one
// source of truth:
//
//   node web/tools/build-classic.mjs web/mediaupload.js dist/mediaupload.classic.js
//
// The module is wrapped in an IIFE that defines globalThis.MediaUpload = { load,
// MediaUploadError } (window.MediaUpload on a page). A classic script has no import.meta.url,
// so the base URL that mediaupload.wasm and wasm_exec.js are found beside becomes the script's
// own URL, document.currentScript.src, captured while the script is evaluated (it is null
// later), else the page's or worker's location. The module must follow the rules written at
// its top; this script fails rather than emit a build that differs from it in meaning.

import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

const EXPORTS = ["load", "MediaUploadError"];

export function buildClassic(source, sourceName = "mediaupload.js") {
  if (/^\s*import[\s{*]/m.test(source)) throw new Error(`${sourceName}: import statements cannot be wrapped`);
  const exported = [];
  let body = source.replace(/^export (async function|function|class|const|let) (\w+)/gm, (_, kind, name) => {
    exported.push(name);
    return `${kind} ${name}`;
  });
  if (/^\s*export\b/m.test(body)) throw new Error(`${sourceName}: an export form this script does not know`);
  if (exported.sort().join() !== [...EXPORTS].sort().join()) {
    throw new Error(`${sourceName}: exports ${exported.join(", ")}, want ${EXPORTS.join(", ")}`);
  }
  // Code only: the comments that mention import.meta.url stay as they are.
  body = body.replace(/^(?!\s*\/\/)(.*)$/gm, (line) => line.replaceAll("import.meta.url", "scriptURL"));
  if (/^(?!\s*\/\/).*import\.meta/m.test(body)) {
    throw new Error(`${sourceName}: import.meta other than import.meta.url`);
  }

  const indented = body.trimEnd().replace(/^(?=.)/gm, "  ");
  return `// Generated from ${sourceName} by web/tools/build-classic.mjs; do not edit.
// The classic-script build: defines globalThis.MediaUpload = { load, MediaUploadError }.
(() => {
  "use strict";
  const scriptURL =
    (typeof document !== "undefined" && document.currentScript && document.currentScript.src) ||
    globalThis.location.href;

${indented}

  globalThis.MediaUpload = Object.freeze({ ${EXPORTS.join(", ")} });
})();
`;
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error("usage: node web/tools/build-classic.mjs web/mediaupload.js dist/mediaupload.classic.js");
    process.exit(2);
  }
  writeFileSync(output, buildClassic(readFileSync(input, "utf8"), basename(input)));
}
