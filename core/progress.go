package core

import "math"

// Progress is the state of an upload as a progress bar shows it (docs/api.md "Progress").
type Progress struct {
	Loaded         int64   // bytes sent so far; never goes backwards
	Total          int64   // the size, 0 where unknown
	Confirmed      int64   // bytes the server confirmed with its Range answer
	BytesPerSecond float64 // smoothed rate
	SecondsLeft    float64 // estimate; negative where there is none
}

// rateWindow is the time constant of the smoothed rate: a change in speed shows fully after
// a few seconds, a single slow chunk does not make the estimate jump.
const rateWindow = 3 * Second

// progressState keeps Progress between answers. Only the driver loop touches it.
type progressState struct {
	p        Progress
	lastT    Duration // Clock.Now
	lastSent int64
}

func (s *progressState) start(now Duration, total int64) {
	s.p.Total = max(total, 0)
	s.lastT = now
}

// sent records that the bytes up to end have been sent (and answered): Loaded only grows,
// even when a lost session or a server that kept less makes the same bytes go again.
func (s *progressState) sent(now Duration, end int64) {
	if end > s.p.Loaded {
		s.p.Loaded = end
	}
	if dt := now - s.lastT; dt > 0 {
		inst := float64(s.p.Loaded-s.lastSent) / dt.Seconds()
		if s.p.BytesPerSecond == 0 {
			s.p.BytesPerSecond = inst
		} else {
			a := 1 - math.Exp(-float64(dt)/float64(rateWindow))
			s.p.BytesPerSecond += a * (inst - s.p.BytesPerSecond)
		}
		s.lastT, s.lastSent = now, s.p.Loaded
	}
}

// snapshot returns the progress with the time left worked out.
func (s *progressState) snapshot() Progress {
	p := s.p
	p.SecondsLeft = -1
	if p.Total > 0 && p.BytesPerSecond > 0 {
		p.SecondsLeft = float64(p.Total-p.Loaded) / p.BytesPerSecond
	}
	return p
}
