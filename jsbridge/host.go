//go:build js && wasm

package jsbridge

import (
	"errors"
	"sync"
	"syscall/js"
	"unicode/utf8"

	"github.com/mediaupload/mediaupload/core"
)

// MaxResponseBody is the most of an answer's body that is read. The protocol's answers are
// small JSON; a larger body (an HTML error page, say) is cut, not read whole.
const MaxResponseBody = 1 << 20

// host is the JS object that does the browser's part of every upload (web/js/src/engine/host.js,
// where its contract is written down: calls, answers and reports): it holds each upload's
// Blob, sink, getHeaders and AbortController under the upload's id, and Go asks it for what it
// needs by that id (doc.go, "Ownership"). The loader hands it over when it receives the API
// ([SetHost]); it lives as long as the module.
var host js.Value

// hostSend and hostReport are the host's send and report, the calls made most (each request,
// each report): read once, they are called without a name to look up.
var hostSend, hostReport js.Value

// SetHost sets the host the uploads started afterwards talk to.
func SetHost(h js.Value) {
	host, hostSend, hostReport = h, h.Get("send"), h.Get("report")
}

// jsString returns s as a JS string, made once for each of the few strings passed again and
// again (report types, states, methods, error codes, option names): each new JS string from
// Go costs a decode in JS and a finalizer in Go. Strings beyond the first 96 are made each time.
func jsString(s string) js.Value {
	internedMu.Lock()
	defer internedMu.Unlock()
	if v, ok := interned[s]; ok {
		return v
	}
	v := js.ValueOf(s)
	if len(interned) < 96 {
		interned[s] = v
	}
	return v
}

var (
	internedMu sync.Mutex
	interned   = map[string]js.Value{}
)

// conn is one upload's link to the host: a core.Transport (Do), the source's reads (read and
// pull), getHeaders (headers) and the reports (report). Core makes one call at a time, so one
// answer is awaited at most, and one callback takes every answer. It is made by newConn and
// released by close.
type conn struct {
	id      int
	answers chan answer // the callback sends how the host answered; buffer of one
	reply   js.Func     // the callback every call of the host answers through
	made    bool        // the callback is not released yet
	url     string      // the last URL sent, and its JS string: a session's chunks all go to
	urlv    js.Value    // one URL, so it is converted once
	// sent is the callback through which the host tells how much of a body the network has
	// taken (host.send's "sent"), made with the first request that wants it (core's
	// Request.OnSent) and released by close; onSent is that request's, nil between requests.
	sent   js.Func
	onSent func(n int64) bool
}

// answer is what the host answered, as Go values: its kind ("ok", or what went wrong) and the
// fields of that kind (host.js says which); no js.Value outlives the callback.
type answer struct {
	kind    string
	status  int    // send: the HTTP status
	rng     string // send: the answer's Range, Location, X-HTTP-Status-Code-Override,
	loc     string // Retry-After and body ("" where absent)
	over    string
	after   string
	body    string
	follow  bool        // send "redirect": a body-less request followed a Location
	n       int64       // pull: the bytes ready
	sums    core.Sums   // digest: the hashes
	headers core.Header // headers: what getHeaders gave; session: a signed URL's headers
	session core.SessionAnswer
	name    string // a failure's error name and message; "bad": its reason
	message string
}

func newConn(id int) *conn {
	c := &conn{id: id, answers: make(chan answer, 1), made: true}
	c.reply = funcOf(func(_ js.Value, args []js.Value) any { c.deliver(arg(args, 0)); return nil })
	return c
}

// deliver reads an answer's fields into Go values, inside the call, and hands the answer to the
// goroutine waiting.
func (c *conn) deliver(v js.Value) {
	if v.Type() == js.TypeString { // send's "ok": its fields as lines, the body the rest
		c.hand(sendAnswer(v.String()))
		return
	}
	str := func(name string) string {
		if f := v.Get(name); f.Type() == js.TypeString {
			return f.String()
		}
		return ""
	}
	num := func(name string) float64 {
		if f := v.Get(name); f.Type() == js.TypeNumber {
			return f.Float()
		}
		return 0
	}
	a := answer{kind: str("kind")}
	switch a.kind {
	case "ok":
		if crc := v.Get("crc32c"); crc.Type() == js.TypeString { // digest
			a.sums = core.Sums{CRC32C: crc.String(), MD5: str("md5")}
		} else if s := v.Get("sessionURL"); s.Type() == js.TypeString { // session
			a.session = core.SessionAnswer{SessionURL: s.String(), SignedURL: str("signedURL")}
			if h := v.Get("headers"); h.Type() == js.TypeObject {
				a.session.Header = headersOf(h)
			}
		} else if h := v.Get("headers"); h.Type() == js.TypeObject { // headers
			a.headers = headersOf(h)
		} else { // pull
			a.n = int64(num("n"))
		}
	case "redirect":
		a.follow = v.Get("followed").Truthy()
	case "bad":
		a.message = str("reason")
	case "refused": // session: the endpoint's status, its JSON error's message, its answer
		a.status, a.message, a.body = int(num("status")), str("message"), str("body")
	default:
		a.name, a.message = str("name"), str("message")
	}
	c.hand(a)
}

