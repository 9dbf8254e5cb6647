package core

import (
	"errors"
	"strconv"
)

// The error codes of docs/api.md. Every error Upload.Run returns maps onto exactly one of
// them through [Code].
const (
	CodeInvalidArgument  = "invalid_argument"
	CodeHTTP             = "http_error"
	CodeNetwork          = "network_error"
	CodeRetriesExhausted = "retries_exhausted"
	CodeSessionExpired   = "session_expired"
	CodeProtocol         = "protocol_error"
	CodeChecksum         = "checksum_mismatch"
	CodeAborted          = "aborted"
	CodeAuth             = "auth_error"
	CodeSource           = "source_error"
	CodeBackend          = "backend_error"
)

// The messages of the errors below are written for a person reading them in a page's console
// or an error banner: what failed, where, and the likely reasons, with no package names. The
// underlying error stays reachable through Unwrap (the JS side's error.cause).

// Code returns the docs/api.md code for err: the code of the first error in its chain that
// has one, and "network_error" for anything else.
func Code(err error) string {
	if err == nil {
		return ""
	}
	// A plain walk down the Unwrap chain: errors.As would link reflect into the wasm.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if c, ok := e.(interface{ Code() string }); ok {
			return c.Code()
		}
	}
	return CodeNetwork
}

// ArgumentError is a bad call, found before any request is sent.
type ArgumentError struct {
	Field  string // the option at fault, e.g. "chunkSize"
	Reason string
}

