// Go's glue as the module bundles it (web/js/glue-strings.mjs: short ASCII strings without
// TextEncoder or TextDecoder): strings of every kind taken through it both ways by a Go program
// (web/test/glue/main.go) run in Node, and compared with what went in; and the build's refusal
// of a glue it cannot patch.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { patchGlue, SHORT } from "../js/glue-strings.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const goEnv = (name) => execFileSync("go", ["env", name], { encoding: "utf8" }).trim();
const glueText = () => readFileSync(join(goEnv("GOROOT"), "lib/wasm/wasm_exec.js"), "utf8");

const ascii = (n) => Array.from({ length: n }, (_, i) => String.fromCharCode(32 + (i % 95))).join("");
const CASES = [
  "",
  "a",
  "status",
  "x-http-status-code-override",
  ascii(SHORT - 1),
  ascii(SHORT),
  ascii(SHORT + 1),
  ascii(1000),
  "a\u0000b\u007f", // NUL and DEL: ASCII still
  "é",
  "caf\u00e9",
  `${ascii(SHORT - 1)}é`, // the first non-ASCII at the end of a short string
  "日本語のファイル名.txt",
  "emoji \u{1f600} in a name",
  "\u0080",
];

test("strings of every kind go through the bundled glue both ways unchanged", async () => {
  const dir = mkdtempSync(join(tmpdir(), "glue-"));
  try {
    const wasm = join(dir, "glue.wasm");
    execFileSync("go", ["build", "-o", wasm, "."], { cwd: join(here, "glue"), env: { ...process.env, GOOS: "js", GOARCH: "wasm" } });
    // The patched glue defines globalThis.Go, as the bundle's defineGo does.
    new Function(patchGlue(glueText()))();
    const go = new globalThis.Go();
    globalThis.glueCases = CASES;
    const done = new Promise((resolve) => (globalThis.glueDone = resolve));
    const { instance } = await WebAssembly.instantiate(readFileSync(wasm), go.importObject);
    const ran = go.run(instance);
    const out = await done;
    await ran;
    CASES.forEach((s, i) => {
      const what = `case ${i} (${JSON.stringify(s.slice(0, 40))}, ${s.length} units)`;
      assert.equal(out.bytes[i], Buffer.byteLength(s, "utf8"), `${what}: Go's bytes (-1: not UTF-8, -2: Get by its name failed)`);
      assert.equal(out.back[i], s, `${what}: back from Go`);
      assert.equal(out.named[s], i, `${what}: set by Go as a name`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    delete globalThis.Go;
    delete globalThis.glueCases;
    delete globalThis.glueDone;
  }
});

test("a glue the patch does not fit fails the build, naming the line", () => {
  const text = glueText();
  assert.doesNotThrow(() => patchGlue(text));
  const changed = text.replace("loadSlice(sp + 16).set(str);", "loadSlice(sp + 16).set(str) ;");
  assert.throws(() => patchGlue(changed), /has 0 lines "loadSlice\(sp \+ 16\)\.set\(str\);"/);
});
