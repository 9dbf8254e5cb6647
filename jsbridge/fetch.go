//go:build js && wasm

package jsbridge

import (
	"errors"
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// MaxResponseBody is the most of an answer's body that is read. The protocol's answers are
// small JSON; a larger body (an HTML error page, say) is cut, not read whole.
const MaxResponseBody = 1 << 20

// Fetch is a core.Transport over the browser's fetch, for one upload: core sends one request
// at a time, so Do is never called again before it returns. Do runs for every chunk, and every
// JS object, string and function Go makes there costs time on the page's main thread (doc.go,
// "The cost of a chunk"), so a Fetch keeps what one request needs for the next: the
// RequestInit and its headers record (fetch reads both during the call, so changing them
// afterwards changes no request sent), the AbortController until it is used, and one pair of
// promise callbacks. The zero value is ready to use; Close releases the callbacks.
type Fetch struct {
	init    js.Value          // the RequestInit, set up by the first Do
	headers js.Value          // init.headers: a record of names and values, a HeadersInit
	sent    map[string]string // what headers holds
	method  string            // init.method
	mode    string            // init.redirect
	ac      js.Value          // the AbortController whose signal is init.signal
	aborted bool              // ac has aborted: the next request needs a new one
	url     string            // the last URL fetched, and its JS string: a session's chunks all
	urlv    js.Value          // go to one URL, so it is converted once
	ok      js.Func           // the then-callbacks of the promise awaited: each sends how it
	fail    js.Func           // settled to settled (one promise at a time, so one value at most)
	settled chan settlement
}

// settlement is how a promise settled: fulfilled with v, or rejected with v.
type settlement struct {
	v  js.Value
	ok bool
}

// The browser's constructors and fetch, looked up once.
var (
	jsObject          = js.Global().Get("Object")
	jsAbortController = js.Global().Get("AbortController")
	jsFetch           = js.Global().Get("fetch")
)

func (f *Fetch) setup() {
	if f.settled != nil {
		return
	}
	f.settled = make(chan settlement, 1)
	settle := func(ok bool) js.Func {
		return funcOf(func(this js.Value, args []js.Value) any {
			select {
			case f.settled <- settlement{arg(args, 0), ok}:
			default: // cannot happen: one promise at a time, settled once
			}
			return nil
		})
	}
	f.ok, f.fail = settle(true), settle(false)
	f.init = jsObject.New()
	f.headers = jsObject.New()
	f.init.Set("headers", f.headers)
	f.sent = map[string]string{}
}

// Close releases the callbacks. f must not be used again; Do never leaves a promise pending,
// so nothing can call them afterwards.
func (f *Fetch) Close() {
	if f.settled != nil {
		release(f.ok)
		release(f.fail)
		f.settled = nil
	}
}

// Do sends req with fetch and returns the answer. Any HTTP status is an answer; an error means
// fetch rejected (a network failure, a CORS refusal, a redirect: see below) or ctx ended.
func (f *Fetch) Do(ctx core.Context, req *core.Request) (*core.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.setup()
	var p js.Value
	var mode string
	err := try(func() {
		body, hasBody := bodyOf(req.Body)
		// Never "manual": it makes every 308 opaque, Range and all. A request with a body
		// goes in mode "error": "follow" would re-send the body to a 308's Location. A
		// request without one whose headers may go anywhere (a status query) goes in mode
		// "follow", so that a redirect shows as response.redirected (PROTOCOL.md section 6;
		// doc.go).
		mode = "error"
		if !hasBody && followable(req.Header) {
			mode = "follow"
		}
		f.fill(req, body, mode)
		p = jsFetch.Invoke(f.urlValue(req.URL), f.init)
	})
	if err != nil {
		return nil, err // Headers or fetch threw: a bad header or URL that core let through
	}
	resp, err := f.await(ctx, p)
	if err != nil {
		return nil, err
	}
	if mode == "follow" && resp.Get("redirected").Truthy() {
		f.abort() // the target's answer is of no use
		return nil, &RedirectError{URL: req.URL}
	}
	out := &core.Response{Status: resp.Get("status").Int()}
	out.Header = headersOf(resp.Get("headers"), out.Status)
	if out.Status == 308 || out.Header.Get("X-HTTP-Status-Code-Override") == "308" {
		// A 308 says all it says in its Range header (PROTOCOL.md section 3). Its body,
		// empty or not, is not read: waiting for it costs a trip through the browser's task
		// queue on every chunk (measured: about a millisecond), as much as a request itself
		// costs the browser at small chunk sizes.
		return out, nil
	}
	buf, err := f.await(ctx, resp.Call("arrayBuffer"))
	if err != nil {
		return nil, err // the connection broke during the body, or ctx ended
	}
	n := min(buf.Get("byteLength").Int(), MaxResponseBody)
	if n > 0 {
		out.Body = make([]byte, n)
		js.CopyBytesToGo(out.Body, js.Global().Get("Uint8Array").New(buf, 0, n))
	}
	return out, nil
}

// fill makes f.init describe req, changing only what differs from the request before.
func (f *Fetch) fill(req *core.Request, body js.Value, mode string) {
	if req.Method != f.method {
		f.init.Set("method", req.Method)
		f.method = req.Method
	}
	for k, v := range req.Header {
		if old, ok := f.sent[k]; !ok || old != v {
			f.headers.Set(k, v)
			f.sent[k] = v
		}
	}
	for k := range f.sent {
		if _, ok := req.Header[k]; !ok {
			f.headers.Delete(k)
			delete(f.sent, k)
		}
	}
	f.init.Set("body", body) // undefined for none
	if mode != f.mode {
		f.init.Set("redirect", mode)
		f.mode = mode
	}
	if f.ac.IsUndefined() || f.aborted {
		f.ac, f.aborted = jsAbortController.New(), false
		f.init.Set("signal", f.ac.Get("signal"))
	}
}

func (f *Fetch) urlValue(u string) js.Value {
	if u != f.url || f.urlv.IsUndefined() {
		f.url, f.urlv = u, js.ValueOf(u)
	}
	return f.urlv
}

func (f *Fetch) abort() {
	if !f.aborted {
		f.aborted = true
		_ = try(func() { f.ac.Call("abort") })
	}
}

// await waits for p, a promise of fetch's own (whose then calls one callback, once), to
// settle. When ctx ends first it aborts the request and still waits for p, which the abort
// settles at once, so that nothing of the request outlives Do, and returns ctx.Err(). A
// rejection is a [FetchError].
func (f *Fetch) await(ctx core.Context, p js.Value) (js.Value, error) {
	if err := try(func() { p.Call("then", f.ok, f.fail) }); err != nil {
		return js.Undefined(), err
	}
	var s settlement
	select {
	case s = <-f.settled:
	case <-ctx.Done():
		f.abort()
		s = <-f.settled
	}
	switch {
	case ctx.Err() != nil:
		return js.Undefined(), ctx.Err()
	case !s.ok:
		return js.Undefined(), &FetchError{Err: errorFrom(s.v)}
	}
	return s.v, nil
}

// FetchError is a fetch that rejected: no answer arrived.
type FetchError struct {
	Err error
}

func (e *FetchError) Error() string {
	// Chromium rejects the same way for a lost connection, a CORS refusal and a redirect
	// that redirect mode "error" refused (a 308 with a Location): script cannot tell them
	// apart (doc.go).
	return "jsbridge: fetch failed (a network failure, a CORS refusal, or a redirect, which is never followed): " + e.Err.Error()
}

func (e *FetchError) Unwrap() error { return e.Err }

// RedirectError is a server that answered a session request with a redirect (a 308 that
// carries a Location). It is final: the protocol's 308 has no Location, and the upload is
// never sent elsewhere.
type RedirectError struct{ URL string }

func (e *RedirectError) Error() string {
	return "jsbridge: the server answered " + e.URL + " with a redirect (a 308 with a Location), which an upload never follows"
}

// Code returns "protocol_error", which makes core stop at once.
func (e *RedirectError) Code() string { return core.CodeProtocol }

// followable reports whether a request with these headers may follow a redirect: when it
// carries nothing but protocol headers and Authorization, which fetch itself drops on a
// redirect to another origin (the Fetch standard, HTTP-redirect fetch). Any other header the
// caller gave could reach a host it was not meant for, so such a request is never followed.
func followable(h core.Header) bool {
	for k := range h {
		switch k {
		case "content-range", "content-type", "x-guploader-no-308", "authorization":
		default:
			return false
		}
	}
	return true
}

// bodyOf returns the fetch body for pieces: nothing for none, the Blob slice itself for a
// single one, a Uint8Array for a single core.Bytes (metadata), and for several (a multipart
// prefix, the media, a suffix) a Blob made of them, which copies the small strings but only
// references the media's slice.
func bodyOf(pieces []core.Piece) (js.Value, bool) {
	switch len(pieces) {
	case 0:
		return js.Undefined(), false
	case 1:
		if p, ok := pieces[0].(core.Bytes); ok && len(p) == 0 {
			return js.Undefined(), false
		}
		return pieceValue(pieces[0]), true
	}
	parts := make([]any, len(pieces))
	for i, p := range pieces {
		parts[i] = pieceValue(p)
	}
	return js.Global().Get("Blob").New(js.ValueOf(parts)), true
}

func pieceValue(p core.Piece) js.Value {
	switch p := p.(type) {
	case BlobPiece:
		return p.v
	case core.Bytes:
		a := js.Global().Get("Uint8Array").New(len(p))
		js.CopyBytesToJS(a, p)
		return a
	}
	panic(errors.New("jsbridge: a piece of unknown kind")) // a programming error: recovered at the boundary
}

// answerHeaders are the answer's header fields core reads (PROTOCOL.md sections 2-5), as JS
// strings: only these are fetched, each with one Headers.get, rather than iterating every
// field, since each JS call made from Go costs time on every chunk.
var answerHeaders = [...]struct {
	name string
	v    js.Value
}{
	{"range", js.ValueOf("range")},
	{"location", js.ValueOf("location")},
	{"x-http-status-code-override", js.ValueOf("x-http-status-code-override")},
	{"retry-after", js.ValueOf("retry-after")},
}

// headersOf reads the fields core needs from a fetch Headers object. Only what CORS exposes is
// there: the reference server lists Range, Location and X-HTTP-Status-Code-Override in
// Access-Control-Expose-Headers. A 308 (the answer to nearly every chunk) is read for its Range
// alone: core reads nothing else of it (PROTOCOL.md section 3).
func headersOf(h js.Value, status int) core.Header {
	out := core.Header{}
	fields := answerHeaders[:]
	if status == 308 {
		fields = fields[:1]
	}
	for _, f := range fields {
		if v := h.Call("get", f.v); v.Type() == js.TypeString {
			out[f.name] = v.String()
		}
	}
	return out
}
