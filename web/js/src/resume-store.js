// Where `resume: true` remembers an upload's session (docs/api.md, "Resuming after a reload"),
// and the lock that lets one tab at a time upload a given file.
//
// The record is kept in IndexedDB (database "mediaupload", store "sessions"), which workers
// have too, under a key made of the upload (url, method) and the file's identity (name, size,
// lastModified, type), so that the same file offered again, after a reload or in another tab,
// goes on from what the server holds. Records of earlier versions, in localStorage, are read
// once and moved. Storage is best effort: where IndexedDB is missing, refused (a privacy mode,
// a sandboxed frame) or full, nothing is remembered and the upload simply starts anew; it never
// fails for that.
//
// The same key names a Web Lock (navigator.locks): an upload with resume: true holds it until
// it settles, so the same file resumed in two tabs is uploaded by one; the other waits (state
// "queued"), then reads the record again and finishes from the server's state. A finished
// upload's record stays a little while, marked done, for such a waiting tab: its session,
// asked, answers that the object is complete (docs/protocol.md section 4).
//
// How an upload's end tells on its record (docs/api.md, "Unfinished uploads"): done marks it
// done; abort() and a failure for good delete it (upload.js says which failures keep it). From
// that moment this page lists it no more, even before IndexedDB has carried it out, and the
// other listeners of the page and of the origin's other tabs hear that it ended (a message on
// the BroadcastChannel "mediaupload", { key, ended: true }: react.js's useUnfinished listens).

// How long a remembered session is tried again: a session URI lasts about a week, an unused
// one may go within a day (docs/protocol.md section 2); an expired one costs a 404 and a new session.
const MEMO_MAX_AGE_MS = 6 * 24 * 3600 * 1000;
// How long a finished upload's record stays, for a tab that waited on the lock.
const DONE_MAX_AGE_MS = 10 * 60 * 1000;
const PREFIX = "mediaupload:";

let opened = null; // Promise<IDBDatabase | null>, once per realm

// A page that is going away (a reload, a closed tab) fails its uploads in flight on its way out,
// with whatever the engine makes of it: WebKit fails reads of the File a millisecond before
// "pagehide", which looks like a File changed on disk (source_error). Such a failure says nothing
// about the upload, and its record must outlive the page. So the failures that a page on its way
// out can cause (upload.js: source_error, auth_error) delete their record only a moment later,
// and not at all if the page hides meanwhile. Every other ending is carried out at once: none of
// them comes from the page going away (abort() is the page's own call).
const HELD_MS = 500;
// Records whose upload ended in this realm, until the store has carried the end out (or, held,
// until the page hides): not listed. key -> { timer } (timer: a held deletion's, else 0).
const ending = new Map();
globalThis.addEventListener?.("pagehide", () => {
  for (const e of ending.values()) clearTimeout(e.timer);
  ending.clear(); // should the page come back from the back/forward cache, the store is the truth
});

/** The database, or null where IndexedDB cannot be used; older localStorage records moved in. */
function database() {
  opened ??= new Promise((resolve) => {
    try {
      const req = globalThis.indexedDB.open("mediaupload", 1);
      req.onupgradeneeded = () => req.result.createObjectStore("sessions");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => resolve(null);
      req.onblocked = () => resolve(null);
    } catch {
      resolve(null); // no IndexedDB, or access denied
    }
  }).then(async (db) => {
    if (db) await moveFromLocalStorage(db);
    return db;
  });
  return opened;
}

/** Runs fn(store) in a transaction; resolves to the last request's result, or null on any failure. */
async function inStore(mode, fn) {
  const db = await database();
  if (!db) return null;
  return new Promise((resolve) => {
    try {
      const tx = db.transaction("sessions", mode);
      let result = null;
      const req = fn(tx.objectStore("sessions"));
      if (req) req.onsuccess = () => (result = req.result ?? null);
      tx.oncomplete = () => resolve(result);
      tx.onerror = tx.onabort = (e) => {
        e?.preventDefault?.(); // a quota error: nothing remembered, nothing thrown
        resolve(null);
      };
    } catch {
      resolve(null);
    }
  });
}

/** Moves the records an earlier version kept in localStorage (read once, then removed). */
async function moveFromLocalStorage(db) {
  let storage;
  try {
    storage = globalThis.localStorage;
    if (!storage) return;
  } catch {
    return;
  }
  const old = [];
  try {
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i);
      if (key?.startsWith(PREFIX)) old.push([key, JSON.parse(storage.getItem(key) ?? "null")]);
    }
  } catch {
    return;
  }
  if (!old.length) return;
  await new Promise((resolve) => {
    try {
      const tx = db.transaction("sessions", "readwrite");
      const store = tx.objectStore("sessions");
      for (const [key, rec] of old) {
        if (rec?.sessionURL) store.put({ sessionURL: rec.sessionURL, savedAt: rec.savedAt ?? 0 }, key);
      }
      tx.oncomplete = tx.onerror = tx.onabort = () => resolve();
    } catch {
      resolve();
    }
  });
  for (const [key] of old) {
    try {
      storage.removeItem(key);
    } catch {
      // left where it is: read again next time, which does no harm
    }
  }
}

