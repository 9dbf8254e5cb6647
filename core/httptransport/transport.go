package httptransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mediaupload/mediaupload/core"
)

// MaxAnswer bounds the body read from an answer: the protocol's answers are small JSON.
const MaxAnswer = 8 << 20

// Transport is a core.Transport over net/http.
type Transport struct {
	// Client sends the requests; nil means a client like http.DefaultClient. Its redirect
	// policy is replaced: a 308 must reach the core, never be followed.
	Client *http.Client
}

// ReaderPiece is a Piece that a Transport can read: what this package's sources hand out.
type ReaderPiece interface {
	core.Piece
	NewReader() io.Reader
}

func (t *Transport) client() *http.Client {
	c := http.Client{}
	if t.Client != nil {
		c = *t.Client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// Do sends r and returns the answer; an error means no answer arrived.
func (t *Transport) Do(cctx core.Context, r *core.Request) (*core.Response, error) {
	ctx, cancel := stdContext(cctx)
	defer cancel()
	if r.Timeout > 0 {
		// A request unanswered this long is given up: a lost connection to core.
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, time.Duration(r.Timeout))
		defer stop()
	}
	readers := make([]io.Reader, 0, len(r.Body))
	for _, p := range r.Body {
		switch p := p.(type) {
		case core.Bytes:
			readers = append(readers, bytes.NewReader(p))
		case ReaderPiece:
			readers = append(readers, p.NewReader())
		default:
			return nil, errors.New("httptransport: cannot send a piece of this kind")
		}
	}
	var body io.Reader = http.NoBody
	if n := r.ContentLength(); n > 0 {
		body = io.MultiReader(readers...)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = r.ContentLength()
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := t.client().Do(req)
	if err != nil {
		if r.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && cctx.Err() == nil {
			return nil, &core.StallError{After: r.Timeout, Err: err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	if err != nil {
		return nil, err // the answer broke off: as good as none
	}
	h := make(core.Header, len(resp.Header))
	for k, v := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return &core.Response{Status: resp.StatusCode, Header: h, Body: data}, nil
}

// stdContext returns ctx as a context.Context for net/http: itself when it is one (what Go
// callers pass), else a context cancelled when ctx is done.
func stdContext(ctx core.Context) (context.Context, context.CancelFunc) {
	if c, ok := ctx.(context.Context); ok {
		return c, func() {}
	}
	c, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-ctx.Done():
			cancel()
		case <-c.Done():
		}
	}()
	return c, cancel
}
