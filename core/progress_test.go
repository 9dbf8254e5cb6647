package core

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rate and the time left are the link's: a pause does not count, nor do the bytes an
// adopted session already held (docs/api.md, "Progress").
func TestProgressRate(t *testing.T) {
	const rate = K256 // each chunk of 256 KiB takes a second: 262144 B/s
	chunk := func(first, last, total int64) ex {
		return ex{n: K256, status: 308, rng: "bytes=0-" + strconv.FormatInt(last, 10), wait: time.Second, check: crIs(first, last, total)}
	}
	t.Run("a pause does not count", func(t *testing.T) {
		var last Progress
		synctest.Test(t, func(t *testing.T) {
			var u *Upload
			paused := false
			// Paused once 512 KiB are confirmed: the chunk in flight finishes, then 30 s of
			// nothing, a status query and the last chunk.
			exs := []ex{start(), chunk(0, K256-1, 4*K256), chunk(K256, 2*K256-1, 4*K256), chunk(2*K256, 3*K256-1, 4*K256),
				{cr: "bytes */1048576", n: 0, status: 308, rng: "bytes=0-786431"},
				{n: K256, status: 200, wait: time.Second}}
			s := &script{t: t, exs: exs}
			o := Options{URL: testURL, ChunkSize: K256, Retry: fastRetry(), OnProgress: func(p Progress) {
				last = p
				if p.Confirmed == 2*K256 && !paused {
					paused = true
					go func() { u.Pause(); time.Sleep(30 * time.Second); u.Resume() }()
				}
			}}
			var err error
			u, err = New(s, &memSource{data: data(4 * K256)}, o)
			require.NoError(t, err)
			_, err = u.Run(context.Background())
			require.NoError(t, err)
			s.done()
		})
		assert.InDelta(t, rate, last.BytesPerSecond, 0.05*rate, "rate (B/s) after a 30 s pause")
	})
	t.Run("an adopted session's bytes do not count", func(t *testing.T) {
		var seen []Progress
		synctest.Test(t, func(t *testing.T) {
			exs := []ex{{cr: "bytes */1048576", n: 0, status: 308, rng: "bytes=0-524287"},
				chunk(2*K256, 3*K256-1, 4*K256), {n: K256, status: 200, wait: time.Second}}
			s := &script{t: t, exs: exs}
			o := Options{SessionURL: testSession, ChunkSize: K256, Retry: fastRetry(), OnProgress: func(p Progress) { seen = append(seen, p) }}
			u, err := New(s, &memSource{data: data(4 * K256)}, o)
			require.NoError(t, err)
			_, err = u.Run(context.Background())
			require.NoError(t, err)
			s.done()
		})
		var afterChunk Progress
		for _, p := range seen {
			if p.Confirmed == 3*K256 {
				afterChunk = p
			}
		}
		assert.Equal(t, int64(3*K256), afterChunk.Loaded, "loaded after the first chunk of an adopted session")
		assert.InDelta(t, rate, afterChunk.BytesPerSecond, 0.05*rate, "rate (B/s) after the first chunk of an adopted session")
		assert.InDelta(t, float64(K256)/rate, afterChunk.SecondsLeft, 0.1, "time left (s)")
	})
}

func crIs(first, last, total int64) func(*testing.T, *Request) {
	want := "bytes " + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10) + "/" + strconv.FormatInt(total, 10)
	return func(t *testing.T, r *Request) {
		assert.Equal(t, want, r.Header.Get("Content-Range"), "Content-Range")
	}
}

// progressOf uploads size bytes in fixed chunks against exs (runScript) and returns every
// progress report.
func progressOf(t *testing.T, size, chunk int64, exs []ex) []Progress {
	t.Helper()
	var seen []Progress
	o := Options{ChunkSize: chunk, OnProgress: func(p Progress) { seen = append(seen, p) }}
	_, err, s := runScript(t, &memSource{data: data(int(size))}, o, exs)
	require.NoError(t, err)
	s.done()
	return seen
}

// Where the transport tells how much of a chunk the network has taken (Request.OnSent: a stream
// body over HTTP/2, docs/protocol.md section 8), loaded moves inside the chunk and never back,
// confirmed only with the server's answers, and the rate counts each byte once.
func TestProgressInsideChunks(t *testing.T) {
	const mib = 4 * K256
	quarters := []int64{K256, 2 * K256, 3 * K256, mib}
	seen := progressOf(t, 3*mib, mib, []ex{start(),
		{n: mib, status: 308, rng: "bytes=0-1048575", wait: time.Second, sent: quarters},
		// The connection drops after half of the second chunk went: the server kept 256 KiB of it.
		{n: mib, drop: true, wait: time.Second / 2, sent: []int64{K256, 2 * K256}},
		{cr: "bytes */3145728", n: 0, status: 308, rng: "bytes=0-1310719"},
		{n: mib, status: 308, rng: "bytes=0-2359295", wait: time.Second, sent: quarters},
		{n: 3 * K256, status: 200, wait: 3 * time.Second / 4, sent: []int64{K256, 2 * K256, 3 * K256}},
	})
	var loaded, confirmed []int64
	for i, p := range seen {
		if i > 0 {
			assert.GreaterOrEqual(t, p.Loaded, seen[i-1].Loaded, "loaded went back")
		}
		assert.LessOrEqual(t, p.Confirmed, p.Loaded, "confirmed ahead of loaded")
		loaded = append(loaded, p.Loaded)
		confirmed = append(confirmed, p.Confirmed)
	}
	// Inside the first chunk: nothing confirmed until its answer. Before the rate the browser
	// takes bytes at is known (no answer has measured the link yet), loaded is what it took
	// since its first count (its buffers full by then: the link carried that at least), 256 KiB
	// at 500 ms; once the counts show the rate, half a second and 512 KiB after the first,
	// loaded is that rate from the request's start: 768 KiB at 750 ms, then all of it.
	require.GreaterOrEqual(t, len(seen), 4)
	assert.Equal(t, []int64{0, K256, 3 * K256, mib}, loaded[:4], "the first chunk: loaded")
	assert.Equal(t, []int64{0, 0, 0, 0}, confirmed[:4], "the first chunk: confirmed")
	// The dropped chunk's bytes stay loaded (it never goes back) while confirmed waits for the
	// status query, which says 1310720.
	assert.Contains(t, loaded, int64(mib+2*K256), "the dropped chunk: loaded")
	assert.Contains(t, confirmed, int64(mib+K256), "the dropped chunk: confirmed")
	last := seen[len(seen)-1]
	assert.Equal(t, int64(3*mib), last.Loaded, "last loaded")
	assert.Equal(t, int64(3*mib), last.Confirmed, "last confirmed")
	// 3.5 MiB carried (the 256 KiB the server lost sent twice) over 3.25 s of sending and the
	// retry's short wait: about a MiB a second (0.7 to 1.1), not twice that (counted twice: 1.22).
	assert.InDelta(t, 0.9*mib, last.BytesPerSecond, 0.2*mib, "rate (B/s): each byte counted once")
}

