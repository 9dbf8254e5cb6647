package netlink

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// sink reads a body through l and answers with the HTTP version it came in (X-Proto).
func sink(l *Link) http.Handler {
	return l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Proto", r.Proto)
		w.WriteHeader(200)
		_, _ = w.Write([]byte{byte(n >> 10)})
	}))
}

func serve(t *testing.T, l *Link) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(sink(l))
	t.Cleanup(srv.Close)
	return srv
}

// putWith sends n bytes with c and returns how long the answer took, and the HTTP version
// the server saw.
func putWith(t *testing.T, c *http.Client, url string, n int) (time.Duration, string) {
	t.Helper()
	t0 := time.Now()
	res, err := c.Post(url, "application/octet-stream", bytes.NewReader(make([]byte, n)))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	return time.Since(t0), res.Header.Get("X-Proto")
}

func put(t *testing.T, url string, n int) time.Duration {
	t.Helper()
	d, _ := putWith(t, http.DefaultClient, url, n)
	return d
}

// A body is read at the link's rate, and the answer comes one round trip after it.
func TestLinkRateAndRoundTrip(t *testing.T) {
	l := &Link{}
	srv := serve(t, l)
	if d := put(t, srv.URL, 1<<20); d > 500*time.Millisecond {
		t.Fatalf("an unlimited link took %v for 1 MiB", d)
	}
	l.Set(4<<20, 0) // 4 MiB/s: 1 MiB in about 250 ms
	if d := put(t, srv.URL, 1<<20); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("1 MiB at 4 MiB/s took %v", d)
	}
	l.Set(0, 150*time.Millisecond)
	if d := put(t, srv.URL, 10); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("an answer one 150 ms round trip late took %v", d)
	}
	if rate, rtt := l.Get(); rate != 0 || rtt != 150*time.Millisecond {
		t.Errorf("Get: %d, %v", rate, rtt)
	}
}

// Two requests at once share the link's rate.
func TestLinkIsShared(t *testing.T) {
	l := &Link{}
	l.Set(4<<20, 0)
	srv := serve(t, l)
	t0 := time.Now()
	done := make(chan struct{})
	go func() { put(t, srv.URL, 1<<20); close(done) }()
	put(t, srv.URL, 1<<20)
	<-done
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Errorf("2 MiB at 4 MiB/s in %v: the rate is not shared", d)
	}
}
