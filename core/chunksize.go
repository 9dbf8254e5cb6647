package core

// Adaptive chunk sizes (Options.ChunkSize = ChunkAuto), docs/protocol.md sections 6 and 8.
//
// With fetch the browser reports no progress inside a request, so a chunk's length is both the
// progress cadence and, through its fixed cost (one round trip plus a few milliseconds of the
// browser), the share of the link an upload loses. A chunk that takes at least ten times its
// fixed cost loses under 10 %; one that takes about a second gives a report every second. The
// sizer aims at a chunk time of
//
//	target = clamp(overheadShare × cost, minChunkTime, maxChunkTime)
//
// i.e. fifteen times the fixed cost (ten would lose 10 % exactly; the ramp-up from a small
// first chunk loses a little more), but at least a second (a fast link gains little from
// more) and at most 1.6 s (progress at least every ~2 s); where even 1.6 s cannot make the
// cost small (a round trip over ~110 ms), progress wins. The next chunk is then rate × target bytes,
// rounded to 256 KiB, no more than growth × the last one (a first chunk is small: the first
// progress comes at once, and the rate is not known yet: unless a Link, what uploads before
// this one measured, tells it, link.go), or fastGrowth × while the last one
// took under a sixteenth of the target (on loopback and fast links the ramp-up from 256 KiB
// would otherwise cost several short requests), at least one unit, at most Max.
//
// The rate comes from the chunks answered so far: each gives size ÷ (duration − cost); recent
// chunks weigh more, and a slower one weighs more still, so a link that slows down is followed
// at once. The fixed cost is the shortest answer time seen for a request without a body (the
// session start, a status query) or, before any, a guess. To another origin the session start
// pays a preflight too, a second round trip that a chunk does not pay (the browser caches the
// session URI's preflight after the first chunk): so two chunks after the first, one at least
// 1.5 times the other, lower it to what they show (each took cost + size ÷ rate: two sizes give
// both), never below half the start's. A chunk that fails halves the next one (less to send
// again on a flaky link); growth resumes with the chunks that succeed.
//
// What an earlier upload measured is a hint, not a promise (link.go): the link may have
// become far slower since (a phone that left Wi-Fi, a demo's speed switched after an upload on
// loopback, where a rate measured from chunks that take little more than their fixed cost can
// run to gigabytes a second). Where progress comes only with answers, a first chunk sized from
// it would then be a long wait with nothing to show (docs/protocol.md section 8: a first chunk
// is never a bet the page cannot see for longer than a few seconds); so it is a probe of 256
// KiB, which a link of 256 KiB a second answers within about a second, and a slower one
// within its late bound (resumable.go, lateBound). An answer that confirms the rate (at least
// half of it, or, the probe being small, its bytes within probeSlack) lets the next chunk
// take the whole target at once; one that does not is a new link, ramped up to as any. Where
// progress comes inside a chunk, the counts show within a fraction of a second whether bytes
// move: no probe, and the first chunk is counted (resumable.go, worthCounting) however short
// the remembered rate expects it to be.
//
// Inside an upload the link may change too. A chunk whose answer is late (Expect, and
// core/resumable.go) is cut short; the server keeps what arrived (docs/protocol.md section 4),
// and Cut tells the sizer how much: the rate that shows, and a next chunk at most half of it.
//
// A first chunk where nothing is known is small for another reason too: where progress comes
// only with answers, its answer is the first the page sees. Where the transport says it counts
// (Counts, from the transport: Counter), progress comes from inside the chunk, but only from
// beyond the body's first megabyte or so, which the browser takes into its buffers at once (the
// lead, docs/protocol.md section 8): a first 256 KiB is taken whole and tells nothing, and on a
// slow link with a long round trip (3 Mbit/s, 150 ms) the bar stood 1.0-1.3 s, the session
// start and the first chunk, before it first moved. So there the first chunk is firstCounted
// long: its count shows the link's rate from its second count on, and a file of ten seconds
// at 3 Mbit/s goes in one request, as on a page that has learnt the link.
//
// Two things change the target. A page may bound the gap between progress reports
// (Interval, the option progressIntervalMs): the chunk's time and its fixed cost then fit in
// it, at whatever share of the link that leaves. And where the transport reports progress
// inside a chunk (Request.OnSent: Chromium's fetch with a stream body, over HTTP/2), a chunk's
// length no longer sets the cadence: it aims at countedChunkTime (or fifteen fixed costs, if
// more), and grows there at once, without the ramp, whose reason (the first progress at
// once, a rate not yet known) the counting takes away. Each answer says which holds: a chunk
// counted tells the sizer so (Answered), a chunk sent whole (the transport fell back to a
// Blob body) sends it back to the target above.
//
// ChunkSizer is sans-I/O: it is told what happened and answers with a size; it never looks at
// a clock. It is not safe for concurrent use (the upload's driver loop alone uses it).

