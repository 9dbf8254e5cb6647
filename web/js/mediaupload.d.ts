// Type declarations for mediaupload.js (and, through `MediaUpload`, mediaupload.classic.js).
// The contract they describe is docs/api.md in the repository.

/**
 * Instantiates the module once; every call resolves to the same object (the options of the
 * first call win). A failed load is forgotten, so a later call tries again.
 *
 * @throws {MediaUploadError} The promise rejects with code "load_error" when the module cannot
 *   load: mediaupload.wasm not found (or not WebAssembly) at the URL tried, a
 *   Content-Security-Policy that refuses the wasm or the Worker, a Worker that cannot start.
 *   The message names the URL and what to do; the browser's own error is the `cause`.
 */
export function load(options?: LoadOptions): Promise<MediaUpload>;

export interface LoadOptions {
  /**
   * Where the Go module is, a string or a URL (a relative one is resolved against the page).
   * Default: mediaupload.wasm beside mediaupload.js.
   */
  wasmURL?: string | URL;
  /**
   * Where the module runs. Absent (the default): in a dedicated module Worker, off the page's
   * main thread, and on the page where a Worker cannot start (a Content-Security-Policy that
   * forbids workers, no module workers, the worker script not found). `true`: in the Worker,
   * and load() rejects saying so where it cannot start. `false`: on the page. The API is the
   * same either way; getHeaders and every callback run on the page. `mu.mode` says which.
   */
  worker?: boolean;
  /**
   * Where the worker script is, a string or a URL (a relative one is resolved against the
   * page). Default: mediaupload.worker.js beside mediaupload.js.
   */
  workerURL?: string | URL;
}

/** What `load` resolves to. */
export interface MediaUpload {
  /** The module's version, "0.x.y". */
  readonly version: string;
  /** Where the module runs: "worker" (a dedicated Worker, the default) or "page" (LoadOptions.worker). */
  readonly mode: "worker" | "page";
  /**
   * Starts an upload at once. Never throws: bad arguments reject the upload's promise. A
   * ReadableStream of bytes is uploaded while it is still being made (a resumable upload of
   * unknown length: `progress.total` is 0 until the stream ends).
   */
  upload(source: UploadSource, options: UploadOptions): Upload;
  /** A queue: at most `concurrency` (default 6) uploads run at once, the others wait in "queued". */
  queue(options?: QueueOptions): UploadQueue;
  /** An XMLHttpRequest for widgets that make their own: its body goes up with the media upload protocol. */
  readonly XMLHttpRequest: MediaUploadXMLHttpRequestConstructor;
  /**
   * The uploads that `resume: true` left unfinished in this browser (a reload, a crash, a
   * closed tab), oldest first, each with what its server holds now. A session that is gone
   * (404, 410) or complete is dropped from the store and not listed. Never rejects over one
   * session: one that cannot be asked is listed with `confirmed: null`.
   */
  unfinished(options?: UnfinishedOptions): Promise<UnfinishedUpload[]>;
}

/** The options of mu.unfinished(): for the status queries, where a server wants them. */
export interface UnfinishedOptions {
  headers?: Record<string, string>;
  getHeaders?: () => Record<string, string> | Promise<Record<string, string>>;
}

/** One upload that `resume: true` left unfinished in this browser (mu.unfinished()). */
export interface UnfinishedUpload {
  /** The resume store's key for it. */
  readonly key: string;
  /** The file's name, size, type and lastModified when the upload began. */
  readonly name: string;
  readonly size: number;
  readonly type: string;
  readonly lastModified: number;
  /** Where it was uploaded: the url and method it was started with, and its session URI. */
  readonly url: string;
  readonly method: string;
  readonly sessionURL: string;
  /** When it began and when it last moved (ms since the epoch). */
  readonly startedAt: number;
  readonly touchedAt: number;
  /**
   * Bytes the server holds, asked now; null if it could not be asked. For one `running`, what
   * that upload last reported (its session is not asked while in use).
   */
  readonly confirmed: number | null;
  /**
   * true: resume() needs no file picker, the browser kept a handle to the file (one from
   * showOpenFilePicker, a drop's getAsFileSystemHandle, or the origin private file system).
   */
  readonly canResume: boolean;
  /**
   * true: an upload runs it now, in this tab or another (a Web Lock is held on it). Its
   * resume() waits in "queued", showing that upload's progress, and takes over if it stops.
   */
  readonly running: boolean;
  /**
   * Goes on from the server's offset and returns the Upload (as mu.upload does). With a handle
   * kept the browser may ask for permission to read the file again: call it from a click.
   * Without one, pass the file picked again as `file`. A file that is not the one the upload
   * began with (name, size, lastModified) fails the Upload with "source_error" before any byte
   * is sent; no file at all fails it with "invalid_argument".
   */
  resume(options?: UnfinishedResumeOptions): Upload;
  /** Drops its record (the session stays on the server until it expires). */
  forget(): Promise<void>;
}

