// Type-checks web/js/mediaupload.d.ts against the usage of docs/api.md:
//   npx tsc --noEmit -p web/test/types      (also run by web/test/types.test.mjs)
// Never run. Each @ts-expect-error line is a misuse the declarations must reject (tsc fails
// if one of them compiles). That the declarations match the JavaScript itself (its members,
// its error codes, where it takes a URL object) is web/test/types.test.mjs's to check.

import {
  load,
  MediaUploadError,
  type ErrorCode,
  type MediaUpload,
  type UploadOptions,
  type RequestInfo,
  type RetryInfo,
  type Upload,
  type UploadProgress,
  type UploadResult,
  type UploadState,
} from "../../js/mediaupload.js";

declare function token(): Promise<string>;
declare const file: File;

async function example(): Promise<void> {
  const mu: MediaUpload = await load();
  await load({ wasmURL: "/static/mediaupload.wasm" });
  // wasmURL and workerURL: a string or a URL (the JS resolves either against the page).
  await load({ wasmURL: new URL("/static/mediaupload.wasm", location.href) });
  await load({ worker: true, workerURL: new URL("./mediaupload.worker.js", import.meta.url) });
  // load() rejects with a MediaUploadError "load_error" when the module cannot load.
  const failed: string = await load({ wasmURL: "/nowhere.wasm" }).then(
    () => "",
    (err: unknown) => (err instanceof MediaUploadError && err.code === "load_error" ? err.message : String(err)),
  );
  void failed;
  const version: string = mu.version;

  const controller = new AbortController();
  const up: Upload = mu.upload(file, {
    url: "https://storage.googleapis.com/upload/storage/v1/b/BUCKET/o?name=photo.png",
    method: "POST",
    uploadType: "resumable",
    metadata: { name: "photo.png" },
    contentType: "image/png",
    chunkSize: 8 * 1024 * 1024,
    headers: { Authorization: "Bearer x" },
    getHeaders: async () => ({ Authorization: "Bearer " + (await token()) }),
    sessionURL: undefined,
    resume: false,
    retry: { retries: 5, initialDelayMs: 1000, maxDelayMs: 32000, jitterMs: 1000 },
    queryStatusEachChunk: false,
    noRedirect308: false,
    checksum: "both",
    signal: controller.signal,
    onProgress(p: UploadProgress) {
      const left: number | null = p.secondsLeft;
      void [p.loaded, p.total, p.lengthComputable, p.confirmed, p.bytesPerSecond, left];
    },
    onRetry(r: RetryInfo) {
      void [r.attempt, r.delayMs, r.status, r.error];
    },
    onStateChange(state: UploadState) {
      void state;
    },
    onRequest(info: RequestInfo) {
      const s: number = info.status;
      void [info.method, info.url, info.contentRange, info.ms, info.error, s];
    },
  });

  up.addEventListener("progress", (e) => {
    const pct: number = e.lengthComputable ? e.loaded / e.total : 0;
    const confirmed: number = e.confirmed;
    const left: number | null = e.secondsLeft;
    void [pct, confirmed, left, e.bytesPerSecond];
  });
  up.addEventListener("load", (e) => {
    const r: UploadResult = e.result;
    void r;
  });
  up.addEventListener("error", (e) => {
    const code: ErrorCode = e.error.code;
    void code;
  });
  up.addEventListener("abort", (e) => void e.error.sessionURL);
  up.addEventListener("retry", (e) => void [e.attempt, e.delayMs, e.status, e.error]);
  up.addEventListener("statechange", (e) => {
    const s: UploadState = e.state;
    void s;
  });
  up.addEventListener("request", (e) => void [e.method, e.url, e.status, e.ms]);
  up.addEventListener("loadend", function (e) {
    const self: Upload = this;
    void [self, e.loaded];
  });
  up.addEventListener("custom-event", (e: Event) => void e);

  // The handler properties, as on XMLHttpRequest.upload.
  up.onprogress = (e) => void [e.loaded, e.total, e.confirmed, e.secondsLeft];
  up.onload = (e) => void e.result.status;
  up.onerror = (e) => void e.error.code;
  up.onabort = null;
  up.onloadstart = up.onloadend = function (e) {
    const self: Upload = this;
    void [self, e.loaded];
  };
  up.onretry = (e) => void e.attempt;
  up.onstatechange = (e) => {
    const s: UploadState = e.state;
    void s;
  };
  // @ts-expect-error a handler is a function or null
  up.onprogress = "x";

  up.pause();
  up.resume();
  up.abort();
  const state: UploadState = up.state;
  const sessionURL: string | null = up.sessionURL;
  void [state, sessionURL, version];

  // The Upload is a thenable.
  const result: UploadResult = await up;
  const r2: UploadResult = await up.promise;
  const status: number = result.status;
  const meta: Record<string, unknown> | null = result.metadata;
  const body: string = result.body;
  const sURL: string | null = result.sessionURL;
  void [r2, status, meta, body, sURL];
  up.then((r) => r.status).catch((e: MediaUploadError) => e.code);
  up.finally(() => {});

  try {
    await mu.upload(new Blob(["x"]), { url: "https://example.com/upload/x", uploadType: "auto" });
  } catch (err) {
    if (err instanceof MediaUploadError) {
      const e: MediaUploadError = err;
      const fields: [ErrorCode, string, number, string, string | null, string, string] = [
        e.code, e.message, e.status, e.responseText, e.sessionURL, e.reason, e.serverMessage,
      ];
      if (e.code === "http_error" && e.reason === "quotaExceeded") console.log(e.serverMessage);
      void fields;
    }
  }
  const made = new MediaUploadError("http_error", "core: 403", {
    status: 403, responseText: "no", reason: "forbidden", serverMessage: "no access",
  });
  void (made instanceof Error);
  const loadCode: ErrorCode = "load_error";
  void loadCode;

  // A session URI you already hold (started by your backend, or from a failed upload's
  // error): sessionURL alone, without url.
  const resumed = mu.upload(file, { sessionURL: "https://storage.googleapis.com/upload/storage/v1/b/B/o?upload_id=x" });
  const resumedAgain = mu.upload(file, { sessionURL: made.sessionURL ?? "", onProgress: (p) => void p.loaded });
  const both: UploadOptions = { url: "/upload/x", sessionURL: "https://example.com/session" };
  void [resumed, resumedAgain, both];

  // The classic build's global.
  const g = globalThis.MediaUpload;
  if (g) void (await g.load()).upload(file, { url: "/upload/x" });

  // @ts-expect-error url (or sessionURL) is required
  mu.upload(file, {});
  // @ts-expect-error one of them, not metadata alone
  mu.upload(file, { metadata: { name: "x" } });
  // A URL object where a URL goes (types.test.mjs fails if the JS and the types ever disagree).
  mu.upload(file, { url: new URL("/upload/x?name=a", location.href) });
  mu.upload(file, { sessionURL: new URL("https://example.com/session") });
  // @ts-expect-error url is a string or a URL
  mu.upload(file, { url: 42 });
  // @ts-expect-error not a load option
  await load({ wasm: "/x.wasm" });
  // @ts-expect-error not an upload type
  mu.upload(file, { url: "/upload/x", uploadType: "simple" });
  // @ts-expect-error chunkSize is a number
  mu.upload(file, { url: "/upload/x", chunkSize: "256k" });
  // @ts-expect-error not a checksum
  mu.upload(file, { url: "/upload/x", checksum: "sha256" });
  // @ts-expect-error not a method
  mu.upload(file, { url: "/upload/x", method: "PATCH" });
  // @ts-expect-error not an error code
  const bad: ErrorCode = "timeout";
  // @ts-expect-error not a state
  const badState: UploadState = "running";
  // @ts-expect-error a progress event has no attempt
  up.addEventListener("progress", (e) => void e.attempt);
  // @ts-expect-error version is read-only
  mu.version = "1";
  void [bad, badState];
}

