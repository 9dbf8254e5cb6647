package core

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request that fails while the device is offline waits in "offline" for WaitOnline, spends
// no retry, then asks the session what it holds (docs/api.md, "Offline spells").
func TestOfflineSpellCostsNoRetry(t *testing.T) {
	offline := &OfflineError{Err: errDropped}
	var states []State
	var retries []RetryInfo
	waited := 0
	synctest.Test(t, func(t *testing.T) {
		// Offline at the second chunk, and still at the status query after the first wait.
		s := &script{t: t, exs: []ex{
			start(),
			{cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
			{cr: "bytes 262144-524287/524288", n: K256, err: offline},
			{cr: "bytes */524288", n: 0, err: offline},
			{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"},
			{cr: "bytes 262144-524287/524288", n: K256, status: 200},
		}}
		// Offline spells longer than the whole backoff budget (about 30 s).
		online := func(ctx Context) error { waited++; time.Sleep(10 * time.Minute); return nil }
		o := Options{URL: testURL, ChunkSize: K256, Retry: fastRetry(), WaitOnline: online,
			OnState: func(st State) { states = append(states, st) }, OnRetry: func(r RetryInfo) { retries = append(retries, r) }}
		u, err := New(s, &memSource{data: data(2 * K256)}, o)
		require.NoError(t, err)
		_, err = u.Run(context.Background())
		require.NoError(t, err)
		s.done()
	})
	assert.Empty(t, retries, "retries for time offline")
	assert.Equal(t, 2, waited, "WaitOnline calls")
	assert.Contains(t, states, StateOffline)
}

// Without WaitOnline, an offline failure is a lost connection like any other: retried.
func TestOfflineWithoutWaitOnlineIsRetried(t *testing.T) {
	var retries int
	_, err, s := runScript(t, &memSource{data: data(2 * K256)}, Options{ChunkSize: K256, OnRetry: func(RetryInfo) { retries++ }}, []ex{
		start(),
		{cr: "bytes 0-262143/524288", n: K256, err: &OfflineError{Err: errDropped}},
		{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-524287/524288", n: K256, status: 200},
	})
	s.done()
	require.NoError(t, err)
	assert.Equal(t, 1, retries, "retries")
}

// A stalled request (the transport gives it up after Request.Timeout) is a lost connection:
// a status query, then on from the server's offset.
func TestStallIsALostConnection(t *testing.T) {
	_, err, s := runScript(t, &memSource{data: data(2 * K256)}, Options{ChunkSize: K256}, []ex{
		start(),
		{cr: "bytes 0-262143/524288", n: K256, err: &StallError{After: 30 * Second, Err: errDropped}},
		{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-524287/524288", n: K256, status: 200},
	})
	s.done()
	assert.NoError(t, err)
}

// Each request's Timeout: the caller's, none (negative), or derived from its size and the
// rate measured so far.
func TestStallTimeouts(t *testing.T) {
	u := func(o Options, rate float64) *Upload {
		o.URL = testURL
		up, err := New(&script{t: t}, &memSource{data: data(10)}, o)
		require.NoError(t, err)
		up.prog.p.BytesPerSecond = rate
		return up
	}
	for _, tt := range []struct {
		name string
		o    Options
		rate float64
		n    int64
		want Duration
	}{
		{"the caller's bound", Options{StallTimeout: 5 * Second}, 0, 1 << 20, 5 * Second},
		{"never", Options{StallTimeout: -1}, 1e6, 1 << 20, 0},
		{"no body", Options{}, 1e6, 0, stallFloor},
		{"a first large chunk, no rate yet", Options{}, 0, 8 << 20, stallFirst},
		{"a small chunk, no rate yet", Options{}, 0, 1000, stallFloor},
		{"10x what the rate predicts, plus the floor", Options{}, 1 << 20, 8 << 20, 80*Second + stallFloor},
	} {
		assert.Equal(t, tt.want, u(tt.o, tt.rate).timeoutFor(tt.n), "%s: timeout", tt.name)
	}
}
