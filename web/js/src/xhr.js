// new mu.XMLHttpRequest(options) of docs/api.md ("Widgets that do their own
// XMLHttpRequest"): the part of XMLHttpRequest that upload widgets use, with the body sent by
// an Upload (the media upload protocol) instead of one POST.
//
// What a widget can see follows the XMLHttpRequest standard (xhr.spec.whatwg.org): send()
// fires loadstart on the object, then on `upload` (only if it had listeners then); the upload
// reports progress, then progress/load/loadend on `upload`; the answer moves readyState
// 2 -> 3 -> 4 with a readystatechange each, a progress, then load and loadend. A network error,
// abort() or the timeout runs the "request error steps": readyState 4, readystatechange, the
// event (error/abort/timeout) and loadend on `upload` if it was not complete, then on the
// object; status 0. abort() leaves readyState 0.
//
// An HTTP refusal the upload ends with (403, a 5xx after every retry, …) is an answer, not a
// network error, as a real XMLHttpRequest would see it: status, responseText, load.

import { copyEvent, defineHandlers } from "./events.js";

const UNSENT = 0;
const OPENED = 1;
const HEADERS_RECEIVED = 2;
const LOADING = 3;
const DONE = 4;

// Failures that carry the server's answer (a status and its body).
const ANSWERED = new Set(["http_error", "retries_exhausted", "session_expired"]);

const STATUS_TEXT = {
  200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
  404: "Not Found", 408: "Request Timeout", 410: "Gone", 429: "Too Many Requests",
  500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
};

const invalidState = (what) => new DOMException(`Failed to execute '${what}': the object's state must be OPENED.`, "InvalidStateError");

// An EventTarget with on<type> handler properties (events.js), as XMLHttpRequestEventTarget.
class HandlerTarget extends EventTarget {
  listened = false; // a listener or handler was ever added (the upload listener flag)

  addEventListener(type, listener, options) {
    if (listener) this.listened = true;
    super.addEventListener(type, listener, options);
  }
}

const PROGRESS_TYPES = ["loadstart", "progress", "abort", "error", "load", "timeout", "loadend"];

/** XMLHttpRequest.upload's stand-in. */
export class XMLHttpRequestUpload extends HandlerTarget {}
defineHandlers(XMLHttpRequestUpload, PROGRESS_TYPES);

