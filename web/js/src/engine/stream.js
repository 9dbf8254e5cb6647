// The source of an upload of unknown length: a ReadableStream of bytes (docs/api.md,
// "Streams"). It lives in the host, beside the Go side, which asks for one chunk at a time
// (jsbridge/host.go, Source.pull):
//
//   pull(start, end)  reads the stream until it holds the bytes up to `end` or the stream
//                     ends, and lets go of every byte before `start` (the server holds them:
//                     core only asks from the server's offset). Resolves with the number of
//                     bytes ready from start. Then it reads the next chunk's worth ahead,
//                     while this one is sent.
//   body(start, end)  the bytes as a Blob, for fetch (the kept Blob, or slices of two)
//   close(reason)     cancels the stream if it has not ended, and lets go of everything
//
// The pieces read (in any sizes) are copied, as they come, into one buffer per chunk, which
// becomes one Blob as soon as it is full: fetch sends a Blob several times faster than the
// same bytes as an ArrayBuffer (measured in Chromium: 140 against 26 MB/s), and a chunk of
// many small pieces is one copy, not thousands of Blob parts. The buffers are ArrayBuffers
// that V8 counts, so their allocation makes it collect as it goes, the chunk Blobs let go
// among the rest (a Blob's bytes sit in the browser's blob store, which V8 does not see:
// docs/protocol.md section 6). What is kept is what the server has not confirmed yet: the chunk in
// flight, sent again from here after a short Range or a failure (never read again from the
// stream), and at most one chunk read ahead while the one before is on the wire. So memory
// stays about two chunks, whatever the stream's length. Nothing more is read until the next
// chunk is asked for: while the upload is paused, the stream is left alone once the chunk
// ahead is read, and its backpressure reaches the producer.

/** Bytes of the stream asked for again after they were let go. */
export class NotKeptError extends Error {
  constructor(start, from) {
    super(`the stream's bytes from ${start} are no longer kept (only those from ${from} are)`);
    this.name = "NotKeptError";
  }
}

/** A piece read from the stream as bytes; anything else is a source error (a TypeError). */
function asBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  const what = value === null ? "null" : typeof value === "object" ? value.constructor?.name ?? "an object" : typeof value;
  throw new TypeError(`the stream gave ${what}, not bytes (a Uint8Array, another ArrayBufferView or an ArrayBuffer)`);
}

export class StreamSource {
  #reader;
  #parts = []; // Blobs, in order, holding the bytes [#from, #end)
  #from = 0;
  #end = 0;
  #left = null; // the rest of a piece that went past the last chunk filled
  #done = false; // the stream has ended
  #failed = null; // what reading met: thrown by the next pull
  #closed = false;
  #reading = Promise.resolve(); // reads are made one after another

  constructor(stream) {
    this.#reader = stream.getReader();
  }

  async pull(start, end) {
    if (start < this.#from) throw new NotKeptError(start, this.#from);
    await this.#fill(end);
    if (this.#failed) throw this.#failed;
    this.#drop(Math.min(start, this.#end));
    const n = Math.max(0, Math.min(end, this.#end) - start);
    // The next chunk (taken to be as long as this one) is read while this one is sent.
    if (n > 0 && !this.#done) this.#fill(end + n).catch(() => {});
    return n;
  }

  body(start, end) {
    if (start < this.#from || end > this.#end) throw new NotKeptError(start, this.#from);
    const parts = [];
    let at = this.#from;
    for (const b of this.#parts) {
      const bEnd = at + b.size;
      if (bEnd > start && at < end) parts.push(at >= start && bEnd <= end ? b : b.slice(Math.max(start, at) - at, Math.min(end, bEnd) - at));
      at = bEnd;
      if (at >= end) break;
    }
    return parts.length === 1 ? parts[0] : new Blob(parts);
  }

  close(reason) {
    if (this.#closed) return;
    this.#closed = true;
    this.#parts = [];
    this.#left = null;
    // The producer sees the cancel (its cancel() is called, a pipe's source is cancelled).
    if (!this.#done) this.#reader.cancel(reason).catch(() => {});
  }

  /** Reads until the bytes up to `target` are kept or the stream ends (one read at a time). */
  #fill(target) {
    const run = this.#reading.then(async () => {
      if (this.#end >= target || this.#done || this.#failed || this.#closed) return;
      const buf = new Uint8Array(target - this.#end);
      let filled = 0;
      try {
        while (filled < buf.length && !this.#closed) {
          let piece = this.#left;
          this.#left = null;
          if (!piece) {
            const got = await this.#reader.read();
            if (got.done) {
              this.#done = true;
              break;
            }
            piece = asBytes(got.value);
          }
          const take = Math.min(piece.byteLength, buf.length - filled);
          buf.set(take === piece.byteLength ? piece : piece.subarray(0, take), filled);
          filled += take;
          if (take < piece.byteLength) this.#left = piece.subarray(take);
        }
      } catch (err) {
        this.#failed = err;
      }
      if (this.#closed) throw new Error("the upload has ended");
      if (filled > 0) {
        this.#parts.push(new Blob([filled === buf.length ? buf : buf.subarray(0, filled)]));
        this.#end += filled;
      }
    });
    this.#reading = run.catch(() => {});
    return run;
  }

  /** Lets go of the bytes before `to` (at most #end). */
  #drop(to) {
    while (this.#parts.length && this.#from + this.#parts[0].size <= to) {
      this.#from += this.#parts.shift().size;
    }
    if (this.#parts.length && this.#from < to) {
      this.#parts[0] = this.#parts[0].slice(to - this.#from);
      this.#from = to;
    }
    if (!this.#parts.length) this.#from = Math.max(this.#from, Math.min(to, this.#end));
  }
}
