package refserver

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// LogEntry is one request seen on a non-control path (preflights included).
type LogEntry struct {
	Time          time.Time `json:"time"`
	Method        string    `json:"method"`
	Path          string    `json:"path"`
	Query         string    `json:"query"`         // raw query string
	ContentRange  string    `json:"contentRange"`  // "" when absent
	ContentLength int64     `json:"contentLength"` // -1 when unknown
	ContentType   string    `json:"contentType"`   // "" when absent
	// Status is the status sent: 200 for a 308 turned into 200 by
	// X-GUploader-No-308, 0 when the connection was dropped unanswered.
	Status        int    `json:"status"`
	Authorization string `json:"authorization"`
	// Origin is the request's Origin ("" when absent): a browser's page, or the origin a
	// backend started a session for.
	Origin string `json:"origin"`
	// GoogHash is the request's X-Goog-Hash ("" when absent): the hashes a client stated.
	GoogHash string `json:"googHash"`
	// Fault describes the injected fault ("" when none), for example
	// "status 503", "close after 100 bytes", "keep 1000", "expire", "gone",
	// "unauthorized", "ratelimit retry-after 1"; random ones start with
	// "random ".
	Fault string `json:"fault"`
	// Kind is the request kind: start, chunk, query, media, multipart,
	// preflight or other.
	Kind string `json:"kind"`
	// Proto is the HTTP version the request came in: "HTTP/1.1", or "HTTP/2.0" over the
	// HTTPS listener to a client that chose h2 (ALPN).
	Proto string `json:"proto"`
	// Received is how many bytes of a chunk's body the server read (the fault injector's
	// reads included), and Kept how many of them the request added to the session's stored
	// bytes: less than Received for bytes stored before, a refused chunk, a keep fault, or a
	// cut body dropped. Both are 0 for the other kinds, and filled when the request ends.
	Received int64 `json:"received"`
	Kept     int64 `json:"kept"`
}

// logRef points at a request's entry in the log, which is shared with
// readers of the log: it is written under the server's lock only.
type logRef struct {
	mu *sync.Mutex
	e  *LogEntry
}

// setFault records the fault at once, before the fault acts: a client whose
// connection is dropped may read the log before the handler returns.
func (r logRef) setFault(f string) {
	r.mu.Lock()
	r.e.Fault = f
	r.mu.Unlock()
}

// finish records the status sent and the body bytes read, when the request ends.
func (r logRef) finish(status int, received int64) {
	r.mu.Lock()
	r.e.Status = status
	r.e.Received = received
	r.mu.Unlock()
}

// addKept counts n bytes added to the session's stored bytes, under the server's lock (the
// protocol handler holds it).
func (r logRef) addKept(n int) { r.e.Kept += int64(n) }

type entryKey struct{}

func withEntry(ctx context.Context, r logRef) context.Context {
	return context.WithValue(ctx, entryKey{}, r)
}

func entryFrom(ctx context.Context) logRef {
	if r, ok := ctx.Value(entryKey{}).(logRef); ok {
		return r
	}
	return logRef{mu: new(sync.Mutex), e: new(LogEntry)}
}

// logWriter records the status written; Unwrap lets
// http.NewResponseController reach Hijack.
type logWriter struct {
	http.ResponseWriter
	status int
}

func (w *logWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingBody counts the bytes read of a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// discardWriter swallows an answer (the close fault after the whole body).
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
