// Nothing for mediaupload: Vite finds and emits the wasm by itself, in `vite build` and in the
// dev server (whose pre-bundled copy of mediaupload.js points back at the package's wasm).
export default {
  base: "./", // the test serves the built app under /vite/, not at the root
};