/** The options of an unfinished upload's resume(): those of mu.upload but where it goes, and the file. */
export interface UnfinishedResumeOptions extends Omit<UploadSettings, "method" | "resume"> {
  /** The file picked again, where the browser kept no handle to it (canResume false). */
  file?: File | FileSystemFileHandle;
  /**
   * For an upload whose sessions your backend gave (`session`): asked for a new one should the
   * stored session be gone. Without it, such an upload fails with "session_expired" then.
   */
  session?: SessionSource;
}

export interface QueueOptions {
  /** How many uploads run at once. Default 6 (the connections an HTTP/1.1 browser opens to one host). */
  concurrency?: number;
}

export interface UploadQueueEventMap {
  /**
   * `loaded`/`total` over every upload (see UploadQueue.loaded and .total): fired when either
   * has changed; `q.abort()` fires one. `lengthComputable` is `total > 0`.
   */
  progress: ProgressEvent<UploadQueue>;
  /** Every upload added so far has settled. */
  idle: Event;
}

export interface UploadQueue extends EventTarget {
  readonly concurrency: number;
  /**
   * Adds an upload; it is in state "queued" until a slot is free. What it returns has every
   * member of an Upload (its handler properties included) from the start.
   */
  add(source: UploadSource, options: UploadOptions): Upload;
  /** Pauses every upload and starts none until resume(). */
  pause(): void;
  resume(): void;
  /**
   * Aborts every upload in it: `total` drops at once to `loaded`, what was sent (plus what a
   * failed upload had left to send), and one progress event says so.
   */
  abort(): void;
  /**
   * The uploads, in the order added. One that has ended keeps its state, sessionURL and
   * settled promise; the queue has let go of its source, options, signal, listeners and
   * handler properties (nothing fires after its loadend).
   */
  readonly uploads: Upload[];
  /** The bytes sent by every upload added, aborted ones included: never goes backwards. */
  readonly loaded: number;
  /**
   * What the queue sends if nothing more fails: each upload's size, but an aborted upload
   * counts only what it had sent (so that every upload settled without a failure is 100 %).
   * 0 while a stream's length is unknown; otherwise never below `loaded`.
   */
  readonly total: number;
  addEventListener<K extends keyof UploadQueueEventMap>(
    type: K,
    listener: (this: UploadQueue, ev: UploadQueueEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

/** `options` of `new mu.XMLHttpRequest(options)`: those of `upload` but url and method. */
export interface XMLHttpRequestOptions extends Omit<UploadSettings, "method"> {
  /** Resume a session URI you already hold: no new session is started. */
  sessionURL?: string | URL;
  /**
   * Given a FormData body's other fields and its File, returns the metadata to send (not
   * called for a form without exactly one File, which the upload refuses). Default: the fields
   * are ignored and `metadata` is sent.
   */
  formFields?: (fields: Record<string, string | string[]>, file: File) => Record<string, unknown> | undefined;
}

/** The surface of XMLHttpRequest that upload widgets use. */
export interface MediaUploadXMLHttpRequest extends XMLHttpRequestEventTarget {
  readonly UNSENT: 0;
  readonly OPENED: 1;
  readonly HEADERS_RECEIVED: 2;
  readonly LOADING: 3;
  readonly DONE: 4;
  readonly readyState: number;
  onreadystatechange: ((this: MediaUploadXMLHttpRequest, ev: Event) => unknown) | null;
  readonly upload: XMLHttpRequestEventTarget;
  /** The Upload doing the work while one runs, else null. */
  readonly mediaUpload: Upload | null;
  readonly status: number;
  readonly statusText: string;
  readonly responseURL: string;
  responseType: XMLHttpRequestResponseType;
  readonly response: unknown;
  readonly responseText: string;
  readonly responseXML: null;
  timeout: number;
  withCredentials: boolean;
  open(method: string, url: string | URL, async?: boolean, username?: string | null, password?: string | null): void;
  setRequestHeader(name: string, value: string): void;
  /** A Blob/File, a FormData holding exactly one File, a string, bytes or URLSearchParams. */
  send(body?: Blob | FormData | string | ArrayBuffer | ArrayBufferView | URLSearchParams | null): void;
  abort(): void;
  getResponseHeader(name: string): string | null;
  getAllResponseHeaders(): string;
  overrideMimeType(mime: string): void;
}

export interface MediaUploadXMLHttpRequestConstructor {
  new (options?: XMLHttpRequestOptions): MediaUploadXMLHttpRequest;
  readonly UNSENT: 0;
  readonly OPENED: 1;
  readonly HEADERS_RECEIVED: 2;
  readonly LOADING: 3;
  readonly DONE: 4;
}

export type UploadType = "resumable" | "multipart" | "media" | "auto";

export type UploadState = "queued" | "starting" | "uploading" | "paused" | "retrying" | "offline" | "done" | "failed" | "aborted";

export type ErrorCode =
  | "invalid_argument"
  | "auth_error"
  | "http_error"
  | "network_error"
  | "retries_exhausted"
  | "session_expired"
  | "protocol_error"
  | "checksum_mismatch"
  | "source_error"
  | "backend_error"
  | "aborted"
  | "load_error";

/**
 * What can be uploaded: a Blob or File, a FileSystemFileHandle (read when the upload starts;
 * with `resume: true` the handle is kept, so mu.unfinished() can resume it without a picker),
 * or a stream of bytes of unknown length.
 */
export type UploadSource =
  | Blob
  | FileSystemFileHandle
  | ReadableStream<Uint8Array | ArrayBufferView | ArrayBuffer>;

export type Checksum = false | "crc32c" | "md5" | "both";

export interface RetryOptions {
  /** How many times to retry a 5xx answer or a lost connection. Default 5. */
  retries?: number;
  /** The first wait; each later one doubles. Default 1000. */
  initialDelayMs?: number;
  /** A single wait, jitter included, never exceeds this. Default 32000. */
  maxDelayMs?: number;
  /** Up to this many random milliseconds added to each wait. Default 1000. */
  jitterMs?: number;
}

/**
 * The options of `mu.upload`: `url`, or `sessionURL` (a session already started, by your
 * backend say), or both; or `session` (your backend gives the sessions); and the settings of
 * UploadSettings.
 *
 * Each takes a string or a URL object, as load()'s wasmURL and workerURL do.
 */
export type UploadOptions = UploadSettings &
  (
    | {
        /**
         * The `/upload/...` URI of the method, with its query (e.g. `?name=photo.png`). A
         * relative one is resolved against the page's base URL.
         */
        url: string | URL;
        /** Resume a session URI you already hold: no new session is started. */
        sessionURL?: string | URL;
        session?: undefined;
      }
    | {
        /** Optional when sessionURL is given. */
        url?: string | URL;
        /**
         * Resume a session URI you already hold: no new session is started; the upload asks
         * the server what it holds and goes on from there.
         */
        sessionURL: string | URL;
        session?: undefined;
      }
    | {
        /**
         * Your backend gives the upload its sessions, when it starts and again when a session
         * is lost (404, 410): a function that asks it, run on the page (in worker mode too),
         * or the URL of its endpoint, to which the upload POSTs the SessionInfo as JSON (the
         * page's cookies go to its own origin) and reads a SessionAnswer as JSON (an error
         * answer: a 4xx or 5xx, `{"error": {"code", "message"}}`). A backend that fails, takes
         * over 30 s (or `stallTimeoutMs`) or answers no session fails the upload with
         * "backend_error", before any request to storage.
         */
        session: SessionSource;
        /** Not needed: the page's `headers` and `getHeaders` go to its origin only (nowhere without it). */
        url?: string | URL;
        sessionURL?: undefined;
      }
  );

/** Where the `session` option asks for sessions: a function of the page's, or the URL of your backend's endpoint. */
export type SessionSource = ((info: SessionInfo) => SessionAnswer | Promise<SessionAnswer>) | string | URL;

/** What `session` is told of an upload: nothing of its bytes. */
export interface SessionInfo {
  /** The File's name; "" for a Blob or a stream. */
  name: string;
  /** The bytes to upload; null for a stream, whose length is not known. */
  size: number | null;
  /** The upload's content type (`contentType`, else the Blob's type, else application/octet-stream). */
  type: string;
  /** The upload's `metadata`, or null. */
  metadata: Record<string, unknown> | null;
}

/**
 * What the backend answers `session` with: a session URI it started with the page's Origin
 * (a new one), as a string or `{ sessionURL }`; or a URL it signed for Cloud Storage's XML API's
 * resumable start (POST with `x-goog-resumable: start`), with the headers the signature
 * requires, which the upload starts the session with itself.
 */
export type SessionAnswer =
  | string
  | URL
  | { sessionURL: string | URL }
  | { signedURL: string | URL; headers?: Record<string, string> };

/** Every option of `mu.upload` but `url` and `sessionURL` (UploadOptions). */
export interface UploadSettings {
  /** "POST" creates (201 or 200), "PUT" updates (200). Default "POST". */
  method?: "POST" | "PUT";
  /** Default "resumable". "auto": media or multipart up to 5 MiB, else resumable. */
  uploadType?: UploadType;
  /** Sent as JSON. */
  metadata?: Record<string, unknown>;
  /** Default: blob.type, else "application/octet-stream". */
  contentType?: string;
  /**
   * "auto" (the default): each chunk sized to the link as the upload goes (and as the page's
   * earlier uploads to the origin measured it), small first when nothing is known, then long
   * enough that per-request costs vanish and short enough for a progress report about every
   * second (progressIntervalMs); long where progress comes inside a chunk (Chromium over
   * HTTP/2). Or a positive multiple of 262144 (fixed chunks), or 0 = the rest in one PUT.
   */
  chunkSize?: "auto" | number;
  /**
   * With chunkSize "auto", where progress comes only as each chunk is answered: the longest
   * gap between two progress reports the page bears, in milliseconds. A chunk and its round
   * trip then fit in it, at whatever share of the link that leaves (a chunk is never under
   * 256 KiB). Default: about a second (up to 1.6 s where a long round trip would otherwise
   * cost over a tenth of the link). Where the engine reports progress inside a chunk
   * (Chromium over HTTP/2), chunks are long and progress comes several times a second anyway.
   */
  progressIntervalMs?: number;
  /** With chunkSize "auto": the largest chunk, a positive multiple of 262144 (default 128 MiB; 16 MiB for a stream, whose chunks are held in memory). */
  maxChunkSize?: number;
  /**
   * A request unanswered this long (milliseconds) is taken for a lost connection: aborted, then
   * the server is asked what it holds. Default: derived from the request's size and the rate
   * so far (four times the expected time plus 30 s); 0: never.
   */
  stallTimeoutMs?: number;
  /** Extra headers on the requests that need them. */
  headers?: Record<string, string>;
  /** Called before the session starts and again after a 401; merged over `headers`. */
  getHeaders?: () => Record<string, string> | Promise<Record<string, string>>;
  /**
   * Remember the session in IndexedDB (database "mediaupload", in workers too) and pick it up
   * again after a reload, or in another tab, when the same File (name, size, lastModified,
   * type) is uploaded to the same url: it goes on from what the server holds. Needs a File and
   * a resumable upload. The session is forgotten when the upload ends, except after
   * "network_error" or "retries_exhausted", which a later try can get past; one older than six
   * days is not tried. Where IndexedDB is missing or refused, nothing is remembered and the
   * upload starts anew.
   */
  resume?: boolean;
  retry?: RetryOptions;
  /** Ask the server for its offset after every chunk. */
  queryStatusEachChunk?: boolean;
  /**
   * Send "X-GUploader-No-308: yes" with the session's requests (default true): the server then
   * answers 200 + "X-HTTP-Status-Code-Override: 308", which every engine's fetch hands over.
   * false: real 308s (in Firefox, read through a status query after each chunk).
   */
  noRedirect308?: boolean;
  /**
   * The hashes the server is given to check the bytes it received against: "crc32c", "md5" or
   * "both", hashed from the file beside the upload, stated with the request that completes the
   * object (X-Goog-Hash; a multipart upload's metadata) and compared with the final metadata's.
   * Absent: "crc32c" for a Cloud Storage upload URL (.../upload/storage/v1/b/BUCKET/o, on any
   * host, and its session URIs), none elsewhere. `false`: none.
   */
  checksum?: Checksum;
  /** Aborting it aborts the upload; an already aborted signal rejects at once with "aborted". */
  signal?: AbortSignal;
  onProgress?(progress: UploadProgress): void;
  onRetry?(retry: RetryInfo): void;
  onStateChange?(state: UploadState): void;
  /** Not in the core API: called once per HTTP request finished, for logs and debugging. */
  onRequest?(request: RequestInfo): void;
}

/** The fields of `onProgress` and of the `progress` event (as on XMLHttpRequest.upload). */
export interface UploadProgress {
  /** Bytes sent so far; never goes backwards. */
  loaded: number;
  /** The file's size; 0 where unknown. */
  total: number;
  /** total > 0 */
  lengthComputable: boolean;
  /** Bytes the server has confirmed with its Range answer. */
  confirmed: number;
  /** A smoothed rate. */
  bytesPerSecond: number;
  /** An estimate, or null. */
  secondsLeft: number | null;
}

/** Given to `onRetry` and carried by the `retry` event, before each wait. */
export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** The HTTP status that is retried, or 0 for a lost connection. */
  status: number;
  /** What went wrong, as text, or null. */
  error: string | null;
  /**
   * True when the session was lost (404/410) and a new one starts from byte 0: `confirmed`
   * drops to 0 while `loaded` stays, and the state goes back to "starting".
   */
  restart: boolean;
}

/**
 * Given to `onRequest` and carried by the `request` event: one HTTP request, finished.
 * For debugging and display only; the fields may grow.
 */
export interface RequestInfo {
  method: string;
  url: string;
  /** The Content-Range header sent, or "" */
  contentRange: string;
  /** The answer's status, or 0 when there was none. */
  status: number;
  /** How long the request took. */
  ms: number;
  /** Why the request failed (no answer, or an answer that is an error), or null. */
  error: string | null;
}

export interface UploadResult {
  status: number;
  /** The final JSON answer parsed, or null. */
  metadata: Record<string, unknown> | null;
  /** The final answer's text. */
  body: string;
  sessionURL: string | null;
}

/** What every failed upload rejects with, and `load()` when the module cannot load. */
export class MediaUploadError extends Error {
  constructor(
    code: ErrorCode,
    message: string,
    init?: {
      status?: number;
      responseText?: string;
      reason?: string;
      serverMessage?: string;
      sessionURL?: string | null;
      cause?: unknown;
    },
  );
  readonly name: "MediaUploadError";
  /** One of the codes of docs/api.md ("Errors"), whatever failed underneath. */
  code: ErrorCode;
  /** The last HTTP status, or 0. */
  status: number;
  /** The body of that answer, or "". */
  responseText: string;
  /** The reason of Google's JSON error answer (error.errors[0].reason, e.g. "quotaExceeded"), or "" when none. */
  reason: string;
  /** The message of Google's JSON error answer (error.message), or "" when none. */
  serverMessage: string;
  /** The session URI, so the caller can resume later; null if none was started. */
  sessionURL: string | null;
}

/** loadstart, progress, loadend: a ProgressEvent with the rest of UploadProgress. */
export interface UploadProgressEvent extends ProgressEvent<Upload> {
  readonly confirmed: number;
  readonly bytesPerSecond: number;
  readonly secondsLeft: number | null;
}

export interface UploadLoadEvent extends UploadProgressEvent {
  readonly result: UploadResult;
}

/** error and abort. */
export interface UploadErrorEvent extends UploadProgressEvent {
  readonly error: MediaUploadError;
}

export interface UploadRetryEvent extends Event, Readonly<RetryInfo> {}

export interface UploadStateEvent extends Event {
  readonly state: UploadState;
}

export interface UploadRequestEvent extends Event, Readonly<RequestInfo> {}

export interface UploadEventMap {
  loadstart: UploadProgressEvent;
  progress: UploadProgressEvent;
  load: UploadLoadEvent;
  error: UploadErrorEvent;
  abort: UploadErrorEvent;
  loadend: UploadProgressEvent;
  retry: UploadRetryEvent;
  statechange: UploadStateEvent;
  request: UploadRequestEvent;
}

/**
 * One upload: an EventTarget like XMLHttpRequest.upload, and a thenable, so
 * `await mu.upload(...)` gives the result or throws a MediaUploadError.
 *
 * Events: `loadstart`, `progress`…, then `load`, `error` or `abort`, then `loadend`; `retry`,
 * `statechange` and `request` in between. They are dispatched asynchronously, so listeners
 * added right after `upload` returns see them all. The promise settles after `loadend`.
 */
export interface Upload extends EventTarget, PromiseLike<UploadResult> {
  readonly promise: Promise<UploadResult>;
  /**
   * Changes at once on pause(), resume() and abort() (like XMLHttpRequest.readyState); the
   * statechange event follows.
   */
  readonly state: UploadState;
  /** The session URI once known (resumable only), else null. */
  readonly sessionURL: string | null;

  then<T = UploadResult, E = never>(
    onFulfilled?: ((result: UploadResult) => T | PromiseLike<T>) | null,
    onRejected?: ((error: MediaUploadError) => E | PromiseLike<E>) | null,
  ): Promise<T | E>;
  catch<E = never>(onRejected?: ((error: MediaUploadError) => E | PromiseLike<E>) | null): Promise<UploadResult | E>;
  finally(onFinally?: (() => void) | null): Promise<UploadResult>;

  /** Stops after the request in flight; `state` is "paused" at once. */
  pause(): void;
  /** Goes on from the server's offset; `state` leaves "paused" at once. */
  resume(): void;
  /** Stops for good: `state` is "aborted" at once; the promise rejects with code "aborted". */
  abort(): void;

  /** The handler properties of XMLHttpRequest.upload, plus onretry and onstatechange. */
  onloadstart: ((this: Upload, ev: UploadProgressEvent) => unknown) | null;
  onprogress: ((this: Upload, ev: UploadProgressEvent) => unknown) | null;
  onload: ((this: Upload, ev: UploadLoadEvent) => unknown) | null;
  onerror: ((this: Upload, ev: UploadErrorEvent) => unknown) | null;
  onabort: ((this: Upload, ev: UploadErrorEvent) => unknown) | null;
  onloadend: ((this: Upload, ev: UploadProgressEvent) => unknown) | null;
  onretry: ((this: Upload, ev: UploadRetryEvent) => unknown) | null;
  onstatechange: ((this: Upload, ev: UploadStateEvent) => unknown) | null;

  addEventListener<K extends keyof UploadEventMap>(
    type: K,
    listener: (this: Upload, ev: UploadEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  removeEventListener<K extends keyof UploadEventMap>(
    type: K,
    listener: (this: Upload, ev: UploadEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions,
  ): void;
}

/** What mediaupload.classic.js defines. */
export interface MediaUploadGlobal {
  load: typeof load;
  MediaUploadError: typeof MediaUploadError;
}

declare global {
  /** Defined by mediaupload.classic.js. */
  var MediaUpload: MediaUploadGlobal | undefined;
}
