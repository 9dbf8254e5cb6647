package core

import "strconv"

// Offline spells and stalled requests (docs/api.md, "Offline, reloads and other tabs";
// stallTimeoutMs).
//
// A request that fails while the device is offline is not a server's failure: retrying it on
// the backoff schedule would spend the whole retry budget in about half a minute (docs/protocol.md
// section 5) while a laptop sleeps or a train is in a tunnel. The transport says so with an
// *OfflineError; the upload then waits in StateOffline for Options.WaitOnline, counting no
// retry, and asks the server what it holds (section 4) before it goes on.
//
// A request whose connection stalls (the server stops reading, a half-dead mobile link)
// would hang for ever: fetch has no timeout of its own. Each request carries a Timeout,
// generous against what the rate measured so far predicts; past it, the transport aborts it
// and core treats it as a lost connection (status query, then on from the server's offset).

// OfflineError is a request that failed while the device was offline.
type OfflineError struct{ Err error }

func (e *OfflineError) Error() string {
	return "the device is offline (" + e.Err.Error() + ")"
}

// Code returns "network_error": should it end an upload (it does not while WaitOnline is
// set), it is one.
func (e *OfflineError) Code() string { return CodeNetwork }

func (e *OfflineError) Unwrap() error { return e.Err }

// StallError is a request given up after Request.Timeout without an answer, or, where the
// transport counted its body (Request.OnSent), once its bytes stopped moving (Counted).
type StallError struct {
	After   Duration
	Counted bool
	Err     error
}

func (e *StallError) Error() string {
	if e.Counted {
		return "its bytes stopped moving, no answer in " + formatSeconds(e.After) + " (the connection stalled)"
	}
	return "no answer in " + formatSeconds(e.After) + " (the connection stalled)"
}

// Code returns "network_error": a stalled request is a lost connection.
func (e *StallError) Code() string { return CodeNetwork }

func (e *StallError) Unwrap() error { return e.Err }

// isOffline reports whether err is or wraps an *OfflineError (a plain walk: errors.As would
// link reflect).
func isOffline(err error) bool {
	for e := err; e != nil; e = unwrap(e) {
		if _, ok := e.(*OfflineError); ok {
			return true
		}
	}
	return false
}

func unwrap(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}

// waitOnline holds the upload in StateOffline until the device is online again, then puts it
// back in StateUploading (a request to send again), or in StateStarting where the backend is
// to be asked again (askBackend sets that). No retry is counted and no retry event fired: the
// time offline is nobody's failure.
func (u *Upload) waitOnline(ctx Context, then State) error {
	u.setState(StateOffline)
	if err := u.o.WaitOnline(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	u.prog.stood(u.o.Clock.Now()) // the time offline is not the link's
	u.setState(then)
	return nil
}

// Stall bounds: a request is given up when unanswered for stallFactor times the time its
// body should take at the rate measured so far, plus stallFloor (a server's answer can take
// a while on its own: a 300 MiB object's final answer, a busy host). A link many times slower
// than measured is slow, not dead: where progress comes only with answers, a chunk sized to
// the link is cut short well before (lateBound in resumable.go), and where the transport
// counts the body, bytes that stop moving for countedQuiet make the stall (pacer.stalled).
// Before any rate is measured a chunk is allowed stallFirst, and a request without a body
// stallFloor.
const (
	stallFactor  = 10
	stallFloor   = 30 * Second
	stallFirst   = 120 * Second
	countedQuiet = 10 * Second
)

// The late bound of a chunk sized to the link (lateBound in resumable.go): its expected time
// plus cutMargin or a quarter of it, whichever is more, and at least cutFloor. A single request
// that uploadType "auto" chose (singleLate in upload.go) is late at its expected time plus
// lateMargin twice over or as much again.
const (
	cutMargin  = 500 * Millisecond
	cutFloor   = 1500 * Millisecond
	lateMargin = Second
)

// LateError is a request cut short because its answer was late: the link has become slower
// than measured (docs/protocol.md section 8). It never ends an upload: after a chunk, the session
// is asked what it holds and the upload goes on from there; after a single request, the upload
// goes on as a resumable one. Reported with the request (OnRequest).
type LateError struct {
	After Duration
	Err   error
}

func (e *LateError) Error() string {
	return "no answer in " + formatSeconds(e.After) + ": the link is slower than measured, so the request was cut short"
}

// Code returns "network_error".
func (e *LateError) Code() string { return CodeNetwork }

func (e *LateError) Unwrap() error { return e.Err }

// timeoutFor returns the Timeout of a request with a body of n bytes (docs/protocol.md section 4:
// a request given up is a lost connection, followed by a status query).
func (u *Upload) timeoutFor(n int64) Duration {
	switch {
	case u.o.StallTimeout < 0:
		return 0
	case u.o.StallTimeout > 0:
		return u.o.StallTimeout
	case n <= 0:
		return stallFloor
	}
	rate := u.prog.p.BytesPerSecond
	if u.sizer != nil && u.sizer.rate > 0 {
		rate = u.sizer.rate
	}
	if rate <= 0 {
		if n < 1<<20 {
			return stallFloor
		}
		return stallFirst
	}
	return Duration(float64(Second)*float64(n)/rate)*stallFactor + stallFloor
}

// formatSeconds writes d as seconds with one decimal ("1.5 s").
func formatSeconds(d Duration) string {
	tenths := int64(d / (Second / 10))
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + " s"
}
