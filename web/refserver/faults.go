package refserver

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Fault actions, the values of Rule.Action.
const (
	ActionStatus       = "status"       // answer Status (default 503) without storing
	ActionClose        = "close"        // read AfterBytes of the body, then drop the connection unanswered
	ActionKeep         = "keep"         // store only the first Keep bytes of a chunk, answer 308 accordingly
	ActionExpire       = "expire"       // 404 and forget the session
	ActionGone         = "gone"         // 410 and forget the session
	ActionUnauthorized = "unauthorized" // 401
	ActionRateLimit    = "ratelimit"    // 429 with Retry-After: RetryAfter
	ActionRedirect     = "redirect"     // 308 with a Location (to /redirected/…) and a Range: what fetch must not follow
	ActionStall        = "stall"        // hold the request unanswered (AfterBytes read at once, the rest drained) until the client gives up
	ActionCutBody      = "cutbody"      // process the request, but send the first half of its answer's body only (a whole answer, its JSON cut off)
	ActionCorrupt      = "corrupt"      // process the request with one byte of its body changed (AfterBytes: which; 0: the middle one)
)

// Rule is one scripted fault. Its JSON form is the one of POST /_ref/faults.
type Rule struct {
	// On is the request kind it matches: KindStart, KindChunk, KindQuery,
	// KindMedia, KindMultipart or KindAny. A keep rule matches chunks only.
	On     string `json:"on"`
	Action string `json:"action"`
	// Status is the status of ActionStatus (default 503).
	Status int `json:"status,omitempty"`
	// Times is how many requests the rule fires on: 0 means once, a
	// negative number means every matching request.
	Times int `json:"times,omitempty"`
	// Skip lets the first Skip matching requests through.
	Skip int `json:"skip,omitempty"`
	// AfterBytes is how many body bytes ActionClose reads before dropping
	// the connection. When the body ends within them, the request is
	// processed (stored) and only the answer is lost. ActionStall reads as
	// many, drains the rest and holds the request unanswered. ActionCorrupt
	// changes the byte at this offset of the body (0: the body's middle byte).
	AfterBytes int64 `json:"afterBytes,omitempty"`
	// Keep is how many bytes of the chunk ActionKeep stores.
	Keep int64 `json:"keep,omitempty"`
	// RetryAfter is the Retry-After, in seconds, of ActionRateLimit.
	RetryAfter int `json:"retryAfter,omitempty"`
	// To is the origin ActionRedirect points to ("http://host:port"); empty: this server's.
	To string `json:"to,omitempty"`
	// Message and Reason are the error's in ActionStatus's JSON answer (Google's form:
	// error.message, error.errors[0].reason); empty: "injected fault" and the status's reason.
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Random injects recoverable faults into a Rate share of the requests no
// rule fired on, drawn from a generator seeded with Seed: the same seed and
// request sequence give the same faults. The faults are 500/502/503/504,
// connection closed after a random part of the body, part of a chunk kept,
// 429 with Retry-After 0 or 1, and (rarely, chunks and queries only) an
// expired session.
type Random struct {
	Seed int64   `json:"seed"`
	Rate float64 `json:"rate"`
	// EveryUpload makes every upload meet a fault early, whatever Rate draws: the first chunk
	// of each session (told apart by its upload_id) and the first try of each media or
	// multipart upload (by its URL) get one of the random faults of their kind, never an
	// expired session. At a low Rate some seeds draw no fault for a whole batch of uploads;
	// with EveryUpload each one still shows a retry or a resumed chunk. (An empty resumable
	// upload sends no chunk, only a status query: it gets none.)
	EveryUpload bool `json:"everyUpload,omitempty"`
}

// Faults is a whole fault script, the body of POST /_ref/faults.
type Faults struct {
	Rules  []Rule  `json:"rules"`
	Random *Random `json:"random,omitempty"`
}

// fault is one fault to inject into one request.
type fault struct {
	action     string
	status     int
	afterBytes int64
	keep       int64
	retryAfter int
	to         string
	message    string
	reason     string
	random     bool
}

func (f fault) String() string {
	var s string
	switch f.action {
	case ActionStatus:
		s = "status " + strconv.Itoa(f.status)
	case ActionClose:
		s = "close after " + strconv.FormatInt(f.afterBytes, 10) + " bytes"
	case ActionKeep:
		s = "keep " + strconv.FormatInt(f.keep, 10)
	case ActionRateLimit:
		s = "ratelimit retry-after " + strconv.Itoa(f.retryAfter)
	default:
		s = f.action
	}
	if f.random {
		s = "random " + s
	}
	return s
}

type ruleState struct {
	Rule
	skipLeft  int
	timesLeft int // negative: always
}

// faultInjector is the scriptable fault injector in front of the protocol
// handler.
type faultInjector struct {
	next   http.Handler
	forget func(id string)

	mu     sync.Mutex
	script Faults
	rules  []*ruleState
	rng    *rand.Rand // nil without random mode
	rate   float64
	every  bool // Random.EveryUpload
	// met holds the uploads that had their Random.EveryUpload fault: sessions by upload_id
	// (kept: their later chunks get none), media and multipart uploads by URL (dropped once a
	// try of theirs goes through, so that the next upload to the same URL gets one again).
	met map[string]bool
}

func newFaultInjector(next http.Handler, forget func(id string)) *faultInjector {
	return &faultInjector{next: next, forget: forget}
}

func validRule(r Rule) error {
	switch r.On {
	case KindStart, KindChunk, KindQuery, KindMedia, KindMultipart, KindAny:
	default:
		return fmt.Errorf("refserver: unknown request kind %q", r.On)
	}
	switch r.Action {
	case ActionStatus:
		if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
			return fmt.Errorf("refserver: fault status %d is not 4xx or 5xx", r.Status)
		}
	case ActionClose, ActionKeep, ActionExpire, ActionGone, ActionUnauthorized, ActionRateLimit, ActionRedirect, ActionStall, ActionCutBody, ActionCorrupt:
	default:
		return fmt.Errorf("refserver: unknown fault action %q", r.Action)
	}
	if r.Skip < 0 || r.AfterBytes < 0 || r.Keep < 0 || r.RetryAfter < 0 {
		return fmt.Errorf("refserver: negative skip, afterBytes, keep or retryAfter in rule %+v", r)
	}
	return nil
}

