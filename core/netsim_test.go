package core

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Links that change under a resumable upload (docs/protocol.md section 8, "Links that change"),
// simulated in fake time: a server with one session behind a link whose rate and round trip
// follow a schedule, with blackouts, and a transport that either counts the body as the
// network takes it (Request.OnSent, as Chromium's fetch does with a stream body over HTTP/2)
// or tells nothing until the answer (Firefox, WebKit, HTTP/1.1). The browser's take runs
// ahead of the server by its buffers (lead); a request given up (Timeout, or OnSent saying the
// body stopped) leaves the server what arrived of it, as Google's guide shows a server doing
// (section 4), and with a queue (as web/netlink's, and a real uplink's), what the link still
// carries of it after the cut, every later request waiting behind it. The browser tests and
// `./build.sh bench` run the same scenarios through real engines; these check the decisions,
// quickly and exactly.

// linkStep is the link from at on: bytes per second, round trip, or a blackout (nothing
// passes, no answer leaves).
type linkStep struct {
	at       Duration
	rate     float64
	rtt      Duration
	blackout bool
}

// simNet is the simulated server and transport. Every request waits out a blackout before it
// reaches the server; a chunk's bytes arrive at the link's rate; the answer leaves one round
// trip after the last byte (held through a blackout).
type simNet struct {
	t       *testing.T
	steps   []linkStep
	t0      time.Time
	counted bool  // the transport counts the body (OnSent every 200 ms)
	lead    int64 // how far the browser's take runs ahead of the server
	dropCut bool  // the server drops what arrived of a cut chunk
	// preflight: the first request to a session URI waits a round trip first (the browser's
	// preflight of a cross-origin PUT to a URI it has not seen); startPreflight: so does every
	// session start (its URL not seen before, as where the object's name is in its query).
	preflight      bool
	startPreflight bool
	burst          int64    // the browser takes the body in steps of this many bytes (0: any)
	wait           Duration // every answer this much later: a busy machine's waiting, not the link
	// queue: a request given up still delivers this much of the link's rate (the oldest of the
	// bytes it had sent; web/netlink's Link.SetQueue), and the requests after it wait until the
	// link has carried them (pending).
	queue    Duration
	pending  float64
	sessions int // the sessions started, each a URI of its own
	flown    int // the sessions whose URI has had its preflight
	stored   int64
	total    int64
	received int64 // body bytes the server read, over all requests
}

const simStep = 10 * time.Millisecond

// simQueue is the queue the scenarios run under: a second of the link, as web/netlink's default
// and consumer uplinks.
const simQueue = Second

func (n *simNet) now() Duration { return Duration(time.Since(n.t0)) }

// Counts says, as the browser's host does (Counter), whether a body to url would be counted:
// where the transport counts at all.
func (n *simNet) Counts(url string) bool { return n.counted }

func (n *simNet) link() linkStep {
	now, cur := n.now(), n.steps[0]
	for _, s := range n.steps {
		if s.at <= now {
			cur = s
		}
	}
	return cur
}

// rateBefore is the link's rate now or, in a blackout, before it.
func (n *simNet) rateBefore() float64 {
	now, rate := n.now(), 0.0
	for _, s := range n.steps {
		if s.at <= now && !s.blackout {
			rate = s.rate
		}
	}
	return rate
}