// ChunkAuto as Options.ChunkSize sizes each chunk to the link (ChunkSizer).
const ChunkAuto = -1

// DefaultMaxChunkSize is Options.MaxChunkSize where none is given: 128 MiB, which on loopback
// (~600 MB/s, ~5 ms per request) still reaches 0.97 of one whole PUT.
const DefaultMaxChunkSize = 128 << 20

// DefaultStreamMaxChunkSize is the default for a source of unknown length (a stream): its
// bytes are held in memory until the server confirms them, one chunk in flight and one read
// ahead, so its chunks stay smaller. 16 MiB keeps the page within ~32 MiB and still lasts
// over a second on a 100 Mbit/s link.
const DefaultStreamMaxChunkSize = 16 << 20

const (
	firstChunk    = ChunkAlign            // the first chunk: 256 KiB, a report comes at once
	growth        = 4                     // a chunk is at most this many times the last
	fastGrowth    = 8                     // ... or this many, while far below the target
	overheadShare = 15                    // a chunk's time, in fixed costs: well under 10 % lost
	minChunkTime  = 1000 * Millisecond    // no shorter chunks than this: a fast link gains nothing
	maxChunkTime  = 1600 * Millisecond    // no longer: a progress report every ~2 s
	guessCost     = 50 * Millisecond      // the fixed cost before any is measured
	minTransfer   = Duration(Millisecond) // the least a chunk's bytes are taken to have taken
	// countedChunkTime is a chunk's time where progress comes inside it: long enough that
	// the fixed cost is a hundredth or two even over a slow link's round trip, short enough
	// that a chunk lost near its end costs seconds, not minutes, to send again.
	countedChunkTime = 10 * Second
	// probeSlack: a probe (the first chunk of an upload seeded from an earlier one's measure,
	// 256 KiB: see the file's comment) whose bytes took no longer than this beyond its fixed
	// cost confirms the remembered rate however fast that was: its time is mostly the fixed
	// cost's noise, and a link far slower (at 256 KiB a second, a second) shows plainly.
	probeSlack = 50 * Millisecond
	// countedMin is the least body whose count shows the link's rate: beyond the lead (about
	// 1.15 MiB over HTTP/2, docs/protocol.md section 8) and the bytes the rate is measured over.
	countedMin = 2 << 20
	// firstCounted is the first chunk where nothing is known of the link but the transport
	// says it counts (see the file's comment): beyond the lead by more than the lead again, and
	// at 3 Mbit/s ten seconds of the link.
	firstCounted = 2 * countedMin
)

// ChunkSizer chooses the size of each chunk of an upload (see the file's comment).
type ChunkSizer struct {
	Max int64 // the largest chunk: a positive multiple of ChunkAlign
	// Interval, when positive, is the longest gap between progress reports the page bears
	// (Options.ProgressInterval): a chunk not counted inside lasts, with its fixed cost, no
	// longer. 0: about a second (minChunkTime to maxChunkTime, see the file's comment).
	Interval Duration
	// Counts is the transport's word that it counts a chunk's body (Counter): where nothing is
	// known of the link, the first chunk is firstCounted long rather than 256 KiB.
	Counts bool

	last    int64    // the size of the last chunk chosen, 0 before the first
	rate    float64  // bytes per second, 0 until a chunk is answered
	cost    Duration // the fixed cost of a request, 0 until one is measured
	shrunk  bool     // the last chunk failed: the next is at most half of it
	counted bool     // the last chunk answered reported progress inside (Request.OnSent)
	seeded  bool     // rate, cost and counted came from a Link, and no round trip checked them yet
	probing bool     // the last chunk chosen is a probe of a remembered rate (see the file's comment)
	jump    bool     // a probe's answer confirmed the rate: the next chunk takes the target at once

	floor    Duration // the least the cost may be lowered to: half the shortest round trip
	answered int      // the chunks answered so far
	minSize  int64    // the smallest chunk answered after the first (0: none yet) ...
	minTook  Duration // ... and how long it took
}

