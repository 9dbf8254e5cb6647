package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// link is an emulated uplink: bytes per second, a round trip, and the browser's own cost of a
// request; rate may change after a number of bytes (a link that slows down).
type link struct {
	name    string
	rate    float64 // bytes per second
	rtt     Duration
	perReq  Duration
	after   int64   // from this many bytes on…
	rateAft float64 // …the rate is this (0: no change)
	// preflight: the server is another origin's, so the session start and the first chunk (its
	// session URI's first request) each wait for a preflight first, one round trip more.
	preflight bool
}

type simulation struct {
	sizes     []int64
	durations []Duration
	total     Duration // all chunks, session start included
	transfer  Duration // the time the bytes alone take at the link's rate
}

// simulate uploads total bytes over l with a ChunkSizer, as the resumable loop does: a session
// start (one round trip), then chunks, each answered one round trip after its last byte.
func simulate(t *testing.T, l link, total int64, fail func(i int) bool) simulation {
	t.Helper()
	return simulateWith(t, l, total, fail, NewChunkSizer(DefaultMaxChunkSize), func(int) bool { return false })
}

// simulateWith is simulate with a sizer of the caller's, and counted(i) saying whether the
// transport reported progress inside chunk i (Request.OnSent).
func simulateWith(t *testing.T, l link, total int64, fail func(i int) bool, c *ChunkSizer, counted func(i int) bool) simulation {
	t.Helper()
	var sim simulation
	var preflight Duration
	if l.preflight {
		preflight = l.rtt
	}
	sim.total = preflight + l.rtt + l.perReq
	c.RoundTrip(preflight + l.rtt + l.perReq)
	for off, i := int64(0), 0; off < total; i++ {
		size := c.Next(off, total)
		checkSize(t, size, off, total, c.Max)
		rate := l.rate
		if l.rateAft > 0 && off >= l.after {
			rate = l.rateAft
		}
		bytes := Duration(float64(size) / rate * float64(Second))
		d := l.rtt + l.perReq + bytes
		if i == 0 {
			d += preflight
		}
		sim.total += d
		if fail != nil && fail(i) {
			c.Failed()
			continue
		}
		sim.transfer += bytes
		sim.sizes = append(sim.sizes, size)
		sim.durations = append(sim.durations, d)
		c.Answered(size, d, counted(i))
		off += size
		require.LessOrEqual(t, i, 10000, "no end")
	}
	return sim
}

func checkSize(t *testing.T, size, off, total, maxSize int64) {
	// Plain comparisons first: the fuzzer calls this for every chunk of every input, and
	// testify's calls (their messages' arguments boxed each time) halved its rate.
	last := total >= 0 && off+size == total
	switch {
	case size <= 0 && total != off:
		t.Helper()
		require.Failf(t, "an empty chunk", "chunk of %d bytes at %d of %d", size, off, total)
	case total >= 0 && off+size > total:
		t.Helper()
		require.Failf(t, "past the end", "chunk of %d bytes at %d runs past the end (%d)", size, off, total)
	case !last && size%ChunkAlign != 0:
		t.Helper()
		require.Failf(t, "not aligned", "chunk of %d bytes at %d of %d is not a multiple of 256 KiB", size, off, total)
	case !last && size > maxSize:
		t.Helper()
		require.Failf(t, "over the maximum", "chunk of %d bytes over the maximum %d", size, maxSize)
	}
}