/** Makes the XMLHttpRequest class for one loaded module (`upload` is mu.upload). */
export function xhrClass(upload) {
  class MediaUploadXMLHttpRequest extends HandlerTarget {
    static UNSENT = UNSENT;
    static OPENED = OPENED;
    static HEADERS_RECEIVED = HEADERS_RECEIVED;
    static LOADING = LOADING;
    static DONE = DONE;

    #options;
    #state = UNSENT;
    #sendFlag = false;
    #method = "";
    #url = "";
    #headers = {};
    #upload = new XMLHttpRequestUpload();
    #uploadComplete = false;
    #uploadListened = false;
    #up = null; // the running Upload
    #sent = 0; // the bytes the upload reported sent
    #size = 0; // the body's
    #run = 0; // bumped by open/abort/end, so a stale Upload's reports are dropped
    #status = 0;
    #body = ""; // the answer's text
    #contentType = "";
    #responseType = "";
    #timeout = 0;
    #timer = null;
    #sentAt = 0;
    withCredentials = false;

    constructor(options) {
      super();
      this.#options = options ?? {};
    }

    get UNSENT() { return UNSENT; }
    get OPENED() { return OPENED; }
    get HEADERS_RECEIVED() { return HEADERS_RECEIVED; }
    get LOADING() { return LOADING; }
    get DONE() { return DONE; }

    get readyState() {
      return this.#state;
    }

    get upload() {
      return this.#upload;
    }

    /** The Upload doing the work (null before send): its state, sessionURL, pause/resume. */
    get mediaUpload() {
      return this.#up;
    }

    get status() {
      return this.#status;
    }

    get statusText() {
      return this.#status ? STATUS_TEXT[this.#status] ?? "" : "";
    }

    get responseURL() {
      return this.#status ? this.#url : "";
    }

    get responseType() {
      return this.#responseType;
    }

    set responseType(t) {
      if (this.#state === LOADING || this.#state === DONE) {
        throw new DOMException("Failed to set 'responseType': the object's state must not be LOADING or DONE.", "InvalidStateError");
      }
      if (["", "text", "json", "arraybuffer", "blob", "document"].includes(t)) this.#responseType = t;
    }

    get responseText() {
      if (this.#responseType !== "" && this.#responseType !== "text") {
        throw new DOMException("Failed to read 'responseText': responseType is not '' or 'text'.", "InvalidStateError");
      }
      return this.#state === LOADING || this.#state === DONE ? this.#body : "";
    }

    get response() {
      const t = this.#responseType;
      if (t === "" || t === "text") return this.responseText;
      if (this.#state !== DONE || !this.#status) return null;
      if (t === "json") {
        try {
          return JSON.parse(this.#body);
        } catch {
          return null;
        }
      }
      if (t === "arraybuffer") return new TextEncoder().encode(this.#body).buffer;
      if (t === "blob") return new Blob([this.#body], { type: this.#contentType });
      return null; // "document": not supported
    }

    get responseXML() {
      return null;
    }

    get timeout() {
      return this.#timeout;
    }

    set timeout(ms) {
      this.#timeout = Math.max(0, Number(ms) || 0);
      if (this.#sendFlag) this.#armTimer();
    }

    getResponseHeader(name) {
      if (this.#state < HEADERS_RECEIVED || !this.#status) return null;
      return String(name).toLowerCase() === "content-type" && this.#contentType ? this.#contentType : null;
    }

    getAllResponseHeaders() {
      if (this.#state < HEADERS_RECEIVED || !this.#status || !this.#contentType) return "";
      return `content-type: ${this.#contentType}\r\n`;
    }

    overrideMimeType() {}

    open(method, url) {
      this.#terminate();
      this.#method = String(method).toUpperCase();
      this.#url = new URL(String(url), globalThis.location?.href).href;
      this.#headers = {};
      this.#sendFlag = false;
      this.#uploadComplete = false;
      this.#status = 0;
      this.#body = "";
      this.#contentType = "";
      if (this.#state !== OPENED) {
        this.#state = OPENED;
        this.#fire(this, "readystatechange");
      }
    }

    setRequestHeader(name, value) {
      if (this.#state !== OPENED || this.#sendFlag) throw invalidState("setRequestHeader");
      const key = String(name);
      const old = Object.keys(this.#headers).find((k) => k.toLowerCase() === key.toLowerCase());
      this.#headers[old ?? key] = old ? `${this.#headers[old]}, ${value}` : String(value);
    }

    send(body) {
      if (this.#state !== OPENED || this.#sendFlag) throw invalidState("send");
      const { blob, fields } = takeBody(body);
      const headers = { ...this.#options.headers };
      let contentType = this.#options.contentType;
      for (const [k, v] of Object.entries(this.#headers)) {
        if (k.toLowerCase() !== "content-type") headers[k] = v;
        // A form's Content-Type is the module's; a blob's is the widget's unless options say.
        else if (!fields) contentType ??= v;
      }
      let { metadata } = this.#options;
      // A form holds exactly one File (a FormData keeps every Blob as a File), or the upload
      // refuses it: there is no file to tell formFields of.
      if (fields && blob && typeof this.#options.formFields === "function") {
        metadata = this.#options.formFields(fields, blob) ?? metadata;
      }
      const options = { ...this.#options, headers, metadata, method: this.#method };
      delete options.formFields;
      delete options.url;
      options.url = this.#url;
      if (contentType !== undefined) options.contentType = contentType;

      this.#sendFlag = true;
      this.#uploadComplete = false;
      this.#uploadListened = this.#upload.listened;
      const run = ++this.#run;
      this.#sentAt = performance.now();
      const size = blob instanceof Blob ? blob.size : 0;
      this.#fire(this, "loadstart", 0, 0);
      if (run !== this.#run) return; // a loadstart listener called abort() or open()
      if (this.#uploadListened) this.#fire(this.#upload, "loadstart", 0, size);
      if (run !== this.#run || !this.#sendFlag) return;
      this.#armTimer();

      const up = upload(blob, options);
      this.#up = up;
      this.#size = size;
      this.#sent = 0;
      // As a real XMLHttpRequest, a progress event only when bytes went out.
      up.addEventListener("progress", (e) => {
        if (run !== this.#run || e.loaded <= this.#sent) return;
        this.#sent = e.loaded;
        if (this.#uploadListened) this.#upload.dispatchEvent(copyEvent(e));
      });
      up.promise.then(
        (result) => run === this.#run && this.#answer(result.status, result.body ?? "", result.metadata != null, size),
        (err) => {
          if (run !== this.#run) return;
          if (err.code !== "aborted" && ANSWERED.has(err.code) && err.status > 0) {
            this.#answer(err.status, err.responseText ?? "", false, size);
          } else {
            this.#requestError("error");
          }
        },
      );
    }

    abort() {
      const active = this.#sendFlag && this.#state !== DONE;
      this.#terminate();
      if (active || this.#state === HEADERS_RECEIVED || this.#state === LOADING) this.#requestError("abort");
      if (this.#state === DONE) {
        // No readystatechange here (the standard's abort() steps).
        this.#state = UNSENT;
        this.#status = 0;
        this.#body = "";
      }
    }

    // The upload is over and the server answered: upload's end, then the response's steps.
    #answer(status, text, json, size) {
      const run = this.#run;
      this.#clearTimer();
      if (this.#uploadListened) {
        this.#fire(this.#upload, "progress", size, size);
        this.#fire(this.#upload, "load", size, size);
        this.#fire(this.#upload, "loadend", size, size);
      }
      this.#uploadComplete = true;
      if (run !== this.#run) return;
      this.#status = status;
      this.#contentType = json ? "application/json; charset=UTF-8" : text ? "text/plain; charset=utf-8" : "";
      this.#state = HEADERS_RECEIVED;
      this.#fire(this, "readystatechange");
      if (run !== this.#run) return;
      const length = new TextEncoder().encode(text).length;
      this.#body = text;
      this.#state = LOADING;
      this.#fire(this, "readystatechange");
      if (run !== this.#run) return;
      this.#fire(this, "progress", length, length);
      if (run !== this.#run) return;
      this.#sendFlag = false;
      this.#up = null;
      this.#state = DONE;
      this.#fire(this, "readystatechange");
      if (run !== this.#run) return;
      this.#fire(this, "load", length, length);
      this.#fire(this, "loadend", length, length);
    }

    // The standard's "request error steps" for error, abort and timeout.
    #requestError(type) {
      this.#terminate();
      this.#state = DONE;
      this.#sendFlag = false;
      this.#status = 0;
      this.#body = "";
      this.#contentType = "";
      this.#fire(this, "readystatechange");
      if (!this.#uploadComplete) {
        this.#uploadComplete = true;
        if (this.#uploadListened) {
          // Chromium's numbers: what was sent, on abort; nothing, on an error or timeout.
          const [loaded, total] = type === "abort" ? [this.#sent, this.#size] : [0, 0];
          this.#fire(this.#upload, type, loaded, total);
          this.#fire(this.#upload, "loadend", loaded, total);
        }
      }
      this.#fire(this, type, 0, 0);
      this.#fire(this, "loadend", 0, 0);
    }

    // Stops the running Upload (if any) and drops whatever it still reports.
    #terminate() {
      this.#run++;
      this.#clearTimer();
      const up = this.#up;
      this.#up = null;
      up?.abort();
    }

    #armTimer() {
      this.#clearTimer();
      if (!this.#timeout) return;
      const run = this.#run;
      const left = Math.max(0, this.#sentAt + this.#timeout - performance.now());
      this.#timer = setTimeout(() => {
        if (run === this.#run && this.#sendFlag) this.#requestError("timeout");
      }, left);
    }

    #clearTimer() {
      if (this.#timer !== null) clearTimeout(this.#timer);
      this.#timer = null;
    }

    #fire(target, type, loaded, total) {
      const e = loaded === undefined ? new Event(type) : new ProgressEvent(type, { loaded, total, lengthComputable: total > 0 });
      target.dispatchEvent(e);
    }
  }
  defineHandlers(MediaUploadXMLHttpRequest, [...PROGRESS_TYPES, "readystatechange"]);
  return MediaUploadXMLHttpRequest;
}

// The Blob to upload, and a form's other fields. A FormData must hold exactly one File.
function takeBody(body) {
  if (body instanceof Blob) return { blob: body, fields: null };
  if (typeof FormData !== "undefined" && body instanceof FormData) {
    let blob = null;
    let files = 0;
    const fields = {};
    for (const [name, value] of body.entries()) {
      if (value instanceof Blob) {
        files++;
        blob = value;
      } else if (name in fields) {
        fields[name] = [].concat(fields[name], value);
      } else {
        fields[name] = value;
      }
    }
    // More or fewer than one File: the Upload rejects it (invalid_argument), and the widget
    // sees a network error, as the standard has it for a body that cannot be sent.
    return { blob: files === 1 ? blob : null, fields };
  }
  // The other bodies a real XMLHttpRequest sends, as the Blob it would send: a string as UTF-8
  // text/plain, bytes as they are, URLSearchParams as a urlencoded form.
  if (typeof body === "string") return { blob: new Blob([body], { type: "text/plain;charset=UTF-8" }), fields: null };
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return { blob: new Blob([body]), fields: null };
  if (typeof URLSearchParams !== "undefined" && body instanceof URLSearchParams) {
    return { blob: new Blob([body.toString()], { type: "application/x-www-form-urlencoded;charset=UTF-8" }), fields: null };
  }
  return { blob: body ?? null, fields: null };
}
