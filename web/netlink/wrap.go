package netlink

import (
	"errors"
	"io"
	"net/http"
)

// errGone is what a body read returns once the client has given the request up (over HTTP/2 a
// reset stream ends its context at once; over HTTP/1.1 it closes the connection: Listen): the
// bytes the server holds beyond what the link has carried would, on a real uplink, still be
// waiting on the client's side, and are lost with it.
var errGone = errors.New("netlink: the client gave the request up before these bytes crossed the link")

// step is the most a read takes at a time from a body on a link with a rate: small enough that
// the bytes come smoothly, and that a change of the link applies within one step.
const step = 16 << 10

// Wrap returns h behind the link: a request that arrives in a blackout waits for its end
// before h sees it, its body is read at the link's rate, and its answer leaves one round trip
// after h wrote it. Every request is wrapped whatever the link is now, so that a change
// reaches the requests in flight; on a link without limits the wrapping costs an atomic load
// per read and per write.
func (l *Link) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := r.Context().Done()
		if l.metered.Load() || l.held.Load() {
			if _, ok := l.open(done); !ok {
				return // the client gave up during the blackout: the request never got through
			}
		}
		if r.Body != nil && r.Body != http.NoBody {
			b := &slowBody{ReadCloser: r.Body, l: l, done: done}
			if r.ProtoMajor == 1 {
				b.conn = connOf(r.Context()) // (over HTTP/2 a reset stream ends done)
			}
			r.Body = b
		}
		h.ServeHTTP(&lateWriter{ResponseWriter: w, l: l, done: done}, r)
	})
}

// slowBody reads a request body at the link's rate, in steps small enough to stay smooth.
type slowBody struct {
	io.ReadCloser
	l    *Link
	done <-chan struct{}
	conn *conn // an HTTP/1.1 request's connection from Listen, or nil
}

// Read books the bytes it reads on the link and returns them once the link has carried them.
// A read on an unlimited link is not cut to a step (on loopback that would cost a fast upload
// its speed); its bytes are booked all the same when the link changed while it read, at the
// rate in force then.
func (b *slowBody) Read(p []byte) (int, error) {
	metered := false
	if b.l.metered.Load() {
		s, ok := b.l.open(b.done) // no byte goes through a blackout
		if metered = ok && s.Rate > 0; metered && len(p) > step {
			p = p[:step]
		}
		if metered && b.conn != nil {
			b.conn.pump(s.Rate) // the client's close is seen at once (Listen)
		}
	}
	if b.gone() {
		return 0, errGone
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 && (metered || b.l.metered.Load()) {
		b.l.carry(b.l.book(n), b.done)
		if b.gone() {
			return 0, errGone
		}
	}
	return n, err
}

// gone reports whether the client has given the request up: its context is done, or (over
// HTTP/1.1) it closed the connection.
func (b *slowBody) gone() bool {
	select {
	case <-b.done:
		return true
	default:
		return b.conn != nil && b.conn.gone()
	}
}

// lateWriter holds the answer back, before its status line, for the round trip in force when
// the handler first writes it; an answer written in a blackout, or due in one, leaves when the
// blackout ends.
type lateWriter struct {
	http.ResponseWriter
	l      *Link
	done   <-chan struct{}
	waited bool
}

func (w *lateWriter) wait() {
	if w.waited {
		return
	}
	w.waited = true
	if !w.l.held.Load() {
		return
	}
	s, ok := w.l.open(w.done)
	if !ok {
		return
	}
	if s.RTT > 0 {
		wait(s.RTT, nil, w.done)
		w.l.open(w.done)
	}
}

func (w *lateWriter) WriteHeader(status int) {
	w.wait()
	w.ResponseWriter.WriteHeader(status)
}

func (w *lateWriter) Write(b []byte) (int, error) {
	w.wait()
	return w.ResponseWriter.Write(b)
}

// Flush holds the answer as Write does: a handler that flushes its header early does not get
// it past the link.
func (w *lateWriter) Flush() {
	w.wait()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *lateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
