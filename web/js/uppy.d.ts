// Type declarations for mediaupload/uppy (dist/uppy.js): the Uppy uploader plugin.
// Uppy's own types are not imported, so the package needs none of Uppy to type-check.

import type { MediaUpload as Module, UploadOptions } from "./mediaupload.js";

/** The part of an Uppy file the plugin reads. */
export interface UppyFileLike {
  id: string;
  name?: string;
  size: number | null;
  type?: string;
  data: Blob;
  meta: Record<string, unknown>;
}

export interface MediaUploadPluginOptions {
  /** The loaded module, or a function that loads it (usually `() => load()`). */
  load: Module | (() => Promise<Module>);
  /** The options of `mu.upload` for a file: its `url` at least. */
  getOptions: (file: UppyFileLike) => UploadOptions;
  /** How many uploads run at once. Default 6. */
  limit?: number;
  /** The plugin's id in Uppy. Default "MediaUpload". */
  id?: string;
}

/** `uppy.use(MediaUpload, options)`. */
export class MediaUpload {
  static readonly VERSION: string;
  constructor(uppy: unknown, options: MediaUploadPluginOptions);
  /** The Uppy instance the plugin was given (typed unknown: the package imports none of Uppy's types). */
  readonly uppy: unknown;
  readonly id: string;
  readonly type: "uploader";
  opts: MediaUploadPluginOptions;
  install(): void;
  uninstall(): void;
  update(): void;
  setOptions(options: Partial<MediaUploadPluginOptions>): void;
}

export default MediaUpload;
