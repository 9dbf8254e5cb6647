import { fileURLToPath } from "node:url";

// Nothing for mediaupload but the last line: webpack emits the wasm by itself.
export default {
  mode: "production",
  context: fileURLToPath(new URL(".", import.meta.url)),
  entry: "./main.js",
  output: { path: fileURLToPath(new URL("dist", import.meta.url)), clean: true },
  // The 2.3 MiB wasm is fetched by load(), not part of the bundle: no size warning for it.
  performance: { assetFilter: (file) => !file.endsWith(".wasm") },
};
