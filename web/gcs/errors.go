package gcs

import (
	"encoding/json"
	"errors"
	"net/http"
)

// The codes of the handler's error answers: stable strings a page may branch on
// (docs/protocol.md section 10 lists them with their statuses).
const (
	CodeBadRequest         = "bad_request"         // 400 (405, 413, 415): the request is not what the handler takes
	CodeOriginNotAllowed   = "origin_not_allowed"  // 403: no Origin, or one not on the handler's list
	CodeUnauthorized       = "unauthorized"        // 401: the app's callback: who is asking is not known
	CodeForbidden          = "forbidden"           // 403: the app's callback refused
	CodeTooLarge           = "too_large"           // 413: the declared size is over the limit
	CodeTypeNotAllowed     = "type_not_allowed"    // 415: the content type is not on the list
	CodeBadName            = "bad_name"            // 400: the object name breaks Cloud Storage's naming rules
	CodeBadMetadata        = "bad_metadata"        // 400: the object's metadata cannot be sent as it is
	CodeStorageError       = "storage_error"       // 502: Cloud Storage refused, or answered what is not a session
	CodeStorageUnavailable = "storage_unavailable" // 503: Cloud Storage could not be reached, or answered 429 or 5xx
	CodeInternal           = "internal_error"      // 500: the app's callback failed, or the backend is set up wrong
)

// Error is what the handler answers a page with when it does not start a session: an HTTP
// status, a code from the list above and a message for a person that says what to do. Message
// is sent to the page; Err (the cause, for the backend's log) never is. StartSession and
// SignStart return an *Error for a bad argument (before any request) and for a bad answer of
// Cloud Storage; the app's callback returns one to refuse (Forbidden, Unauthorized).
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "gcs: " + e.Message + ": " + e.Err.Error()
	}
	return "gcs: " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Forbidden is the app's refusal: the page gets 403 with code "forbidden" and message.
func Forbidden(message string) error {
	return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: message}
}

// Unauthorized is the app's refusal of a request whose sender it does not know (no session
// cookie, say): the page gets 401 with code "unauthorized" and message.
func Unauthorized(message string) error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: message}
}

func refuse(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// asError gives the answer for err: its own when it is an *Error with a status and a code,
// else a 500 that tells the page nothing of the cause.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.Status >= 400 && e.Code != "" && e.Message != "" {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Message: "the backend failed to decide on this upload: try again later, or tell the site's owner (the backend's log has the cause)", Err: err}
}

// writeError answers {"error": {"code", "message"}}: the shape of Google's own JSON errors
// (whose "code" is the status), with a string code instead.
func writeError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", "POST")
	}
	writeJSON(w, e.Status, map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	// A session URI is a credential until its upload ends (docs/protocol.md section 10): no
	// cache keeps it.
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // a session URI's "&" as it is
	_ = enc.Encode(v)
}