// The measured links of docs/protocol.md section 8 and loopback: close to the link's rate (or to
// one whole PUT), and after the first few chunks a report at least every 2 s.
func TestChunkSizerOnLinks(t *testing.T) {
	mbit := func(n float64) float64 { return n * 1e6 / 8 }
	tests := []struct {
		l          link
		total      int64
		share      float64 // at least this share of the link's rate (of one PUT on loopback)
		longestGap Duration
	}{
		{link{name: "loopback", rate: 600e6, rtt: Millisecond / 5, perReq: 5 * Millisecond}, 256 << 20, 0.9, 2 * Second},
		{link{name: "100 Mbit/s, 20 ms", rate: mbit(100), rtt: 20 * Millisecond, perReq: 3 * Millisecond}, 120 << 20, 0.9, 2 * Second},
		{link{name: "20 Mbit/s, 60 ms", rate: mbit(20), rtt: 60 * Millisecond, perReq: 3 * Millisecond}, 24 << 20, 0.9, 2 * Second},
		{link{name: "3 Mbit/s, 150 ms", rate: mbit(3), rtt: 150 * Millisecond, perReq: 3 * Millisecond}, 3750000, 0.85, 2 * Second},
	}
	for _, tt := range tests {
		t.Run(tt.l.name, func(t *testing.T) {
			sim := simulate(t, tt.l, tt.total, nil)
			onePUT := tt.l.rtt*2 + tt.l.perReq + Duration(float64(tt.total)/tt.l.rate*float64(Second))
			share := float64(onePUT) / float64(sim.total)
			if tt.l.name != "loopback" {
				share = float64(sim.transfer) / float64(sim.total)
			}
			var longest Duration
			for _, d := range sim.durations[1:] {
				longest = max(longest, d)
			}
			t.Logf("%d chunks, share %.3f, longest chunk after the first %.2f s, sizes %v", len(sim.sizes), share, longest.Seconds(), sim.sizes)
			assert.GreaterOrEqual(t, share, tt.share, "share of the link's rate")
			assert.LessOrEqual(t, longest.Seconds(), tt.longestGap.Seconds(), "the longest chunk after the first, in s: a progress gap")
			assert.Equal(t, int64(ChunkAlign), sim.sizes[0], "the first chunk should be small, for a report at once")
			for i := 1; i < len(sim.sizes)-1; i++ {
				assert.LessOrEqual(t, sim.sizes[i], fastGrowth*sim.sizes[i-1], "chunk %d grew from %d", i, sim.sizes[i-1])
			}
		})
	}
}

// The links of docs/protocol.md section 8 where the transport reports progress inside each
// chunk (a stream body over HTTP/2): after the first chunk, which finds out, one long chunk
// without a ramp; the share of the link is then all but the round trips of three requests.
func TestChunkSizerCountedChunks(t *testing.T) {
	mbit := func(n float64) float64 { return n * 1e6 / 8 }
	tests := []struct {
		l     link
		total int64 // about ten seconds of the link, as the bench sends
		share float64
	}{
		{link{name: "100 Mbit/s, 20 ms", rate: mbit(100), rtt: 20 * Millisecond, perReq: 3 * Millisecond}, 125e6, 0.99},
		{link{name: "20 Mbit/s, 60 ms", rate: mbit(20), rtt: 60 * Millisecond, perReq: 3 * Millisecond}, 25e6, 0.98},
		{link{name: "10 Mbit/s, 45 ms", rate: mbit(10), rtt: 45 * Millisecond, perReq: 3 * Millisecond}, 12.5e6, 0.98},
		{link{name: "3 Mbit/s, 150 ms", rate: mbit(3), rtt: 150 * Millisecond, perReq: 3 * Millisecond}, 3750000, 0.95},
	}
	for _, tt := range tests {
		t.Run(tt.l.name, func(t *testing.T) {
			sim := simulateWith(t, tt.l, tt.total, nil, NewChunkSizer(DefaultMaxChunkSize), func(int) bool { return true })
			share := float64(sim.transfer) / float64(sim.total)
			t.Logf("%d chunks, share %.3f, sizes %v", len(sim.sizes), share, sim.sizes)
			assert.GreaterOrEqual(t, share, tt.share, "share of the link's rate")
			assert.Equal(t, int64(ChunkAlign), sim.sizes[0], "the first chunk finds out whether the transport counts")
			assert.LessOrEqual(t, len(sim.sizes), 3, "chunks: counted chunks need no ramp")
		})
	}
	// A transport that stops counting (it fell back to whole bodies): the next chunk is sized
	// for a report every second or so again.
	l := link{name: "20 Mbit/s", rate: mbit(20), rtt: 60 * Millisecond, perReq: 3 * Millisecond}
	sim := simulateWith(t, l, 100e6, nil, NewChunkSizer(DefaultMaxChunkSize), func(i int) bool { return i < 2 })
	require.GreaterOrEqual(t, sim.durations[2].Seconds(), 5.0, "chunk 2, after two counted ones, in s: want a long one (sizes %v)", sim.sizes)
	for i, d := range sim.durations[3:] {
		assert.LessOrEqual(t, d.Seconds(), 2.0, "chunk %d, after the transport stopped counting, in s (sizes %v)", i+3, sim.sizes)
	}
}