// It returns an error message for a call that cannot be resumed, else the upload's memo:
//   load(waited) -> Promise<sessionURL | null>   (a finished upload's only if waited)
//   save(url)                                     (fire and forget)
//   finished(url), forget(held)                   the upload ended: done; aborted or failed for
//                                                 good (held: a failure a page on its way out
//                                                 causes too, see HELD_MS). Nothing is saved after.
//   touch(progress)                               the upload moved: touchedAt and confirmed (now
//                                                 and then), and its progress told to the other tabs
//   lock(onWait, onProgress) -> Promise<release()>  onWait: another tab holds it; we wait,
//                                                 hearing that tab's progress (onProgress)
// `handle`, a FileSystemFileHandle the File came from, is kept in the record where the browser
// can store one (Chromium), so that the upload can go on after a reload without a file picker.
export function sessionMemo(blob, options, handle = null) {
  if (!(blob instanceof File)) {
    return "resume: true needs a File: its name, size and lastModified tell it again after a reload";
  }
  // Only a session can be resumed (core decides what "auto" comes to: a File of over 5 MiB).
  const type = options.uploadType;
  if (type === "media" || type === "multipart") return `resume: true needs a resumable upload, not uploadType "${type}"`;
  const url = String(options.url ?? "");
  const method = String(options.method ?? "POST").toUpperCase();
  const key = recordKey({ url, method, name: blob.name, size: blob.size, lastModified: blob.lastModified, type: blob.type });
  const about = { url, method, name: blob.name, size: blob.size, lastModified: blob.lastModified, type: blob.type };
  const stop = new AbortController(); // ends a wait for the lock when the upload ends first
  let startedAt = Date.now();
  let lastTouch = 0;
  let session = null;
  let confirmed = 0; // the bytes the server confirmed, as the upload last reported them
  let over = false; // the upload ended: nothing more is saved
  let sessionBeforeWait = null; // what the record named when this upload began to wait for the lock
  const put = async (rec) => {
    // A handle the browser cannot store (DataCloneError) is left out: the rest is remembered.
    if (rec.handle && (await inStore("readwrite", (s) => s.put(rec, key))) !== null) return;
    if (over && !rec.done) return; // ended meanwhile: the second try would outlive the end
    const { handle: _, ...plain } = rec;
    await inStore("readwrite", (s) => s.put(plain, key));
  };
  return {
    key,
    async load(waited = false) {
      const rec = await inStore("readonly", (s) => s.get(key));
      // Gone while this upload waited: the one that held the lock was aborted or failed for
      // good, which deletes the record at once. Its session is this one's to go on with (or
      // to find gone) all the same, as it would have been had the deletion come later.
      if (!rec?.sessionURL) return waited ? sessionBeforeWait : null;
      if (rec.startedAt) startedAt = rec.startedAt;
      const age = Date.now() - (rec.savedAt ?? 0);
      if (rec.done) return waited && age < DONE_MAX_AGE_MS ? rec.sessionURL : null;
      return age < MEMO_MAX_AGE_MS ? rec.sessionURL : null;
    },
    save(sessionURL) {
      if (over) return;
      session = sessionURL;
      lastTouch = Date.now();
      // An upload of the file under way again: an end held back for the record is called off.
      clearTimeout(ending.get(key)?.timer);
      ending.delete(key);
      void put({ ...about, sessionURL, startedAt, savedAt: lastTouch, confirmed, handle });
    },
    touch(progress) {
      channel()?.postMessage({ key, ...progress });
      confirmed = progress.confirmed;
      // touchedAt: written at most every few seconds (IndexedDB is no place for every chunk).
      if (session && Date.now() - lastTouch > TOUCH_EVERY_MS) this.save(session);
    },
    finished(sessionURL) {
      over = true;
      // Kept a little while, marked done, for a tab that waited on the lock for this file.
      if (sessionURL) endRecord(key, () => put({ ...about, sessionURL, startedAt, savedAt: Date.now(), done: true }));
    },
    forget(held = false) {
      over = true;
      endRecord(key, () => inStore("readwrite", (s) => s.delete(key)), held);
    },
    async lock(onWait, onProgress) {
      const locks = globalThis.navigator?.locks;
      let release = () => {};
      if (!locks?.request) return { release, waited: false };
      const held = new Promise((r) => (release = r));
      const acquire = (opts) =>
        new Promise((resolve, reject) => {
          locks.request(key, opts, (lock) => {
            resolve(lock);
            return lock ? held : undefined;
          }).catch(reject);
        });
      try {
        if (await acquire({ ifAvailable: true })) return { release, waited: false };
        onWait();
        sessionBeforeWait = await this.load(false);
        // While another tab uploads the file, its progress is this one's to show.
        const hear = ({ data }) => data?.key === key && !data.ended && onProgress?.(data);
        channel()?.addEventListener("message", hear);
        try {
          await acquire({ signal: stop.signal });
        } finally {
          channel()?.removeEventListener("message", hear);
        }
        return { release, waited: true };
      } catch {
        return { release, waited: false }; // locks refused, or the upload ended meanwhile
      }
    },
    /** Ends a wait for the lock (the upload settled before it got it). */
    cancel: () => stop.abort(),
  };
}

