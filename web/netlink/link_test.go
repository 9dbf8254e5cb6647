package netlink

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	if !assert.NoError(t, err) {
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
	require.LessOrEqual(t, put(t, srv.URL, 1<<20), 500*time.Millisecond, "1 MiB over an unlimited link")
	l.Set(4<<20, 0) // 4 MiB/s: 1 MiB in about 250 ms
	d := put(t, srv.URL, 1<<20)
	assert.GreaterOrEqual(t, d, 200*time.Millisecond, "1 MiB at 4 MiB/s")
	assert.LessOrEqual(t, d, 2*time.Second, "1 MiB at 4 MiB/s")
	l.Set(0, 150*time.Millisecond)
	d = put(t, srv.URL, 10)
	assert.GreaterOrEqual(t, d, 150*time.Millisecond, "an answer one 150 ms round trip late")
	assert.LessOrEqual(t, d, 2*time.Second, "an answer one 150 ms round trip late")
	rate, rtt := l.Get()
	assert.Zero(t, rate, "Get's rate")
	assert.Equal(t, 150*time.Millisecond, rtt, "Get's round trip")
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
	assert.GreaterOrEqual(t, time.Since(t0), 400*time.Millisecond, "2 MiB at 4 MiB/s: the rate is not shared")
}

// recorder is a handler that notes, from the moment its first request arrived, when each
// request reached it and when each read of a body returned and with how many bytes. With
// ?hold=D it answers D after it began (after reading the body); with ?wait=D it waits D before
// it reads.
type recorder struct {
	mu     sync.Mutex
	origin time.Time
	starts map[string]time.Duration // by path
	reads  []read
	got    atomic.Int64 // body bytes read so far
}

type read struct {
	at time.Duration
	n  int
}

func (rc *recorder) since() time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.origin.IsZero() {
		rc.origin = time.Now()
	}
	return time.Since(rc.origin)
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	at := rc.since()
	rc.mu.Lock()
	if rc.starts == nil {
		rc.starts = map[string]time.Duration{}
	}
	rc.starts[r.URL.Path] = at
	rc.mu.Unlock()
	q := r.URL.Query()
	if d, err := time.ParseDuration(q.Get("wait")); err == nil {
		time.Sleep(d)
	}
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Body.Read(buf)
		if n > 0 {
			rc.got.Add(int64(n))
			at := rc.since()
			rc.mu.Lock()
			rc.reads = append(rc.reads, read{at, n})
			rc.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	if d, err := time.ParseDuration(q.Get("hold")); err == nil {
		time.Sleep(time.Until(began.Add(d)))
	}
	w.WriteHeader(200)
}

func (rc *recorder) start(path string) time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.starts[path]
}

func (rc *recorder) biggestRead() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	most := 0
	for _, r := range rc.reads {
		most = max(most, r.n)
	}
	return most
}

// serveRecorder serves a recorder behind l, over HTTP/1.1 or (h2) HTTP/2 with TLS.
func serveRecorder(t *testing.T, l *Link, h2 bool) (*httptest.Server, *recorder) {
	t.Helper()
	rc := &recorder{}
	srv := httptest.NewUnstartedServer(l.Wrap(rc))
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, rc
}

