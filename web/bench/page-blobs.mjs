// Page code the bench's pages share (bench.mjs, links.mjs): run in the page as `(${BLOBS})()`.
//   window.makeBlob(size)       makes (once) a Blob of size random bytes, made of references to
//                               one random 1 MiB Blob: it takes no more of the browser's blob
//                               storage than that 1 MiB (a flat 256 MiB Blob can exceed its quota)
//   window.benchBlob(size)      that Blob
//   window.startSession(url, size)  starts a resumable session by hand; resolves to its URI
export const BLOBS = () => {
  const blobs = new Map();
  window.makeBlob = (size) => {
    if (blobs.has(size)) return;
    const block = new Uint8Array(1 << 20);
    for (let i = 0; i < block.length; i += 65536) crypto.getRandomValues(block.subarray(i, i + 65536));
    const one = new Blob([block]);
    const parts = [];
    for (let n = 0; n < size; n += one.size) parts.push(n + one.size <= size ? one : one.slice(0, size - n));
    blobs.set(size, new Blob(parts));
  };
  window.benchBlob = (size) => blobs.get(size);
  window.startSession = async (url, size) => {
    const r = await fetch(url + "&uploadType=resumable", {
      method: "POST",
      headers: { "X-Upload-Content-Type": "application/octet-stream", "X-Upload-Content-Length": String(size) },
    });
    if (r.status !== 200) throw new Error("start: " + r.status);
    return r.headers.get("Location");
  };
};
