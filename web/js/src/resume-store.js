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
//   lock(onWait) -> Promise<release()>            onWait: another tab holds it; we wait
export function sessionMemo(blob, options) {
  if (!(blob instanceof File)) {
    return "resume: true needs a File: its name, size and lastModified tell it again after a reload";
  }
  // Only a session can be resumed (core decides what "auto" comes to: a File of over 5 MiB).
  const type = options.uploadType;
  if (type === "media" || type === "multipart") return `resume: true needs a resumable upload, not uploadType "${type}"`;
  const key = PREFIX + JSON.stringify([options.url ?? "", String(options.method ?? "POST").toUpperCase(),
    blob.name, blob.size, blob.lastModified, blob.type]);
  const put = (rec) => void inStore("readwrite", (s) => s.put(rec, key));
  const stop = new AbortController(); // ends a wait for the lock when the upload ends first
  return {
    key,
    async load(waited = false) {
      const rec = await inStore("readonly", (s) => s.get(key));
      if (!rec?.sessionURL) return null;
      const age = Date.now() - (rec.savedAt ?? 0);
      if (rec.done) return waited && age < DONE_MAX_AGE_MS ? rec.sessionURL : null;
      return age < MEMO_MAX_AGE_MS ? rec.sessionURL : null;
    },
    save: (sessionURL) => put({ sessionURL, savedAt: Date.now() }),
    finished: (sessionURL) => (sessionURL ? put({ sessionURL, savedAt: Date.now(), done: true }) : undefined),
    forget() {
      const t = setTimeout(() => {
        forgetting.delete(t);
        inStore("readwrite", (s) => s.delete(key));
      }, FORGET_AFTER_MS);
      forgetting.add(t);
    },
    async lock(onWait) {
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
        await acquire({ signal: stop.signal });
        return { release, waited: true };
      } catch {
        return { release, waited: false }; // locks refused, or the upload ended meanwhile
      }
    },
    /** Ends a wait for the lock (the upload settled before it got it). */
    cancel: () => stop.abort(),
  };
}