// timed sends a request with c (a body of n bytes when n > 0) and returns how long its answer
// took.
func timed(t *testing.T, c *http.Client, method, url string, n int) time.Duration {
	t.Helper()
	var body io.Reader
	if n > 0 {
		body = bytes.NewReader(make([]byte, n))
	}
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	t0 := time.Now()
	res, err := c.Do(req)
	if !assert.NoError(t, err) {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return time.Since(t0)
}

func setSchedule(t *testing.T, l *Link, steps ...Step) {
	t.Helper()
	require.NoError(t, l.SetSchedule(steps))
}

// A drop of the rate slows a body already being read.
func TestScheduleRateDropInsideARequest(t *testing.T) {
	l := &Link{}
	setSchedule(t, l, Step{Rate: 8 << 20}, Step{At: 200 * time.Millisecond, Rate: 1 << 20})
	srv := serve(t, l)
	// 200 ms at 8 MiB/s carry 1.6 MiB; the 0.9 MiB left at 1 MiB/s take 0.9 s more. At the
	// rate the request began with it would all take 0.3 s.
	d := put(t, srv.URL, 2<<20+512<<10)
	assert.GreaterOrEqual(t, d, 800*time.Millisecond, "2.5 MiB, 200 ms at 8 MiB/s then 1 MiB/s, want about 1.1 s")
	assert.LessOrEqual(t, d, 4*time.Second, "2.5 MiB, 200 ms at 8 MiB/s then 1 MiB/s, want about 1.1 s")
}

// A rise of the rate speeds up a body being read, a step already booked at the old rate
// included: its bytes not yet carried go at the new rate.
func TestScheduleRateRiseInsideARequest(t *testing.T) {
	l := &Link{}
	setSchedule(t, l, Step{Rate: 1 << 10}, Step{At: 200 * time.Millisecond, Rate: 8 << 20})
	srv := serve(t, l)
	// The first read's bytes (a few KiB) are booked at 1 KiB/s; 200 B of them go in the first
	// 200 ms, the rest with the 1 MiB at 8 MiB/s: about 0.33 s in all. Kept at the old rate,
	// the first read alone would take seconds; at the rate the request began with, the whole
	// body a quarter of an hour (the client gives up after 5 s).
	c := &http.Client{Timeout: 5 * time.Second}
	d, _ := putWith(t, c, srv.URL, 1<<20)
	assert.GreaterOrEqual(t, d, 250*time.Millisecond, "1 MiB, 200 ms at 1 KiB/s then 8 MiB/s, want about 0.33 s")
	assert.LessOrEqual(t, d, 700*time.Millisecond, "1 MiB, 200 ms at 1 KiB/s then 8 MiB/s, want about 0.33 s")
}

// A blackout lets no byte of a body through and no answer out until it ends, and a request
// that arrives during it reaches the handler only then; the connections stay open.
func TestScheduleBlackout(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			const from, to = 100 * time.Millisecond, 600 * time.Millisecond
			l := &Link{}
			setSchedule(t, l, Step{Rate: 1 << 20}, Step{At: from, Blackout: true}, Step{At: to, Rate: 1 << 20})
			srv, rc := serveRecorder(t, l, h2)
			c := srv.Client()
			timed(t, c, "GET", srv.URL+"/warm", 0) // the connection, before the clock starts
			setSchedule(t, l, l.Schedule()...)     // the clock starts again with the next request

			var wg sync.WaitGroup
			t0 := time.Now()
			wg.Go(func() { timed(t, c, "PUT", srv.URL+"/body", 300<<10) })
			var answer time.Duration
			wg.Go(func() { answer = timed(t, c, "GET", srv.URL+"/answer?hold=250ms", 0) })
			time.Sleep(300*time.Millisecond - time.Since(t0))
			wg.Go(func() { timed(t, c, "GET", srv.URL+"/late", 0) })
			wg.Wait()

			// Times from the first request's arrival, at most a little after the clock's start:
			// the blackout is about [100 ms, 600 ms] there.
			var during, after []read
			for _, r := range rc.reads {
				switch {
				case r.at > from+30*time.Millisecond && r.at < to-30*time.Millisecond:
					during = append(during, r)
				case r.at >= to-30*time.Millisecond:
					after = append(after, r)
				}
			}
			assert.Empty(t, during, "body reads during the blackout")
			assert.NotEmpty(t, after, "body reads after the blackout")
			assert.GreaterOrEqual(t, answer, to-20*time.Millisecond, "an answer written at 250 ms, in the blackout: want after %v", to)
			assert.GreaterOrEqual(t, rc.start("/late"), to-30*time.Millisecond, "a request sent at 300 ms, in the blackout, reached the handler: want after %v", to)
		})
	}
}

// The round trip an answer is held for is the one in force when the handler writes it.
func TestScheduleRoundTripAtAnswerTime(t *testing.T) {
	l := &Link{}
	srv, _ := serveRecorder(t, l, false)
	setSchedule(t, l, Step{}, Step{At: 200 * time.Millisecond, RTT: 400 * time.Millisecond})
	d := timed(t, srv.Client(), "GET", srv.URL+"/rise?hold=300ms", 0)
	assert.GreaterOrEqual(t, d, 700*time.Millisecond, "an answer written at 300 ms, under a 400 ms round trip from 200 ms on: want 0.7 s")
	assert.LessOrEqual(t, d, 2*time.Second, "an answer written at 300 ms, under a 400 ms round trip from 200 ms on: want 0.7 s")
	setSchedule(t, l, Step{RTT: 500 * time.Millisecond}, Step{At: 100 * time.Millisecond})
	d = timed(t, srv.Client(), "GET", srv.URL+"/fall?hold=200ms", 0)
	assert.GreaterOrEqual(t, d, 200*time.Millisecond, "an answer written at 200 ms, with no round trip from 100 ms on: want 0.2 s")
	assert.LessOrEqual(t, d, 450*time.Millisecond, "an answer written at 200 ms, with no round trip from 100 ms on: want 0.2 s")
}

// The schedule's clock starts with the first request after it was set, not when it was set.
func TestScheduleStartsAtTheFirstRequest(t *testing.T) {
	l := &Link{}
	srv := serve(t, l)
	setSchedule(t, l, Step{RTT: 300 * time.Millisecond}, Step{At: 300 * time.Millisecond})
	time.Sleep(350 * time.Millisecond) // a page loading, say
	rate, rtt := l.Get()
	assert.Zero(t, rate, "Get's rate before the first request: want the first step's")
	assert.Equal(t, 300*time.Millisecond, rtt, "Get's round trip before the first request: want the first step's")
	assert.GreaterOrEqual(t, put(t, srv.URL, 0), 300*time.Millisecond, "the first request: want the first step's round trip")
	time.Sleep(50 * time.Millisecond)
	assert.LessOrEqual(t, put(t, srv.URL, 0), 150*time.Millisecond, "a request after the first step: want no round trip")
	rate, rtt = l.Get()
	assert.Zero(t, rate, "Get's rate after the first step: want the second's")
	assert.Zero(t, rtt, "Get's round trip after the first step: want the second's")
}

