// mu.unfinished() of docs/api.md ("Unfinished uploads"): the uploads that `resume: true` left
// unfinished in this browser (a reload, a crash, a closed tab), each with what its server holds
// now, and the means to go on with it or to let it go. The records are the resume store's
// (resume-store.js); asking a session what it holds is core's (a check: engine.check).

import { EXPECTED_FILE, MISSING_FILE } from "./file-handle.js";
import { wireOptions } from "./options.js";
import { RUNNING, dropRecord, unfinishedRecords, whileIdle } from "./resume-store.js";

// How many sessions are asked at once, and how long each may take: the list is for a page to
// show at once, not to wait on a slow server (whatever is not known shows as null).
const AT_ONCE = 4;
const RETRY = { retries: 1, initialDelayMs: 500, maxDelayMs: 1000, jitterMs: 0 };

/**
 * The unfinished uploads, oldest first: by startedAt, when the first upload of the file to its
 * url began (a resume keeps it). options: { headers, getHeaders } for the status queries, where
 * a server wants them (Google's session URIs do not). A record whose session is gone (404, 410)
 * or complete is dropped and not listed.
 */
export async function unfinished(engine, upload, options = {}) {
  const records = (await unfinishedRecords()).sort((a, b) => a.startedAt - b.startedAt);
  const out = new Array(records.length);
  let next = 0;
  const worker = async () => {
    while (next < records.length) {
      const i = next++;
      const rec = records[i];
      // Its session is asked holding the record's lock: one that an upload runs now is not
      // asked (a status query to a session in use crosses its chunks, and some servers,
      // fake-gcs-server, finish the object on one: docs/protocol.md section 7), and none
      // starts on it while it is asked. One running is listed with what it last reported.
      const held = await whileIdle(rec.key, (still) => (still ? check(engine, rec, options) : "finished"));
      if (held === "finished") continue; // an upload finished it meanwhile
      if (held === "gone" || held === "complete") {
        await dropRecord(rec.key);
        continue;
      }
      const running = held === RUNNING;
      out[i] = new UnfinishedUpload({ ...rec, running }, running ? rec.confirmed : held, upload);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, records.length) }, worker));
  return out.filter(Boolean);
}

// What the session of rec holds: its bytes, "complete", "gone", or null where it could not be
// asked (the network, a server refusing).
function check(engine, rec, { headers, getHeaders }) {
  const copy = wireOptions({ headers, retry: RETRY, getHeaders }, rec.sessionURL);
  if (copy.bad) return Promise.resolve(null);
  return new Promise((resolve) => {
    const sink = {
      wantRequests: false,
      report(r) {
        if (r.type === "checked") resolve(r.complete ? "complete" : r.held);
        else if (r.type === "fail") resolve(r.code === "session_expired" ? "gone" : null);
      },
    };
    try {
      engine.check(rec.size, copy.options, { sink, getHeaders: typeof getHeaders === "function" ? getHeaders : null });
    } catch {
      resolve(null);
    }
  });
}

/** One unfinished upload (docs/api.md, "Unfinished uploads"). */
class UnfinishedUpload {
  #record;
  #upload;

  constructor(record, held, upload) {
    this.#record = record;
    this.#upload = upload;
    this.key = record.key;
    this.name = record.name;
    this.size = record.size;
    this.type = record.type;
    this.lastModified = record.lastModified;
    this.url = record.url;
    this.method = record.method;
    this.sessionURL = record.sessionURL;
    this.startedAt = record.startedAt;
    this.touchedAt = record.touchedAt;
    /** Bytes the server holds, asked now (running: as last reported); null if not known. */
    this.confirmed = typeof held === "number" ? held : null;
    /** true: resume() needs no file picker (this browser kept a handle to the file). */
    this.canResume = record.handle != null;
    /** true: an upload runs it now, in this tab or another (resume() waits for it in "queued"). */
    this.running = record.running;
  }

  /**
   * Goes on with the upload from the server's offset, and returns its Upload (as mu.upload
   * does). With a file handle kept, the browser may ask the user for permission to read the
   * file again: call this from a click. Without one, pass the file picked again as
   * options.file. A file that is not the one the upload began with (name, size, modification
   * time) fails the Upload with source_error, before any byte is sent.
   */
  resume(options = {}) {
    const { file, ...rest } = options ?? {};
    const rec = this.#record;
    const source = file ?? rec.handle;
    // key: the file comes from the record's own handle, so a change found in it ends the record
    // (upload.js); a file picked again that differs may just be the wrong one.
    const expected = { name: rec.name, size: rec.size, lastModified: rec.lastModified, key: file == null ? rec.key : null };
    const opts = { ...rest, url: rec.url, method: rec.method, resume: true, [EXPECTED_FILE]: expected };
    if (source == null) {
      // An Upload that fails at once with what to do (invalid_argument), before any request.
      const why = `this browser kept no handle to "${rec.name}": pick the file again and pass it, resume({ file }), or upload it with resume: true (it goes on where it stopped)`;
      return this.#upload(null, { ...opts, [MISSING_FILE]: why });
    }
    return this.#upload(source, opts);
  }

  /** Lets the upload go: its record is dropped (the session stays on the server until it expires). */
  forget() {
    return dropRecord(this.#record.key);
  }
}
