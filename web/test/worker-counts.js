// Test-only: imported by /test/counting-worker.js (harness.mjs) before the module's own worker
// script, so that what the host does in the module's Worker can be counted, as a test counts it
// on the page: each Blob slice made, and each fetch whose body is a stream (counted.js). The
// page asks with { t: "test:counts" } and gets { t: "test:counts", slices, streams } back: the
// slices as [size of the Blob, ...slice's arguments], and the number of stream bodies, since
// the last ask (T.loadCounting in page-helpers.js). Nothing of it ships: the module's worker
// script is the one in dist/, unchanged.

let slices = [];
let streams = 0;

const slice = Blob.prototype.slice;
Blob.prototype.slice = function (...args) {
  slices.push([this.size, ...args]);
  return slice.apply(this, args);
};

const fetch = globalThis.fetch;
globalThis.fetch = function (input, init) {
  if (init?.body instanceof ReadableStream) streams++;
  return fetch.call(this, input, init);
};

addEventListener("message", ({ data }) => {
  if (data?.t !== "test:counts") return;
  postMessage({ t: "test:counts", slices, streams });
  slices = [];
  streams = 0;
});
