// The source of an upload of unknown length: a ReadableStream of bytes (docs/api.md,
// "Streams"). It lives in the host, beside the Go side, which asks for one chunk at a time
// (jsbridge/host.go, Source.pull):
//
//   pull(start, end)  reads the stream until it holds the bytes up to `end` or the stream
//                     ends, and lets go of every byte before `start` (the server holds them:
//                     core only asks from the server's offset). Resolves with the number of
//                     bytes ready from start.
//   blob(start, end)  the bytes as a Blob, for fetch (the browser copies them once, into its
//                     blob store; they never enter Go's memory)
//   bytes(start, end) the bytes as one Uint8Array, for a checksum
//   close(reason)     cancels the stream if it has not ended, and lets go of everything
//
// What is kept is what the server has not confirmed yet: the chunk in flight, read again
// from here after a short Range or a failure (never from the stream). So memory stays about
// two chunks (the pieces kept and the Blob made of them), whatever the stream's length.
// Reading happens only when a chunk is asked for: while the upload is paused, nothing is
// read, and the stream's backpressure reaches its producer.

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
  #pieces = []; // Uint8Arrays, in order, holding the bytes [#from, #end)
  #from = 0;
  #end = 0;
  #done = false; // the stream has ended
  #closed = false;

  constructor(stream) {
    this.#reader = stream.getReader();
  }

  async pull(start, end) {
    if (this.#closed) throw new Error("the upload has ended");
    if (start < this.#from) throw new NotKeptError(start, this.#from);
    while (this.#end < end && !this.#done) {
      const { value, done } = await this.#reader.read();
      if (this.#closed) throw new Error("the upload has ended");
      if (done) {
        this.#done = true;
        break;
      }
      const bytes = asBytes(value);
      if (bytes.byteLength === 0) continue;
      this.#pieces.push(bytes);
      this.#end += bytes.byteLength;
      // Bytes before start (a session adopted part-way: the server holds them) go at once.
      this.#drop(Math.min(start, this.#end));
    }
    this.#drop(Math.min(start, this.#end));
    return Math.max(0, Math.min(end, this.#end) - start);
  }

  blob(start, end) {
    return new Blob(this.#range(start, end));
  }

  bytes(start, end) {
    const out = new Uint8Array(end - start);
    let at = 0;
    for (const p of this.#range(start, end)) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }

  close(reason) {
    if (this.#closed) return;
    this.#closed = true;
    this.#pieces = [];
    // The producer sees the cancel (its cancel() is called, a pipe's source is cancelled).
    if (!this.#done) this.#reader.cancel(reason).catch(() => {});
    else this.#reader.releaseLock();
  }

  /** The kept pieces' views of [start, end). */
  #range(start, end) {
    if (start < this.#from || end > this.#end) throw new NotKeptError(start, this.#from);
    const out = [];
    let at = this.#from;
    for (const p of this.#pieces) {
      const pEnd = at + p.byteLength;
      if (pEnd > start && at < end) out.push(p.subarray(Math.max(start, at) - at, Math.min(end, pEnd) - at));
      at = pEnd;
      if (at >= end) break;
    }
    return out;
  }

  /** Lets go of the bytes before `to`. */
  #drop(to) {
    while (this.#pieces.length && this.#from + this.#pieces[0].byteLength <= to) {
      this.#from += this.#pieces.shift().byteLength;
    }
    if (this.#pieces.length && this.#from < to) {
      this.#pieces[0] = this.#pieces[0].subarray(to - this.#from);
      this.#from = to;
    }
    if (!this.#pieces.length) this.#from = Math.max(this.#from, to);
  }
}