func (n *simNet) Do(ctx Context, r *Request) (*Response, error) {
	begun := n.now()
	for n.pending > 0 { // behind a cut request's queue
		time.Sleep(simStep)
		if l := n.link(); !l.blackout {
			n.pending -= l.rate * simStep.Seconds()
		}
	}
	for n.link().blackout {
		time.Sleep(simStep)
	}
	// The host's count: every 200 ms from the request's start (web/js/src/engine/counted.js: its
	// timer starts with the fetch, before the preflight and the link's queue).
	nextTell := begun + 200*Millisecond
	cr := r.Header.Get("Content-Range")
	single := r.Method == "POST" && !strings.Contains(r.URL, "uploadType=resumable")
	switch {
	case r.Method == "POST" && !single:
		if n.startPreflight {
			n.answerWait(r, begun, nil)
		}
		n.answerWait(r, begun, nil)
		n.stored = 0
		n.sessions++
		return &Response{Status: 200, Header: Header{"location": testSession}}, nil
	case strings.HasPrefix(cr, "bytes */"):
		n.answerWait(r, begun, nil)
		return n.state(), nil
	}
	if n.preflight && !single && n.flown < n.sessions {
		n.flown = n.sessions
		n.answerWait(r, begun, nil)
	}
	var first, last int64
	if single {
		// A media request: all of it, from byte 0; what arrived of a cut one is lost.
		first, last, n.stored = 0, r.ContentLength()-1, 0
	} else {
		first, last = parseCR(n.t, cr)
	}
	size := last - first + 1
	var got float64
	told := false
	cut := func(why string) (*Response, error) {
		if q := min(float64(size)-got, n.rateBefore()*n.queue.Seconds()); q > 0 {
			n.received += int64(got+q) - int64(got)
			got += q
			n.pending = q
		}
		if !n.dropCut && !single && first <= n.stored {
			n.stored = max(n.stored, first+int64(got))
		}
		return nil, &StallError{After: n.now() - begun, Err: errDropped}
	}
	for int64(got) < size {
		time.Sleep(simStep)
		if l := n.link(); !l.blackout {
			step := min(l.rate*simStep.Seconds(), float64(size)-got)
			got += step
			n.received += int64(got) - int64(got-step)
		}
		if r.Timeout > 0 && !told && n.now()-begun >= r.Timeout {
			return cut("timeout")
		}
		if n.counted && r.OnSent != nil && n.now() >= nextTell {
			// As the browser's host: the timer goes at the first count of bytes still to take.
			nextTell += 200 * Millisecond
			taken := min(size, int64(got)+n.lead)
			if n.burst > 0 && taken < size {
				taken = taken / n.burst * n.burst
			}
			told = told || taken < size
			if !r.OnSent(taken) {
				return cut("stalled")
			}
		}
	}
	if err := n.answerWait(r, begun, func() bool {
		if r.Timeout > 0 && !told && n.now()-begun >= r.Timeout {
			return false
		}
		if n.counted && r.OnSent != nil && n.now() >= nextTell {
			nextTell += 200 * Millisecond
			return r.OnSent(size)
		}
		return true
	}); err != nil {
		return cut("waiting")
	}
	if first <= n.stored {
		n.stored = max(n.stored, last+1)
	}
	return n.state(), nil
}

// answerWait waits one round trip, held through blackouts; alive, if set, is asked every step
// whether the request is still wanted.
func (n *simNet) answerWait(r *Request, begun Duration, alive func() bool) error {
	left := n.link().rtt + 3*Millisecond + n.wait // the browser's own cost of a request
	for left > 0 {
		time.Sleep(simStep)
		if !n.link().blackout {
			left -= Duration(simStep)
		}
		if alive != nil && !alive() {
			return errDropped
		}
	}
	return nil
}

func (n *simNet) state() *Response {
	if n.stored == n.total {
		return &Response{Status: 200, Header: Header{}, Body: []byte("{}")}
	}
	h := Header{}
	if n.stored > 0 {
		h.Set("Range", "bytes=0-"+strconv.FormatInt(n.stored-1, 10))
	}
	return &Response{Status: 308, Header: h}
}

func parseCR(t *testing.T, cr string) (first, last int64) {
	t.Helper()
	a, b, ok := strings.Cut(strings.TrimPrefix(cr, "bytes "), "-")
	b, _, _ = strings.Cut(b, "/")
	f, err1 := strconv.ParseInt(a, 10, 64)
	l, err2 := strconv.ParseInt(b, 10, 64)
	require.True(t, ok && err1 == nil && err2 == nil, "Content-Range %q", cr)
	return f, l
}

// idealTime is how long size bytes take over the schedule from its start: the bytes alone.
func idealTime(steps []linkStep, size int64) Duration {
	var sent float64
	var now Duration
	for i := 0; ; i++ {
		l := steps[0]
		for _, s := range steps {
			if s.at <= now {
				l = s
			}
		}
		if !l.blackout {
			sent += l.rate * simStep.Seconds()
		}
		now += Duration(simStep)
		if sent >= float64(size) {
			return now
		}
	}
}

