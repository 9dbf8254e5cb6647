// Worker mode's ReadableStream where the browser cannot transfer one (WebKit: postMessage(stream,
// [stream]) throws a DataCloneError): the page keeps the stream and reads it with a
// StreamSource (stream.js), and the Worker's host gets a StreamRelay, a source with the
// StreamSource's interface (pull, body, close) that asks the page by message. This is
// the Worker's half of that exchange; the page's half, and the feature test that picks it, are
// in ../worker-engine.js, and worker.js carries the Worker's messages:
//
//   Worker -> page   { t: "pull", id, req, start, end }        the page's source.pull(start, end)
//                    { t: "close", id, reason }                 the page's source.close(reason):
//                                                               the stream is cancelled, its
//                                                               Blobs let go
//   page -> Worker   { t: "pulled", id, req, n, blob }          n bytes ready from start, and the
//                                                               Blob of [start, start + n)
//                    { t: "pulled", id, req, error }            the pull's failure as { name,
//                                                               message }: NotKeptError, or the
//                                                               stream's own (a source error)
//
// A Blob crosses postMessage by structured clone, which copies no byte (the browser's blob
// store holds them once, for both realms). The Worker keeps each Blob answered until a later
// pull lets go of the bytes before its start (the server holds them), as the StreamSource
// does on the page, so body() is served from what the Worker holds and the Go
// side's calls keep their shape (body is synchronous). The page keeps nothing of a relayed
// upload once it is closed, and the Worker nothing once its host closes the relay, which it
// does when the upload settles.

import { NotKeptError } from "./stream.js";

/** A failure as plain data for a message: { name, message }. */
export function errorData(err) {
  return { name: String(err?.name ?? "Error"), message: String(err?.message ?? err) };
}

/** The error of errorData made again, of the class its name says where this realm has one. */
export function revive({ name, message }) {
  if (name === "NotKeptError") return Object.assign(new NotKeptError(0, 0), { message });
  const Class = ERRORS[name] ?? Error;
  const err = new Class(message);
  if (err.name !== name) err.name = name;
  return err;
}

const ERRORS = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

const relays = new Map(); // id -> the StreamRelay of upload id, until it is closed

/** The Worker's half: the source the Worker's host holds for upload `id`, whose stream the page reads. */
export class StreamRelay {
  #id;
  #post;
  #kept = []; // { start, end, blob }: the Blobs the page answered, not yet let go
  #asked = new Map(); // req -> { start, resolve, reject }: pulls the page has not answered
  #nextReq = 0;
  #closed = false;

  /** post(message) sends to the page. */
  constructor(id, post) {
    this.#id = id;
    this.#post = post;
    relays.set(id, this);
  }

  /** Routes the page's "pulled" message to the relay that asked; one closed since drops it. */
  static answered(m) {
    relays.get(m.id)?.#answered(m);
  }

  /** Resolves with the bytes ready from start (up to end); rejects as the page's source did. */
  pull(start, end) {
    if (this.#closed) return Promise.reject(new Error("the upload has ended"));
    return new Promise((resolve, reject) => {
      const req = ++this.#nextReq;
      this.#asked.set(req, { start, resolve, reject });
      this.#post({ t: "pull", id: this.#id, req, start, end });
    });
  }

  /** The bytes [start, end) as a Blob, out of the Blobs kept; NotKeptError for others. */
  body(start, end) {
    const parts = [];
    for (let at = start; at < end; ) {
      let k = null; // the kept Blob holding `at` that reaches furthest
      for (const c of this.#kept) if (c.start <= at && at < c.end && (!k || c.end > k.end)) k = c;
      if (!k) throw new NotKeptError(at, this.#kept.reduce((m, c) => Math.min(m, c.start), Infinity));
      const to = Math.min(end, k.end);
      parts.push(k.start === at && k.end === to ? k.blob : k.blob.slice(at - k.start, to - k.start));
      at = to;
    }
    return parts.length === 1 ? parts[0] : new Blob(parts);
  }

  /** Tells the page to close its source (which cancels the stream) and lets go of everything here. */
  close(reason) {
    if (this.#closed) return;
    this.#closed = true;
    relays.delete(this.#id);
    this.#kept = [];
    const asked = [...this.#asked.values()];
    this.#asked.clear();
    for (const a of asked) a.reject(new Error("the upload has ended"));
    this.#post({ t: "close", id: this.#id, reason: reason === undefined ? null : errorData(reason) });
  }

  #answered({ req, n, blob, error }) {
    const a = this.#asked.get(req);
    if (!a) return;
    this.#asked.delete(req);
    if (error) return void a.reject(revive(error));
    if (n > 0 && !(blob instanceof Blob && blob.size === n)) return void a.reject(new Error(`the page answered ${n} bytes without them`));
    const end = a.start + n;
    // The bytes before start are the server's now: let go of the Blobs that hold only them,
    // and of those the new one holds all of (the same range asked again, after a retry).
    this.#kept = this.#kept.filter((c) => c.end > a.start && !(c.start >= a.start && c.end <= end));
    if (n > 0) this.#kept.push({ start: a.start, end, blob });
    a.resolve(n);
  }
}