// To another origin the session start and the first chunk pay a preflight, which doubles the
// start's round trip, the sizer's first measure of a chunk's fixed cost: two chunks after the
// first bring the cost back to one round trip, and the chunks to the second or so it gives
// (fifteen round trips of 63 ms, at least a second), not the 1.6 s that twice it would.
func TestChunkSizerCostWithoutThePreflight(t *testing.T) {
	mbit := func(n float64) float64 { return n * 1e6 / 8 }
	for _, l := range []link{
		{name: "20 Mbit/s, 60 ms", rate: mbit(20), rtt: 60 * Millisecond, perReq: 3 * Millisecond, preflight: true},
		{name: "10 Mbit/s, 45 ms", rate: mbit(10), rtt: 45 * Millisecond, perReq: 3 * Millisecond, preflight: true},
	} {
		t.Run(l.name, func(t *testing.T) {
			c := NewChunkSizer(DefaultMaxChunkSize)
			sim := simulateWith(t, l, 40<<20, nil, c, func(int) bool { return false })
			t.Logf("sizes %v, cost %v", sim.sizes, c.cost)
			assert.InEpsilon(t, float64(l.rtt+l.perReq), float64(c.cost), 0.1, "cost: about one round trip")
			for i, d := range sim.durations[3 : len(sim.durations)-1] {
				assert.LessOrEqual(t, d.Seconds(), 1.3, "chunk %d, in s: want about 1 s", i+3)
			}
		})
	}
}

// With Interval (progressIntervalMs), a chunk and its round trip fit in it, whatever it costs the
// share; where one 256 KiB unit takes longer than the bound, every chunk is one unit, the least
// the protocol allows (docs/protocol.md section 3).
func TestChunkSizerInterval(t *testing.T) {
	mbit := func(n float64) float64 { return n * 1e6 / 8 }
	for _, tt := range []struct {
		l        link
		interval Duration
		longest  Duration
	}{
		{link{name: "3 Mbit/s, 150 ms, 1 s", rate: mbit(3), rtt: 150 * Millisecond, perReq: 3 * Millisecond}, Second, Second},
		{link{name: "100 Mbit/s, 20 ms, 400 ms", rate: mbit(100), rtt: 20 * Millisecond, perReq: 3 * Millisecond}, 400 * Millisecond, 400 * Millisecond},
		{link{name: "20 Mbit/s, 60 ms, 300 ms", rate: mbit(20), rtt: 60 * Millisecond, perReq: 3 * Millisecond}, 300 * Millisecond, 300 * Millisecond},
		{link{name: "3 Mbit/s, 150 ms, 200 ms: one unit", rate: mbit(3), rtt: 150 * Millisecond, perReq: 3 * Millisecond}, 200 * Millisecond, 153*Millisecond + Duration(ChunkAlign/mbit(3)*float64(Second))},
	} {
		t.Run(tt.l.name, func(t *testing.T) {
			c := NewChunkSizer(DefaultMaxChunkSize)
			c.Interval = tt.interval
			sim := simulateWith(t, tt.l, 8<<20, nil, c, func(int) bool { return false })
			for i, d := range sim.durations[1 : len(sim.durations)-1] {
				// A chunk is whole 256 KiB units: its time is rounded down, never up.
				assert.LessOrEqual(t, d.Seconds(), (tt.longest + tt.longest/50).Seconds(), "chunk %d, in s, over the bound (sizes %v)", i+1, sim.sizes)
			}
			t.Logf("share %.3f, sizes %v", float64(sim.transfer)/float64(sim.total), sim.sizes)
		})
	}
}

// A link that drops from 100 to 3 Mbit/s mid-upload: one chunk sized for the fast link takes
// long, the next ones are sized for the slow one.
func TestChunkSizerFollowsASlowdown(t *testing.T) {
	l := link{name: "slowdown", rate: 12.5e6, rtt: 20 * Millisecond, perReq: 3 * Millisecond, after: 20 << 20, rateAft: 375e3}
	sim := simulate(t, l, 64<<20, nil)
	long := 0
	for i, d := range sim.durations {
		if d > 2*Second {
			long++
			assert.LessOrEqual(t, long, 1, "chunk %d took %.2f s: the sizer did not follow the slower link (sizes %v)", i, d.Seconds(), sim.sizes)
		}
	}
	assert.LessOrEqual(t, sim.sizes[len(sim.sizes)-3], int64(1<<20), "a chunk near the end, on the 3 Mbit/s link (sizes %v)", sim.sizes)
}

// After a failed chunk the next one is at most half of it; growth resumes after successes.
func TestChunkSizerShrinksAfterAFailure(t *testing.T) {
	c := NewChunkSizer(DefaultMaxChunkSize)
	c.RoundTrip(20 * Millisecond)
	var sizes []int64
	for i := 0; i < 6; i++ { // grow on a fast link
		s := c.Next(0, -1)
		sizes = append(sizes, s)
		c.Answered(s, 20*Millisecond+Duration(float64(s)/12.5e6*float64(Second)), false)
	}
	before := c.Next(0, -1)
	c.Failed()
	after := c.Next(0, -1)
	require.LessOrEqual(t, after, before/2, "after a failed chunk of %d (sizes %v)", before, sizes)
	require.Zero(t, after%ChunkAlign, "after a failed chunk: %d is not a multiple of 256 KiB", after)
	c.Failed()
	again := c.Next(0, -1)
	if after > ChunkAlign {
		require.LessOrEqual(t, again, after/2, "after a second failure, from %d", after)
	}
	c.Answered(again, 20*Millisecond+Duration(float64(again)/12.5e6*float64(Second)), false)
	assert.Greater(t, c.Next(0, -1), again, "growth after a success")
}

