#!/usr/bin/env node
// Writes FILE.br (brotli, quality 11) and FILE.gz (gzip, level 9) beside FILE, for servers that
// send precompressed files (nginx gzip_static/brotli_static, Caddy's precompressed, the demo
// server). Called by ./build.sh for dist/mediaupload.wasm:
//
//   node web/js/compress.mjs FILE
//
// Node's own zlib does both, so no brotli or zopfli program is needed. Brotli at quality 11
// takes seconds for the wasm, so the results are kept in node_modules/.cache/, keyed by the
// file's SHA-256 (a rebuild that leaves the wasm as it was costs nothing).

import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: node web/js/compress.mjs FILE");
  process.exit(2);
}
const cache = fileURLToPath(new URL("../../node_modules/.cache/mediaupload-compress/", import.meta.url));
const bytes = readFileSync(file);
const key = createHash("sha256").update(bytes).digest("hex");

const encodings = {
  br: () =>
    promisify(brotliCompress)(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gz: () => promisify(gzip)(bytes, { level: 9 }),
};

mkdirSync(cache, { recursive: true });
await Promise.all(
  Object.entries(encodings).map(async ([ext, compress]) => {
    const kept = join(cache, `${key}.${ext}`);
    if (!existsSync(kept)) {
      writeFileSync(`${kept}.tmp`, await compress());
      renameSync(`${kept}.tmp`, kept);
    }
    copyFileSync(kept, `${file}.${ext}`);
  }),
);
// Keep only this file's results: the cache would otherwise grow with every change of the wasm.
for (const name of readdirSync(cache)) if (!name.startsWith(key)) rmSync(join(cache, name), { force: true });