void example;

// The queue and the XMLHttpRequest facade.
export async function widgets(files: File[], url: string): Promise<number> {
  const mu = await load();
  const q = mu.queue({ concurrency: 2 });
  for (const f of files) q.add(f, { url });
  q.addEventListener("progress", (e) => console.log(e.lengthComputable ? e.loaded / e.total : 0));
  // A queued upload has every member of an upload, its handler properties included.
  const queued: Upload = q.add(files[0], { url, metadata: { name: files[0].name } });
  queued.onloadstart = (e) => void e.total;
  queued.onprogress = (e) => void [e.loaded, e.total, e.confirmed, e.secondsLeft];
  queued.onload = (e) => void e.result.metadata;
  queued.onerror = (e) => void [e.error.code, e.error.reason, e.error.serverMessage];
  queued.onabort = (e) => void e.error.sessionURL;
  queued.onloadend = function (e) {
    const self: Upload = this;
    void [self.state, e.loaded];
  };
  queued.onretry = (e) => void [e.attempt, e.restart];
  queued.onstatechange = (e) => {
    const s: UploadState = e.state;
    void s;
  };
  queued.onprogress = null;
  // @ts-expect-error a handler is a function or null
  queued.onload = 1;
  q.add(files[0], { sessionURL: "https://example.com/session" });
  const sent: number = q.loaded;
  const toSend: number = q.total;
  void [sent, toSend];
  await new Promise<void>((r) => q.addEventListener("idle", () => r()));
  q.abort();
  const xhr = new mu.XMLHttpRequest({ formFields: (fields) => ({ name: String(fields.name) }) });
  void new mu.XMLHttpRequest({ sessionURL: "https://example.com/session", chunkSize: 262144 });
  // @ts-expect-error url is open()'s
  void new mu.XMLHttpRequest({ url });
  xhr.open("POST", url);
  xhr.upload.onprogress = (e) => console.log(e.loaded);
  xhr.send(files[0]);
  return q.loaded + xhr.readyState;
}