func TestChunkSizerBounds(t *testing.T) {
	c := NewChunkSizer(1 << 20) // a 1 MiB maximum
	c.RoundTrip(Millisecond)
	for i := 0; i < 10; i++ {
		s := c.Next(0, -1)
		require.Positive(t, s)
		require.LessOrEqual(t, s, int64(1<<20))
		require.Zero(t, s%ChunkAlign, "size %d is not a multiple of 256 KiB", s)
		c.Answered(s, 2*Millisecond, false)
	}
	assert.Equal(t, int64(ChunkAlign), NewChunkSizer(1000).Max, "a maximum under one unit")
	// The rest of a known total: never past its end; a small remainder joins the chunk.
	assert.Equal(t, int64(300_000), NewChunkSizer(DefaultMaxChunkSize).Next(0, 300_000), "a 300000-byte upload: the first chunk is all of it (the remainder is small)")
	assert.Zero(t, NewChunkSizer(DefaultMaxChunkSize).Next(0, 0), "an empty upload")
	assert.Equal(t, int64(ChunkAlign), NewChunkSizer(DefaultMaxChunkSize).Next(0, 600_000), "600000 bytes: the first chunk")
}

// Whatever happens, a chunk is aligned, within the bounds and never past the end.
func FuzzChunkSizer(f *testing.F) {
	f.Add(int64(10<<20), int64(8<<20), []byte{1, 2, 3, 200, 0, 7})
	f.Add(int64(0), int64(256<<10), []byte{})
	f.Add(int64(-1), int64(128<<20), []byte{255, 255, 1})
	f.Fuzz(func(t *testing.T, total, maxSize int64, script []byte) {
		if maxSize <= 0 || maxSize > 1<<40 || total > 1<<44 {
			return
		}
		c := NewChunkSizer(maxSize)
		require.Positive(t, c.Max, "max from %d", maxSize)
		require.Zero(t, c.Max%ChunkAlign, "max %d from %d is not a multiple of 256 KiB", c.Max, maxSize)
		require.LessOrEqual(t, c.Max, max(maxSize, ChunkAlign), "max from %d", maxSize)
		off := int64(0)
		for i, b := range script {
			if total >= 0 && off >= total {
				break
			}
			s := c.Next(off, total)
			checkSize(t, s, off, total, c.Max)
			switch b % 4 {
			case 0:
				c.Failed()
			case 1:
				c.RoundTrip(Duration(b) * Millisecond)
			default:
				c.Answered(s, Duration(int64(b)*int64(i+1))*Millisecond, false)
				off += s
			}
		}
	})
}

// The first chunk where nothing is known of the link: a 256 KiB probe, or, where the transport
// says it counts the body (Counts), firstCounted, which its count shows progress inside (the
// browser takes a body's first megabyte or so at once); within Max and the file.
func TestChunkSizerFirstChunk(t *testing.T) {
	for _, tt := range []struct {
		name   string
		counts bool
		max    int64
		total  int64
		want   int64
	}{
		{"answers only", false, DefaultMaxChunkSize, 100 << 20, ChunkAlign},
		{"counted", true, DefaultMaxChunkSize, 100 << 20, firstCounted},
		{"counted, a smaller file", true, DefaultMaxChunkSize, 3 << 20, 3 << 20},
		{"counted, the size unknown", true, DefaultMaxChunkSize, -1, firstCounted},
		{"counted, a smaller maxChunkSize", true, 1 << 20, 100 << 20, 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewChunkSizer(tt.max)
			c.Counts = tt.counts
			assert.Equal(t, tt.want, c.Next(0, tt.total))
		})
	}
	// What is known of the link wins: a rate remembered (a probe first where progress comes
	// only with answers) or measured.
	c := NewChunkSizer(DefaultMaxChunkSize)
	c.Counts = true
	c.Answered(firstCounted, 2*Second, true)
	assert.Greater(t, c.Next(firstCounted, 1<<30), int64(firstCounted), "sized from the rate measured: about 10 s of it")
}
