// Where `resume: true` remembers an upload's session (shared/API.md, "One upload": resume).

// How long a remembered session is tried again: a session URI lasts about a week, an unused
// one may go within a day (PROTOCOL.md section 2); an expired one costs a 404 and a new session.
const MEMO_MAX_AGE_MS = 6 * 24 * 3600 * 1000;

// With resume: true, the session of an upload is kept in localStorage under a key made of the
// upload (url, method) and the file's identity (name, size, lastModified, type), so that the
// same file offered again, after a reload say, goes on from what the server holds. It returns
// an error message for a call that cannot be resumed. Where storage is unavailable (a worker,
// a privacy mode), nothing is remembered and the upload simply starts anew.
export function sessionMemo(blob, options) {
  if (!(blob instanceof File)) {
    return "mediaupload: resume: true needs a File: its name, size and lastModified tell it again after a reload";
  }
  const type = options.uploadType ?? "resumable";
  if (type !== "resumable" && type !== "auto") {
    return `mediaupload: resume: true needs a resumable upload, not uploadType "${type}"`;
  }
  const key = "mediaupload:" + JSON.stringify([options.url ?? "", String(options.method ?? "POST").toUpperCase(),
    blob.name, blob.size, blob.lastModified, blob.type]);
  const storage = () => {
    try {
      return globalThis.localStorage ?? null;
    } catch {
      return null; // access denied
    }
  };
  const quietly = (fn) => {
    try {
      return fn(storage());
    } catch {
      return null; // full, or denied: resuming is best effort
    }
  };
  return {
    load: () =>
      quietly((s) => {
        const saved = JSON.parse(s?.getItem(key) ?? "null");
        return saved && Date.now() - saved.savedAt < MEMO_MAX_AGE_MS ? saved.sessionURL : null;
      }),
    save: (sessionURL) => quietly((s) => s?.setItem(key, JSON.stringify({ sessionURL, savedAt: Date.now() }))),
    forget: () => quietly((s) => s?.removeItem(key)),
  };
}
