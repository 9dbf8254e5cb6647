package netlink

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueue is the queue of a Link whose SetQueue was never called: what a cut request still
// delivers (Link.SetQueue). A second of the link is what consumer uplinks hold in their
// bottleneck queue and the sender's kernel buffer (0.2 to 2 s).
const DefaultQueue = time.Second

// Link is an emulated uplink. Its zero value is a steady link without limits; Set makes it
// another steady link and SetSchedule one that changes as time goes, both at any time and for
// the requests in flight as well as those to come.
//
// The link carries the bytes booked on it in the order they were booked, at the rate in force
// at each moment: a change of rate applies at once to the bytes not yet carried (a reader
// waiting for its step is woken early on a rise and held longer on a drop), while the bytes
// already carried stay carried and those booked stay booked. So a change gives no burst of
// credit and loses no time.
type Link struct {
	mu     sync.Mutex
	tl     timeline // its steps are nil until the link is first used or set
	steady bool     // set by Set, or the zero value: Schedule returns nil
	// booked counts the body bytes booked on the link since it was made, served the bytes it
	// has carried by the time at: served runs up to slack's worth ahead of booked on an idle
	// link, and is kept by every change (no credit given, no time lost).
	booked  int64
	served  float64
	at      time.Time
	changed chan struct{} // closed, and replaced, whenever the link is set: waiters look again

	// The queue (SetQueue): how much of the link a request given up still delivers, and the
	// requests given up whose queue is still arriving (drains), ahead of every request that
	// arrives meanwhile; drained is closed, and replaced, when drains falls to 0.
	queue    time.Duration
	queueSet bool // SetQueue was called: else DefaultQueue
	drains   int
	drained  chan struct{}

	// Read without the lock, so that a link without limits costs a request nothing.
	metered atomic.Bool // a rate or a schedule is set: body reads may be held
	held    atomic.Bool // a round trip or a schedule is set: answers may be held
}

// slack is how far behind its schedule the link may fall and still catch up: a reader that
// wakes late from a sleep (timers overshoot by a millisecond or more on a busy machine, and at
// 100 Mbit/s a 16 KiB step lasts 1.3 ms) gets that time back instead of losing it for good.
// An idle link therefore lets up to slack's worth of bytes through at once, as a real link's
// buffers do.
const slack = 25 * time.Millisecond

// Set makes the link steady at a rate in bytes per second (0: unlimited) and a round trip
// (0: none), replacing any schedule.
func (l *Link) Set(bytesPerSecond int64, rtt time.Duration) {
	l.replace([]Step{{Rate: max(bytesPerSecond, 0), RTT: max(rtt, 0)}}, true)
}

// SetSchedule makes the link follow steps: the first at 0, each At after the one before,
// nothing negative; otherwise it returns an error and leaves the link as it was. The
// schedule's clock starts when the link is first used after it was set (a request arrives, or
// one in flight reads its body or answers), not when it is set: a test can set it, load its
// page, and have the first upload meet the first step.
func (l *Link) SetSchedule(steps []Step) error {
	if err := checkSchedule(steps); err != nil {
		return err
	}
	l.replace(slices.Clone(steps), false)
	return nil
}

// replace puts steps in force from now on.
func (l *Link) replace(steps []Step, steady bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.ready()
	l.advance(now) // what the old link carried until now stays carried
	l.tl = timeline{steps: steps}
	if steady {
		l.tl.start = now
	}
	l.steady = steady
	l.metered.Store(!steady || steps[0].Rate > 0)
	l.held.Store(!steady || steps[0].RTT > 0)
	close(l.changed)
	l.changed = make(chan struct{})
}

// SetQueue sets how much of the link a request that the client gives up still delivers: the
// oldest of the bytes it had handed to the link (read ahead from its connection, or held in
// HTTP/2's window) go on arriving at the link's rate, up to d's worth of the rate in force when
// it was given up (in a blackout, the rate before it), and the rest are dropped. A real uplink
// sends what sat in its bottleneck queue and in the sender's kernel buffer after the sender has
// gone, about a second of it on consumer connections; requests that arrive meanwhile wait
// behind it, as their bytes would. 0 (or less): none, every byte not yet carried is dropped at
// once. The zero Link's queue is DefaultQueue. It applies to requests given up from now on.
func (l *Link) SetQueue(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue, l.queueSet = max(d, 0), true
}

// Queue returns the link's queue (SetQueue).
func (l *Link) Queue() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queueLen()
}

// queueLen is the queue in force, under l.mu.
func (l *Link) queueLen() time.Duration {
	if !l.queueSet {
		return DefaultQueue
	}
	return l.queue
}

