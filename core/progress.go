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

// progressState keeps Progress between answers. Only the driver loop touches it. The rate
// is that of the bytes the requests carried (those sent again after a short Range or a lost
// session count: the link carried them), over the time the upload was under way: a pause or
// an offline spell does not count, nor do bytes the server held before this run (an adopted
// session, a resume after a reload), which no request of it carried.
type progressState struct {
	p       Progress
	lastT   Duration // Clock.Now at the last answer (or the end of a standstill)
	carried int64    // bytes carried since lastT
	flight  int64    // bytes of the request under way already counted (sending)
}

func (s *progressState) start(now Duration, total int64) {
	s.p.Total = max(total, 0)
	s.lastT = now
}

// newRequest starts the count of a request's bytes taken by the network (sending).
func (s *progressState) newRequest() { s.flight = 0 }

// sending records that n bytes of the body of the request under way, which starts at byte
// start of the upload, count as sent (Request.OnSent, paced: resumable.go): Loaded moves to
// start+n if that is further, and the rate takes in what was not counted yet. The server
// confirms nothing of them: Confirmed waits for its answer. It reports whether Loaded moved.
func (s *progressState) sending(now Duration, start, n int64) bool {
	if n <= s.flight {
		return false
	}
	before := s.p.Loaded
	s.advance(now, n-s.flight, start+n)
	s.flight = n
	return s.p.Loaded != before
}

// moved records the answer to a request that carried n bytes and left the upload at end:
// Loaded becomes end if that is further (it never goes back, even when a lost session or a
// server that kept less makes the same bytes go again), and the rate takes in the n bytes,
// but for those already counted while it was under way (sending).
func (s *progressState) moved(now Duration, n, end int64) {
	n, s.flight = max(n-s.flight, 0), 0
	s.advance(now, n, end)
}

func (s *progressState) advance(now Duration, n, end int64) {
	s.p.Loaded = max(s.p.Loaded, end)
	s.carried += n
	if dt := now - s.lastT; dt > 0 {
		inst := float64(s.carried) / dt.Seconds()
		if s.p.BytesPerSecond == 0 {
			s.p.BytesPerSecond = inst
		} else {
			a := 1 - math.Exp(-float64(dt)/float64(rateWindow))
			s.p.BytesPerSecond += a * (inst - s.p.BytesPerSecond)
		}
		s.lastT, s.carried = now, 0
	}
}

// stood records that the upload stood still until now (paused, or waiting for the device to
// be online): that time is not the link's, and the rate leaves it out.
func (s *progressState) stood(now Duration) {
	s.lastT, s.carried = now, 0
}

// held records that the server holds the bytes up to end, which this run did not send (a
// session adopted or resumed): Loaded moves there, the rate does not take them in.
func (s *progressState) held(end int64) {
	s.p.Loaded = max(s.p.Loaded, end)
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
