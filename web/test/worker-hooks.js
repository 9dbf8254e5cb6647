// Test-only: imported by /test/hooked-worker.js (harness.mjs) before the module's own worker
// script, so that a test reaches into the module's Worker as it does into the page: it counts
// each Blob slice made, each Blob read whole (arrayBuffer: the host's reads for a checksum) and
// each fetch whose body is a stream (counted.js), and makes Blob reads fail on demand
// (read-faults.js). The page (T.loadHooked in page-helpers.js) asks with
//   { t: "test:counts" }                 answered { t: "test:counts", slices, reads, streams }:
//                                        the slices as [size of the Blob, ...slice's arguments],
//                                        the reads as [size of the Blob, when: the time since
//                                        the epoch, ms], and the stream bodies, since the last ask
//   { t: "test:failReads", how, after }  answered { t: "test:failReads" } once in place
// Nothing of it ships: the module's worker script is the one in dist/, unchanged.

import { failReads } from "/test/read-faults.js";

let slices = [];
let reads = [];
let streams = 0;

const arrayBuffer = Blob.prototype.arrayBuffer;
Blob.prototype.arrayBuffer = function () {
  reads.push([this.size, performance.timeOrigin + performance.now()]);
  return arrayBuffer.call(this);
};

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
  if (data?.t === "test:counts") {
    postMessage({ t: "test:counts", slices, reads, streams });
    slices = [];
    reads = [];
    streams = 0;
  } else if (data?.t === "test:failReads") {
    failReads(data.how, data.after);
    postMessage({ t: "test:failReads" });
  }
});