// NewChunkSizer returns a sizer whose chunks are at most max bytes (rounded down to 256 KiB,
// at least one unit).
func NewChunkSizer(limit int64) *ChunkSizer {
	return &ChunkSizer{Max: max(limit/ChunkAlign, 1) * ChunkAlign}
}

// RoundTrip tells the sizer how long a request without a body (the session start, a status
// query) took to be answered: the fixed cost of every request.
func (c *ChunkSizer) RoundTrip(d Duration) {
	if d <= 0 {
		return
	}
	if c.floor == 0 || d/2 < c.floor {
		c.floor = d / 2
	}
	if c.seeded {
		// The first round trip of an upload seeded from what an earlier one measured (link.go).
		// One far longer than the seed's says the link is another (a phone gone from Wi-Fi to
		// a cellular network): its rate is not known either, and the cost is this one. Else
		// the seed's cost stands if this round trip allows it (between d/2, d with a
		// preflight, and d).
		c.seeded = false
		if d > 2*c.cost+guessCost {
			c.rate, c.counted, c.cost = 0, false, d
			return
		}
		c.cost = min(max(c.cost, d/2), d)
		return
	}
	if c.cost == 0 || d < c.cost {
		c.cost = d
	}
}

// Answered tells the sizer that a chunk of size bytes was sent and answered in d; counted:
// the transport reported progress inside it (Request.OnSent).
func (c *ChunkSizer) Answered(size int64, d Duration, counted bool) {
	probe := c.probing
	c.shrunk, c.counted, c.seeded, c.probing, c.jump = false, counted, false, false, false
	if size <= 0 || d <= 0 {
		return
	}
	c.answered++
	if c.answered >= 2 { // the first may have paid its session URI's preflight
		c.refine(c.minSize, c.minTook, size, d)
		if c.minSize == 0 || size < c.minSize {
			c.minSize, c.minTook = size, d
		}
	}
	transfer := max(d-c.fixedCost(), minTransfer)
	r := float64(size) / transfer.Seconds()
	if probe && (r >= c.rate/2 || transfer <= probeSlack) {
		c.jump = true // the remembered rate holds: no ramp
		if r < c.rate/2 {
			return // (a probe's bytes too few to measure it by)
		}
	}
	switch {
	case c.rate == 0, r < c.rate/2:
		c.rate = r // the first measure, or a link that has slowed down a lot: take it as it is
	case r < c.rate:
		c.rate = 0.3*c.rate + 0.7*r // slower: follow it at once
	default:
		c.rate = 0.5*c.rate + 0.5*r
	}
}

// refine lowers the cost to what two chunks show, each having taken cost + size ÷ rate, where
// the larger is at least 1.5 times the smaller (closer sizes leave the cost to the timings'
// noise); never below the floor, and never up (see the file's comment).
func (c *ChunkSizer) refine(s1 int64, d1 Duration, s2 int64, d2 Duration) {
	if s1 <= 0 || c.cost == 0 || 2*s2 < 3*s1 {
		return
	}
	est := Duration((float64(d1)*float64(s2) - float64(d2)*float64(s1)) / float64(s2-s1))
	if est < c.cost {
		c.cost = max(est, c.floor)
	}
}

// Rate is the link's rate measured so far, in bytes per second (the bytes of the chunks
// answered over their time less the fixed cost), or 0 before any chunk is answered.
func (c *ChunkSizer) Rate() float64 { return c.rate }

// Failed tells the sizer that a chunk got no usable answer (a lost connection, a 5xx): the
// next is at most half of it.
func (c *ChunkSizer) Failed() { c.shrunk, c.probing, c.jump = true, false, false }

