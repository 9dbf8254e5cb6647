package netlink

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveTLS is serve's server over HTTPS, with HTTP/2 offered by ALPN (h2 asks for TLS in
// browsers); its Client speaks HTTP/2 to it, every request on one connection.
func serveTLS(t *testing.T, l *Link) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(sink(l))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// Over HTTP/2 the link holds as over HTTP/1.1: one upload reaches the same share of the rate.
// HTTP/2's flow control does not slow it: the server's window (1 MiB by default) is 84 ms of
// a 100 Mbit/s link, and the window updates go back as the handler reads, at the link's rate.
func TestLinkOverHTTP2ReachesTheRate(t *testing.T) {
	if testing.Short() {
		t.Skip("measures four seconds of a 100 Mbit/s link")
	}
	const rate = 100e6 / 8 // 100 Mbit/s
	l := &Link{}
	l.Set(rate, 20*time.Millisecond)
	h1, h2 := serve(t, l), serveTLS(t, l)
	size := int(rate) // a second of the link
	share := func(d time.Duration) float64 { return float64(size) / rate / d.Seconds() }
	// Warm both connections up (TLS handshake), then one PUT each, best of two: the machine
	// may be shared with other work.
	putWith(t, h1.Client(), h1.URL, 1)
	putWith(t, h2.Client(), h2.URL, 1)
	var best1, best2 float64
	for range 2 {
		d1, p1 := putWith(t, h1.Client(), h1.URL, size)
		d2, p2 := putWith(t, h2.Client(), h2.URL, size)
		require.Equal(t, "HTTP/1.1", p1, "the first server saw")
		require.Equal(t, "HTTP/2.0", p2, "the second server saw")
		best1, best2 = max(best1, share(d1)), max(best2, share(d2))
	}
	t.Logf("one PUT of %.1f MB at 100 Mbit/s, 20 ms: %.3f of the link over HTTP/1.1, %.3f over HTTP/2", float64(size)/1e6, best1, best2)
	assert.GreaterOrEqual(t, best2, 0.9, "the share of the link one PUT reached over HTTP/2")
	assert.GreaterOrEqual(t, best2, best1-0.05, "the share of the link one PUT reached over HTTP/2, less HTTP/1.1's")
}

// HTTP/2 carries every request on one connection: the link still answers each one a round
// trip after its own handler, and a request without a body is not held behind a big upload
// on the same connection.
func TestLinkOverHTTP2PerStream(t *testing.T) {
	const rtt = 150 * time.Millisecond
	l := &Link{}
	l.Set(4<<20, rtt) // 4 MiB/s: 4 MiB take about a second
	srv := serveTLS(t, l)
	c := srv.Client()
	putWith(t, c, srv.URL, 1) // the connection, before the clock starts

	var wg sync.WaitGroup
	var big time.Duration
	wg.Go(func() { big, _ = putWith(t, c, srv.URL, 4<<20) })
	time.Sleep(100 * time.Millisecond) // the upload is under way
	small, proto := putWith(t, c, srv.URL, 0)
	wg.Wait()
	require.Equal(t, "HTTP/2.0", proto, "the server saw")
	assert.GreaterOrEqual(t, small, rtt, "a bodyless request beside a 4 MiB upload: want about one round trip")
	assert.LessOrEqual(t, small, rtt+300*time.Millisecond, "a bodyless request beside a 4 MiB upload: want about one round trip")
	assert.GreaterOrEqual(t, big, 900*time.Millisecond, "4 MiB at 4 MiB/s")

	// Two uploads on the one connection share the rate, and both end.
	t0 := time.Now()
	wg.Go(func() { putWith(t, c, srv.URL, 1<<20) })
	putWith(t, c, srv.URL, 1<<20)
	wg.Wait()
	assert.GreaterOrEqual(t, time.Since(t0), 400*time.Millisecond+rtt, "2 MiB at 4 MiB/s over one HTTP/2 connection: the rate is not shared")
}
