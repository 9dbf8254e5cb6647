// esbuild does not look inside new URL(..., import.meta.url), so it does not emit the wasm by
// itself. Importing the file does: with --loader:.wasm=file, esbuild copies mediaupload.wasm
// beside the bundle (with a hashed name) and the import is its URL (typed as a string by the
// package). TypeScript, so that the test also checks the package's types as an app sees them.
import { load } from "mediaupload";
import wasmURL from "mediaupload/mediaupload.wasm";
import { uploadPage } from "../page.js";

uploadPage((options?: { wasmURL?: string }) => load({ wasmURL, ...options }));
