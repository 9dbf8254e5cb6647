//go:build js && wasm

package jsbridge

import (
	"errors"
	"syscall/js"
	"unicode/utf8"

	"github.com/mediaupload/mediaupload/core"
)

// MaxResponseBody is the most of an answer's body that is read. The protocol's answers are
// small JSON; a larger body (an HTML error page, say) is cut, not read whole.
const MaxResponseBody = 1 << 20

// host is the JS object that does the browser's part of every upload (web/js/src/host.js):
// it holds each upload's Blob, sink, getHeaders and AbortController under the upload's id,
// and Go asks it for what it needs by that id, with primitives only (doc.go, "Ownership").
// The loader hands it over when it receives the API ([SetHost]); it lives as long as the
// module.
var host js.Value

// SetHost sets the host the uploads started afterwards talk to.
func SetHost(h js.Value) { host = h }

// conn is one upload's link to the host: a core.Transport (Do), the source's reads (read),
// getHeaders (headers) and the reports (emit). Core makes one call at a time, so one answer
// is awaited at most. Its three callbacks are made by newConn and released by close.
type conn struct {
	id      int
	answers chan answer // the callbacks send how the host answered; buffer of one
	send    js.Func     // callback of host.send
	read    js.Func     // callback of host.read: copies the bytes into dst
	hdrs    js.Func     // callback of host.headers
	made    bool        // the callbacks are not released yet
	dst     []byte      // where read's callback copies the bytes
	copied  int         // how many it copied
	url     string      // the last URL sent, and its JS string: a session's chunks all go to
	urlv    js.Value    // one URL, so it is converted once
}

// answer is what a host callback was called with, as Go values: its first argument (the
// kind of answer) and the rest, strings and numbers only.
type answer struct {
	kind string
	s    []string
	n    []float64
}

func newConn(id int) *conn {
	c := &conn{id: id, answers: make(chan answer, 1), made: true}
	c.send = funcOf(func(_ js.Value, args []js.Value) any { c.deliver(args); return nil })
	c.hdrs = funcOf(func(_ js.Value, args []js.Value) any { c.deliver(args); return nil })
	c.read = funcOf(func(_ js.Value, args []js.Value) any {
		// The copy is made here, while the host still holds the array: it detaches the
		// array's buffer as soon as this returns.
		if a := arg(args, 1); arg(args, 0).String() == "ok" && a.Type() == js.TypeObject {
			c.copied = js.CopyBytesToGo(c.dst, a)
			args = args[:1]
		}
		c.deliver(args)
		return nil
	})
	return c
}

// deliver converts a callback's arguments to Go values (a JS string or number becomes Go's,
// null an empty string, and no js.Value outlives the call) and hands them to the goroutine waiting.
func (c *conn) deliver(args []js.Value) {
	a := answer{kind: arg(args, 0).String()}
	for _, v := range args[min(1, len(args)):] {
		switch v.Type() {
		case js.TypeString:
			a.s = append(a.s, v.String())
		case js.TypeNull: // an absent field: no call needed to convert it
			a.s = append(a.s, "")
		case js.TypeNumber:
			a.n = append(a.n, v.Float())
		}
	}
	select {
	case c.answers <- a:
	default: // cannot happen: one call at a time, answered once
	}
}

// close releases the callbacks. The host drops its entry when the upload's end is reported
// (emit "done" or "fail", before close), and never calls a callback of a closed entry.
func (c *conn) close() {
	if c.made {
		c.made = false
		release(c.send)
		release(c.read)
		release(c.hdrs)
	}
}

// ask calls host[method](args...) and waits for its answer (await).
func (c *conn) ask(ctx core.Context, abortable bool, method string, args ...any) (answer, error) {
	if err := try(func() { host.Call(method, args...) }); err != nil {
		return answer{}, err
	}
	return c.await(ctx, abortable)
}

