// Watching a File while it uploads: a File that changes on disk meanwhile must end its upload
// in source_error within seconds, and never be stored half old, half new (docs/api.md,
// "Errors"). The engines let script see different things of such a change (measured with
// Chromium 156, Firefox 153 and WebKitGTK 2.50; docs/protocol.md section 6):
//
//   Chromium  every read of the File fails (NotReadableError), and so does fetch of a slice;
//   WebKit    every read fails (NotFoundError) and lastModified changes, but fetch of a slice
//             hangs until it is aborted;
//   Firefox   reads give whatever is on disk now (fewer bytes where it shrank), size and
//             lastModified stay: fetch sends what it finds when it reads.
//
// So a watch looks at every sign: lastModified and size (cheap: before each request, and
// every second while one is in flight); a read that fails or comes back short (a byte at the
// end of the range in flight, every second: a fetch past a new end never ends in Firefox);
// and bytes that differ: it keeps small samples of what was on disk when each request went
// (the range's first and last bytes, and the file's first), compares the file's first and
// the previous range's before each request, and every sample before the request that
// completes the object. A file sent in one request has nothing to compare (nothing of it
// went before), so it costs no read at all (the many-files bench: 10 ms a file, before). What goes unseen: in Firefox, a change of the same size that touches
// no sample (bytes in the middle of a range already sent); catching that would take reading
// the whole file a second time.

const SAMPLE = 256; // bytes in a sample
const MAX_SAMPLES = 512; // beyond this, every other one is let go (the file's first stays)
const EVERY_MS = 1000; // how often a request in flight is checked

/** A change seen: its message says what was seen. */
export class FileChangedError extends Error {
  constructor(what) {
    super(`the file changed on disk during the upload (${what}): pick it again to upload it as it is now`);
    this.name = "FileChangedError";
  }
}

export class FileWatch {
  #file;
  #lastModified;
  #size;
  #samples = new Map(); // offset -> the bytes read there first, in the order taken
  #last = null; // the previous request's range, [start, end)

  constructor(file) {
    this.#file = file;
    this.#lastModified = file.lastModified;
    this.#size = file.size;
  }

  /** A change seen without reading (lastModified, size): a FileChangedError, or null. */
  moved() {
    const f = this.#file;
    if (f.lastModified !== this.#lastModified) return new FileChangedError("its modification time is not what it was");
    if (f.size !== this.#size) return new FileChangedError(`its size is ${f.size} bytes, not ${this.#size}`);
    return null;
  }

  /**
   * Before a request of [start, end): compares the file's first bytes and the previous
   * range's samples, and keeps samples of this one. `all`: compares every sample (before the
   * request that completes the object). Resolves to a FileChangedError (or the read's own
   * error), or null.
   */
  async check(start, end, all = false) {
    const moved = this.moved();
    if (moved) return moved;
    const first = this.#last === null; // no bytes of the file went before: nothing to compare
    const offsets = first ? [] : all ? [...this.#samples.keys()] : [0, ...this.#edges(this.#last)];
    this.#last = [start, end];
    // Samples of what goes now, for the requests after it (none follows the last one), and
    // of the file's first bytes, as they were when its first bytes went.
    if (!all) for (const at of [0, ...this.#edges([start, end])]) if (!this.#samples.has(at)) this.#take(at);
    if (offsets.length === 0) return null;
    // All at once (a read costs the page about a millisecond, and before the last request
    // the upload waits for them); the first change in offset order is the one told.
    const errs = await Promise.all([...new Set(offsets)].map((at) => this.#compare(at)));
    return errs.find(Boolean) ?? this.moved();
  }

  /**
   * While [start, end) is sent: every second, the cheap signs and a byte at the range's end.
   * Calls onChange(err) once if it sees a change; returns the function that stops watching.
   */
  during(start, end, onChange) {
    let busy = false;
    const timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      const err = this.moved() ?? (end > start ? await this.#short(end - 1) : null);
      busy = false;
      if (err) {
        clearInterval(timer);
        onChange(err);
      }
    }, EVERY_MS);
    return () => clearInterval(timer);
  }

  // The first and last sample offsets of a range (none for no range).
  #edges(range) {
    if (!range || range[1] <= range[0]) return [];
    return [range[0], Math.max(range[0], range[1] - SAMPLE)];
  }

  // Reads the sample at `at` and keeps it (a promise, resolved to its bytes or an error).
  #take(at) {
    const n = Math.min(SAMPLE, this.#size - at);
    if (n <= 0) return;
    this.#samples.set(at, read(this.#file, at, n));
    if (this.#samples.size > MAX_SAMPLES) {
      let i = 0;
      for (const k of this.#samples.keys()) if (k !== 0 && i++ % 2 === 0) this.#samples.delete(k);
    }
  }

  async #compare(at) {
    const kept = await this.#samples.get(at);
    if (!kept || kept instanceof Error) return null; // not readable when taken: the request itself tells
    const now = await read(this.#file, at, kept.length);
    if (now instanceof Error) return now;
    if (now.length < kept.length) return new FileChangedError(`it is shorter than ${at + kept.length} bytes now`);
    for (let i = 0; i < kept.length; i++) {
      if (now[i] !== kept[i]) return new FileChangedError(`its bytes at ${at + i} are not what they were`);
    }
    return null;
  }

  /**
   * Whether the byte at `at` can no longer be read: the error (a FileChangedError for a File
   * changed or removed on disk), or null. fetch says "Failed to fetch" for a File it could not
   * read as for a lost connection: this tells them apart.
   */
  unreadable(at) {
    return this.#short(at);
  }

  // A read of the byte at `at` that fails or comes back empty: the error, else null.
  async #short(at) {
    const b = await read(this.#file, at, 1);
    if (b instanceof Error) return b;
    return b.length < 1 ? new FileChangedError(`it is shorter than ${at + 1} bytes now`) : null;
  }
}

/**
 * read() (a read of a Blob or File) made again, twice, 50 ms apart, before its failure stands.
 * A Blob made in memory can fail a read for a moment in Chromium (docs/protocol.md section 6),
 * and so can a File made in script, which script cannot tell from one on disk (host.js,
 * NUDGE_EVERY); a File changed on disk fails every read, 100 ms later so.
 */
export async function readAgain(read) {
  for (let tries = 0; ; tries++) {
    try {
      return await read();
    } catch (err) {
      if (tries >= 2) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

// n bytes of file at `at`, as a Uint8Array (shorter where the file ends sooner), or the error
// reading them gave (readAgain): a FileChangedError for a File the browser can no longer read
// (Chromium: NotReadableError, WebKit: NotFoundError, whose own messages speak of permissions).
async function read(file, at, n) {
  try {
    return new Uint8Array(await readAgain(() => file.slice(at, at + n).arrayBuffer()));
  } catch (err) {
    return unreadableFile(err) ?? (err instanceof Error ? err : new Error(String(err)));
  }
}

/** A File's read error as a FileChangedError where it says the File is gone or changed, else null. */
export function unreadableFile(err) {
  if (err?.name !== "NotReadableError" && err?.name !== "NotFoundError") return null;
  const changed = new FileChangedError(`the browser can no longer read it: ${err.name}`);
  changed.cause = err;
  return changed;
}