// simRun is what one upload over a simNet showed.
type simRun struct {
	moves    []Duration // when Loaded grew, from the upload's start
	began    Duration
	session  Duration // when the session was started (its URI known)
	took     Duration
	retries  int
	cuts     int
	chunks   []int64 // the sizes of the chunks sent
	resent   int64   // bytes the server read more than once
	err      error
	progress []Progress
}

// firstMoveAfter is how long after at loaded first grew.
func (s simRun) firstMoveAfter(at Duration) Duration {
	for _, m := range s.moves {
		if m > at {
			return m - at
		}
	}
	return -1
}

// longestGapAfter is the longest wait between two moves of loaded (the end included) after at.
func (s simRun) longestGapAfter(at Duration) Duration {
	var longest Duration
	prev := at
	for _, m := range append(s.moves, s.began+s.took) {
		if m <= at {
			continue
		}
		longest, prev = max(longest, m-prev), m
	}
	return longest
}

// upload sends size bytes over n with the module's defaults (chunk sizes to the link), sharing
// links (what earlier uploads of the "page" measured) and clock.
func (n *simNet) upload(t *testing.T, links *Links, clock Clock, size int64) simRun {
	n.total, n.stored = size, 0
	before := n.received
	run := simRun{began: n.now()}
	o := Options{
		URL: testURL, ChunkSize: ChunkAuto, Link: links.For(testURL), Clock: clock,
		OnProgress: func(p Progress) {
			if len(run.progress) > 0 && p.Loaded > run.progress[len(run.progress)-1].Loaded {
				run.moves = append(run.moves, n.now())
			}
			run.progress = append(run.progress, p)
		},
		OnRetry:   func(RetryInfo) { run.retries++ },
		OnSession: func(string) { run.session = n.now() },
		OnRequest: func(ri RequestInfo) {
			if _, ok := ri.Err.(*LateError); ok {
				run.cuts++
			}
			if ri.ContentRange != "" && !strings.HasPrefix(ri.ContentRange, "bytes */") {
				f, l := parseCR(t, ri.ContentRange)
				run.chunks = append(run.chunks, l-f+1)
			}
			if ri.Method == "POST" && strings.Contains(ri.URL, "uploadType=media") {
				run.chunks = append(run.chunks, size) // one request of all of it
			}
		},
	}
	u, err := New(n, &memSource{data: make([]byte, size)}, o)
	require.NoError(t, err)
	_, run.err = u.Run(context.Background())
	run.took = n.now() - run.began
	run.resent = n.received - before - size
	return run
}

func (s simRun) String() string {
	sizes := make([]string, len(s.chunks))
	for i, c := range s.chunks {
		sizes[i] = strconv.FormatFloat(float64(c)/(1<<20), 'f', 2, 64)
	}
	return "took " + strconv.FormatFloat(s.took.Seconds(), 'f', 1, 64) + " s, " + strconv.Itoa(s.retries) + " retries, " +
		strconv.Itoa(s.cuts) + " cut, " + strconv.FormatInt(s.resent, 10) + " bytes sent again, chunks (MiB) " + strings.Join(sizes, " ")
}

func mbps(n float64) float64 { return n * 1e6 / 8 }

// modes: the transport counting the body, and not.
var simModes = []struct {
	name    string
	counted bool
}{{"counted (Chromium, HTTP/2)", true}, {"answers only (Firefox, WebKit, HTTP/1.1)", false}}