// cut starts the queue of a request given up now and returns how many bytes it may still
// deliver: the queue's worth of the rate in force (or the last one before a blackout; all of
// them on an unlimited link). 0: none (no queue); the caller then does not call drainEnd.
func (l *Link) cut() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queueLen()
	if q <= 0 {
		return 0
	}
	rate := l.tl.rateBefore(l.ready())
	n := int64(math.MaxInt64)
	if rate > 0 {
		n = max(int64(float64(rate)*q.Seconds()), 1)
	}
	if l.drains == 0 {
		l.drained = make(chan struct{})
	}
	l.drains++
	return n
}

// drainEnd says that a queue started by cut has arrived, or was dropped.
func (l *Link) drainEnd() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drains--; l.drains == 0 {
		close(l.drained)
	}
}

// behind waits until no queue of a request given up is still arriving (cut), or until done is
// closed (then false).
func (l *Link) behind(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.drains == 0 {
			l.mu.Unlock()
			return true
		}
		drained := l.drained
		l.mu.Unlock()
		select {
		case <-drained:
		case <-done:
			return false
		}
	}
}

// Get returns the rate in bytes per second (0: unlimited) and the round trip in force now.
// (A schedule whose clock has not started is at its first step.)
func (l *Link) Get() (bytesPerSecond int64, rtt time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.tl.at(l.ready())
	return s.Rate, s.RTT
}

// Schedule returns the schedule set with SetSchedule, or nil for a steady link.
func (l *Link) Schedule() []Step {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.steady || l.tl.steps == nil {
		return nil
	}
	return slices.Clone(l.tl.steps)
}

// ready makes a zero Link usable and returns the time, under l.mu.
func (l *Link) ready() time.Time {
	now := time.Now()
	if l.tl.steps == nil {
		l.tl.steps, l.steady = []Step{{}}, true
		l.changed = make(chan struct{})
	}
	return now
}

// use is ready for the traffic's calls: it starts the schedule's clock if it has not started.
func (l *Link) use() time.Time {
	now := l.ready()
	if l.tl.start.IsZero() {
		l.advance(now)
		l.tl.start = now
	}
	return now
}

// advance brings served up to now, under l.mu.
func (l *Link) advance(now time.Time) {
	if l.at.IsZero() {
		l.at = now
	}
	if !now.After(l.at) {
		return
	}
	limit := float64(l.booked)
	if s := l.tl.at(now); !s.Blackout && s.Rate > 0 {
		limit += float64(s.Rate) * slack.Seconds()
	}
	l.served = max(l.served, min(l.served+l.tl.capacity(l.at, now), limit))
	l.at = now
}

// book books n bytes on the link and returns the count the link must carry for them to arrive.
func (l *Link) book(n int) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advance(l.use())
	l.booked += int64(n)
	return l.booked
}

// carry waits until the link has carried the bytes booked up to target and is outside a
// blackout, or until done is closed. (Bytes carried on an idle link's slack, or read from the
// socket by a read begun before a blackout, do not come through during it.)
func (l *Link) carry(target int64, done <-chan struct{}) {
	for {
		l.mu.Lock()
		now := l.use()
		l.advance(now)
		var due time.Time
		var ok bool
		switch {
		case l.served < float64(target):
			due, ok = l.tl.carried(float64(target)-l.served, now)
		case l.tl.at(now).Blackout:
			due, ok = l.tl.open(now)
		default:
			l.mu.Unlock()
			return
		}
		changed := l.changed
		l.mu.Unlock()
		if !wait(until(due, ok, now), changed, done) {
			return
		}
	}
}

// open waits until the link is outside a blackout, or until done is closed (then false), and
// returns the step in force.
func (l *Link) open(done <-chan struct{}) (Step, bool) {
	for {
		l.mu.Lock()
		now := l.use()
		s := l.tl.at(now)
		if !s.Blackout {
			l.mu.Unlock()
			return s, true
		}
		end, ok := l.tl.open(now)
		changed := l.changed
		l.mu.Unlock()
		if !wait(until(end, ok, now), changed, done) {
			return s, false
		}
	}
}

// until returns how long from now to t; -1 (for ever) when ok is false.
func until(t time.Time, ok bool, now time.Time) time.Duration {
	if !ok {
		return -1
	}
	return max(t.Sub(now), 0)
}

// wait waits d (for ever when negative), or until changed is closed; it returns false, at
// once, when done is closed.
func wait(d time.Duration, changed, done <-chan struct{}) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
	case <-changed:
	case <-done:
		return false
	}
	return true
}