// hand gives the answer to the goroutine waiting.
func (c *conn) hand(a answer) {
	select {
	case c.answers <- a:
	default: // cannot happen: one call at a time, answered once
	}
}

// sendAnswer reads send's "ok" answer, one string (host.js): "ok", the status, Range,
// Location, X-HTTP-Status-Code-Override and Retry-After ("" where absent), each ending in a
// line break, then the body. Anything else is reported as a bad answer.
func sendAnswer(s string) answer {
	var f [6]string
	for i, from := 0, 0; i < len(f); {
		if from == len(s) {
			return answer{kind: "bad", message: "a malformed answer of the host"}
		}
		if s[from] == '\n' {
			f[i], s, from, i = s[:from], s[from+1:], 0, i+1
			continue
		}
		from++
	}
	status := 0
	for _, d := range []byte(f[1]) {
		if d < '0' || d > '9' {
			return answer{kind: "bad", message: "a malformed answer of the host"}
		}
		status = status*10 + int(d-'0')
	}
	if f[0] != "ok" || len(f[1]) != 3 {
		return answer{kind: "bad", message: "a malformed answer of the host"}
	}
	return answer{kind: "ok", status: status, rng: f[2], loc: f[3], over: f[4], after: f[5], body: s}
}

// headersOf reads an object of string fields (what getHeaders gave, checked by the host).
func headersOf(o js.Value) core.Header {
	h := core.Header{}
	keys := objectCtor.Call("keys", o)
	for i, n := 0, keys.Length(); i < n; i++ {
		k := keys.Index(i).String()
		if v := o.Get(k); v.Type() == js.TypeString {
			h.Set(k, v.String())
		}
	}
	return h
}

// close releases the callback. The host drops its entry when the upload's end is reported
// (report "done" or "fail", before close), and never calls the callback of a closed entry.
func (c *conn) close() {
	if c.made {
		c.made = false
		release(c.reply)
		if !c.sent.IsUndefined() {
			release(c.sent)
		}
	}
}

// sentFunc returns the callback host.send calls with the bytes of the body taken so far, made
// once per upload. The host calls it only while the request is under way, before it answers;
// it returns false where core says the body has stopped moving (the host then gives the
// request up as stalled), true otherwise.
func (c *conn) sentFunc() js.Func {
	if c.sent.IsUndefined() {
		c.sent = funcOf(func(_ js.Value, args []js.Value) any {
			if n, ok := wholeNumber(arg(args, 0)); ok && c.onSent != nil {
				return c.onSent(n)
			}
			return true
		})
	}
	return c.sent
}

