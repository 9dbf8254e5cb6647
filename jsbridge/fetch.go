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

// Fetch is a core.Transport over the browser's fetch.
type Fetch struct{}

// The browser's constructors and fetch, looked up once: Do runs for every chunk, and each
// JS call from Go (and each object reference it returns, which gets a finalizer) costs time
// there (measured with Chromium's profiler: Go's side of the calls was about a tenth of the
// main thread's time at 256 KiB chunks).
var (
	jsObject          = js.Global().Get("Object")
	jsAbortController = js.Global().Get("AbortController")
	jsFetch           = js.Global().Get("fetch")
	jsModeError       = js.ValueOf("error")
	jsModeFollow      = js.ValueOf("follow")
)

// lastURL is the JS string of the last URL fetched: a session's chunks all go to one URL, so
// it is converted once rather than on every chunk. Only the upload goroutines use it, and
// wasm runs one goroutine at a time.
var lastURL struct {
	s string
	v js.Value
}

func urlValue(u string) js.Value {
	if u != lastURL.s || lastURL.v.IsUndefined() {
		lastURL.s, lastURL.v = u, js.ValueOf(u)
	}
	return lastURL.v
}

// Do sends req with fetch and returns the answer. Any HTTP status is an answer; an error means
// fetch rejected (a network failure, a CORS refusal, a redirect: see below) or ctx ended.
func (Fetch) Do(ctx core.Context, req *core.Request) (*core.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ac := jsAbortController.New()
	abort := func() { _ = try(func() { ac.Call("abort") }) }

	init := jsObject.New()
	var p js.Value
	var redirect string
	err := try(func() {
		init.Set("method", req.Method)
		h := jsObject.New() // a record of names and values is a HeadersInit
		for k, v := range req.Header {
			h.Set(k, v)
		}
		init.Set("headers", h)
		body, hasBody := bodyOf(req.Body)
		if hasBody {
			init.Set("body", body)
		}
		// Never "manual": it makes every 308 opaque, Range and all. A request with a body
		// goes in mode "error": "follow" would re-send the body to a 308's Location. A
		// request without one whose headers may go anywhere (a status query) goes in mode
		// "follow", so that a redirect shows as response.redirected (PROTOCOL.md section 6;
		// doc.go).
		redirect = "error"
		if !hasBody && followable(req.Header) {
			redirect = "follow"
		}
		if redirect == "follow" {
			init.Set("redirect", jsModeFollow)
		} else {
			init.Set("redirect", jsModeError)
		}
		init.Set("signal", ac.Get("signal"))
		p = jsFetch.Invoke(urlValue(req.URL), init)
	})
	if err != nil {
		return nil, err // Headers or fetch threw: a bad header or URL that core let through
	}
	resp, err := awaitNative(ctx, p, abort)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &FetchError{Err: err}
	}
	if redirect == "follow" && resp.Get("redirected").Truthy() {
		abort() // the target's answer is of no use
		return nil, &RedirectError{URL: req.URL}
	}
	out := &core.Response{Status: resp.Get("status").Int(), Header: headersOf(resp.Get("headers"))}
	if out.Status == 308 || out.Header.Get("X-HTTP-Status-Code-Override") == "308" {
		// A 308 says all it says in its Range header (PROTOCOL.md section 3). Its body,
		// empty or not, is not read: waiting for it costs a trip through the browser's task
		// queue on every chunk (measured: about a millisecond), as much as a request itself
		// costs the browser at small chunk sizes.
		return out, nil
	}
	buf, err := awaitNative(ctx, resp.Call("arrayBuffer"), abort)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &FetchError{Err: err} // the connection broke during the body
	}
	n := min(buf.Get("byteLength").Int(), MaxResponseBody)
	if n > 0 {
		out.Body = make([]byte, n)
		js.CopyBytesToGo(out.Body, js.Global().Get("Uint8Array").New(buf, 0, n))
	}
	return out, nil
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

// answerHeaders are the answer's header fields core reads (PROTOCOL.md sections 2-5): only
// these are fetched, each with one Headers.get, rather than iterating every field, since
// each JS call made from Go costs time on every chunk.
var answerHeaders = [...]string{"range", "location", "x-http-status-code-override", "retry-after"}

// headersOf reads the fields core needs from a fetch Headers object. Only what CORS exposes is
// there: the reference server lists Range, Location and X-HTTP-Status-Code-Override in
// Access-Control-Expose-Headers.
func headersOf(h js.Value) core.Header {
	out := core.Header{}
	for _, k := range answerHeaders {
		if v := h.Call("get", k); v.Type() == js.TypeString {
			out[k] = v.String()
		}
	}
	return out
}
