// Hashing ahead, the page's side (docs/api.md, "Many files: a queue"; docs/performance.md,
// "What does a checksum cost?"): a file sent in one request states its checksum in that
// request, so its hash comes before its bytes. A queue has the next files' hashes started
// while the files before them upload (queue.js picks which), so that a small file's hash
// costs it no time of its own; the engine hashes them where the module runs (host.js: the
// Worker by default) and hands each hashing to the upload of its file.
//
// Which hashes an upload will want is the Go side's decision (core/checksum.go); the page
// guesses it from the options, the same way, and only where the answer cannot wait for a
// backend: a guess that turns out wrong costs a read, never a wrong hash (an upload takes over
// a hashing only for the kinds the Go side asks for).

const KINDS = ["crc32c", "md5", "both"];
// Cloud Storage's JSON API upload path, .../upload/storage/v1/b/BUCKET/o, on any host (what
// core's cloudStorageUpload matches), and a V4 signed URL (core's signedStorageURL).
const CLOUD_STORAGE = /\/upload\/storage\/v1\/b\/[^/?#]+\/o\/?(?:[?#]|$)/;
const SIGNED = /[?&]x-goog-signature=/i;

/**
 * The hashes an upload of blob with options will want ("crc32c", "md5" or "both"), or null
 * where it wants none or it cannot be told yet (a session from a backend, one to go on with).
 */
export function aheadKinds(blob, options) {
  if (!(blob instanceof Blob) || !options || options.resume || options.sessionURL != null || options.session != null) return null;
  const c = options.checksum;
  if (KINDS.includes(c)) return c;
  if (c !== undefined) return null; // false: none
  const url = options.url == null ? "" : String(options.url);
  return CLOUD_STORAGE.test(url) || SIGNED.test(url) ? "crc32c" : null;
}

/**
 * The queue's handle on hashing ahead with engine: start(blob, options) starts one and returns
 * its key (null where the upload will want no hash), drop(key) ends one no upload took.
 */
export function hashAhead(engine) {
  let last = 0;
  return {
    start(blob, options) {
      const kinds = aheadKinds(blob, options);
      if (!kinds) return null;
      const key = ++last;
      engine.ahead(key, blob, kinds);
      return key;
    },
    drop: (key) => engine.dropAhead(key),
  };
}
