// The Uppy uploader plugin of docs/api.md ("Uppy"): dist/uppy.js, imported as
// "mediaupload/uppy".
//
//   uppy.use(MediaUpload, { load: () => load(), getOptions: (file) => ({ url }), limit: 3 });
//
// It follows Uppy's uploader contract: install() registers an uploader with addUploader; the
// uploader is given file IDs, emits "upload-start", then per file "upload-progress",
// "upload-success" or "upload-error"; it obeys "upload-pause" (one file's pause/resume),
// "pause-all", "resume-all", "file-removed" and "cancel-all". Uppy's retry runs the uploader
// again for the failed files: the plugin hands the failed upload's session URI back to the
// module, which asks the server for its offset and goes on from there.
//
// Uppy is the page's: nothing of it is imported here (Uppy asks a plugin for `id`, `type`,
// install/uninstall, update and setOptions only), so this file does not bundle it.

/** The uploader plugin. `uppy.use(MediaUpload, options)`. */
export class MediaUpload {
  static VERSION = "0.1.0";

  #handler = (fileIDs) => this.#upload(fileIDs);
  #queue = null;
  #mu = null;
  #sessions = new Map(); // file ID -> the session URI of its failed upload, for retry

  /**
   * options: `load` (() => Promise of the loaded module, or the module itself), `getOptions`
   * (file => options of mu.upload: url, headers, metadata, …), `limit` (uploads at once,
   * default 6, as the queue), `id` (default "MediaUpload").
   */
  constructor(uppy, options = {}) {
    this.uppy = uppy;
    this.type = "uploader";
    this.id = options.id ?? "MediaUpload";
    this.opts = { limit: 6, ...options };
    if (typeof this.opts.getOptions !== "function") {
      throw new TypeError("MediaUpload: the getOptions option must be a function (file) => ({ url, … })");
    }
    if (typeof this.opts.load !== "function" && typeof this.opts.load?.queue !== "function") {
      throw new TypeError("MediaUpload: the load option must be the loaded module or a function that loads it");
    }
  }

  setOptions(options) {
    this.opts = { ...this.opts, ...options };
  }

  update() {}

  install() {
    const { capabilities } = this.uppy.getState();
    this.uppy.setState({ capabilities: { ...capabilities, resumableUploads: true } });
    this.uppy.addUploader(this.#handler);
  }

  uninstall() {
    const { capabilities } = this.uppy.getState();
    this.uppy.setState({ capabilities: { ...capabilities, resumableUploads: false } });
    this.uppy.removeUploader(this.#handler);
    this.#queue?.abort();
  }

  async #upload(fileIDs) {
    if (fileIDs.length === 0) return;
    this.#mu ??= await (typeof this.opts.load === "function" ? this.opts.load() : this.opts.load);
    this.#queue ??= this.#mu.queue({ concurrency: this.opts.limit });
    const files = this.uppy.getFilesByIds(fileIDs).filter((f) => !f.isRemote);
    this.uppy.emit("upload-start", files.filter((f) => !f.progress?.uploadStarted || !f.isRestored));
    await Promise.allSettled(files.map((f) => this.#uploadFile(f)));
  }

  #uploadFile(file) {
    const uppy = this.uppy;
    const options = { ...this.opts.getOptions(file) };
    const saved = this.#sessions.get(file.id);
    if (saved && !options.sessionURL) options.sessionURL = saved;
    const up = this.#queue.add(file.data, options);

    // Uppy's events for this file, removed when it settles.
    const offs = [];
    const on = (event, fn) => {
      uppy.on(event, fn);
      offs.push(() => uppy.off(event, fn));
    };
    const mine = (f) => f?.id === file.id;
    let removed = false;
    on("upload-pause", (f, isPaused) => mine(f) && (isPaused ? up.pause() : up.resume()));
    on("pause-all", () => uppy.getFile(file.id) && up.pause());
    on("resume-all", () => uppy.getFile(file.id) && up.resume());
    on("file-removed", (f) => {
      if (mine(f)) {
        removed = true;
        up.abort();
      }
    });
    on("cancel-all", () => {
      removed = true;
      up.abort();
    });

    up.addEventListener("progress", (e) => {
      const latest = uppy.getFile(file.id);
      if (!latest) return;
      uppy.emit("upload-progress", latest, {
        uploadStarted: latest.progress?.uploadStarted ?? Date.now(),
        bytesUploaded: e.loaded,
        bytesTotal: e.total || file.size,
      });
    });

    return up.promise.then(
      (result) => {
        offs.forEach((off) => off());
        this.#sessions.delete(file.id);
        uppy.emit("upload-success", uppy.getFile(file.id), {
          status: result.status,
          body: result.metadata ?? {},
          uploadURL: result.sessionURL ?? undefined,
        });
      },
      (err) => {
        offs.forEach((off) => off());
        if (removed || err.code === "aborted") return; // cancelled: not an error to show
        if (err.sessionURL) this.#sessions.set(file.id, err.sessionURL);
        uppy.emit("upload-error", uppy.getFile(file.id), err, {
          status: err.status,
          body: undefined,
        });
      },
    );
  }
}

export default MediaUpload;