func (f *faultInjector) set(script Faults) error {
	for _, r := range script.Rules {
		if err := validRule(r); err != nil {
			return err
		}
	}
	if rd := script.Random; rd != nil && (rd.Rate < 0 || rd.Rate > 1) {
		return fmt.Errorf("refserver: random rate %v is not within 0..1", rd.Rate)
	}
	rules := make([]*ruleState, len(script.Rules))
	for i, r := range script.Rules {
		times := r.Times
		if times == 0 {
			times = 1
		}
		rules[i] = &ruleState{Rule: r, skipLeft: r.Skip, timesLeft: times}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = Faults{Rules: append([]Rule{}, script.Rules...)}
	f.rules = rules
	f.rng, f.every, f.met = nil, false, nil
	if rd := script.Random; rd != nil {
		cp := *rd
		f.script.Random = &cp
		f.rng = rand.New(rand.NewPCG(uint64(rd.Seed), 0x9e3779b97f4a7c15))
		f.rate = rd.Rate
		f.every, f.met = rd.EveryUpload, map[string]bool{}
	}
	return nil
}

func (f *faultInjector) clear() { _ = f.set(Faults{}) }

func (f *faultInjector) get() Faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := Faults{Rules: append([]Rule{}, f.script.Rules...)}
	if f.script.Random != nil {
		cp := *f.script.Random
		out.Random = &cp
	}
	return out
}

// uploadKey names the upload a request belongs to, for Random.EveryUpload: a session's chunks
// by its upload_id, a media or multipart upload's tries by their URL; "" for the other kinds.
func uploadKey(kind string, r *http.Request) string {
	switch kind {
	case KindChunk:
		return "session " + r.URL.Query().Get("upload_id")
	case KindMedia, KindMultipart:
		return "single " + r.URL.RequestURI()
	}
	return ""
}