// await waits for the host's answer to the call just made. When ctx ends first and abortable
// is set, it asks the host to abort the request and still waits for the answer, which the
// abort makes prompt, so that nothing of the request outlives the call; without abortable it
// returns at once (the host drops a late answer).
func (c *conn) await(ctx core.Context, abortable bool) (answer, error) {
	select {
	case a := <-c.answers:
		return a, nil
	case <-ctx.Done():
	}
	if abortable {
		_ = try(func() { host.Call("abort", c.id) })
		<-c.answers
	}
	return answer{}, ctx.Err()
}

func (a answer) str(i int) string {
	if i < len(a.s) {
		return a.s[i]
	}
	return ""
}

// err is a "fetch" or "error" answer's error: its name and message.
func (a answer) err() error { return &jsError{name: a.str(0), message: a.str(1)} }

// Do sends req through host.send and returns the answer. Any HTTP status is an answer; an
// error means fetch rejected (a network failure, a CORS refusal, a redirect: see below) or
// ctx ended.
func (c *conn) Do(ctx core.Context, req *core.Request) (*core.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pre, start, end, post, err := bodyOf(req.Body)
	if err != nil {
		return nil, err
	}
	headers, ok := flatHeaders(req.Header)
	if !ok {
		// fetch itself would refuse such a header.
		return nil, &FetchError{Err: errors.New("a header name or value holds a line break or a NUL")}
	}
	// The host picks fetch's redirect mode from Session and what the engine does with a 3xx
	// (web/js/src/host.js; docs/protocol.md section 6): a redirect is never followed with a body,
	// nor with a header of the caller's but Authorization.
	a, err := c.ask(ctx, true, "send", c.id, req.Method, c.urlValue(req.URL), headers, orNull(pre), start, end, orNull(post), req.Session,
		float64(req.Timeout/core.Millisecond), c.send)
	switch {
	case err != nil:
		return nil, err
	case a.kind == "redirect":
		// A 3xx with a Location that a body-less request followed, or a 3xx to a request
		// that is not to the session URI: final.
		return nil, &core.RedirectError{Method: req.Method, URL: req.URL, Followed: a.str(0) == "followed"}
	case a.kind == "hidden":
		// A 3xx to a session request whose status and headers the engine hides: core asks
		// the session at once.
		return nil, &core.HiddenRedirectError{URL: req.URL}
	case a.kind == "offline":
		// fetch failed while the browser said it was offline: core waits for it to be
		// online again (WaitOnline) rather than spending retries.
		return nil, &core.OfflineError{Err: a.err()}
	case a.kind == "stall":
		return nil, &core.StallError{After: req.Timeout, Err: a.err()}
	case a.kind == "fetch":
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, &FetchError{Err: a.err()}
	case a.kind == "source":
		// The request failed because the source could not be read (a File changed or
		// removed on disk): no retry can help.
		return nil, &core.SourceError{Err: a.err()}
	case a.kind != "ok" || len(a.n) < 1:
		return nil, a.err()
	}
	// The fields core reads (docs/protocol.md sections 2-5); only what CORS exposes is there: the
	// reference server lists them in Access-Control-Expose-Headers.
	out := &core.Response{Status: int(a.n[0]), Header: core.Header{}}
	for i, name := range [...]string{"range", "location", "x-http-status-code-override", "retry-after"} {
		if v := a.str(i); v != "" {
			out.Header[name] = v
		}
	}
	if body := a.str(4); body != "" {
		out.Body = []byte(body[:min(len(body), MaxResponseBody)])
	}
	return out, nil
}

// orNull returns nil (JS null) for "": a chunk has no text around it, and each string Go
// passes costs a conversion.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (c *conn) urlValue(u string) js.Value {
	if u != c.url || c.urlv.IsUndefined() {
		c.url, c.urlv = u, js.ValueOf(u)
	}
	return c.urlv
}

