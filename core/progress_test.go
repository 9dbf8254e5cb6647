package core

import (
	"context"
	"math"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
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
			if u, err = New(s, &memSource{data: data(4 * K256)}, o); err != nil {
				t.Fatal(err)
			}
			if _, err := u.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			s.done()
		})
		if math.Abs(last.BytesPerSecond-rate)/rate > 0.05 {
			t.Errorf("rate %.0f B/s after a 30 s pause, want about %d", last.BytesPerSecond, rate)
		}
	})
	t.Run("an adopted session's bytes do not count", func(t *testing.T) {
		var seen []Progress
		synctest.Test(t, func(t *testing.T) {
			exs := []ex{{cr: "bytes */1048576", n: 0, status: 308, rng: "bytes=0-524287"},
				chunk(2*K256, 3*K256-1, 4*K256), {n: K256, status: 200, wait: time.Second}}
			s := &script{t: t, exs: exs}
			o := Options{SessionURL: testSession, ChunkSize: K256, Retry: fastRetry(), OnProgress: func(p Progress) { seen = append(seen, p) }}
			u, err := New(s, &memSource{data: data(4 * K256)}, o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			s.done()
		})
		var afterChunk Progress
		for _, p := range seen {
			if p.Confirmed == 3*K256 {
				afterChunk = p
			}
		}
		if afterChunk.Loaded != 3*K256 || math.Abs(afterChunk.BytesPerSecond-rate)/rate > 0.05 {
			t.Errorf("after the first chunk of an adopted session: loaded %d, rate %.0f B/s; want %d, about %d",
				afterChunk.Loaded, afterChunk.BytesPerSecond, 3*K256, rate)
		}
		if want := float64(K256) / rate; math.Abs(afterChunk.SecondsLeft-want) > 0.1 {
			t.Errorf("time left %.2f s, want about %.2f", afterChunk.SecondsLeft, want)
		}
	})
}

func crIs(first, last, total int64) func(*testing.T, *Request) {
	want := "bytes " + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10) + "/" + strconv.FormatInt(total, 10)
	return func(t *testing.T, r *Request) {
		if got := r.Header.Get("Content-Range"); got != want {
			t.Errorf("Content-Range %q, want %q", got, want)
		}
	}
}
