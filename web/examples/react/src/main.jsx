// The example's entry: where to upload, then the app, in StrictMode (which, in a development
// build, renders twice and runs every effect twice: the hooks start no second load and no
// second upload for it).
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.jsx";

const params = new URLSearchParams(location.search);

// The bucket's upload URI, without a name (the file's name goes in the metadata): the page's
// ?upload= (the tests point it at their reference server), else the reference server of
// ./build.sh serve (its /api/config), or null when there is none.
async function uploadURL() {
  if (params.get("upload")) return params.get("upload");
  try {
    const config = await (await fetch("/api/config")).json();
    return new URL(config.targets.ref.upload, location.href).href;
  } catch {
    return null;
  }
}

// What every upload gets besides: ?chunk=N fixes the chunk size (the tests use small chunks).
const extra = params.get("chunk") ? { chunkSize: Number(params.get("chunk")) } : {};

createRoot(document.getElementById("root")).render(
  <StrictMode>
    <App url={await uploadURL()} extra={extra} />
  </StrictMode>,
);
