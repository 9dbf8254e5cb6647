package core

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timedScript records when each request was sent, in the bubble's fake time.
type timedScript struct {
	script
	at []Duration
	t0 time.Time
}

func (s *timedScript) Do(ctx Context, r *Request) (*Response, error) {
	s.at = append(s.at, Duration(time.Since(s.t0)))
	return s.script.Do(ctx, r)
}

// waits runs a media upload that fails n times with status and returns the gaps between tries.
func waits(t *testing.T, p RetryPolicy, status int, hdr Header, n int) ([]Duration, []RetryInfo, error) {
	var gaps []Duration
	var infos []RetryInfo
	var err error
	synctest.Test(t, func(t *testing.T) {
		s := &timedScript{script: script{t: t}, t0: time.Now()}
		for range n {
			s.exs = append(s.exs, ex{method: "POST", n: -1, status: status, hdr: hdr, drop: status == 0})
		}
		s.exs = append(s.exs, ex{method: "POST", n: -1, status: 200})
		u, e := New(s, &memSource{data: data(10)}, Options{URL: testURL, Type: Media, Retry: &p,
			OnRetry: func(r RetryInfo) { infos = append(infos, r) }})
		require.NoError(t, e)
		_, err = u.Run(context.Background())
		for i := 1; i < len(s.at); i++ {
			gaps = append(gaps, s.at[i]-s.at[i-1])
		}
	})
	return gaps, infos, err
}

func secs(f ...float64) []Duration {
	d := make([]Duration, len(f))
	for i, v := range f {
		d[i] = Duration(v * float64(Second))
	}
	return d
}

func TestBackoffWaits(t *testing.T) {
	half := func() float64 { return 0.5 }
	def := DefaultRetryPolicy()
	def.Rand = half
	capped := DefaultRetryPolicy()
	capped.Retries, capped.MaxDelay, capped.Rand = 7, 5*Second, half
	fast := DefaultRetryPolicy()
	fast.InitialDelay, fast.Jitter, fast.MaxDelay = 100*Millisecond, 0, 60*Second
	tests := []struct {
		name   string
		p      RetryPolicy
		status int
		hdr    Header
		fails  int
		want   []Duration
		code   string
	}{
		{"default: 2^n s plus jitter", def, 503, nil, 5, secs(1.5, 2.5, 4.5, 8.5, 16.5), ""},
		{"a server never reached: two short waits, then network_error", def, 0, nil, 3, secs(1, 1), CodeNetwork},
		{"a single wait never exceeds the cap", capped, 500, nil, 7, secs(1.5, 2.5, 4.5, 5, 5, 5, 5), ""},
		{"one more failure than retries", def, 504, nil, 6, secs(1.5, 2.5, 4.5, 8.5, 16.5), CodeRetriesExhausted},
		{"configurable figures", fast, 502, nil, 4, secs(0.1, 0.2, 0.4, 0.8), ""},
		{"429 honours Retry-After", def, 429, Header{"retry-after": "3"}, 2, secs(3, 3), ""},
		{"Retry-After is capped too", capped, 408, Header{"retry-after": "3600"}, 1, secs(5), ""},
		{"429 without Retry-After backs off", def, 429, nil, 2, secs(1.5, 2.5), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gaps, infos, err := waits(t, tt.p, tt.status, tt.hdr, tt.fails)
			require.Equal(t, tt.code, Code(err), "%v", err)
			require.Equal(t, tt.want, gaps, "waits")
			for i, r := range infos {
				assert.Equal(t, i+1, r.Attempt, "retry %d: attempt", i)
				assert.Equal(t, tt.want[i], r.Delay, "retry %d: delay", i)
				assert.Equal(t, tt.status, r.Status, "retry %d: status", i)
				assert.Error(t, r.Err, "retry %d: err", i)
			}
		})
	}
}

// Once the server has answered, lost connections back off as 5xx answers do.
func TestLostConnectionsBackOffOnceAnswered(t *testing.T) {
	p := DefaultRetryPolicy()
	p.Rand = func() float64 { return 0.5 }
	synctest.Test(t, func(t *testing.T) {
		s := &timedScript{script: script{t: t}, t0: time.Now()}
		s.exs = append(s.exs, ex{method: "POST", n: -1, status: 503})
		s.exs = append(s.exs, repeat(4, ex{method: "POST", n: -1, drop: true})...)
		s.exs = append(s.exs, ex{method: "POST", n: -1, status: 200})
		u, err := New(s, &memSource{data: data(10)}, Options{URL: testURL, Type: Media, Retry: &p})
		require.NoError(t, err)
		_, err = u.Run(context.Background())
		require.NoError(t, err)
		var gaps []Duration
		for i := 1; i < len(s.at); i++ {
			gaps = append(gaps, s.at[i]-s.at[i-1])
		}
		assert.Equal(t, secs(1.5, 2.5, 4.5, 8.5, 16.5), gaps, "waits")
	})
}

func TestBackoffFreshJitter(t *testing.T) {
	p := DefaultRetryPolicy()
	seen := map[Duration]bool{}
	for range 20 {
		d := p.backoff(0)
		require.GreaterOrEqual(t, d, Second, "first wait")
		require.Less(t, d, 2*Second, "first wait")
		seen[d] = true
	}
	assert.GreaterOrEqual(t, len(seen), 10, "jitter is not fresh: distinct waits in 20")
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Unix()
	for h, want := range map[string]Duration{
		"0": 0, "7": 7 * Second, "Sun, 22 Nov 2026 10:00:09 GMT": 9 * Second,
		"Sun, 22 Nov 2026 09:00:00 GMT": 0, "3600": MaxSingleDelay, "Fri, 31 Dec 9999 23:59:59 GMT": MaxSingleDelay,
	} {
		got, ok := retryAfter(h, now)
		assert.True(t, ok, "retryAfter(%q) refused", h)
		assert.Equal(t, want, got, "retryAfter(%q)", h)
	}
	for _, h := range []string{"", "-1", "soon"} {
		_, ok := retryAfter(h, now)
		assert.False(t, ok, "retryAfter(%q) accepted", h)
	}
}

