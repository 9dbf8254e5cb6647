// What the docs' code samples take from the page around them (web/test/types/samples.mjs):
// each name a sample uses without making it, with the type a page would give it. A sample that
// makes a name itself (an import, a const) uses its own.

import type { load as loadModule, MediaUpload, UploadOptions } from "mediaupload";
import type { MediaUpload as MediaUploadPlugin, MediaUploadPluginOptions } from "mediaupload/uppy";
import type * as FilePondModule from "filepond";

declare global {
  /** The loaded module (`const mu = await load()`). */
  const mu: MediaUpload;
  /** load() of mediaupload.js, imported by the page. */
  const load: typeof loadModule;
  /** A file the user picked; several; a stream's source. */
  const file: File;
  const files: File[];
  /** The upload URL, or one per file. */
  const url: string;
  const uploadURL: string;
  function urlFor(file: File): string;
  function uploadURLFor(file: { name?: string }): string;
  /** The options of an upload, made elsewhere on the page. */
  const options: UploadOptions;
  /** A short-lived OAuth access token, from the page's own backend. */
  function getAccessToken(): Promise<string>;
  /** A progress bar, an <input type="file">. */
  const bar: HTMLProgressElement;
  const input: HTMLInputElement;
  /** The page's camera, and a MediaRecorder of it. */
  const cameraStream: MediaStream;
  const recorder: MediaRecorder;
  /** The page's own drawing of an unfinished upload's row, and its file picker. */
  function row(name: string, fraction: number | null, actions: { resume(): unknown; forget(): unknown }): void;
  function pickAgain(): Promise<File>;
  /**
   * Uppy's instance, typed by what mediaupload/uppy declares of the plugin: Uppy's own types
   * want a subclass of its BasePlugin in use(), which web/js/uppy.d.ts does not declare (it
   * imports none of Uppy's types).
   */
  const uppy: { use(plugin: typeof MediaUploadPlugin, options: MediaUploadPluginOptions): unknown };
  /** FilePond's global (its script tag), and jQuery's with blueimp's plugin. */
  const FilePond: typeof FilePondModule;
  function $(selector: string): { fileupload(options: { url: string; dataType?: string; xhr?: () => unknown }): void };
}
