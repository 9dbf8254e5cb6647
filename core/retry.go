package core

import (
	"math/rand/v2"
)

// RetryPolicy says how failures are retried (docs/protocol.md section 5). The zero value retries
// nothing; [DefaultRetryPolicy] is the protocol's own figures.
type RetryPolicy struct {
	// Retries is how many times a lost connection or a 500, 502, 503 or 504 is retried, with
	// exponential backoff. The count starts again whenever the server confirms new bytes, so a
	// long upload survives many separate bad moments but not one that lasts.
	Retries int
	// InitialDelay is the first wait; each further one doubles it: 1 s, 2 s, 4 s, 8 s, 16 s.
	InitialDelay Duration
	// MaxDelay caps a single wait, jitter included. At most one minute.
	MaxDelay Duration
	// Jitter is the upper bound of the fresh random time added to every backoff wait.
	Jitter Duration
	// ThrottleRetries is how many 429 and 408 answers are retried, each after the answer's
	// Retry-After (or the backoff wait where it has none), capped at MaxDelay.
	ThrottleRetries int
	// NewSessions is how many times a session lost with 404 or 410 is replaced by a new one
	// that uploads from byte 0.
	NewSessions int
	// Rand returns a number in [0, 1) for the jitter; nil means math/rand/v2.
	Rand func() float64
}

// MaxSingleDelay is the longest MaxDelay allowed: "cap a single wait at a sensible bound,
// under one minute" (docs/protocol.md section 5).
const MaxSingleDelay = 60 * Second

// DefaultRetryPolicy returns the protocol's figures: 5 retries waiting 2^n s plus up to 1 s,
// a 32 s cap, 10 throttled retries, 3 new sessions.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Retries:         5,
		InitialDelay:    Second,
		MaxDelay:        32 * Second,
		Jitter:          Second,
		ThrottleRetries: 10,
		NewSessions:     3,
	}
}

// MaxRetries bounds every count of a RetryPolicy: more would keep a failing upload going for
// hours.
const MaxRetries = 1000

func (p *RetryPolicy) validate() error {
	switch {
	case p.Retries < 0 || p.ThrottleRetries < 0 || p.NewSessions < 0:
		return &ArgumentError{Field: "retry", Reason: "counts must not be negative"}
	case p.Retries > MaxRetries || p.ThrottleRetries > MaxRetries || p.NewSessions > MaxRetries:
		return &ArgumentError{Field: "retry", Reason: "counts must not exceed 1000"}
	case p.InitialDelay < 0 || p.Jitter < 0 || p.MaxDelay < 0:
		return &ArgumentError{Field: "retry", Reason: "delays must not be negative"}
	case p.MaxDelay > MaxSingleDelay || p.InitialDelay > MaxSingleDelay || p.Jitter > MaxSingleDelay:
		return &ArgumentError{Field: "retry", Reason: "a single wait (maxDelay, initialDelay, jitter) must stay under one minute"}
	}
	return nil
}

// backoff returns the wait before retry n (n from 0): InitialDelay·2^n plus a fresh random
// part of Jitter, never more than MaxDelay (docs/protocol.md section 5).
func (p *RetryPolicy) backoff(n int) Duration {
	d := p.MaxDelay
	if n < 31 && p.InitialDelay <= p.MaxDelay>>n {
		d = p.InitialDelay << n
	}
	if p.Jitter > 0 {
		r := p.Rand
		if r == nil {
			r = rand.Float64
		}
		d += Duration(r() * float64(p.Jitter))
	}
	return min(d, p.MaxDelay)
}

// verdict is what an answer (or its absence) means for the request that got it.
type verdict int

const (
	vAnswer   verdict = iota // an answer to interpret: 2xx, 308
	vBackoff                 // lost connection or 500/502/503/504: retry after a backoff wait
	vThrottle                // 429 or 408: retry after Retry-After
	vLost                    // 404 or 410 on a session URI: start a new session
	vAuth                    // 401 on a request that carries the caller's headers
	vFail                    // anything else: no retry can fix it
	vFinal                   // no answer, and the transport's error says why it is final
	vHidden                  // a 3xx the transport could not read: ask the session at once
	vLate                    // cut short, its answer late: ask the session (a single request: go resumable)
)

// classify decides what an exchange means (docs/protocol.md section 5). err != nil means no answer
// arrived. onSession says the request went to a session URI, where 404 and 410 mean the
// session is gone rather than a plain "not found".
func classify(resp *Response, err error, onSession bool) verdict {
	if _, ok := Find[*HiddenRedirectError](err); ok && onSession {
		return vHidden
	}
	if _, ok := err.(*LateError); ok {
		return vLate
	}
	switch {
	case err != nil && Code(err) != CodeNetwork && Code(err) != CodeAborted:
		return vFinal // the transport knows the failure is final (a protocol error, say)
	case err != nil:
		return vBackoff // a lost connection: retry (resumable: after a status query)
	}
	switch s := resp.Status; {
	case s >= 200 && s < 300, s == 308:
		return vAnswer
	case s == 500, s == 502, s == 503, s == 504:
		return vBackoff
	case s == 429, s == 408:
		return vThrottle
	case (s == 404 || s == 410) && onSession:
		return vLost
	case s == 401:
		return vAuth
	}
	return vFail
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP-date (RFC 9110 section
// 10.2.3), a date compared with now (Unix seconds). ok is false when it is absent or
// unreadable. Either way no wait comes out longer than MaxSingleDelay.
func retryAfter(h string, now int64) (Duration, bool) {
	h = trimSpace(h)
	n, ok := parseDecimal(h)
	if !ok {
		var t int64
		if t, ok = parseHTTPDate(h); ok {
			n = max(t-now, 0)
		}
	}
	if !ok {
		return 0, false
	}
	return Duration(min(n, int64(MaxSingleDelay/Second))) * Second, true
}

// parseHTTPDate reads an IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 section
// 5.6.7), the form servers send: fixed width, so it is read by position. (time.Parse costs
// the wasm about 100 KB.) It returns the date's Unix time.
func parseHTTPDate(s string) (int64, bool) {
	const layout = "Sun, 06 Nov 1994 08:49:37 GMT"
	if len(s) != len(layout) || s[3:5] != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
		s[19] != ':' || s[22] != ':' || s[25:] != " GMT" {
		return 0, false
	}
	month := index("JanFebMarAprMayJunJulAugSepOctNovDec", s[8:11])
	day, ok1 := parseDecimal(s[5:7])
	year, ok2 := parseDecimal(s[12:16])
	hh, ok3 := parseDecimal(s[17:19])
	mm, ok4 := parseDecimal(s[20:22])
	ss, ok5 := parseDecimal(s[23:25])
	if month < 0 || month%3 != 0 || !(ok1 && ok2 && ok3 && ok4 && ok5) || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 {
		return 0, false
	}
	return unixSeconds(year, int64(month/3+1), day, hh, mm, ss), true
}

// unixSeconds returns the Unix time of a UTC date and time (the days-from-civil algorithm of
// the proleptic Gregorian calendar). time.Date would do it too, but it links the time zone
// machinery into the wasm.
func unixSeconds(y, m, d, hh, mm, ss int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400 // y is never negative here: four digits
	yoe := y - era*400
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return days*86400 + hh*3600 + mm*60 + ss
}