// Pause holds the upload after the request in flight; Resume asks the server where it stands.
func TestPauseResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var u *Upload
		paused := make(chan struct{})
		s := &script{t: t, exs: []ex{
			start(),
			{cr: "bytes 0-262143/786432", n: K256, status: 308, rng: "bytes=0-262143", check: func(*testing.T, *Request) {
				u.Pause() // while this chunk is in flight
				close(paused)
			}},
			{cr: "bytes */786432", n: 0, status: 308, rng: "bytes=0-200000"},
			{cr: "bytes 200001-462144/786432", n: K256, status: 308, rng: "bytes=0-462144"},
			{cr: "bytes 462145-724288/786432", n: K256, status: 308, rng: "bytes=0-724288"},
			{cr: "bytes 724289-786431/786432", n: 62143, status: 200},
		}}
		var states []State
		u, _ = New(s, &memSource{data: data(3 * K256)}, Options{URL: testURL, ChunkSize: K256, OnState: func(st State) { states = append(states, st) }})
		done := make(chan error)
		go func() { _, err := u.Run(context.Background()); done <- err }()
		<-paused
		synctest.Wait()
		require.Equal(t, StatePaused, u.State())
		require.Equal(t, 2, s.i, "requests before the pause")
		time.Sleep(time.Hour) // nothing is sent while paused
		require.Equal(t, 2, s.i, "requests sent while paused")
		u.Resume()
		require.NoError(t, <-done)
		s.done()
		assert.Equal(t, []State{StateStarting, StateUploading, StatePaused, StateUploading, StateDone}, states)
	})
}

// A pause during a retry wait ends the wait; nothing goes until Resume.
func TestPauseDuringRetryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{t: t, exs: []ex{start(), {n: 10, status: 503}, {cr: "bytes */10", n: 0, status: 200}}}
		u, _ := New(s, &memSource{data: data(10)}, Options{URL: testURL, Type: Resumable, Retry: fastRetry()})
		done := make(chan error)
		go func() { _, err := u.Run(context.Background()); done <- err }()
		synctest.Wait() // in the 1 s wait
		u.Pause()
		time.Sleep(time.Minute)
		require.Equal(t, 2, s.i, "requests while paused")
		u.Resume()
		require.NoError(t, <-done)
		s.done()
	})
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := &script{t: t, exs: []ex{start(), {n: 10, status: 503}}}
		var last State
		u, _ := New(s, &memSource{data: data(10)}, Options{URL: testURL, Type: Resumable, Retry: fastRetry(), OnState: func(st State) { last = st }})
		done := make(chan error)
		go func() { _, err := u.Run(ctx); done <- err }()
		synctest.Wait()
		cancel()
		err := <-done
		require.Equal(t, CodeAborted, Code(err), "%v", err)
		require.Equal(t, StateAborted, last, "the last state told")
		require.Equal(t, StateAborted, u.State())
		s.done()
	})
}

func TestParseHTTPDate(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	got, ok := parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT")
	require.True(t, ok)
	require.Equal(t, want.Unix(), got)
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Now 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "06 Nov 1994"} {
		_, ok := parseHTTPDate(s)
		assert.False(t, ok, "%q accepted", s)
	}
}

// finalErr is a transport error that says no retry can help.
type finalErr struct{}

func (finalErr) Error() string { return "redirected elsewhere" }
func (finalErr) Code() string  { return CodeProtocol }

type finalTransport struct{ n int }

func (f *finalTransport) Do(Context, *Request) (*Response, error) {
	f.n++
	return nil, finalErr{}
}

func TestTransportFinalError(t *testing.T) {
	for _, typ := range []Type{Resumable, Media} {
		tr := &finalTransport{}
		u, _ := New(tr, &memSource{data: data(5)}, Options{URL: testURL, Type: typ})
		_, err := u.Run(context.Background())
		assert.Equal(t, CodeProtocol, Code(err), "%s: %v", typ, err)
		assert.Equal(t, 1, tr.n, "%s: requests", typ)
	}
}

func TestUnixSeconds(t *testing.T) {
	for _, d := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 11, 22, 5, 30, 0, 0, time.UTC), time.Date(2100, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		got := unixSeconds(int64(d.Year()), int64(d.Month()), int64(d.Day()), int64(d.Hour()), int64(d.Minute()), int64(d.Second()))
		assert.Equal(t, d.Unix(), got, "%v", d)
	}
}

// Retry-After comes from the server: no value may panic, hang, or make a wait longer than a
// minute or shorter than nothing (RFC 9110 section 10.2.3; docs/protocol.md section 5).
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", " 3 ", "Sun, 06 Nov 1994 08:49:37 GMT", "Wed, 21 Oct 2015 07:28:00 GMT", "-1", "1e9", "99999999999999999999"} {
		f.Add(s, int64(784111777))
	}
	f.Fuzz(func(t *testing.T, h string, now int64) {
		if d, ok := retryAfter(h, now); ok && (d < 0 || d > MaxSingleDelay) {
			t.Fatalf("retryAfter(%q, %d) = %v", h, now, d)
		}
	})
}