// How often an upload's record notes that it moved (touchedAt).
const TOUCH_EVERY_MS = 5000;

/** The key of an upload's record (and the name of its Web Lock): the upload and the file. */
function recordKey({ url, method, name, size, lastModified, type }) {
  return PREFIX + JSON.stringify([url, method, name, size, lastModified, type]);
}

let bus = null; // the BroadcastChannel the tabs of an origin tell each other's progress on
function channel() {
  if (bus === null) bus = typeof BroadcastChannel === "function" ? new BroadcastChannel("mediaupload") : false;
  return bus || null;
}

/**
 * The records of uploads left unfinished (not done, younger than six days), each
 * { key, sessionURL, url, method, name, size, type, lastModified, startedAt, touchedAt, handle,
 * confirmed } (handle: a FileSystemFileHandle, or null; confirmed: the bytes the server had
 * confirmed at touchedAt, or null). Whether an upload runs one now is whileIdle's to tell.
 * Where IndexedDB cannot be used: none.
 */
export async function unfinishedRecords() {
  const all = await inStore("readonly", (s) => s.getAll());
  const keys = await inStore("readonly", (s) => s.getAllKeys());
  if (!all || !keys) return [];
  const now = Date.now();
  const unfinished = (rec) => rec?.sessionURL && !rec.done && now - (rec.savedAt ?? 0) < MEMO_MAX_AGE_MS && rec.size !== undefined;
  return all
    .map((rec, i) => ({ rec, key: keys[i] }))
    .filter(({ rec, key }) => unfinished(rec) && !ending.has(key))
    .map(({ rec, key }) => ({
      key,
      sessionURL: rec.sessionURL,
      url: rec.url,
      method: rec.method,
      name: rec.name,
      size: rec.size,
      type: rec.type ?? "",
      lastModified: rec.lastModified,
      startedAt: rec.startedAt ?? rec.savedAt,
      touchedAt: rec.savedAt,
      handle: rec.handle ?? null,
      confirmed: rec.confirmed ?? null,
    }));
}

/** What whileIdle resolves to where an upload holds the record's lock. */
export const RUNNING = Symbol("running");

/**
 * Runs fn(stillUnfinished) holding the Web Lock of the record key, where no upload holds it
 * now, and resolves to what fn resolves to; where an upload holds it (in this tab or another),
 * resolves to RUNNING and runs nothing. Holding the lock, nothing can start on the record's
 * session meanwhile: an upload of the same file waits ("queued") until fn is done.
 * stillUnfinished: the record, read again under the lock, is not done (an upload may have
 * finished it between the listing and the lock). Without Web Locks, fn runs all the same.
 */
export async function whileIdle(key, fn) {
  const locks = globalThis.navigator?.locks;
  const run = async () => {
    const rec = await inStore("readonly", (s) => s.get(key));
    return fn(Boolean(rec?.sessionURL && !rec.done));
  };
  if (!locks?.request) return run();
  try {
    return await locks.request(key, { ifAvailable: true }, (lock) => (lock ? run() : RUNNING));
  } catch {
    return run(); // locks refused (an opaque origin, say)
  }
}

/** Drops the record of key at once (an upload forgotten, or whose session is gone or complete). */
export function dropRecord(key) {
  return endRecord(key, () => inStore("readwrite", (s) => s.delete(key)));
}

// Ends the record of key by carrying out change (its deletion, or its marking as done): from now
// on it is not listed here; once the store has it, the other listeners hear it. held: a
// moment later, and not at all if the page hides first (HELD_MS). Resolves when it is done.
function endRecord(key, change, held = false) {
  clearTimeout(ending.get(key)?.timer);
  const entry = { timer: 0 };
  ending.set(key, entry);
  const carryOut = () =>
    change().then(() => {
      // Saved again meanwhile (a new upload of the file), or the page hid: not ours to tell.
      if (ending.get(key) !== entry) return;
      ending.delete(key);
      channel()?.postMessage({ key, ended: true });
    });
  if (!held) return carryOut();
  return new Promise((resolve) => (entry.timer = setTimeout(() => carryOut().then(resolve), HELD_MS)));
}