// Cut tells the sizer that a chunk was cut short because its answer was late (the link is
// slower than measured), and that the server kept kept bytes of it, as the status query after
// it told, took after the chunk was sent (less that query's own fixed cost: a link's queue goes
// on delivering a cut request's bytes after the cut, and the query waits behind them): the rate
// they show, if lower than the one measured, is taken as it is, and the next chunk is at most
// half of the one cut (never the same big chunk twice in a row); where it kept nothing, 256 KiB.
func (c *ChunkSizer) Cut(kept int64, took Duration) {
	c.Failed()
	c.seeded = false
	if kept <= 0 || took <= 0 {
		// Nothing to measure the link by (a server that drops what arrived of a cut request,
		// or a link that carried nothing): 256 KiB next, to find out, as at the start.
		c.last, c.rate = 0, 0
		return
	}
	r := float64(kept) / max(took-c.fixedCost(), minTransfer).Seconds()
	if c.rate == 0 || r < c.rate {
		c.rate = r
	}
}

// Expect returns how long a chunk of size bytes should take at the rate measured so far, its
// fixed cost included; 0 before any rate is known.
func (c *ChunkSizer) Expect(size int64) Duration {
	if c.rate <= 0 {
		return 0
	}
	return c.fixedCost() + Duration(float64(size)/c.rate*float64(Second))
}

// Measured reports whether the rate comes from this upload's own answers (not only from a
// Link's memory of earlier ones).
func (c *ChunkSizer) Measured() bool { return c.answered > 0 }

// Next returns the size of the chunk that starts at offset: a multiple of ChunkAlign within
// [ChunkAlign, Max], and never past the end of an upload of known total (total < 0: unknown),
// where the last chunk is whatever is left.
func (c *ChunkSizer) Next(offset, total int64) int64 {
	left := int64(-1)
	if total >= 0 {
		left = max(total-offset, 0)
	}
	size := c.want(left)
	c.last = size
	if total >= 0 {
		left := max(total-offset, 0)
		// A remainder of under a quarter chunk goes with this one rather than costing a
		// request of its own, where that stays within Max.
		if left <= c.Max && left-size < size/4 {
			size = left
		}
		size = min(size, left)
	}
	return size
}

// want is the size the next chunk should have, left bytes before the end (-1: not known).
func (c *ChunkSizer) want(left int64) int64 {
	counted := c.counted
	if counted && c.rate > 0 {
		// The browser takes a body's first megabyte or so at once into its buffers (the lead:
		// the server's HTTP/2 window, docs/protocol.md section 8), and only what goes beyond
		// shows how fast the link carries it: a shorter body's count tells nothing, and it is
		// sized as where progress comes only with answers.
		size := int64(c.rate * c.target(true).Seconds())
		if left >= 0 {
			size = min(size, left)
		}
		counted = size >= countedMin
	}
	if c.last == 0 {
		if c.rate == 0 && c.Counts {
			return min(firstCounted, c.Max)
		}
		if c.rate == 0 {
			return min(firstChunk, c.Max)
		}
		// A link already measured (by an upload before this one: link.go): no ramp, but where
		// progress comes only with answers, a probe first (see the file's comment).
		if !counted {
			c.probing = true
			return min(firstChunk, c.Max)
		}
		size := min(int64(c.rate*c.target(true).Seconds()), c.Max)
		return max(size/ChunkAlign, 1) * ChunkAlign
	}
	limit := c.last * growth
	if c.shrunk {
		limit = c.last / 2
	}
	size := c.last * growth
	if c.rate > 0 {
		size = int64(c.rate * c.target(counted).Seconds())
		switch {
		case (counted || c.jump) && !c.shrunk:
			limit = size // progress comes inside, or a probe confirmed the rate: no ramp
		case !c.shrunk && size >= 16*c.last:
			limit = c.last * fastGrowth
		}
	}
	size = min(size, limit, c.Max)
	return max(size/ChunkAlign, 1) * ChunkAlign
}

// target is the time the next chunk's bytes should take (its fixed cost comes on top), where
// the transport counts its body (counted) or not.
func (c *ChunkSizer) target(counted bool) Duration {
	cost := c.fixedCost()
	switch {
	case counted:
		return max(overheadShare*cost, countedChunkTime)
	case c.Interval > 0:
		// The gap between two reports is a chunk's time and its cost; where the cost alone
		// takes most of the bound, half of it is the bytes' (the gap is then a round trip more).
		return max(c.Interval-cost, c.Interval/2)
	}
	return min(max(overheadShare*cost, minChunkTime), maxChunkTime)
}

// fixedCost is the measured cost of a request, or the guess before one is measured.
func (c *ChunkSizer) fixedCost() Duration {
	if c.cost == 0 {
		return guessCost
	}
	return c.cost
}