// flatHeaders returns h as "name\nvalue\n…", the form host.send takes: one string rather
// than an object, since every JS object Go makes is a reference its collector must end.
func flatHeaders(h core.Header) (string, bool) {
	var b []byte
	for k, v := range h {
		for _, s := range [2]string{k, v} {
			for i := 0; i < len(s); i++ {
				if s[i] == '\n' || s[i] == '\r' || s[i] == 0 {
					return "", false
				}
			}
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, k...)
		b = append(b, '\n')
		b = append(b, v...)
	}
	return string(b), true
}

// bodyOf describes pieces the way host.send takes a body: text before, a range of the
// source (start -1 for none), text after. Core's bodies are a single piece (a chunk, the
// metadata) or a multipart body: prefix, media, suffix (core/multipart.go). The texts go as
// strings: core makes them from the metadata's JSON and ASCII, all UTF-8.
func bodyOf(pieces []core.Piece) (pre string, start, end int64, post string, err error) {
	start, end = -1, -1
	text := func(p core.Piece) (string, bool) {
		b, ok := p.(core.Bytes)
		if !ok || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	switch len(pieces) {
	case 0:
		return
	case 1:
		if r, ok := pieces[0].(RangePiece); ok {
			return "", r.start, r.end, "", nil
		}
		if pre, ok := text(pieces[0]); ok {
			return pre, -1, -1, "", nil
		}
	case 3:
		r, ok := pieces[1].(RangePiece)
		pre, ok1 := text(pieces[0])
		post, ok2 := text(pieces[2])
		if ok && ok1 && ok2 {
			return pre, r.start, r.end, post, nil
		}
	}
	err = errors.New("jsbridge: a body of unknown shape") // a programming error
	return
}

// Source is the core.Source of an upload's Blob, which only the host holds: its pieces are
// byte ranges (the host slices the Blob when it sends them; slicing reads no bytes,
// docs/protocol.md section 6), so the file's bytes never enter Go's memory, unless a checksum was
// asked for: then core reads each chunk once, through RangePiece.Read.
//
// A size below zero is a ReadableStream's source, of unknown length: the host reads the
// stream into pieces it keeps until the server has confirmed them (web/js/src/stream.js),
// and Slice first asks it to have the range ready (host.pull), which reads the stream.
type Source struct {
	c    *conn
	size int64
	ctx  core.Context // the upload's: ends a wait for the stream when the upload is aborted
}

// Size returns the Blob's size, or -1 for a stream.
func (s *Source) Size() int64 { return s.size }

// Slice returns the range [start, end) as a [RangePiece], end clamped to the size (to the
// stream's end, where it ends before end).
func (s *Source) Slice(start, end int64) (core.Piece, error) {
	if s.size < 0 {
		return s.pull(start, end)
	}
	end = min(end, s.size)
	if start < 0 || start > end {
		return nil, errors.New("jsbridge: slice out of range")
	}
	return RangePiece{c: s.c, start: start, end: end}, nil
}

// pull has the host read the stream up to end (or its end) and keep [start, end); the bytes
// before start, which the server holds, are let go. The answer: cb("ok", n), n the bytes
// ready from start; cb("notkept") for bytes let go already; cb("source", name, message) for
// a stream that errored or gave something that is not bytes. A stream that never gives more
// cannot hold an abort: the wait ends with ctx, and the host drops the late answer.
func (s *Source) pull(start, end int64) (core.Piece, error) {
	if start < 0 || start > end {
		return nil, errors.New("jsbridge: slice out of range")
	}
	if end-start > 1<<53 {
		end = start + 1<<53 // a whole-rest request: JS numbers are exact up to 2^53
	}
	a, err := s.c.ask(s.ctx, false, "pull", s.c.id, float64(start), float64(end), s.c.send)
	switch {
	case err != nil:
		return nil, err
	case a.kind == "notkept":
		return nil, core.ErrNotKept
	case a.kind == "source":
		return nil, &core.SourceError{Err: a.err()}
	case a.kind != "ok" || len(a.n) < 1:
		return nil, a.err()
	}
	return RangePiece{c: s.c, start: start, end: start + int64(a.n[0])}, nil
}

// RangePiece is a run of the upload's bytes, not yet read.
type RangePiece struct {
	c          *conn
	start, end int64
}

// Len returns the piece's length in bytes.
func (p RangePiece) Len() int64 { return p.end - p.start }

// Read reads the piece's bytes into Go memory through host.read, for a checksum: core calls
// it once per chunk, and only when a checksum was asked for. The host reads the Blob's slice
// (a prompt, local read), so Read waits for it even when ctx ends.
func (p RangePiece) Read(ctx core.Context) ([]byte, error) {
	c := p.c
	c.dst, c.copied = make([]byte, p.Len()), -1
	defer func() { c.dst = nil }()
	if err := try(func() { host.Call("read", c.id, float64(p.start), float64(p.end), c.read) }); err != nil {
		return nil, err
	}
	a := <-c.answers
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case a.kind == "source":
		return nil, &core.SourceError{Err: a.err()}
	case a.kind != "ok":
		return nil, a.err()
	case int64(c.copied) != p.Len():
		// Fewer bytes than the File had: it shrank on disk (Firefox reads what is there now).
		return nil, &core.SourceError{Err: errors.New("the file changed on disk during the upload (a read came back short)")}
	}
	return c.dst, nil
}

