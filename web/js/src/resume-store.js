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

// How long a remembered session is tried again: a session URI lasts about a week, an unused
// one may go within a day (docs/protocol.md section 2); an expired one costs a 404 and a new session.
const MEMO_MAX_AGE_MS = 6 * 24 * 3600 * 1000;
// How long a finished upload's record stays, for a tab that waited on the lock.
const DONE_MAX_AGE_MS = 10 * 60 * 1000;
const PREFIX = "mediaupload:";

let opened = null; // Promise<IDBDatabase | null>, once per realm

// A page that is going away (a reload, a closed tab) fails its uploads in flight on its way out,
// with whatever the engine makes of it: WebKit fails reads of the File, which looks like a File
// changed on disk, a millisecond before "pagehide". Such failures say nothing about the
// upload, so a record is forgotten only a moment after the failure, and not at all if the
// page is hidden meanwhile.
const FORGET_AFTER_MS = 500;
const forgetting = new Set(); // timers of forget() calls not carried out yet
globalThis.addEventListener?.("pagehide", () => {
  for (const t of forgetting) clearTimeout(t);
  forgetting.clear();
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
//   save(url), finished(url), forget()            (fire and forget; forget: a moment later)
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
  const put = async (rec) => {
    // A handle the browser cannot store (DataCloneError) is left out: the rest is remembered.
    if (rec.handle && (await inStore("readwrite", (s) => s.put(rec, key))) !== null) return;
    const { handle: _, ...plain } = rec;
    await inStore("readwrite", (s) => s.put(plain, key));
  };
  return {
    key,
    async load(waited = false) {
      const rec = await inStore("readonly", (s) => s.get(key));
      if (!rec?.sessionURL) return null;
      if (rec.startedAt) startedAt = rec.startedAt;
      const age = Date.now() - (rec.savedAt ?? 0);
      if (rec.done) return waited && age < DONE_MAX_AGE_MS ? rec.sessionURL : null;
      return age < MEMO_MAX_AGE_MS ? rec.sessionURL : null;
    },
    save(sessionURL) {
      session = sessionURL;
      lastTouch = Date.now();
      void put({ ...about, sessionURL, startedAt, savedAt: lastTouch, confirmed, handle });
    },
    touch(progress) {
      channel()?.postMessage({ key, ...progress });
      confirmed = progress.confirmed;
      // touchedAt: written at most every few seconds (IndexedDB is no place for every chunk).
      if (session && Date.now() - lastTouch > TOUCH_EVERY_MS) this.save(session);
    },
    finished: (sessionURL) => (sessionURL ? void put({ ...about, sessionURL, startedAt, savedAt: Date.now(), done: true }) : undefined),
    forget() {
      const t = setTimeout(() => {
        forgetting.delete(t);
        inStore("readwrite", (s) => s.delete(key));
      }, FORGET_AFTER_MS);
      forgetting.add(t);
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
        // While another tab uploads the file, its progress is this one's to show.
        const hear = ({ data }) => data?.key === key && onProgress?.(data);
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
    .filter(({ rec }) => unfinished(rec))
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

/** Drops the record of key at once (an upload forgotten, done or whose session is gone). */
export function dropRecord(key) {
  return inStore("readwrite", (s) => s.delete(key)).then(() => {});
}