// The browser takes a body far ahead of what the server has received (its buffers), then
// waits for the answer with nothing more to count. A body it took whole by the first count
// tells nothing of the link (a link that became far slower would look the same): nothing is
// reported inside it, and it is watched as an uncounted one, its Timeout still in force.
func TestProgressInsideChunksTakenWholeAtOnce(t *testing.T) {
	const mib = 4 * K256
	all := []int64{mib, mib, mib, mib} // all of it taken at once, told four times
	var timeouts []Duration
	check := func(t *testing.T, r *Request) { timeouts = append(timeouts, r.Timeout) }
	seen := progressOf(t, 2*mib, mib, []ex{start(),
		{n: mib, status: 308, rng: "bytes=0-1048575", wait: time.Second, sent: []int64{K256, 2 * K256, 3 * K256, mib}},
		{n: mib, status: 200, wait: time.Second, sent: all, check: check},
	})
	var inSecond []int64
	for _, p := range seen {
		if p.Confirmed == mib && p.Loaded > mib && p.Loaded < 2*mib {
			inSecond = append(inSecond, p.Loaded-mib)
		}
	}
	assert.Empty(t, inSecond, "inside a chunk taken whole at once, loaded moved (want nothing until the answer)")
	assert.Positive(t, timeouts[0], "the Timeout of a chunk taken whole at once")
}

// The first chunk of an upload, before any answer measured the link: the browser takes most of
// the body at once into its buffers, then the rest as fast as the link carries it, then waits.
// Loaded follows the rate of that second part from the start of the request, through the wait.
func TestProgressFirstChunkPacedBySlope(t *testing.T) {
	const mib = 4 * K256
	// A link of 256 KiB/s, 640 KiB of buffers, a tell every half second for 4 s.
	var sent []int64
	for i := 1; i <= 8; i++ {
		sent = append(sent, min(mib, 640*1024+int64(i)*K256/2))
	}
	seen := progressOf(t, mib, mib, []ex{start(), {n: mib, status: 200, wait: 4 * time.Second, sent: sent}})
	var steps []int64
	for i := 1; i < len(seen); i++ {
		steps = append(steps, seen[i].Loaded-seen[i-1].Loaded)
	}
	// Reports inside from the second count on: first what the browser took since its first
	// count (an eighth of a MiB at 1 s), then, once the counts have shown the rate over 256 KiB
	// at 1.5 s, that rate from the request's start (three eighths in all), then an eighth each
	// half second: the link's, never the 768 KiB the browser took at once.
	if len(steps) < 7 || steps[0] > K256/2+1024 || steps[0]+steps[1] > 3*K256/2+1024 || slices.Max(steps[2:7]) > K256/2+1024 {
		t.Errorf("loaded moved by %v: want an eighth of a MiB, three eighths in all, then steps of about %d", steps, K256/2)
	}
}

// A rate measured on an earlier chunk that runs high (here four times the link's): loaded
// follows the rate the browser goes on taking bytes at instead, so that it keeps moving until
// the answer rather than reaching the chunk's end early and standing.
func TestProgressPacedByTheSlowerRate(t *testing.T) {
	const mib = 4 * K256
	// The second chunk: 256 KiB taken at once, then 0.5 MiB/s; told every 200 ms for 2 s.
	var sent []int64
	for i := 1; i <= 10; i++ {
		sent = append(sent, min(mib, K256+int64(i)*mib/10))
	}
	seen := progressOf(t, 2*mib, mib, []ex{start(),
		{n: mib, status: 308, rng: "bytes=0-1048575", wait: time.Second / 2},
		{n: mib, status: 200, wait: 2 * time.Second, sent: sent},
	})
	// Inside the second chunk, the last report before the answer still moved, and left a
	// good part of the chunk for the answer: loaded was not at its end early.
	var inside []int64
	for _, p := range seen {
		if p.Confirmed == mib && p.Loaded > mib {
			inside = append(inside, p.Loaded-mib)
		}
	}
	// (The last count comes with the answer.)
	if len(inside) < 6 || inside[len(inside)-2] >= mib || inside[len(inside)-2] < mib/2 {
		t.Errorf("inside the second chunk loaded moved to %v: want it moving until the answer, short of the end", inside)
	}
}