// headers calls the caller's getHeaders through host.headers. Core calls it from its own
// goroutine, where waiting is allowed. A getHeaders that never settles cannot hold the
// upload: when ctx ends it returns at once, and the host drops the late answer.
func (c *conn) headers(ctx core.Context) (core.Header, error) {
	a, err := c.ask(ctx, false, "headers", c.id, c.hdrs)
	switch {
	case err != nil:
		return nil, err
	case a.kind == "bad":
		// Not an object of strings: the caller's mistake, as an invalid header name is.
		return nil, &core.ArgumentError{Field: "getHeaders", Reason: "what it returned is " + a.str(0)}
	case a.kind != "ok":
		return nil, a.err()
	}
	h := core.Header{}
	flat := a.str(0)
	for flat != "" {
		var k, v string
		k, flat = cut(flat)
		v, flat = cut(flat)
		h.Set(k, v)
	}
	return h, nil
}

// cut splits s at its first newline.
func cut(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// emit reports to the upload's sink through host.emit. Whatever the sink throws stays in JS's
// hands (the host catches it).
func (c *conn) emit(typ string, args ...any) {
	_ = try(func() { host.Call("emit", append([]any{c.id, typ}, args...)...) })
}

// wantRequests asks the host whether anyone listens to per-request reports: a request report
// per chunk costs a JS call with six arguments, a URL string among them.
func (c *conn) wantRequests() bool {
	var v js.Value
	if try(func() { v = host.Call("wantRequests", c.id) }) != nil {
		return false
	}
	return v.Type() == js.TypeBoolean && v.Bool()
}

// FetchError is a fetch that rejected: no answer arrived.
type FetchError struct {
	Err error
}

func (e *FetchError) Error() string {
	// fetch rejects the same way for a lost connection, a CORS refusal and a redirect that
	// redirect mode "error" refused: script cannot tell them apart (doc.go).
	return "fetch failed (a network failure, a CORS refusal, or a redirect, which is never followed): " + e.Err.Error()
}

func (e *FetchError) Unwrap() error { return e.Err }

// waitOnline waits for the browser to be online again (host.whenOnline: at once when it is,
// else at its "online" event), or for ctx to end; the host drops a late answer and its
// listener when the upload ends.
func (c *conn) waitOnline(ctx core.Context) error {
	a, err := c.ask(ctx, false, "whenOnline", c.id, c.send)
	switch {
	case err != nil:
		return err
	case a.kind != "ok":
		return a.err()
	}
	return nil
}
