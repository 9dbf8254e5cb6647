package main

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// throttle slows the request bodies of uploads down to a shared rate, so that
// on loopback, where a file arrives in milliseconds, one can still watch the
// bars move, pause and cancel. Zero means no limit. The demo page sets it with
// POST /api/throttle {"bytesPerSecond": N}.
type throttle struct {
	mu   sync.Mutex
	rate int64     // bytes per second, 0 = unlimited
	next time.Time // when the link is free again
}

func (t *throttle) setRate(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 0 {
		n = 0
	}
	t.rate = n
	t.next = time.Time{}
}

func (t *throttle) getRate() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rate
}

// reserve books n bytes on the shared link and says how long to wait first.
func (t *throttle) reserve(n int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate <= 0 {
		return 0
	}
	now := time.Now()
	if t.next.Before(now) {
		t.next = now
	}
	wait := t.next.Sub(now)
	t.next = t.next.Add(time.Duration(int64(n) * int64(time.Second) / t.rate))
	return wait
}

// wrap limits the bodies of the requests that h serves.
func (t *throttle) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && t.getRate() > 0 {
			r.Body = &slowBody{ReadCloser: r.Body, t: t, done: r.Context().Done()}
		}
		h.ServeHTTP(w, r)
	})
}

type slowBody struct {
	io.ReadCloser
	t    *throttle
	done <-chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	const step = 16 << 10
	if len(p) > step {
		p = p[:step]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if d := b.t.reserve(n); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-b.done:
				timer.Stop()
			}
		}
	}
	return n, err
}

func (t *throttle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		var body struct {
			BytesPerSecond int64 `json:"bytesPerSecond"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&body); err != nil {
			http.Error(w, "serve: body must be {\"bytesPerSecond\": N}", http.StatusBadRequest)
			return
		}
		t.setRate(body.BytesPerSecond)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "serve: use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, map[string]int64{"bytesPerSecond": t.getRate()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