func (e *ArgumentError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// Code returns "invalid_argument".
func (e *ArgumentError) Code() string { return CodeInvalidArgument }

// HTTPError is an answer with a status that no retry can fix (400, 403, a 401 after asking for
// headers again, …).
type HTTPError struct {
	Method, URL string // the request that got it ("" where unknown)
	Status      int
	Header      Header
	Body        []byte
	// Message and Reason are what the answer says, where it is Google's JSON error (its
	// error.message and error.errors[0].reason, e.g. "quotaExceeded") or the XML API's (its
	// Message and Code, e.g. "SignatureDoesNotMatch"); "" otherwise.
	Message, Reason string
}

// newHTTPError is the answer resp to method url as an *HTTPError, its JSON error read.
func newHTTPError(method, url string, resp *Response) *HTTPError {
	e := &HTTPError{Method: method, URL: url, Status: resp.Status, Header: resp.Header, Body: resp.Body}
	e.Message, e.Reason = googleError(resp.Body)
	if e.Message == "" && e.Reason == "" {
		e.Reason, e.Message = xmlError(resp.Body) // the XML API's (xmlapi.go)
	}
	return e
}

func (e *HTTPError) Error() string {
	msg := "the server answered " + statusText(e.Status)
	if e.URL != "" {
		msg = "the server refused " + e.Method + " " + shownURL(e.URL) + " with " + statusText(e.Status)
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Reason != "" {
		msg += " (reason: " + e.Reason + ")"
	}
	switch e.Status {
	case 401:
		msg += "; the credentials are missing or expired: check what getHeaders gives"
	case 403:
		if e.Message == "" {
			msg += "; the credentials lack permission for it, or the quota is spent"
		}
	case 404:
		msg += "; check the URL"
	}
	return msg
}

// shownURL is url as a person reads it in a message: a session URI without its query, which
// is long and, like a password, lets whoever holds it write the object.
func shownURL(url string) string {
	if index(url, "upload_id=") >= 0 {
		return withoutQuery(url)
	}
	return url
}

// Code returns "http_error".
func (e *HTTPError) Code() string { return CodeHTTP }

// NetworkError is a request that got no answer, after the retries ran out.
type NetworkError struct {
	Attempts int
	URL      string // the request that got no answer
	Origin   string // the page's origin (Options.Origin), "" where unknown
	Err      error
}

func (e *NetworkError) Error() string {
	where := "the server"
	if e.URL != "" {
		where = withoutQuery(e.URL) // a session URI's query is long and says nothing to a person
	}
	from, cors := "", "the server does not allow cross-origin requests from this page (CORS)"
	if e.Origin != "" {
		from = " from " + e.Origin
		cors = "the server does not allow cross-origin requests from " + e.Origin + " (CORS: it must answer the preflight and list this origin in Access-Control-Allow-Origin)"
	}
	tries := "1 attempt"
	if e.Attempts != 1 {
		tries = strconv.Itoa(e.Attempts) + " attempts"
	}
	return "could not reach " + where + from + " (" + tries + "). Likely reasons: " + cors +
		"; the server is down or the address is wrong; or this device is offline"
}

// Code returns "network_error".
func (e *NetworkError) Code() string { return CodeNetwork }

func (e *NetworkError) Unwrap() error { return e.Err }

// RetriesExhaustedError is a server that went on failing (5xx, 429, 408) after every retry.
// Last is the final answer.
type RetriesExhaustedError struct {
	Attempts int
	Last     *HTTPError
}

func (e *RetriesExhaustedError) Error() string {
	return "the server answered " + statusText(e.Last.Status) + " " + strconv.Itoa(e.Attempts) + " times in a row; it may be overloaded or down"
}

// Code returns "retries_exhausted".
func (e *RetriesExhaustedError) Code() string { return CodeRetriesExhausted }

func (e *RetriesExhaustedError) Unwrap() error { return e.Last }

// SessionExpiredError is a session lost (404 or 410 on its URI) more times than new sessions
// were allowed, or one the caller handed in that cannot be replaced, or one whose upload
// cannot start over because its source (a stream) no longer holds its first bytes.
type SessionExpiredError struct {
	Sessions int // sessions started and lost
	Last     *HTTPError
	NotKept  bool // a stream's bytes the lost session had confirmed are gone
}

func (e *SessionExpiredError) Error() string {
	if e.NotKept {
		return "the upload session is gone (the server answered " + statusText(e.Last.Status) + ") and the stream's bytes it had confirmed are no longer kept: a stream cannot start over from byte 0"
	}
	if e.Sessions <= 1 {
		return "the upload session is gone (the server answered " + statusText(e.Last.Status) + ") and a new one could not be started from here"
	}
	return "the upload session was lost " + strconv.Itoa(e.Sessions) + " times (the server answered " + statusText(e.Last.Status) + "); starting over did not help"
}

// Code returns "session_expired".
func (e *SessionExpiredError) Code() string { return CodeSessionExpired }

func (e *SessionExpiredError) Unwrap() error { return e.Last }

// ProtocolError is an answer that cannot be right: no Location after a session start, a Range
// beyond what was sent, a malformed header. Core reports it instead of guessing.
type ProtocolError struct {
	Reason string
	Status int // the status of the offending answer
}

func (e *ProtocolError) Error() string { return "the server's answer cannot be right: " + e.Reason }

// Code returns "protocol_error".
func (e *ProtocolError) Code() string { return CodeProtocol }

// HiddenRedirectError is a transport's report that the server answered a request to the
// session URI with a redirect status (3xx) whose status and headers it cannot read: a
// browser's fetch in redirect mode "manual" hands over no more than that (docs/protocol.md section
// 6). Nothing was followed and nothing re-sent. For a chunk it is most likely the protocol's
// 308, with its Range hidden: core asks the session what it holds at once, spending no retry
// (section 4). A status query answered so is final: a protocol error.
type HiddenRedirectError struct{ URL string }

func (e *HiddenRedirectError) Error() string {
	return "the server answered " + withoutQuery(e.URL) + " with a redirect status whose headers this browser hides"
}

// Code returns "protocol_error", the code of an upload that ends on it.
func (e *HiddenRedirectError) Code() string { return CodeProtocol }

// RedirectError is a server that redirected a request (a 3xx with a Location, or any 3xx to a
// request that is not to a session URI). An upload never follows one: the file and the
// caller's headers go only where the caller said. It is final.
type RedirectError struct {
	Method, URL string
	Followed    bool // the transport followed it before it could tell (a body-less request)
}

func (e *RedirectError) Error() string {
	what := " with a redirect (a 3xx answer), which an upload never follows"
	if e.Followed {
		what = " with a redirect (a 308 that carries a Location), which an upload never follows"
	}
	return "the server answered " + e.Method + " " + withoutQuery(e.URL) + what + ": give the upload the URL it redirects to"
}

// Code returns "protocol_error".
func (e *RedirectError) Code() string { return CodeProtocol }

// AbortedError is an upload stopped by its context; Err is the context's error
// (context.Canceled, say), so errors.Is(err, context.Canceled) holds.
type AbortedError struct{ Err error }

func (e *AbortedError) Error() string { return "the upload was aborted" }

// Code returns "aborted".
func (e *AbortedError) Code() string { return CodeAborted }

func (e *AbortedError) Unwrap() error { return e.Err }

// AuthError is a GetHeader that failed (the page's getHeaders threw or rejected: its token
// service is down, say). Err is its error.
type AuthError struct{ Err error }

func (e *AuthError) Error() string {
	return "getHeaders failed, so no request could be authorised: " + e.Err.Error()
}

// Code returns "auth_error".
func (e *AuthError) Code() string { return CodeAuth }

func (e *AuthError) Unwrap() error { return e.Err }

// ChecksumError is a server whose hash of the bytes it received differs from the source's:
// stated in its final metadata, or refusing the request that completes the object.
type ChecksumError struct {
	Kind    string     // "crc32c" or "md5"
	Local   string     // base64, as hashed from the source
	Server  string     // base64, as the final metadata states it ("" where refused)
	Refused *HTTPError // the server's refusal of the last request (400), nil otherwise
}

func (e *ChecksumError) Error() string {
	if e.Refused != nil {
		return "the server refused the upload's last request: the " + e.Kind + " of the bytes it received differs from the file's (" + e.Local +
			"), so the bytes changed on the way or on disk and nothing was stored; upload the file again (" + e.Refused.Error() + ")"
	}
	return "the stored object's " + e.Kind + " differs from the file's: sent " + e.Local + ", the server has " + e.Server
}

// Unwrap returns the server's refusal, if any.
func (e *ChecksumError) Unwrap() error {
	if e.Refused == nil {
		return nil
	}
	return e.Refused
}

// Code returns "checksum_mismatch".
func (e *ChecksumError) Code() string { return CodeChecksum }

// Find returns the first error of type T in err's Unwrap chain. It does what errors.As does
// for a concrete type, without reflect, which errors.As would link into the wasm.
func Find[T error](err error) (T, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if t, ok := e.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// statusText returns a status with its reason phrase where it is one an upload meets, so that
// "403 Forbidden" reads at once.
func statusText(status int) string {
	s := strconv.Itoa(status)
	switch status {
	case 400:
		return s + " Bad Request"
	case 401:
		return s + " Unauthorized"
	case 403:
		return s + " Forbidden"
	case 404:
		return s + " Not Found"
	case 405:
		return s + " Method Not Allowed"
	case 408:
		return s + " Request Timeout"
	case 409:
		return s + " Conflict"
	case 410:
		return s + " Gone"
	case 411:
		return s + " Length Required"
	case 412:
		return s + " Precondition Failed"
	case 413:
		return s + " Content Too Large"
	case 429:
		return s + " Too Many Requests"
	case 500:
		return s + " Internal Server Error"
	case 502:
		return s + " Bad Gateway"
	case 503:
		return s + " Service Unavailable"
	case 504:
		return s + " Gateway Timeout"
	}
	return s
}

// withoutQuery returns url up to its query or fragment.
func withoutQuery(url string) string {
	if i := indexAny(url, "?#"); i >= 0 {
		return url[:i]
	}
	return url
}

// SourceError is data that could not be read: a stream that errored or handed out something
// that is not bytes, a File changed or removed on disk.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "the data to upload could not be read: " + e.Err.Error() }

// Code returns "source_error".
func (e *SourceError) Code() string { return CodeSource }

func (e *SourceError) Unwrap() error { return e.Err }

// ErrNotKept is what a Source's Slice returns (or wraps) for bytes it no longer holds: a
// stream keeps only what the server has not confirmed yet, so after a lost session (404, 410)
// its first bytes cannot be sent again.
var ErrNotKept = errors.New("those bytes of the stream are no longer kept")

// isNotKept reports whether err is or wraps ErrNotKept (a plain walk: errors.Is would link
// reflectlite).
func isNotKept(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e == ErrNotKept {
			return true
		}
	}
	return false
}
