// The tests' file contents, made the same way in Node (harness.mjs) and in the page
// (page-helpers.js): a module of plain JavaScript that both import.

/**
 * `size` bytes from a xorshift32 generator seeded with `seed`. The same function runs in the
 * page (T.bytes, T.blob), so Node knows what a page uploaded without transferring it.
 */
export function pseudoRandomBytes(size, seed) {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 0x9e3779b9;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    for (let k = 0; k < 4 && i + k < size; k++) out[i + k] = (x >>> (8 * k)) & 0xff;
  }
  return out;
}

/**
 * The pool that T.pooled(offset, size) cuts Blobs from in the page: POOL_SIZE bytes of
 * pseudoRandomBytes(POOL_SIZE, POOL_SEED), made once. Tests that upload hundreds of MB make
 * each Blob fresh (a copy into the page's Blob store, as `new Blob([bytes])` does) without
 * generating every byte again; pooledBytes is what such a Blob holds.
 */
export const POOL_SIZE = 48 * 1024 * 1024;
export const POOL_SEED = 0x5eed;
