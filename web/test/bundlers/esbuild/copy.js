// The other way for esbuild: copy node_modules/mediaupload/mediaupload.wasm beside the bundle
// (package.json's build:copy) and call load() as it is. This one is built in esbuild's default
// format, a classic script, where mediaupload finds the wasm through document.currentScript.
import { load } from "mediaupload";
import { uploadPage } from "../page.js";

uploadPage(load);
