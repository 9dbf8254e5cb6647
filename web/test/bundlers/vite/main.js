// Vite finds mediaupload.wasm by itself (new URL(..., import.meta.url) in mediaupload.js) and
// emits it under assets/ with a hashed name: nothing to configure.
import { load } from "mediaupload";
import { uploadPage } from "../page.js";

uploadPage(load);