// After a fast upload, the next one over a link 40 times slower: what the page learnt is a
// hint, not a promise. Progress within 3 s, no retry, nothing sent twice. (Its 256 KiB probe
// takes 2.1 s there: it is cut short at the late bound, and the link's queue delivers the rest
// of it before the status query is answered.)
func TestLinkFortyTimesSlowerThanRemembered(t *testing.T) {
	for _, m := range simModes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &simNet{t: t, t0: time.Now(), counted: m.counted, lead: 1 << 20, queue: simQueue,
					steps: []linkStep{{rate: mbps(40), rtt: 40 * Millisecond}}}
				var links Links
				clock := stdClock{origin: n.t0}
				fast := n.upload(t, &links, clock, 20<<20)
				require.NoError(t, fast.err)
				n.steps = []linkStep{{at: n.now(), rate: mbps(1), rtt: 40 * Millisecond}}
				slow := n.upload(t, &links, clock, 1500_000)
				t.Logf("fast: %v", fast)
				t.Logf("slow: %v; first progress after %.2f s, longest gap %.2f s", slow, slow.firstMoveAfter(slow.began).Seconds(), slow.longestGapAfter(slow.began).Seconds())
				require.NoError(t, slow.err)
				d := slow.firstMoveAfter(slow.began)
				assert.True(t, d >= 0 && d <= 3*Second, "first progress after %.2f s, want within 3 s", d.Seconds())
				assert.Zero(t, slow.retries, "retries")
				assert.LessOrEqual(t, slow.cuts, 1, "requests cut: the probe at most")
				assert.Zero(t, slow.resent, "bytes sent twice")
			})
		})
	}
}

// After a fast upload on loopback, the next over a slow link (the demo's speed switched from
// "unlimited" to 256 KB/s or 1 MB/s): a rate measured on loopback, from chunks whose time is
// little more than their fixed cost, runs to gigabytes a second, and a first chunk sized from
// it was the whole file (a 100 MB one, in the demo: sent uncounted, cut after 1.7 s, the bar
// standing 6 s). Its first chunk is no bet the page cannot see: where progress comes only
// with answers a 256 KiB probe, where it comes inside a chunk a counted one; progress within
// 3 s of the start and never 3 s apart, no retry, nothing sent twice but a cut chunk's rest.
func TestSlowLinkAfterLoopback(t *testing.T) {
	for _, m := range simModes {
		for _, kibs := range []float64{256, 1024} {
			t.Run(m.name+", "+strconv.Itoa(int(kibs))+" KiB/s", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					n := &simNet{t: t, t0: time.Now(), counted: m.counted, lead: 1 << 20, queue: simQueue,
						steps: []linkStep{{rate: 300e6}}} // loopback: 100 MB in a third of a second, counted
					var links Links
					clock := stdClock{origin: n.t0}
					fast := n.upload(t, &links, clock, 100e6)
					require.NoError(t, fast.err)
					rate, _, _ := links.For(testURL).hint(clock.Now())
					n.steps = []linkStep{{at: n.now(), rate: kibs * 1024, rtt: 20 * Millisecond}}
					const size = 12 << 20
					slow := n.upload(t, &links, clock, size)
					first, gap := slow.firstMoveAfter(slow.began), slow.longestGapAfter(slow.began)
					t.Logf("fast: %v; the rate remembered %.0f MB/s", fast, rate/1e6)
					t.Logf("slow: %v; first progress after %.2f s, longest gap %.2f s", slow, first.Seconds(), gap.Seconds())
					require.NoError(t, slow.err)
					assert.True(t, first >= 0 && first <= 3*Second, "first progress after %.2f s, want within 3 s", first.Seconds())
					assert.LessOrEqual(t, gap.Seconds(), 3.0, "the longest gap, in s")
					if !m.counted {
						assert.Equal(t, int64(ChunkAlign), slow.chunks[0], "the first chunk: a 256 KiB probe")
					}
					assert.Zero(t, slow.retries, "retries")
					assert.LessOrEqual(t, slow.resent, slices.Max(slow.chunks), "bytes sent twice: a chunk at most")
				})
			})
		}
	}
}

