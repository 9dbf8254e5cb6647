// The error every failed upload rejects with (docs/api.md, "Errors"), and its codes: a code is
// always one of ERROR_CODES, whatever was thrown underneath (a DataCloneError's legacy `code`
// is the number 25; a Node-style error's is "ERR_…"), so every code that comes from a thrown
// value or another realm's report goes through errorCode.

/** The codes of docs/api.md ("Errors"), the only values MediaUploadError.code takes. */
export const ERROR_CODES = Object.freeze([
  "invalid_argument",
  "auth_error",
  "http_error",
  "network_error",
  "retries_exhausted",
  "session_expired",
  "protocol_error",
  "checksum_mismatch",
  "source_error",
  "backend_error",
  "aborted",
  "load_error",
]);

const KNOWN = new Set(ERROR_CODES);

/**
 * The documented code of a failure: `value` itself if it is one of ERROR_CODES, or the `code`
 * of a thrown `value` if that is one, else `fallback` (itself one of them: the caller knows
 * what the failure it catches means, the thrown value's own code does not).
 */
export function errorCode(value, fallback) {
  const code = typeof value === "string" ? value : value?.code;
  return KNOWN.has(code) ? code : fallback;
}

/** The error every failed upload rejects with. `code` is one of the codes in docs/api.md. */
export class MediaUploadError extends Error {
  constructor(code, message, { status = 0, responseText = "", sessionURL = null, reason = "", serverMessage = "", cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "MediaUploadError";
    // The last guard: a code that is not one of docs/api.md's is the module's own fault, which
    // the Go side reports as protocol_error too (a panic it recovered).
    this.code = errorCode(code, "protocol_error");
    this.status = status;
    this.responseText = responseText;
    this.sessionURL = sessionURL;
    // What the server's answer said, where it is Google's JSON error: its error.errors[0].reason
    // ("quotaExceeded") and error.message; "" otherwise.
    this.reason = reason;
    this.serverMessage = serverMessage;
  }
}