// The Uppy plugin's options.
import { MediaUpload as MediaUploadPlugin } from "../../js/uppy.js";
export const pluginOptions: ConstructorParameters<typeof MediaUploadPlugin>[1] = {
  load: () => load(),
  getOptions: (file) => ({ url: "/upload?name=" + file.id, metadata: { name: file.name } }),
  limit: 2,
};
// @ts-expect-error getOptions is required
export const badPluginOptions: ConstructorParameters<typeof MediaUploadPlugin>[1] = { load: () => load() };

// A stream of unknown length, and the code it may fail with.
export async function streams(mu: MediaUpload, file: File, url: string): Promise<string> {
  const gz = file.stream().pipeThrough(new CompressionStream("gzip"));
  const up = mu.upload(gz, { url, contentType: "application/gzip" });
  up.onprogress = (e) => console.log(e.lengthComputable ? e.loaded / e.total : e.loaded);
  try {
    await up;
    return "done";
  } catch (e) {
    return e instanceof MediaUploadError && e.code === "source_error" ? "unreadable" : "failed";
  }
}

// Uploads left unfinished by the last page: listed, resumed (a kept handle or the file picked
// again), or forgotten; and a file handle as the source.
export async function unfinishedUploads(mu: MediaUpload, picked: File | undefined, handle: FileSystemFileHandle, url: string): Promise<number> {
  let resumed = 0;
  for (const u of await mu.unfinished({ getHeaders: async () => ({ Authorization: "Bearer t" }) })) {
    const held: number | null = u.confirmed;
    console.log(u.name, u.size, held === null ? "?" : held / u.size, new Date(u.touchedAt));
    if (u.canResume) void u.resume({ chunkSize: "auto" });
    else if (picked) void u.resume({ file: picked, onProgress: (p) => console.log(p.loaded) });
    else await u.forget();
    resumed++;
  }
  // @ts-expect-error where it goes is the record's: no url
  void (await mu.unfinished())[0]?.resume({ url });
  mu.upload(handle, { url, resume: true });
  return resumed;
}