// The scenarios of a link that changes mid-upload, each in both modes.
func TestLinkChangesMidUpload(t *testing.T) {
	const rtt = 40 * Millisecond
	for _, tt := range []struct {
		name    string
		steps   []linkStep
		size    int64
		change  Duration // when the link changes
		firstBy Duration // progress within this after the change (0: not checked)
		gap     Duration // the longest gap after the change (0: not checked)
		ideal   float64  // the whole upload within this many times the ideal (0: not checked)
		resent  int64    // at most this many bytes the server read twice (-1: the largest chunk's)
	}{
		// Three seconds at 40 Mbit/s, then thirty at 2: every tenth of a second of round trips
		// before the drop costs two after it, so the slow part is the longer.
		{"20x drop", []linkStep{{rate: mbps(40), rtt: rtt}, {at: 3 * Second, rate: mbps(2), rtt: rtt}},
			15e6 + 7.5e6, 3 * Second, 3 * Second, 3 * Second, 1.25, -1},
		{"20x rise", []linkStep{{rate: mbps(2), rtt: rtt}, {at: 4 * Second, rate: mbps(40), rtt: rtt}},
			1e6 + 30e6, 4 * Second, 0, 0, 1.3, -1},
		{"20 s blackout", []linkStep{{rate: mbps(20), rtt: rtt}, {at: 3 * Second, blackout: true}, {at: 23 * Second, rate: mbps(20), rtt: rtt}},
			25e6, 3 * Second, 0, 0, 0, -1},
		{"round trip 40 to 600 ms", []linkStep{{rate: mbps(20), rtt: rtt}, {at: 3 * Second, rate: mbps(20), rtt: 600 * Millisecond}},
			25e6, 3 * Second, 0, 4 * Second, 0, -1},
	} {
		for _, m := range simModes {
			for _, drop := range []bool{false, true} {
				name := tt.name + ", " + m.name
				if drop {
					name += ", a server that drops cut chunks"
				}
				t.Run(name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						n := &simNet{t: t, t0: time.Now(), counted: m.counted, lead: 1 << 20, steps: tt.steps, dropCut: drop, queue: simQueue}
						var links Links
						run := n.upload(t, &links, stdClock{origin: n.t0}, tt.size)
						ideal := idealTime(tt.steps, tt.size)
						t.Logf("%v; ideal %.1f s (%.2fx); after the change: first progress %.2f s, longest gap %.2f s",
							run, ideal.Seconds(), run.took.Seconds()/ideal.Seconds(), run.firstMoveAfter(tt.change).Seconds(), run.longestGapAfter(tt.change).Seconds())
						require.NoError(t, run.err)
						// Of a server that drops what arrived of a cut chunk (Google's keep it),
						// only the upload's end is checked: it shows nothing until a chunk after
						// the cut is answered (the cut, the link's queue before the status query,
						// then 256 KiB at the slow rate), and the cut chunk is sent again.
						if drop {
							return
						}
						if tt.firstBy > 0 {
							d := run.firstMoveAfter(tt.change)
							assert.True(t, d >= 0 && d <= tt.firstBy, "first progress %.2f s after the change, want within %.1f s", d.Seconds(), tt.firstBy.Seconds())
						}
						if tt.gap > 0 {
							assert.LessOrEqual(t, run.longestGapAfter(tt.change).Seconds(), tt.gap.Seconds(), "the longest gap after the change, in s")
						}
						if tt.ideal > 0 {
							assert.LessOrEqual(t, run.took.Seconds()/ideal.Seconds(), tt.ideal, "the time, in times the ideal")
						}
						assert.LessOrEqual(t, run.resent, slices.Max(run.chunks), "bytes sent again: one chunk at most")
					})
				})
			}
		}
	}
}

// A file the default sends in one request (a fast link remembered), over a link 400 times
// slower: the request is cut short within a few seconds, and the upload goes on resumable, in
// chunks sized to the link as it is, byte-exact; no retry.
func TestOneRequestCutShortGoesResumable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &simNet{t: t, t0: time.Now(), lead: 1 << 20, queue: simQueue, steps: []linkStep{{rate: mbps(400), rtt: 20 * Millisecond}}}
		var links Links
		clock := stdClock{origin: n.t0}
		require.NoError(t, n.upload(t, &links, clock, 40<<20).err)
		n.steps = []linkStep{{at: n.now(), rate: mbps(1), rtt: 20 * Millisecond}}
		slow := n.upload(t, &links, clock, 1000_000)
		t.Logf("one request: %v; first progress after %.2f s", slow, slow.firstMoveAfter(slow.began).Seconds())
		require.NoError(t, slow.err)
		if assert.GreaterOrEqual(t, len(slow.chunks), 3, "chunks: one request, then chunks") {
			assert.Equal(t, int64(1000_000), slow.chunks[0], "one request of all of it first")
		}
		assert.Equal(t, 1, slow.cuts, "requests cut: the one request")
		assert.Zero(t, slow.retries, "retries")
		assert.LessOrEqual(t, slow.resent, int64(400_000), "bytes sent again")
		d := slow.firstMoveAfter(slow.began)
		assert.True(t, d >= 0 && d <= 7*Second, "first progress after %.2f s, want within 7 s", d.Seconds())
		// A file too large for one request, after a fast upload again: its probe, sized for a
		// link up to 40 times slower, is cut short too, and the rest goes in chunks of the slow
		// link.
		n.steps = []linkStep{{at: n.now(), rate: mbps(400), rtt: 20 * Millisecond}}
		require.NoError(t, n.upload(t, &links, clock, 40<<20).err)
		n.steps = []linkStep{{at: n.now(), rate: mbps(1), rtt: 20 * Millisecond}}
		probed := n.upload(t, &links, clock, 6000_000)
		t.Logf("probe: %v; first progress after %.2f s", probed, probed.firstMoveAfter(probed.began).Seconds())
		assert.NoError(t, probed.err)
		assert.Equal(t, 1, probed.cuts, "requests cut: the probe")
		assert.Zero(t, probed.retries, "retries")
		d = probed.firstMoveAfter(probed.began)
		assert.True(t, d >= 0 && d <= 4*Second, "first progress after %.2f s, want within 4 s", d.Seconds())
	})
}

