// Hashing an upload's bytes for a checksum (docs/protocol.md section 9): the host's half of
// core's HashingSource. Core decides what is hashed and when (from the upload's start, every
// byte from 0, stated with the request that completes the object) and what a mismatch means;
// this reads and hashes. A Blob or File is read from byte 0 as fast as the engine hands its
// bytes to script, ahead of the chunks and beside them (a chunk on the wire while the next
// bytes are read and hashed), so that an upload with a checksum goes at the lower of the link's
// rate and the reading's; a stream's bytes are hashed as the host reads them, before they can
// be let go.
//
// The hashes are hash-wasm's CRC-32C and MD5 (WebAssembly compiled from C, MIT licence): with
// Go's own, compiled to wasm, an upload with a CRC-32C kept 0.13-0.81 of its rate without one
// (docs/performance.md, "What does a checksum cost?"). Each hash takes one of a few instances
// kept for reuse, and gives it back when the upload ends. No step holds the thread it runs on
// for long: a read of STEP bytes is hashed in one go, a few milliseconds (about 20 for MD5
// over 8 MiB).

import { createCRC32, createMD5 } from "hash-wasm";

/** Bytes read at once: two reads in flight, one hashed while the next is read. */
export const STEP = 8 << 20;

const CASTAGNOLI = 0x82f63b78; // CRC-32C's polynomial, reflected (RFC 3720)

// Idle instances of each hash, for the next upload (each is a WebAssembly instance of its own,
// a few milliseconds to make).
const idle = { crc32c: [], md5: [] };
const make = { crc32c: () => createCRC32(CASTAGNOLI), md5: () => createMD5() };
const KEEP = 6;

/** base64 of bytes, as Cloud Storage states hashes (the CRC-32C big-endian: hash-wasm's order). */
function base64(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * The hashes of one upload's bytes, in order, each byte once. kinds: ["crc32c"], ["md5"] or
 * both. Feed it with readBlob (all of a Blob, at once) or add (a stream's bytes, in order);
 * sum(n) resolves to { crc32c, md5 } (base64, "" where not asked) once bytes [0, n) are
 * hashed, n being the source's whole length. stop() ends it and gives its instances back.
 */
export class Hashing {
  #kinds;
  #hashers = null; // [instance] in the order of #kinds, once made
  #made;
  #at = 0; // bytes hashed
  #waiters = []; // { n, resolve, reject }
  #sums = null; // { n, value }: the digest, once taken (no more bytes after it)
  #error = null;
  #stopped = false;
  #tail = Promise.resolve(); // adds are made one after another

  constructor(kinds) {
    this.#kinds = kinds;
    this.#made = Promise.all(kinds.map((k) => idle[k].pop() ?? make[k]())).then((hs) => {
      for (const h of hs) h.init();
      if (this.#stopped) return void this.#giveBack(hs);
      this.#hashers = hs;
      this.#settle(); // an empty source is hashed once they are there
    });
    this.#made.catch((err) => this.#fail(err));
  }

  /** Bytes hashed so far. */
  get at() {
    return this.#at;
  }

  /** What stopped the hashing (a read that failed), or null. */
  get error() {
    return this.#error;
  }

  /**
   * Reads `blob` from byte 0 to its end and hashes it, STEP bytes at a time with the next read
   * in flight. read(start, end) reads a range as an ArrayBuffer (the caller's retry of a Blob
   * read that failed for a moment); a read that fails stops the hashing with its error.
   *
   * Not stream(): it reads a Blob made in memory about twice as fast in Chromium and Firefox,
   * but in WebKit a Worker reading a File by stream() while an upload runs held the page's own
   * thread for up to 1.3 s at a time (its reads go through the page's thread; slices held it
   * under 75 ms), and no engine read a File on disk clearly faster by it (docs/performance.md,
   * "What does a checksum cost?").
   */
  readBlob(blob, read = (start, end) => blob.slice(start, end).arrayBuffer()) {
    const size = blob.size;
    const go = async () => {
      await this.#made;
      let next = size > 0 ? read(0, Math.min(STEP, size)) : null;
      for (let at = 0; at < size && !this.#stopped; ) {
        const buf = await next;
        at += buf.byteLength;
        if (buf.byteLength === 0) throw new Error("a read of the file came back empty");
        next = at < size ? read(at, Math.min(at + STEP, size)) : null;
        next?.catch(() => {}); // a failure is met when awaited
        this.#update(new Uint8Array(buf));
      }
    };
    this.#tail = this.#tail.then(go).catch((err) => this.#fail(err));
  }

  /**
   * Hashes bytes that follow those hashed so far (a stream's, as it is read): a Uint8Array, or
   * a promise of one, whose rejection stops the hashing with its error (as a read of readBlob's
   * does). Resolves once they are hashed, or the hashing has stopped.
   */
  add(bytes) {
    this.#tail = this.#tail
      .then(() => this.#made)
      .then(async () => this.#update(await bytes))
      .catch((err) => this.#fail(err));
    return this.#tail;
  }

  /** Resolves to the hashes of bytes [0, n) once they are hashed (n: the source's length). */
  sum(n) {
    if (this.#sums?.n === n) return Promise.resolve(this.#sums.value);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ n, resolve, reject });
      this.#settle();
    });
  }

  /** Ends the hashing: no more reads, and the instances go back for another upload. */
  stop() {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#hashers) this.#giveBack(this.#hashers);
    this.#hashers = null;
    this.#fail(new Error("the upload has ended"));
  }

  #update(bytes) {
    if (this.#stopped || this.#sums) return;
    for (const h of this.#hashers) h.update(bytes);
    this.#at += bytes.byteLength;
    this.#settle();
  }

  // Answers the waiters whose bytes are all hashed (or can never be).
  #settle() {
    this.#waiters = this.#waiters.filter((w) => {
      if (this.#error) return void w.reject(this.#error);
      if (this.#sums && this.#sums.n !== w.n) return void w.reject(new Error(`the hashes were taken at ${this.#sums.n} bytes, not ${w.n}`));
      if (this.#at > w.n && !this.#sums) return void w.reject(new Error(`${this.#at} bytes hashed, more than the ${w.n} asked for`));
      if (this.#at < w.n || !this.#hashers) return true; // not yet
      if (!this.#sums) {
        const value = { crc32c: "", md5: "" };
        this.#kinds.forEach((k, i) => (value[k] = base64(this.#hashers[i].digest("binary"))));
        this.#sums = { n: w.n, value };
      }
      w.resolve(this.#sums.value);
    });
  }

  #fail(err) {
    this.#error ??= err;
    this.#settle();
  }

  #giveBack(hs) {
    hs.forEach((h, i) => {
      const k = this.#kinds[i];
      if (idle[k].length < KEEP) idle[k].push(h);
    });
  }
}
