package netlink

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Step is one step of a link's schedule: from At after the schedule's start until the next
// step's At, the link carries Rate bytes per second (0: unlimited) and holds every answer for
// RTT; or, in a Blackout, carries nothing at all (Rate and RTT are not used then). The last
// step holds for ever.
type Step struct {
	At       time.Duration
	Rate     int64
	RTT      time.Duration
	Blackout bool
}

// checkSchedule says what is wrong with a schedule, if anything.
func checkSchedule(steps []Step) error {
	if len(steps) == 0 {
		return errors.New("netlink: a schedule needs at least one step")
	}
	if steps[0].At != 0 {
		return fmt.Errorf("netlink: the first step is at %v, want 0 (the schedule's start)", steps[0].At)
	}
	for i, s := range steps {
		if s.At < 0 || s.Rate < 0 || s.RTT < 0 {
			return fmt.Errorf("netlink: step %d has a negative at, rate or round trip (%v, %d, %v)", i, s.At, s.Rate, s.RTT)
		}
		if i > 0 && s.At <= steps[i-1].At {
			return fmt.Errorf("netlink: step %d at %v does not come after step %d at %v", i, s.At, i-1, steps[i-1].At)
		}
	}
	return nil
}

// timeline is a schedule laid out in time: step i holds from start+steps[i].At until the next
// step's start. Until start is set (the clock has not started) the first step holds.
type timeline struct {
	steps []Step // at least one
	start time.Time
}

// index returns the index of the step in force at t.
func (tl *timeline) index(t time.Time) int {
	if tl.start.IsZero() {
		return 0
	}
	d := t.Sub(tl.start)
	i := 0
	for i+1 < len(tl.steps) && tl.steps[i+1].At <= d {
		i++
	}
	return i
}

// end returns when step i gives way to the next one; false: never (the last step, or the
// clock has not started).
func (tl *timeline) end(i int) (time.Time, bool) {
	if tl.start.IsZero() || i+1 >= len(tl.steps) {
		return time.Time{}, false
	}
	return tl.start.Add(tl.steps[i+1].At), true
}

// at returns the step in force at t.
func (tl *timeline) at(t time.Time) Step { return tl.steps[tl.index(t)] }

// rateBefore returns the rate of the step in force at t or, in a blackout, of the last step
// before it that carried bytes (else the first after it); 0: unlimited.
func (tl *timeline) rateBefore(t time.Time) int64 {
	i := tl.index(t)
	for j := i; j >= 0; j-- {
		if !tl.steps[j].Blackout {
			return tl.steps[j].Rate
		}
	}
	for j := i + 1; j < len(tl.steps); j++ {
		if !tl.steps[j].Blackout {
			return tl.steps[j].Rate
		}
	}
	return 0
}

// capacity returns how many bytes the link can carry from from to to: +Inf when an unlimited
// step falls in between.
func (tl *timeline) capacity(from, to time.Time) float64 {
	var sum float64
	for t := from; t.Before(to); {
		i := tl.index(t)
		e, ok := tl.end(i)
		if !ok || e.After(to) {
			e = to
		}
		switch s := tl.steps[i]; {
		case s.Blackout:
		case s.Rate == 0:
			return math.Inf(1)
		default:
			sum += float64(s.Rate) * e.Sub(t).Seconds()
		}
		t = e
	}
	return sum
}

// carried returns when the link, starting at from, has carried need more bytes; false: never
// (a blackout that lasts for ever).
func (tl *timeline) carried(need float64, from time.Time) (time.Time, bool) {
	for t := from; ; {
		i := tl.index(t)
		e, ok := tl.end(i)
		switch s := tl.steps[i]; {
		case s.Blackout:
		case s.Rate == 0:
			return t, true
		default:
			d := time.Duration(math.Ceil(need / float64(s.Rate) * float64(time.Second)))
			if !ok || t.Add(d).Before(e) {
				return t.Add(d), true
			}
			need -= float64(s.Rate) * e.Sub(t).Seconds()
		}
		if !ok {
			return time.Time{}, false
		}
		t = e
	}
}

// open returns the first moment from t on that is outside a blackout; false: never.
func (tl *timeline) open(t time.Time) (time.Time, bool) {
	for {
		i := tl.index(t)
		if !tl.steps[i].Blackout {
			return t, true
		}
		e, ok := tl.end(i)
		if !ok {
			return time.Time{}, false
		}
		t = e
	}
}
