package core

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinksPerOrigin(t *testing.T) {
	var ls Links
	a := ls.For("https://up.example.com/upload/x?name=a")
	require.NotNil(t, a)
	require.Same(t, a, ls.For("https://up.example.com/other"), "two URLs of one origin: not one Link")
	assert.NotSame(t, a, ls.For("https://up.example.com:8443/upload"), "another port: the same Link")
	assert.NotSame(t, a, ls.For("http://up.example.com/upload"), "another scheme: the same Link")
	assert.Same(t, a, ls.ForUpload(&Options{SessionURL: "https://up.example.com/session/1"}), "an upload's Link: not its session's origin")
	assert.Same(t, a, ls.ForUpload(&Options{URL: "https://up.example.com/u", SessionURL: "https://s.example.com/"}), "an upload's Link: not its URL's origin")
	assert.Nil(t, ls.For("not a url"), "a Link for no origin")
}

// A sizer seeded from a Link measured a moment ago sizes its first chunk from it (no 256 KiB
// probe, no ramp); one measured longer ago than linkMemory starts small again.
func TestLinkSeedsTheFirstChunk(t *testing.T) {
	const rate = 2.5e6 // 20 Mbit/s
	measured := NewChunkSizer(DefaultMaxChunkSize)
	measured.RoundTrip(60 * Millisecond)
	measured.Answered(8<<20, 60*Millisecond+Duration(float64(8<<20)/rate*float64(Second)), true)
	var l Link
	l.learn(measured, 100*Second)

	c := NewChunkSizer(DefaultMaxChunkSize)
	l.seed(c, 160*Second)
	want := rate * float64(countedChunkTime/Second)
	assert.InDelta(t, want, c.Next(0, -1), want/10, "first chunk after a counted link of 2.5 MB/s")
	measured.Answered(8<<20, 60*Millisecond+Duration(float64(8<<20)/rate*float64(Second)), false)
	l.learn(measured, 200*Second)
	c = NewChunkSizer(DefaultMaxChunkSize)
	l.seed(c, 260*Second)
	// Where progress comes only with answers, a probe first (a thirty-second of a second's
	// worth, at least 256 KiB): should the link be far slower now, it still answers soon.
	assert.Equal(t, int64(ChunkAlign), c.Next(0, -1), "first chunk after an uncounted link of 2.5 MB/s: want a 256 KiB probe")
	// Answered at the remembered rate, it confirms the link: a second's worth at once.
	c.Answered(ChunkAlign, 60*Millisecond+Duration(float64(ChunkAlign)/rate*float64(Second)), false)
	assert.InDelta(t, 3<<20, c.Next(ChunkAlign, -1), 1<<20, "after a probe that confirmed 2.5 MB/s: want a second or so of it")
	// Answered at a fortieth of it, it does not: a new link, ramped up to from there.
	c = NewChunkSizer(DefaultMaxChunkSize)
	l.seed(c, 260*Second)
	c.Next(0, -1)
	c.Answered(ChunkAlign, 60*Millisecond+Duration(float64(ChunkAlign)/(rate/40)*float64(Second)), false)
	assert.LessOrEqual(t, c.Next(ChunkAlign, -1), int64(2*ChunkAlign), "after a probe that found a link 40 times slower: want a second or so of the slow link")
	c = NewChunkSizer(DefaultMaxChunkSize)
	l.seed(c, 200*Second+linkMemory+Second)
	assert.Equal(t, int64(ChunkAlign), c.Next(0, -1), "first chunk after a link measured %v ago", linkMemory)
}

// Two uploads to one origin, one after the other, sharing a Link: the second one sizes its
// chunks from what the first measured (about 4 MB/s): a 256 KiB probe, whose answer confirms
// the rate, then all the rest of its 2 MiB at once, where an upload that knows nothing ramps
// up from 256 KiB in steps.
func TestLinkSharedByUploads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ls Links
		const size = 8 << 20
		first := &script{t: t, exs: []ex{start(),
			{n: K256, status: 308, rng: "bytes=0-262143", wait: 100 * time.Millisecond},
			{n: -1, status: 200, wait: 300 * time.Millisecond},
		}}
		o := Options{URL: testURL, Type: Resumable, ChunkSize: ChunkAuto, Retry: fastRetry(), Link: ls.For(testURL)}
		o.MaxChunkSize = 0
		u, err := New(first, &memSource{data: data(size / 8)}, o)
		require.NoError(t, err)
		_, err = u.Run(context.Background())
		require.NoError(t, err)
		var secondChunk int64
		second := &script{t: t, exs: []ex{start(),
			{n: K256, status: 308, rng: "bytes=0-262143", wait: 70 * time.Millisecond},
			{n: -1, status: 200, check: func(t *testing.T, r *Request) { secondChunk = r.ContentLength() }},
		}}
		o.Link = ls.For(testURL)
		u, err = New(second, &memSource{data: data(2 << 20)}, o)
		require.NoError(t, err)
		_, err = u.Run(context.Background())
		require.NoError(t, err)
		second.done()
		assert.Equal(t, int64(2<<20-K256), secondChunk, "the second upload's chunk after its probe: want all the rest (sized from the link the first measured)")
	})
}

// The session start checks a seed: a round trip near the seed's cost keeps it, within what the
// round trip allows (half of it, where a preflight came first, to all of it); one far longer
// says the link is another, whose rate is not known: 256 KiB first again.
func TestLinkSeedCheckedByTheFirstRoundTrip(t *testing.T) {
	measured := NewChunkSizer(DefaultMaxChunkSize)
	measured.RoundTrip(45 * Millisecond)
	measured.Answered(4<<20, 45*Millisecond+Second, false) // ~4 MB/s
	var l Link
	l.learn(measured, 10*Second)

	same := NewChunkSizer(DefaultMaxChunkSize)
	l.seed(same, 20*Second)
	same.RoundTrip(70 * Millisecond)
	assert.GreaterOrEqual(t, same.Rate(), 3e6, "a round trip of 70 ms after a seed of 45 ms: rate, want the seed's")
	assert.Equal(t, 45*Millisecond, same.cost, "cost after a first round trip of 70 ms and a seed of 45 ms, want the seed's")
	// A start of 100 ms (not "far longer": under twice 45 ms and 50 ms) leaves at least half.
	longer := NewChunkSizer(DefaultMaxChunkSize)
	l.seed(longer, 20*Second)
	longer.RoundTrip(100 * Millisecond)
	assert.Equal(t, 50*Millisecond, longer.cost, "cost after a first round trip of 100 ms and a seed of 45 ms")
	// And a shorter one is the cost.
	shorter := NewChunkSizer(DefaultMaxChunkSize)
	l.seed(shorter, 20*Second)
	shorter.RoundTrip(30 * Millisecond)
	assert.Equal(t, 30*Millisecond, shorter.cost, "cost after a first round trip of 30 ms and a seed of 45 ms")
	other := NewChunkSizer(DefaultMaxChunkSize)
	l.seed(other, 20*Second)
	other.RoundTrip(300 * Millisecond)
	assert.Equal(t, int64(ChunkAlign), other.Next(0, -1), "a round trip of 300 ms after a seed of 45 ms: first chunk")
	assert.Zero(t, other.Rate(), "a round trip of 300 ms after a seed of 45 ms: rate")
}