// ask calls host[method](id, request, reply), request omitted where nil, and waits for the
// answer (await).
func (c *conn) ask(ctx core.Context, abortable bool, method string, request any) (answer, error) {
	args := []any{c.id, request, c.reply}
	if request == nil {
		args = []any{c.id, c.reply}
	}
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

// err is a failure's error: its name and message.
func (a answer) err() error { return &jsError{name: a.name, message: a.message} }

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
	// The headers as one string of lines, name and value in turn: one string to convert
	// instead of an object and two strings per header (core has checked that neither holds a
	// control character).
	var lines []byte // (not a strings.Builder: package strings links every Unicode table)
	for k, v := range req.Header {
		lines = append(append(append(append(lines, k...), '\n'), v...), '\n')
	}
	var sent any // null, or the callback through which the host tells what it has counted
	if req.OnSent != nil {
		// The host may send the body as a counted stream and tell what it counts (host.js,
		// "Progress inside a request"; docs/protocol.md section 8).
		c.onSent = req.OnSent
		sent = c.sentFunc()
	}
	// The host picks fetch's redirect mode from session and what the engine does with a 3xx
	// (engine/host.js; docs/protocol.md section 6): a redirect is never followed with a body,
	// nor with a header of the caller's but Authorization. The arguments are positional
	// (host.js lists them): primitives, no object to build field by field.
	if err := try(func() {
		hostSend.Invoke(c.id, jsString(req.Method), c.urlValue(req.URL), string(lines), orNull(pre), start, end, orNull(post),
			req.Session, float64(req.Timeout/core.Millisecond), sent, c.reply)
	}); err != nil {
		return nil, err
	}
	a, err := c.await(ctx, true)
	c.onSent = nil
	switch {
	case err != nil:
		return nil, err
	case a.kind == "redirect":
		// A 3xx with a Location that a body-less request followed, or a 3xx to a request
		// that is not to the session URI: final.
		return nil, &core.RedirectError{Method: req.Method, URL: req.URL, Followed: a.follow}
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
	case a.kind == "bad":
		// An answer of a shape the host never gives: the module's own fault, final (as a
		// panic at the boundary is), never retried.
		return nil, internalError(a.message)
	case a.kind != "ok":
		return nil, a.err()
	}
	// The fields core reads (docs/protocol.md sections 2-5); only what CORS exposes is there: the
	// reference server lists them in Access-Control-Expose-Headers.
	out := &core.Response{Status: a.status, Header: core.Header{}}
	for _, h := range [...]struct{ name, v string }{{"range", a.rng}, {"location", a.loc}, {"x-http-status-code-override", a.over}, {"retry-after", a.after}} {
		if h.v != "" {
			out.Header[h.name] = h.v
		}
	}
	if a.body != "" {
		out.Body = []byte(a.body[:min(len(a.body), MaxResponseBody)])
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
// docs/protocol.md section 6), so the file's bytes never enter Go's memory. For a checksum the
// host hashes them beside the upload (Hash; docs/protocol.md section 9).
//
// A size below zero is a ReadableStream's source, of unknown length: the host reads the
// stream into pieces it keeps until the server has confirmed them (web/js/src/engine/stream.js),
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
// before start, which the server holds, are let go. The answer: {kind: "ok", n}, n the bytes
// ready from start; "notkept" for bytes let go already; "source" for a stream that errored
// or gave something that is not bytes. A stream that never gives more cannot hold an abort:
// the wait ends with ctx, and the host drops the late answer.
func (s *Source) pull(start, end int64) (core.Piece, error) {
	if start < 0 || start > end {
		return nil, errors.New("jsbridge: slice out of range")
	}
	if end-start > 1<<53 {
		end = start + 1<<53 // a whole-rest request: JS numbers are exact up to 2^53
	}
	a, err := s.c.ask(s.ctx, false, "pull", map[string]any{"start": float64(start), "end": float64(end)})
	switch {
	case err != nil:
		return nil, err
	case a.kind == "notkept":
		return nil, core.ErrNotKept
	case a.kind == "source":
		return nil, &core.SourceError{Err: a.err()}
	case a.kind != "ok":
		return nil, a.err()
	}
	return RangePiece{c: s.c, start: start, end: start + a.n}, nil
}

// RangePiece is a run of the upload's bytes, not yet read.
type RangePiece struct {
	c          *conn
	start, end int64
}

// Len returns the piece's length in bytes.
func (p RangePiece) Len() int64 { return p.end - p.start }

// Hash has the host hash the source's bytes from byte 0 beside the upload (core.HashingSource;
// host.hash): a Blob's as fast as the host can read it, a stream's as it is read. The host
// keeps the hashes' state; Sum asks for them.
func (s *Source) Hash(crc32c, md5 bool) (core.Hasher, error) {
	kinds := "crc32c"
	switch {
	case crc32c && md5:
		kinds = "both"
	case md5:
		kinds = "md5"
	}
	if err := try(func() { host.Call("hash", s.c.id, kinds) }); err != nil {
		return nil, err
	}
	return s, nil
}

// Sum waits until the host has hashed the source's bytes [0, n) (host.digest) and returns the
// hashes: {kind: "ok", crc32c, md5} (base64, "" where not asked), or "source" where the
// source could not be read. The host reads a File promptly, so Sum waits for it even when
// ctx ends; a stream's end is already read when core asks.
func (s *Source) Sum(ctx core.Context, n int64) (core.Sums, error) {
	a, err := s.c.ask(ctx, false, "digest", float64(n))
	switch {
	case err != nil:
		return core.Sums{}, err
	case a.kind == "source":
		return core.Sums{}, &core.SourceError{Err: a.err()}
	case a.kind != "ok":
		return core.Sums{}, a.err()
	}
	return a.sums, nil
}

// headers calls the caller's getHeaders through host.headers. Core calls it from its own
// goroutine, where waiting is allowed. A getHeaders that never settles cannot hold the
// upload: when ctx ends it returns at once, and the host drops the late answer.
func (c *conn) headers(ctx core.Context) (core.Header, error) {
	a, err := c.ask(ctx, false, "headers", nil)
	switch {
	case err != nil:
		return nil, err
	case a.kind == "bad":
		// Not an object of strings: the caller's mistake, as an invalid header name is.
		return nil, &core.ArgumentError{Field: "getHeaders", Reason: "what it returned is " + a.message}
	case a.kind != "ok":
		return nil, a.err()
	}
	if a.headers == nil {
		return core.Header{}, nil
	}
	return a.headers, nil
}

// session asks the app's backend for a session through host.session (core's Options.Session):
// the host calls the caller's function, or POSTs to endpoint (where not ""), with the file's
// name, size, type and metadata. Its answers: {kind: "ok", sessionURL, signedURL, headers} (""
// where absent: core checks what they say); "bad" (an answer that is no session at all);
// "refused" {status, message, body} (the endpoint's 4xx or 5xx); "unreachable" (the POST
// failed) and "threw" (the function threw or rejected), {name, message}; "offline" (either,
// while the browser was offline). A backend that never
// answers cannot hold the upload: core bounds the wait (ctx), and the host drops the late
// answer.
func (c *conn) session(endpoint string) core.SessionFunc {
	return func(ctx core.Context, info core.SessionInfo) (core.SessionAnswer, error) {
		ask := map[string]any{"endpoint": endpoint, "size": float64(info.Size), "type": info.Type, "metadata": string(info.Metadata)}
		a, err := c.ask(ctx, false, "session", ask)
		switch {
		case err != nil:
			return core.SessionAnswer{}, err
		case a.kind == "ok":
			return a.session, nil
		case a.kind == "bad":
			return core.SessionAnswer{}, &core.BackendError{Kind: core.BackendNonsense, Message: a.message}
		case a.kind == "refused":
			return core.SessionAnswer{}, &core.BackendError{Kind: core.BackendRefused, Status: a.status, Message: a.message, Body: []byte(a.body)}
		case a.kind == "unreachable":
			return core.SessionAnswer{}, &core.BackendError{Kind: core.BackendUnreachable, Err: a.err()}
		case a.kind == "offline":
			// Out of reach while the browser is offline: core waits for it to be online and
			// asks again (WaitOnline), as it sends a request to storage again.
			return core.SessionAnswer{}, &core.BackendError{Kind: core.BackendUnreachable, Err: &core.OfflineError{Err: a.err()}}
		}
		return core.SessionAnswer{}, &core.BackendError{Kind: core.BackendThrew, Err: a.err()}
	}
}

// report tells the upload's sink what happened, through host.report(id, type, ...fields): the
// fields of each type in the order engine/host.js lists them (REPORT_FIELDS), and the host
// makes the {type, ...fields} object the sink gets. Whatever the sink throws stays in JS's
// hands (the host catches it).
func (c *conn) report(typ string, fields ...any) {
	// (Two appends: one of a []any{...} literal made the wasm 9 KB larger.)
	args := append(make([]any, 0, 2+len(fields)), c.id, jsString(typ))
	_ = try(func() { hostReport.Invoke(append(args, fields...)...) })
}

// wantRequests asks the host whether anyone listens to per-request reports: one costs a JS
// object per chunk, a URL string among its fields.
func (c *conn) wantRequests() bool {
	var v js.Value
	if try(func() { v = host.Call("wantRequests", c.id) }) != nil {
		return false
	}
	return v.Type() == js.TypeBoolean && v.Bool()
}

// Counts asks the host whether it would count the body of a request to url (core.Counter):
// where the engine takes stream bodies and url's origin has not refused one. A host without the
// call counts nothing it was not asked to.
func (c *conn) Counts(url string) bool {
	var v js.Value
	if try(func() {
		if host.Get("countable").Type() == js.TypeFunction {
			v = host.Call("countable", url)
		}
	}) != nil {
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
	a, err := c.ask(ctx, false, "whenOnline", nil)
	switch {
	case err != nil:
		return err
	case a.kind != "ok":
		return a.err()
	}
	return nil
}
