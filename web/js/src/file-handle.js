// A FileSystemFileHandle as an upload's source (docs/api.md, "Unfinished uploads"): where the
// browser has them (Chromium: showOpenFilePicker, a drop's getAsFileSystemHandle, the origin
// private file system), `mu.upload(handle, options)` uploads the File it holds, and with
// `resume: true` the handle is kept with the upload's record, so that after a reload the
// upload goes on without a file picker. Reading it may need the user's permission, which the
// browser asks for only during a user gesture (a click).

/** Whether v is a FileSystemFileHandle (not a directory's). */
export function isFileHandle(v) {
  return typeof globalThis.FileSystemFileHandle === "function" && v instanceof globalThis.FileSystemFileHandle;
}

/**
 * The File a handle holds, once the page may read it: asked for where it is not granted yet
 * (a handle from an earlier visit). Rejects with an Error saying what to do when the browser
 * refuses, or the file is gone.
 */
export async function fileOf(handle) {
  const mode = { mode: "read" };
  let permission = (await handle.queryPermission?.(mode)) ?? "granted";
  if (permission === "prompt") {
    try {
      permission = await handle.requestPermission(mode);
    } catch (err) {
      // No user gesture (a click) to ask during: the browser refuses to ask.
      throw withCause(`reading "${handle.name}" needs the user's permission, which the browser asks for only during a click: call this from a click handler`, err);
    }
  }
  if (permission !== "granted") {
    throw new Error(`the permission to read "${handle.name}" was not given: pick the file again to upload it`);
  }
  try {
    return await handle.getFile();
  } catch (err) {
    throw withCause(`"${handle.name}" can no longer be read (${err?.name ?? "Error"}: it was moved or removed): pick the file again`, err);
  }
}

function withCause(message, cause) {
  const err = new Error(message);
  err.cause = cause;
  return err;
}

/**
 * The option (a symbol, never sent anywhere) by which a resumed upload names the file it must
 * be ({ name, size, lastModified, key }): a file changed since its upload began must not have its
 * new bytes stored after the old ones. key: the record's, where the file is read from the
 * record's own handle (a change found then ends the record), else null.
 */
export const EXPECTED_FILE = Symbol("mediaupload.expectedFile");

/** What differs between the expected file and file, as a message, or "" where nothing does. */
export function differs(expected, file) {
  if (!expected) return "";
  if (!(file instanceof File)) return "an unfinished upload goes on with its File (or its file handle) only";
  const what = [];
  if (file.name !== expected.name) what.push(`its name is "${file.name}", not "${expected.name}"`);
  if (file.size !== expected.size) what.push(`its size is ${file.size} bytes, not ${expected.size}`);
  if (file.lastModified !== expected.lastModified) what.push("it was modified since");
  if (!what.length) return "";
  return `the file is not the one this upload began with (${what.join("; ")}): its new bytes must not follow the old ones; upload it anew`;
}

/** The option by which unfinished.js says why an upload it resumes has no file to upload. */
export const MISSING_FILE = Symbol("mediaupload.missingFile");
