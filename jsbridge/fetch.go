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

// Do sends req with fetch and returns the answer. Any HTTP status is an answer; an error means
// fetch rejected (a network failure, a CORS refusal, a redirect: see below) or ctx ended.
func (Fetch) Do(ctx core.Context, req *core.Request) (*core.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := js.Global()
	ac := g.Get("AbortController").New()
	abort := func() { _ = try(func() { ac.Call("abort") }) }

	init := g.Get("Object").New()
	var p js.Value
	var redirect string
	err := try(func() {
		init.Set("method", req.Method)
		h := g.Get("Headers").New()
		for k, v := range req.Header {
			h.Call("set", k, v)
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
		init.Set("redirect", redirect)
		init.Set("signal", ac.Get("signal"))
		p = g.Call("fetch", req.URL, init)
	})
	if err != nil {
		return nil, err // Headers or fetch threw: a bad header or URL that core let through
	}
	resp, err := Await(ctx, p, abort)
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
	buf, err := Await(ctx, resp.Call("arrayBuffer"), abort)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &FetchError{Err: err} // the connection broke during the body
	}
	n := min(buf.Get("byteLength").Int(), MaxResponseBody)
	if n > 0 {
		out.Body = make([]byte, n)
		js.CopyBytesToGo(out.Body, g.Get("Uint8Array").New(buf, 0, n))
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

// headersOf reads a fetch Headers object into a core.Header. Iteration gives lower-case
// names (the Fetch standard), and only what CORS exposes: the reference server lists Range,
// Location and X-HTTP-Status-Code-Override in Access-Control-Expose-Headers.
func headersOf(h js.Value) core.Header {
	out := core.Header{}
	it := h.Call("entries")
	for {
		n := it.Call("next")
		if n.Get("done").Truthy() {
			return out
		}
		kv := n.Get("value")
		out[kv.Index(0).String()] = kv.Index(1).String()
	}
}