// pick decides the fault for a request of the given kind, body length
// (-1 when unknown) and upload (uploadKey), counting skips and times.
func (f *faultInjector) pick(kind string, length int64, upload string) (fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// The random draws come first and are the same number for every request,
	// so that a seed gives the same faults for the same request sequence
	// whatever the rules did.
	var u float64
	var c int
	var p uint64
	if f.rng != nil {
		u, c, p = f.rng.Float64(), f.rng.IntN(100), f.rng.Uint64()
	}
	for _, rs := range f.rules {
		if rs.timesLeft == 0 || (rs.On != KindAny && rs.On != kind) {
			continue
		}
		if rs.Action == ActionKeep && kind != KindChunk {
			continue
		}
		if rs.skipLeft > 0 {
			rs.skipLeft--
			continue
		}
		if rs.timesLeft > 0 {
			rs.timesLeft--
		}
		ft := fault{action: rs.Action, status: rs.Status, afterBytes: rs.AfterBytes, keep: rs.Keep, retryAfter: rs.RetryAfter, to: rs.To, message: rs.Message, reason: rs.Reason}
		if ft.action == ActionStatus && ft.status == 0 {
			ft.status = http.StatusServiceUnavailable
		}
		return ft, true
	}
	if f.rng == nil {
		return fault{}, false
	}
	forced := false
	if f.every && upload != "" {
		switch {
		case !f.met[upload]:
			forced = true
			if len(f.met) >= 100_000 {
				clear(f.met) // a demo left running for days: forget rather than grow
			}
			f.met[upload] = true
		case u >= f.rate && kind != KindChunk:
			// A media or multipart try that goes through: that upload is over, and the next
			// one to the same URL is another upload.
			delete(f.met, upload)
		}
	}
	if u >= f.rate && !forced {
		return fault{}, false
	}
	if forced {
		c %= 95 // randomFault's c from 95 on is an expired session: never forced
	}
	return randomFault(kind, length, c, p)
}

// randomFault maps the draws c (0..99) and p to a recoverable fault
// (docs/protocol.md sections 4-5: lost connections, 5xx, a short Range, 429, and
// rarely an expired session).
func randomFault(kind string, length int64, c int, p uint64) (fault, bool) {
	status := fault{action: ActionStatus, status: []int{500, 502, 503, 504}[p%4], random: true}
	closeF := fault{action: ActionClose, random: true}
	if length > 0 {
		closeF.afterBytes = int64(p % uint64(length+1))
	}
	rate := fault{action: ActionRateLimit, retryAfter: int(p % 2), random: true}
	expire := fault{action: ActionExpire, random: true}
	switch kind {
	case KindChunk:
		switch {
		case c < 30:
			return status, true
		case c < 55:
			return closeF, true
		case c < 80:
			if length <= 0 {
				return status, true
			}
			return fault{action: ActionKeep, keep: int64(p % uint64(length)), random: true}, true
		case c < 95:
			return rate, true
		default:
			return expire, true
		}
	case KindQuery:
		switch {
		case c < 40:
			return status, true
		case c < 65:
			return closeF, true
		case c < 95:
			return rate, true
		default:
			return expire, true
		}
	case KindStart, KindMedia, KindMultipart:
		switch {
		case c < 45:
			return status, true
		case c < 75:
			return closeF, true
		default:
			return rate, true
		}
	}
	return fault{}, false
}

