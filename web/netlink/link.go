package netlink

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// Link is an emulated uplink. Its zero value is a link without limits; Set changes it at any
// time, for the requests that come after.
type Link struct {
	mu   sync.Mutex
	rate int64         // bytes per second, 0 = unlimited
	rtt  time.Duration // added before every answer
	next time.Time     // when the link is free again
}

// Set sets the rate in bytes per second (0: unlimited) and the round trip (0: none).
func (l *Link) Set(bytesPerSecond int64, rtt time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rate, l.rtt, l.next = max(bytesPerSecond, 0), max(rtt, 0), time.Time{}
}

// Get returns the rate in bytes per second and the round trip.
func (l *Link) Get() (bytesPerSecond int64, rtt time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate, l.rtt
}

// slack is how far behind its schedule the link may fall and still catch up: a reader that
// wakes late from a sleep (timers overshoot by a millisecond or more on a busy machine, and at
// 100 Mbit/s a 16 KiB step lasts 1.3 ms) gets that time back instead of losing it for good.
// An idle link therefore lets up to slack's worth of bytes through at once, as a real link's
// buffers do.
const slack = 25 * time.Millisecond

// reserve books n bytes on the link and says how long to wait before they count as arrived
// (zero or less: at once).
func (l *Link) reserve(n int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rate <= 0 {
		return 0
	}
	now := time.Now()
	if floor := now.Add(-slack); l.next.Before(floor) {
		l.next = floor
	}
	l.next = l.next.Add(time.Duration(int64(n) * int64(time.Second) / l.rate))
	return l.next.Sub(now)
}

// Wrap returns h behind the link: its request bodies are read at the link's rate, its answers
// are held for one round trip.
func (l *Link) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rate, rtt := l.Get()
		if rate > 0 && r.Body != nil && r.Body != http.NoBody {
			r.Body = &slowBody{ReadCloser: r.Body, l: l, done: r.Context().Done()}
		}
		if rtt > 0 {
			w = &lateWriter{ResponseWriter: w, rtt: rtt, done: r.Context().Done()}
		}
		h.ServeHTTP(w, r)
	})
}

// sleep waits d, or until done is closed.
func sleep(d time.Duration, done <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// slowBody reads a request body at the link's rate, in steps small enough to stay smooth.
type slowBody struct {
	io.ReadCloser
	l    *Link
	done <-chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	const step = 16 << 10
	if len(p) > step {
		p = p[:step]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		sleep(b.l.reserve(n), b.done)
	}
	return n, err
}

// lateWriter holds the answer back for one round trip: the wait comes before its status line.
type lateWriter struct {
	http.ResponseWriter
	rtt    time.Duration
	done   <-chan struct{}
	waited bool
}

func (w *lateWriter) wait() {
	if !w.waited {
		w.waited = true
		sleep(w.rtt, w.done)
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

// Unwrap lets http.ResponseController reach the connection.
func (w *lateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