// A first upload to an origin over a transport that counts: the first chunk (256 KiB) is
// answered before the transport's first count, so whether it counts is found by the next
// one; from there chunks are long and the progress comes from inside them. (Only chunks
// worth counting are offered: resumable.go, worthCounting; a chunk too short to show a
// count must not settle that the transport counts nothing.)
func TestCountingFoundOnAFirstUpload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &simNet{t: t, t0: time.Now(), counted: true, lead: 1 << 20,
			steps: []linkStep{{rate: mbps(16), rtt: 20 * Millisecond}}}
		var links Links
		run := n.upload(t, &links, stdClock{origin: n.t0}, 8<<20+100_000)
		t.Logf("%v; longest gap %.2f s", run, run.longestGapAfter(run.began).Seconds())
		require.NoError(t, run.err)
		assert.LessOrEqual(t, len(run.chunks), 4, "chunks: the long chunks of a counted body after at most two")
		assert.LessOrEqual(t, run.longestGapAfter(run.began).Seconds(), 1.0, "the longest gap, in s")
	})
}

// A page's first upload over a steady slow link with a long round trip (3 Mbit/s, 150 ms, the
// session start and the first PUT of each session preflighted, the browser taking a counted
// body 64 KiB at a time as the host hands it on): where the transport counts the body (Chromium
// over HTTP/2), the bar
// moves within 0.65 s of the session's start and never stands longer, the first chunk
// included, and the page that knows nothing of the link loses no time to one that learnt it
// (issue 46: a first 256 KiB chunk, which the browser takes whole at once, stood 1.0 s after
// the session's start with nothing to show, and cost a request). Where progress comes only with
// answers, the first chunk stays a 256 KiB probe.
func TestFirstUploadMovesAtOnce(t *testing.T) {
	for _, m := range simModes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &simNet{t: t, t0: time.Now(), counted: m.counted, lead: 1100 << 10, preflight: true, startPreflight: true, burst: 64 << 10,
					steps: []linkStep{{rate: mbps(3), rtt: 150 * Millisecond}}}
				var links Links
				clock := stdClock{origin: n.t0}
				const size = 14 * ChunkAlign // ten seconds of the link
				first := n.upload(t, &links, clock, size)
				require.NoError(t, first.err)
				learnt := n.upload(t, &links, clock, size)
				require.NoError(t, learnt.err)
				wait := first.longestGapAfter(first.session)
				t.Logf("first: %v; session started after %.2f s, first move %.2f s after it, the longest wait from it %.2f s",
					first, (first.session - first.began).Seconds(), first.firstMoveAfter(first.session).Seconds(), wait.Seconds())
				t.Logf("learnt: %v; the longest wait from its session's start %.2f s", learnt, learnt.longestGapAfter(learnt.session).Seconds())
				if !m.counted {
					assert.Equal(t, int64(ChunkAlign), first.chunks[0], "a 256 KiB probe first")
					return
				}
				assert.LessOrEqual(t, wait, 650*Millisecond, "the longest wait from the session's start, the first chunk's included")
				assert.LessOrEqual(t, first.took.Seconds(), 1.01*learnt.took.Seconds(), "the first upload's time, against one that learnt the link")
			})
		})
	}
}

