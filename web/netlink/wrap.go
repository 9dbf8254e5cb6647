package netlink

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
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
// before h sees it, and one that arrives while a request given up still delivers its queue
// (SetQueue) waits behind that queue; its body is read at the link's rate, and its answer leaves
// one round trip after h wrote it. Every request is wrapped whatever the link is now, so that a
// change reaches the requests in flight; on a link without limits the wrapping costs an atomic
// load per read and per write.
func (l *Link) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := r.Context().Done()
		if l.metered.Load() || l.held.Load() {
			if !l.arrive(done) {
				return // the client gave up while it waited: the request never got through
			}
		}
		if r.Body != nil && r.Body != http.NoBody {
			b := &slowBody{ReadCloser: r.Body, l: l, done: done}
			// The moment the client gives the request up starts its queue (Link.cut): requests
			// that come after it wait behind it.
			stop := context.AfterFunc(r.Context(), b.giveUp) // over HTTP/2: a reset stream
			if r.ProtoMajor == 1 {
				if b.conn = connOf(r.Context()); b.conn != nil {
					stop1 := b.conn.afterGone(b.giveUp) // a closed connection (Listen)
					defer stop1()
				}
			}
			defer b.finish() // a handler that stops reading drops the rest of its queue
			defer stop()
			r.Body = b
		}
		h.ServeHTTP(&lateWriter{ResponseWriter: w, l: l, done: done}, r)
	})
}

// arrive waits until a request may reach the handler: outside a blackout, and behind the queues
// of the requests given up before it (on a real link its bytes queue behind theirs). False: the
// client gave up meanwhile.
func (l *Link) arrive(done <-chan struct{}) bool {
	for {
		if _, ok := l.open(done); !ok {
			return false
		}
		if !l.behind(done) {
			return false
		}
		l.mu.Lock()
		s := l.tl.at(l.use())
		l.mu.Unlock()
		if !s.Blackout { // (a queue that ended in a blackout: wait for its end too)
			return true
		}
	}
}

// slowBody reads a request body at the link's rate, in steps small enough to stay smooth.
type slowBody struct {
	io.ReadCloser
	l    *Link
	done <-chan struct{}
	conn *conn // an HTTP/1.1 request's connection from Listen, or nil
	end  error // what every read returns from now on (errGone, or io.EOF once a queue ended the body whole)

	// Set by giveUp when the client gives the request up, which may come from another
	// goroutine: the bytes its queue may still deliver (Link.cut), while it is arriving.
	mu       sync.Mutex
	given    bool
	left     int64
	draining bool
	finished bool // the handler has returned: nothing more is read
}

// giveUp starts the body's queue: the client has given the request up (its stream reset, its
// connection closed). Once only, and not after the handler has returned.
func (b *slowBody) giveUp() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.given || b.finished {
		return
	}
	b.given = true
	b.left = b.l.cut()
	b.draining = b.left > 0
}

// finish ends the body's queue, if it is arriving, once the handler has returned (or the queue
// has arrived, or nothing more is held): what it has not delivered is lost.
func (b *slowBody) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finished = true
	if b.draining {
		b.draining = false
		b.l.drainEnd()
	}
}

// queue returns whether the client has given the request up and, if so, how many bytes its
// queue may still deliver (0: none, or none left).
func (b *slowBody) queue() (given bool, left int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.given && !b.draining {
		return true, 0
	}
	return b.given, b.left
}

// Read books the bytes it reads on the link and returns them once the link has carried them.
// A read on an unlimited link is not cut to a step (on loopback that would cost a fast upload
// its speed); its bytes are booked all the same when the link changed while it read, at the
// rate in force then. Once the client has given the request up, the body's queue is read
// (drain).
func (b *slowBody) Read(p []byte) (int, error) {
	if b.end != nil {
		return 0, b.end
	}
	if given, _ := b.queue(); given {
		return b.drain(p)
	}
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
		b.giveUp() // (seen here first: the call from its own goroutine is on its way)
		return b.drain(p)
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 && (metered || b.l.metered.Load()) {
		// The bytes of a step under way when the client gives the request up are the oldest of
		// its queue: they arrive, unless the link has no queue.
		done := b.done
		if b.l.Queue() > 0 {
			done = nil
		}
		b.l.carry(b.l.book(n), done)
		if given, left := b.queue(); given {
			if left <= 0 {
				b.stop(errGone)
				return 0, errGone
			}
			b.take(int64(n))
		}
	}
	return n, err
}

// drain reads the body's queue (Link.SetQueue): the oldest of the bytes the server holds of it
// (read ahead from its HTTP/1.1 connection, or in HTTP/2's window), at the link's rate, up to
// the queue's worth; then errGone. A body whose bytes all arrive so ends as a whole one (its
// client gave it up after handing over the last byte, waiting for the answer).
func (b *slowBody) drain(p []byte) (int, error) {
	_, left := b.queue()
	if left <= 0 {
		b.stop(errGone)
		return 0, errGone
	}
	p = p[:min(int64(len(p)), step, left)]
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.l.carry(b.l.book(n), nil) // the client is gone: nothing ends the wait but the link
		b.take(int64(n))
	}
	switch {
	case err == io.EOF:
		b.stop(io.EOF)
		return n, io.EOF
	case err != nil:
		b.stop(errGone) // nothing more is held: the rest never left the client
		return n, errGone
	}
	return n, nil
}

// take counts n bytes of the queue as arrived.
func (b *slowBody) take(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= n
}

// stop ends the body's reads with err, and its queue.
func (b *slowBody) stop(err error) {
	b.end = err
	b.finish()
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