// Set changes the link for the requests in flight: a body that began on an unlimited link is
// slowed, and its answer held for the new round trip (the demo's network speed switched
// during an upload).
func TestSetMidRequest(t *testing.T) {
	l := &Link{}
	srv, rc := serveRecorder(t, l, false)
	pr, pw := io.Pipe()
	answered := make(chan time.Time, 1)
	go func() {
		res, err := http.Post(srv.URL+"/piped", "application/octet-stream", pr)
		if assert.NoError(t, err) {
			res.Body.Close()
		}
		answered <- time.Now()
	}()
	_, err := pw.Write(make([]byte, 512<<10))
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, rc.got.Load(), int64(512<<10), "bytes the handler read of the first 512 KiB")
	}, 5*time.Second, time.Millisecond)
	set := time.Now()
	l.Set(256<<10, 300*time.Millisecond)
	_, err = pw.Write(make([]byte, 128<<10))
	require.NoError(t, err)
	pw.Close()
	// 128 KiB at 256 KiB/s, then one round trip of 300 ms: 0.8 s.
	d := (<-answered).Sub(set)
	assert.GreaterOrEqual(t, d, 700*time.Millisecond, "the answer after the link was set to 256 KiB/s and 300 ms, with 128 KiB to go; want 0.8 s")
	assert.LessOrEqual(t, d, 3*time.Second, "the answer after the link was set to 256 KiB/s and 300 ms, with 128 KiB to go; want 0.8 s")

	// And the other way: a slow body goes at once when the link is set free.
	l.Set(256<<10, 0)
	done := make(chan time.Duration, 1)
	go func() { done <- put(t, srv.URL, 4<<20) }()
	time.Sleep(200 * time.Millisecond)
	l.Set(0, 0)
	assert.LessOrEqual(t, <-done, 1500*time.Millisecond, "4 MiB begun at 256 KiB/s, set free after 200 ms")
}

// A bad schedule is refused with a clear error and leaves the link as it was; Set replaces a
// schedule.
func TestScheduleValidation(t *testing.T) {
	const ms = time.Millisecond
	bad := []struct {
		name  string
		steps []Step
		want  string
	}{
		{"empty", nil, "at least one step"},
		{"first not at 0", []Step{{At: 10 * ms}}, "first step is at 10ms"},
		{"same time twice", []Step{{}, {At: 10 * ms}, {At: 10 * ms}}, "step 2 at 10ms does not come after step 1"},
		{"back in time", []Step{{}, {At: 20 * ms}, {At: 10 * ms}}, "step 2 at 10ms does not come after step 1"},
		{"negative at", []Step{{}, {At: -10 * ms}}, "step 1 has a negative"},
		{"negative rate", []Step{{Rate: -1}}, "step 0 has a negative"},
		{"negative round trip", []Step{{}, {At: ms, RTT: -ms}}, "step 1 has a negative"},
	}
	l := &Link{}
	good := []Step{{Rate: 1000}, {At: 5 * ms, Blackout: true}}
	setSchedule(t, l, good...)
	for _, b := range bad {
		assert.ErrorContains(t, l.SetSchedule(b.steps), b.want, b.name)
	}
	assert.Equal(t, good, l.Schedule(), "after the refused schedules")
	got := l.Schedule()
	got[0].Rate = 5
	assert.Equal(t, int64(1000), l.Schedule()[0].Rate, "Schedule's slice is the link's own")
	l.Set(2000, ms)
	assert.Nil(t, l.Schedule(), "Schedule after Set")
	rate, rtt := l.Get()
	assert.Equal(t, int64(2000), rate, "Get's rate after Set")
	assert.Equal(t, ms, rtt, "Get's round trip after Set")
}

// On an unlimited link a read is not cut to the metered step: the body comes as fast as the
// socket gives it.
func TestUnlimitedReadsNotCut(t *testing.T) {
	links := map[string]func(*Link){
		"zero link":               func(*Link) {},
		"set free after a rate":   func(l *Link) { l.Set(1<<20, 0); l.Set(0, 0) },
		"unlimited schedule step": func(l *Link) { setSchedule(t, l, Step{}, Step{At: time.Hour, Rate: 1}) },
	}
	for name, set := range links {
		t.Run(name, func(t *testing.T) {
			l := &Link{}
			set(l)
			srv, rc := serveRecorder(t, l, false)
			// The handler waits before it reads, so that the socket holds more than a step.
			timed(t, srv.Client(), "PUT", srv.URL+"/big?wait=100ms", 4<<20)
			assert.Greater(t, rc.biggestRead(), step, "the biggest read of 4 MiB through an unlimited link")
		})
	}
}