// A steady slow link with a long round trip, counted (3 Mbit/s, 150 ms, Chromium over HTTP/2),
// the first PUT of each session preflighted: loaded moves at the link's rate from the request's
// start plus its fixed cost, so that in an upload seeded from an earlier one (a single chunk)
// it reaches the chunk's end about when the answer comes, not a round trip or two before it,
// then standing (docs/protocol.md section 8).
func TestProgressReachesTheEndWithTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &simNet{t: t, t0: time.Now(), counted: true, lead: 1100 << 10, preflight: true, burst: ChunkAlign,
			steps: []linkStep{{rate: mbps(3), rtt: 150 * Millisecond}}}
		var links Links
		clock := stdClock{origin: n.t0}
		const size = 14 * ChunkAlign // ten seconds of the link
		require.NoError(t, n.upload(t, &links, clock, size).err)
		run := n.upload(t, &links, clock, size)
		require.NoError(t, run.err)
		// The wait from the last move inside the chunk to the answer (the end), and the
		// longest between two moves.
		last := run.began + run.took - run.moves[len(run.moves)-1]
		longest := run.longestGapAfter(run.moves[0])
		t.Logf("%v; the last wait %.2f s, the longest %.2f s", run, last.Seconds(), longest.Seconds())
		assert.LessOrEqual(t, last.Seconds(), 0.4, "the last wait, in s: two counts at most")
		assert.LessOrEqual(t, longest.Seconds(), 0.65, "the longest wait, in s")
	})
}

// A rate measured too high (a chunk's time mostly its fixed cost) must not leave a chunk with
// no late bound: one expected under cutFloor less cutMargin is cut after cutFloor; one expected
// longer, at its expected time plus cutMargin or a quarter of it.
func TestLateBoundNeverNone(t *testing.T) {
	c := NewChunkSizer(DefaultMaxChunkSize)
	c.rate, c.cost = 50e6, 20*Millisecond
	r := &resumable{u: &Upload{sizer: c}}
	assert.Equal(t, cutFloor, r.lateBound(4<<20), "4 MiB expected in %v", c.Expect(4<<20))
	c.rate = 4e6
	exp := c.Expect(4e6)
	assert.Equal(t, exp+cutMargin, r.lateBound(4e6), "4 MB expected in %v", exp)
	exp = c.Expect(16e6)
	assert.Equal(t, exp+exp/4, r.lateBound(16e6), "16 MB expected in %v", exp)
}

// Files sent in one request, side by side on a busy machine: each answer comes late by the
// machine's waiting, not the link's rate. An answer on time (within a quarter of a progress
// interval of what the remembered rate expected) does not lower the rate, so the next file as
// large as the bound still goes whole; a link many times slower than remembered does, and the
// next large file goes resumable.
func TestOneRequestOnTimeKeepsTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &simNet{t: t, t0: time.Now(), lead: 1 << 20, steps: []linkStep{{rate: mbps(160), rtt: 20 * Millisecond}}}
		var links Links
		clock := stdClock{origin: n.t0}
		require.NoError(t, n.upload(t, &links, clock, 40<<20).err)
		whole := func(size int64) bool {
			t.Helper()
			before := n.sessions
			r := n.upload(t, &links, clock, size)
			require.NoError(t, r.err)
			return n.sessions == before && r.cuts == 0
		}
		n.wait = 150 * Millisecond
		for i := range 4 {
			require.True(t, whole(1000_000), "busy machine: 1 MB file %d sent whole", i)
		}
		assert.True(t, whole(4500_000), "busy machine: after four 1 MB files answered on time, 4.5 MB sent whole")
		n.wait = 0
		n.steps = []linkStep{{at: n.now(), rate: mbps(16), rtt: 20 * Millisecond}}
		require.True(t, whole(1000_000), "10x slower: a 1 MB file sent whole (its bound was 5 MB)")
		assert.False(t, whole(4500_000), "10x slower: after a 1 MB file answered 0.45 s late, 4.5 MB still sent whole")
	})
}
