package core

import (
	"errors"
	"strconv"
)

// The error codes of shared/API.md. Every error Upload.Run returns maps onto exactly one of
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
)

// Code returns the shared/API.md code for err: the code of the first error in its chain that
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

func (e *ArgumentError) Error() string { return "core: invalid " + e.Field + ": " + e.Reason }

// Code returns "invalid_argument".
func (e *ArgumentError) Code() string { return CodeInvalidArgument }

// HTTPError is an answer with a status that no retry can fix (400, 403, a 401 after asking for
// headers again, …).
type HTTPError struct {
	Status int
	Header Header
	Body   []byte
}

func (e *HTTPError) Error() string { return "core: server answered " + strconv.Itoa(e.Status) }

// Code returns "http_error".
func (e *HTTPError) Code() string { return CodeHTTP }

// NetworkError is a request that got no answer, after the retries ran out.
type NetworkError struct {
	Attempts int
	Err      error
}

func (e *NetworkError) Error() string {
	return "core: network failed after " + strconv.Itoa(e.Attempts) + " attempts: " + e.Err.Error()
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
	return "core: server answered " + strconv.Itoa(e.Last.Status) + " after " + strconv.Itoa(e.Attempts) + " attempts"
}

// Code returns "retries_exhausted".
func (e *RetriesExhaustedError) Code() string { return CodeRetriesExhausted }

func (e *RetriesExhaustedError) Unwrap() error { return e.Last }

// SessionExpiredError is a session lost (404 or 410 on its URI) more times than new sessions
// were allowed, or one the caller handed in that cannot be replaced.
type SessionExpiredError struct {
	Sessions int // sessions started and lost
	Last     *HTTPError
}

func (e *SessionExpiredError) Error() string {
	return "core: upload session lost (" + strconv.Itoa(e.Last.Status) + ") " + strconv.Itoa(e.Sessions) + " times"
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

func (e *ProtocolError) Error() string { return "core: protocol error: " + e.Reason }

// Code returns "protocol_error".
func (e *ProtocolError) Code() string { return CodeProtocol }

// AbortedError is an upload stopped by its context; Err is the context's error
// (context.Canceled, say), so errors.Is(err, context.Canceled) holds.
type AbortedError struct{ Err error }

func (e *AbortedError) Error() string { return "core: upload aborted: " + e.Err.Error() }

// Code returns "aborted".
func (e *AbortedError) Code() string { return CodeAborted }

func (e *AbortedError) Unwrap() error { return e.Err }

// ChecksumError is a server whose hash of the stored object differs from the source's.
type ChecksumError struct {
	Kind   string // "crc32c" or "md5"
	Local  string // base64, as computed while uploading
	Server string // base64, as the final metadata states it
}

func (e *ChecksumError) Error() string {
	return "core: " + e.Kind + " mismatch: sent " + e.Local + ", server has " + e.Server
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
