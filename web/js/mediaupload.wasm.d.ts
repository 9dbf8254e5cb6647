// `import wasmURL from "mediaupload/mediaupload.wasm"`: the URL of the module's wasm, for a
// bundler that turns an imported file into its URL (esbuild with --loader:.wasm=file), to be
// passed as load({ wasmURL }). See README.md, "Bundlers".
declare const wasmURL: string;
export default wasmURL;
