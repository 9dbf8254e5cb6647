// Every code sample of the docs, type-checked by strict tsc against the package's declarations
// (web/js/*.d.ts) and the DOM, as a reader would paste it into a TypeScript project: the fenced
// js, jsx, ts and tsx blocks of README.md, docs/*.md and the npm package's README
// (web/js/README.md), and the <script> elements of their html blocks. Run by
// web/test/types.test.mjs; alone: node web/test/types/samples.mjs (prints what fails).
//
// Each sample is a module of its own (a .ts or .tsx file in a folder made for the run, under
// node_modules/.cache so that React's and Uppy's types resolve as in an app), so that samples
// may declare the same names. What a sample takes from the page around it (a token function,
// an upload URL, a progress bar, the file picked) is declared once in samples-globals.d.ts.
// A fence whose language is not TypeScript's to check (sh, json, nginx, …) is skipped by that
// language; a fence with no language, or one this list does not know, fails: each sample says
// what it is.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const HERE = fileURLToPath(new URL(".", import.meta.url));

/** The markdown files whose samples are checked, relative to the repository. */
export function documents() {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs, "web/js/README.md"];
}

// Fence languages: checked as a .ts or .tsx module, the <script>s of an html page, or skipped.
const CHECKED = { js: ".js", javascript: ".js", mjs: ".js", ts: ".ts", typescript: ".ts", jsx: ".jsx", tsx: ".tsx", html: "html" };
const SKIPPED = new Set(["sh", "bash", "shell", "console", "json", "jsonc", "nginx", "caddyfile", "text", "txt", "yaml", "http", "diff",
  "go", // compiled by web/gcs/readme_test.go
]);

/**
 * The samples of one markdown text: { line, lang, ext, code } each (line: the 1-based line of
 * the code's first line in the file), and the problems found (a fence without a language, or
 * with one not known here).
 */
export function samplesOf(markdown) {
  const lines = markdown.split("\n");
  const samples = [];
  const problems = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, langRaw] = open;
    const lang = langRaw.toLowerCase();
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].trimStart().startsWith(fence); j++) body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    const first = i + 2; // 1-based line of the code's first line
    i = j;
    if (!lang) {
      problems.push(`line ${first - 1}: a fence without a language (name it: js, ts, html, sh, json, …)`);
      continue;
    }
    if (SKIPPED.has(lang)) continue;
    const ext = CHECKED[lang];
    if (!ext) {
      problems.push(`line ${first - 1}: a fence of "${lang}", which web/test/types/samples.mjs neither checks nor skips`);
      continue;
    }
    if (ext !== "html") {
      samples.push({ line: first, lang, ext, code: body.join("\n") });
      continue;
    }
    // An html page: each inline <script> is a sample (an external one, <script src>, is not).
    const text = body.join("\n");
    for (const m of text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      if (/\bsrc\s*=/.test(m[1]) || !m[2].trim()) continue;
      const at = first + text.slice(0, m.index + m[0].indexOf(">") + 1).split("\n").length - 1;
      const code = m[2].startsWith("\n") ? m[2].slice(1) : m[2];
      samples.push({ line: m[2].startsWith("\n") ? at + 1 : at, lang: "html", ext: ".js", code: dedent(code) });
    }
  }
  return { samples, problems };
}

function dedent(code) {
  const lines = code.split("\n");
  const indents = lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)[0].length);
  const n = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(n)).join("\n");
}

/**
 * Writes every sample into a fresh folder with a strict tsconfig and runs tsc over them.
 * Resolves to { status, errors, count, problems }: errors are tsc's, each told at the markdown
 * file and line of the sample's code (README.md:93: error TS18047: …); problems are the
 * fences that say nothing checkable about themselves.
 */
export function checkSamples({ tsc = join(REPO_ROOT, "node_modules/.bin/tsc") } = {}) {
  const cache = join(REPO_ROOT, "node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, "mediaupload-samples-"));
  try {
    const where = new Map(); // file name -> { doc, line }
    const problems = [];
    for (const doc of documents()) {
      const found = samplesOf(readFileSync(join(REPO_ROOT, doc), "utf8"));
      for (const p of found.problems) problems.push(`${doc}: ${p}`);
      for (const s of found.samples) {
        const name = `${doc.replace(/[^\w]+/g, "_")}_L${s.line}${s.ext}`;
        // A module of its own: its names are its own, and top-level await is allowed.
        writeFileSync(join(dir, name), `${s.code}\nexport {};\n`);
        where.set(name, { doc, line: s.line });
      }
    }
    const js = (f) => join(REPO_ROOT, "web/js", f);
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        lib: ["ES2022", "DOM", "DOM.Iterable"],
        jsx: "react-jsx",
        // JavaScript samples are checked as JavaScript: what // @ts-check gives a page's own
        // script (JSDoc casts are JavaScript's way to say what an element is).
        allowJs: true,
        checkJs: true,
        strict: true,
        noEmit: true,
        skipLibCheck: true, // React's and Uppy's own declarations are theirs to check
        types: [],
        noErrorTruncation: true,
        // What the samples import: the package as published (dist/ ships these .d.ts files),
        // by its npm name and by the path README.md serves it from.
        paths: {
          mediaupload: [js("mediaupload.d.ts")],
          "/static/mediaupload/mediaupload.js": [js("mediaupload.d.ts")],
          "mediaupload/uppy": [js("uppy.d.ts")],
          "mediaupload/react": [js("react.d.ts")],
          "mediaupload/mediaupload.wasm": [js("mediaupload.wasm.d.ts")],
        },
      },
      files: [...where.keys(), join(HERE, "samples-globals.d.ts")],
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
    const r = spawnSync(tsc, ["-p", join(dir, "tsconfig.json")], { cwd: dir, encoding: "utf8" });
    if (r.error) throw r.error;
    // tsc says "NAME(LINE,COL): error …": told at the markdown's line instead.
    const errors = (r.stdout + r.stderr)
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => {
        const m = /^(?:.*[\\/])?([^\\/(]+)\((\d+),(\d+)\): (.*)$/.exec(l);
        const at = m && where.get(m[1]);
        return at ? `${at.doc}:${at.line + Number(m[2]) - 1}:${m[3]}: ${m[4]}` : l;
      });
    return { status: r.status, errors, count: where.size, problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { status, errors, count, problems } = checkSamples();
  for (const l of [...problems, ...errors]) console.log(l);
  console.log(`${count} samples of ${documents().join(", ")}: ${status === 0 && !problems.length ? "all pass strict tsc" : "some fail"}`);
  process.exitCode = status === 0 && !problems.length ? 0 : 1;
}

