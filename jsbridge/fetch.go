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
	err := try(func() {
		init.Set("method", req.Method)
		h := g.Get("Headers").New()
		for k, v := range req.Header {
			h.Call("set", k, v)
		}
		init.Set("headers", h)
		if body, ok := bodyOf(req.Body); ok {
			init.Set("body", body)
		}
		// Never "manual": it makes every 308 opaque, Range and all. Never "follow": a 308
		// with a Location would re-send the body to another URL and hide the 308's Range.
		// In "error" mode fetch rejects instead (PROTOCOL.md section 6; doc.go says what
		// becomes of it).
		init.Set("redirect", "error")
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
