// Test-only: makes this realm's Blob reads (Blob.prototype.arrayBuffer) fail from the
// (after + 1)-th on, as a source whose bytes cannot be read: how "reject" (the promise rejects)
// or "throw" (the call throws at once, as a read of bytes no longer kept does: stream.js's
// NotKeptError). Used on the page (page-helpers.js) and in the module's Worker (worker-hooks.js).

export function failReads(how, after = 0) {
  const arrayBuffer = Blob.prototype.arrayBuffer;
  let calls = 0;
  Blob.prototype.arrayBuffer = function () {
    if (++calls <= after) return arrayBuffer.call(this);
    const err = new Error(`the test made read ${calls} of a Blob fail`);
    err.name = "NotReadableError";
    if (how === "throw") throw err;
    return Promise.reject(err);
  };
}
