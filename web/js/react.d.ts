// Type declarations for mediaupload/react (dist/react.js): the React hooks of docs/api.md
// ("React"). React's own types are not imported: every hook takes and returns plain values, so
// the package needs none of @types/react to type-check.

import type {
  LoadOptions,
  MediaUpload,
  MediaUploadError,
  QueueOptions,
  UnfinishedOptions,
  UnfinishedResumeOptions,
  UnfinishedUpload,
  Upload,
  UploadOptions,
  UploadProgress,
  UploadQueue,
  UploadResult,
  UploadSource,
  UploadState,
} from "./mediaupload.js";

/** What useMediaUpload gives. */
export interface MediaUploadLoad {
  /** The loaded module, or null until it has loaded. */
  readonly mu: MediaUpload | null;
  /** Why the load failed (code "load_error"), or null. */
  readonly error: MediaUploadError | null;
  /** Neither `mu` nor `error` yet. */
  readonly loading: boolean;
}

/**
 * The module, loaded once per page (load() resolves to the same object every call): every
 * component gets the same `mu`. The options of the first component to mount win. After a failed
 * load, the next component to mount tries again.
 */
export function useMediaUpload(options?: LoadOptions): MediaUploadLoad;

/** What useUploadState shows of an Upload: all null (and no-op actions) for no upload. */
export interface UploadView {
  readonly upload: Upload | null;
  /** The Upload's `state`: pause(), resume() and abort() through the view show at once. */
  readonly state: UploadState | null;
  readonly sessionURL: string | null;
  /** The last progress event's fields, or null before the first. */
  readonly progress: Readonly<UploadProgress> | null;
  /** 1 once done, else loaded / total while the length is known, else null (a stream's unknown length). */
  readonly fraction: number | null;
  /** What the upload resolved with, once done. */
  readonly result: UploadResult | null;
  /** What it failed with (code "aborted" after abort()), once failed or aborted. */
  readonly error: MediaUploadError | null;
  pause(): void;
  resume(): void;
  abort(): void;
}

/**
 * What an Upload says, kept up to date (any Upload: from mu.upload, a queue, useUnfinished's
 * resume). The component's listeners go when it unmounts; the upload goes on.
 */
export function useUploadState(upload: Upload | null | undefined): UploadView;

/** What useUpload gives: the view of the last upload started, and start. */
export interface UploadHook extends UploadView {
  /**
   * Starts an upload (mu.upload), from an event handler, and returns it. One started before
   * goes on (abort it first if that is what you want). Throws a TypeError while mu is null.
   */
  start(source: UploadSource, options: UploadOptions): Upload;
}

/** One upload at a time, started with `start` from an event handler. */
export function useUpload(mu: MediaUpload | null | undefined): UploadHook;

/** What useQueue gives. */
export interface QueueHook {
  /** The queue, made by the first add(); null before. */
  readonly queue: UploadQueue | null;
  /** Its uploads, in the order added (show each with useUploadState). */
  readonly uploads: readonly Upload[];
  /** The queue's `loaded` and `total` (docs/api.md, "Many files: a queue"). */
  readonly loaded: number;
  readonly total: number;
  /** loaded / total, or null while total is 0. */
  readonly fraction: number | null;
  /** Every upload added has settled (true with none). */
  readonly idle: boolean;
  /**
   * Adds an upload to the queue, from an event handler; the first add makes the queue, with the
   * hook's options of that render. Throws a TypeError while mu is null.
   */
  add(source: UploadSource, options: UploadOptions): Upload;
  /** The queue's pause(), resume(), abort(): every upload's state shows at once. */
  pause(): void;
  resume(): void;
  abort(): void;
}

/** A queue (mu.queue): its uploads and total progress. Unmounting aborts nothing. */
export function useQueue(mu: MediaUpload | null | undefined, options?: QueueOptions): QueueHook;

/** The part of the module useUnfinished uses (a loaded `mu` has it). */
export interface UnfinishedSource {
  unfinished(options?: UnfinishedOptions): Promise<UnfinishedUpload[]>;
}

/** What useUnfinished gives. */
export interface UnfinishedHook {
  /**
   * The unfinished uploads, oldest first. Those resumed through this hook are left out until
   * their upload ends; another upload running one now is listed, with `running: true`.
   */
  readonly list: readonly UnfinishedUpload[];
  /** An ask is under way (true until the first answer, also while mu is null). */
  readonly loading: boolean;
  /** What the last ask failed with, or null. */
  readonly error: unknown;
  /** Asks again (asks in flight at once share one answer). */
  refresh(): Promise<void>;
  /**
   * Goes on with one (item.resume), from an event handler: it leaves the list at once and its
   * Upload is returned; should that upload fail, the list is asked again.
   */
  resume(item: UnfinishedUpload, options?: UnfinishedResumeOptions): Upload;
  /** Forgets one (item.forget): it leaves the list at once. */
  forget(item: UnfinishedUpload): Promise<void>;
}

/** The uploads left unfinished, asked when the component mounts with a module, and on refresh(). */
export function useUnfinished(mu: UnfinishedSource | null | undefined, options?: UnfinishedOptions): UnfinishedHook;