func (f *faultInjector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind := requestKind(r)
	ft, ok := f.pick(kind, r.ContentLength, uploadKey(kind, r))
	if !ok {
		f.next.ServeHTTP(w, r)
		return
	}
	entryFrom(r.Context()).setFault(ft.String())
	switch ft.action {
	case ActionClose:
		f.closeAfter(w, r, ft.afterBytes)
		return
	case ActionStall:
		// A stalled connection (a server that stops reading, a half-dead mobile link): the
		// request hangs until the client gives up on it. Nothing is stored.
		// (The rest of the body is drained, slowly or not, so that the server notices the
		// client hanging up: Go's server watches the connection only once the body is read.)
		io.CopyN(io.Discard, r.Body, ft.afterBytes)
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Minute): // never for ever
		}
		return
	case ActionKeep:
		f.next.ServeHTTP(w, r.WithContext(withKeep(r.Context(), ft.keep)))
		return
	case ActionCorrupt:
		// The bytes that arrive differ from those sent, by one: a faulty link, proxy or
		// memory on the way. Only the hashes a client states can tell (docs/protocol.md
		// section 9): without them the object is stored as received.
		at := ft.afterBytes
		if at == 0 {
			at = max(r.ContentLength, 0) / 2
		}
		r2 := r.Clone(r.Context())
		r2.Body = &flipReader{ReadCloser: r.Body, at: at}
		f.next.ServeHTTP(w, r2)
		return
	case ActionCutBody:
		// The request is processed (a final chunk completes the object); its answer goes out
		// whole as HTTP, but with half its body: JSON a proxy or a broken server cut off.
		cut := &bodyBuffer{header: http.Header{}}
		f.next.ServeHTTP(cut, r)
		for k, v := range cut.header {
			w.Header()[k] = v
		}
		body := cut.body.Bytes()[:cut.body.Len()/2]
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(cut.status)
		w.Write(body)
		return
	}
	// The other faults answer without storing; read the body first so the
	// client sees the answer rather than a reset connection.
	io.Copy(io.Discard, r.Body)
	switch ft.action {
	case ActionStatus:
		msg := ft.message
		if msg == "" {
			msg = "injected fault"
		}
		writeGoogleError(w, ft.status, msg, ft.reason)
	case ActionExpire:
		f.forget(r.URL.Query().Get("upload_id"))
		writeError(w, http.StatusNotFound, "injected fault: session expired") // docs/protocol.md section 5
	case ActionGone:
		f.forget(r.URL.Query().Get("upload_id"))
		writeError(w, http.StatusGone, "injected fault: session failed") // docs/protocol.md section 5
	case ActionUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="refserver"`)
		writeError(w, http.StatusUnauthorized, "injected fault: unauthorized")
	case ActionRateLimit:
		w.Header().Set("Retry-After", strconv.Itoa(ft.retryAfter))
		writeError(w, http.StatusTooManyRequests, "injected fault: rate limited")
	case ActionRedirect:
		// A 308 that carries a Location: a browser in redirect mode "follow" would re-send
		// the request there and never show the Range (docs/protocol.md section 6). The target,
		// /redirected/…, is an ordinary unknown path: 404, and logged.
		w.Header().Set("Location", ft.to+"/redirected"+r.URL.RequestURI())
		w.Header().Set("Range", "bytes=0-0")
		w.WriteHeader(http.StatusPermanentRedirect)
	}
}

// closeAfter reads k bytes of the body, then drops the connection without an
// answer (docs/protocol.md section 4: a request that fails without an answer).
// When the body ended within k bytes, the request is processed first: the
// connection broke after the last byte but before the answer.
func (f *faultInjector) closeAfter(w http.ResponseWriter, r *http.Request, k int64) {
	got, err := io.ReadAll(io.LimitReader(r.Body, k))
	whole := false
	if err == nil {
		if int64(len(got)) < k {
			whole = true
		} else {
			var one [1]byte
			n, err := io.ReadFull(r.Body, one[:])
			whole = n == 0 && err == io.EOF
		}
	}
	if whole {
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(got))
		f.next.ServeHTTP(&discardWriter{}, r2)
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // net/http drops the connection unanswered
	}
	conn.Close()
}

// bodyBuffer is a ResponseWriter that keeps the answer (ActionCutBody sends it on, cut).
type bodyBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bodyBuffer) Header() http.Header { return b.header }

func (b *bodyBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bodyBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// flipReader reads a body with its byte at offset at changed (ActionCorrupt).
type flipReader struct {
	io.ReadCloser
	at, n int64 // the byte to change; the bytes read so far
}

func (f *flipReader) Read(p []byte) (int, error) {
	k, err := f.ReadCloser.Read(p)
	if i := f.at - f.n; i >= 0 && i < int64(k) {
		p[i] ^= 0xff
	}
	f.n += int64(k)
	return k, err
}
