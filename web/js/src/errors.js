// The error every failed upload rejects with (docs/api.md, "Errors").

/** The error every failed upload rejects with. `code` is one of the codes in docs/api.md. */
export class MediaUploadError extends Error {
  constructor(code, message, { status = 0, responseText = "", sessionURL = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "MediaUploadError";
    this.code = code;
    this.status = status;
    this.responseText = responseText;
    this.sessionURL = sessionURL;
  }
}
