package core

import (
	"errors"
	"math"
	"strconv"
	"sync"
)

// Upload is one upload. [New] checks its options before anything is sent; [Upload.Run]
// carries it out; Pause and Resume may be called from any goroutine while it runs, and
// cancelling Run's context aborts it.
type Upload struct {
	tr  Transport
	src Source
	o   Options

	mu      sync.Mutex
	state   State
	paused  bool
	session string        // the session URI, "" before one is started
	wake    chan struct{} // interrupts a wait on Pause and Resume

	// Below: owned by the driver loop (Run) alone.
	home        string   // the origin the caller's headers may go to
	hdr         Header   // Options.Header merged with GetHeader's answer
	total       int64    // the size, -1 until known
	checksum    Checksum // the hashes the server is given: none, crc32c, md5 or both (checksum.go)
	strict      bool     // asked for by name: a final answer must state a hash to compare
	sum         Hasher   // hashes the source beside the upload from Run's start; nil without a checksum
	prog        progressState
	backoffs    int    // backoff retries since the last progress
	answered    bool   // some request of this upload got an answer: the server is reachable
	lastURL     string // the URL of the latest request, for the messages of errors
	lastMethod  string // and its method
	throttles   int    // 429/408 retries since the last progress
	authRetried bool
	sizer       *ChunkSizer // nil unless ChunkSize is ChunkAuto
	autoType    bool        // uploadType "auto" chose the way (Options.oneRequestBound)
	took        Duration    // how long the latest request took, answered or not
	lostBy      *HTTPError  // the answer that lost the last session (404, 410), nil before
	sumLater    bool        // "auto" checksum left to the backend's answer (decideChecksum)
	xmlAPI      bool        // the session is Cloud Storage's XML API's (xmlapi.go)
}

// New checks o against src and returns an upload ready to Run, or an *ArgumentError.
func New(tr Transport, src Source, o Options) (*Upload, error) {
	if tr == nil {
		return nil, &ArgumentError{Field: "transport", Reason: "missing"}
	}
	if err := o.validate(src); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		if o.Clock = defaultClock(); o.Clock == nil {
			return nil, &ArgumentError{Field: "clock", Reason: "required on js/wasm"}
		}
	}
	// The caller's headers go to URL's origin; with no URL, to the session's handed in. A
	// session the backend gives gets none of them: the session URI (or the signature) is its
	// credential.
	home := originOf(o.URL)
	if home == "" && o.Session == nil {
		home = originOf(o.SessionURL)
	}
	var sizer *ChunkSizer
	if o.ChunkSize == ChunkAuto {
		sizer = NewChunkSizer(o.MaxChunkSize)
		sizer.Interval = o.ProgressInterval
		o.Link.seed(sizer, o.Clock.Now())
	}
	// The checksum: ChecksumAuto is CRC32C for Cloud Storage only (docs/protocol.md section 9).
	// Where the backend gives the sessions, its answer tells (decideChecksum), unless a session
	// kept from an earlier try does now.
	target := o.URL
	if o.Session != nil {
		target = ""
	}
	sumLater := o.Session != nil && o.Checksum == ChecksumAuto && o.SessionURL == ""
	checksum, strict := checksumFor(o.Checksum, target, o.SessionURL)
	if _, ok := src.(HashingSource); checksum != NoChecksum && !ok {
		if strict {
			return nil, &ArgumentError{Field: "checksum", Reason: "the source cannot be hashed"}
		}
		checksum = NoChecksum // the default asks for what the source can give
	}
	autoType := o.Type == Auto
	if autoType {
		o.Type = Resumable
		bound := o.oneRequestBound(o.Clock.Now())
		if o.ChunkSize > 0 {
			// A chunk size of the caller's bounds a request (a proxy's limit, say): one request
			// only for what fits in one chunk, as Google's Go client does.
			bound = min(bound, o.ChunkSize)
		}
		if src.Size() <= bound {
			o.Type = Media
			if o.Metadata != nil {
				o.Type = Multipart
			}
		}
	}
	return &Upload{
		tr: tr, src: src, o: o, sizer: sizer, autoType: autoType,
		state:    StateStarting,
		session:  o.SessionURL,
		wake:     make(chan struct{}, 1),
		home:     home,
		total:    src.Size(),
		checksum: checksum,
		strict:   strict,
		sumLater: sumLater,
		xmlAPI:   xmlSession(o.SessionURL),
	}, nil
}

// State returns where the upload stands.
func (u *Upload) State() State {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state
}

// SessionURL returns the session URI once known, else "".
func (u *Upload) SessionURL() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.session
}

// Type returns the way the upload is sent, with Auto already decided.
func (u *Upload) Type() Type { return u.o.Type }

// Pause stops the upload after the request in flight; a retry wait in progress ends at once.
func (u *Upload) Pause() {
	u.mu.Lock()
	if u.paused || u.state.final() {
		u.mu.Unlock()
		return
	}
	u.paused = true
	u.mu.Unlock()
	u.setState(StatePaused)
	u.poke()
}

// Resume goes on after Pause, from the server's offset: a resumable upload first asks the
// session how much it holds (docs/protocol.md section 4).
func (u *Upload) Resume() {
	u.mu.Lock()
	if !u.paused || u.state.final() {
		u.mu.Unlock()
		return
	}
	u.paused = false
	next := StateUploading
	if u.session == "" && u.o.Type == Resumable {
		next = StateStarting
	}
	u.mu.Unlock()
	u.setState(next)
	u.poke()
}

func (u *Upload) poke() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (s State) final() bool { return s == StateDone || s == StateFailed || s == StateAborted }

// setState records s and tells OnState. While paused, only a final state replaces "paused".
func (u *Upload) setState(s State) {
	u.mu.Lock()
	if u.state == s || u.state.final() || (u.paused && s != StatePaused && !s.final()) {
		u.mu.Unlock()
		return
	}
	u.state = s
	u.mu.Unlock()
	if u.o.OnState != nil {
		u.o.OnState(s)
	}
}

func (u *Upload) setSession(url string) {
	u.mu.Lock()
	u.session = url
	u.mu.Unlock()
	if url != "" && u.o.OnSession != nil {
		u.o.OnSession(url)
	}
}

func (u *Upload) isPaused() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.paused
}

// Run carries out the upload and returns the server's final answer. Errors map onto the codes
// of docs/api.md through [Code]; a cancelled ctx returns an *AbortedError ("aborted") that
// wraps ctx.Err(). Run may be called once.
func (u *Upload) Run(ctx Context) (*Result, error) {
	if u.o.OnState != nil {
		u.o.OnState(u.State()) // "starting": every upload's first state is told too
	}
	u.prog.start(u.o.Clock.Now(), u.total)
	u.emitProgress()
	var res *Result
	err := u.startHashing()
	if err == nil {
		err = u.refreshHeaders(ctx)
	}
	if err == nil {
		if u.o.Type == Resumable {
			res, err = u.runResumable(ctx)
		} else {
			res, err = u.runSingle(ctx)
		}
	}
	if err == nil && u.sum != nil {
		// The final metadata's hashes against the source's (a session handed in may finish
		// without our sending every byte: the source is hashed all the same).
		var s Sums
		if s, err = u.sums(ctx); err == nil {
			// The XML API's final answer states no hashes: the server's taking the ones stated
			// (X-Goog-Hash) is the check (docs/protocol.md section 9).
			err = s.verify(res.Body, res.Status, u.strict && !u.xmlAPI)
		}
	}
	switch {
	case ctx.Err() != nil:
		u.setState(StateAborted)
		return nil, &AbortedError{Err: ctx.Err()}
	case err != nil:
		u.setState(StateFailed)
		return nil, err
	}
	u.prog.p.Total = max(u.total, 0)
	u.prog.held(u.total) // the final answer's request was counted where it was read
	u.prog.p.Confirmed = u.prog.p.Loaded
	u.emitProgress()
	u.setState(StateDone)
	return res, nil
}

// startHashing has the source start hashing its bytes, from byte 0, beside the upload
// (docs/protocol.md section 9): by the request that completes the object, they are hashed.
func (u *Upload) startHashing() error {
	if u.checksum == NoChecksum {
		return nil
	}
	var err error
	u.sum, err = u.src.(HashingSource).Hash(u.checksum == CRC32C || u.checksum == Both, u.checksum == MD5 || u.checksum == Both)
	return err
}

// sums waits for the hashes of the whole source (u.total bytes).
func (u *Upload) sums(ctx Context) (Sums, error) {
	s, err := u.sum.Sum(ctx, u.total)
	if u.checksum == CRC32C {
		s.MD5 = "" // only what was asked for is stated and compared
	} else if u.checksum == MD5 {
		s.CRC32C = ""
	}
	switch {
	case ctx.Err() != nil:
		return s, ctx.Err()
	case err != nil && Code(err) == CodeNetwork:
		return s, &SourceError{Err: err} // the host could not read the source to hash it
	}
	return s, err
}

func (u *Upload) emitProgress() {
	if u.o.OnProgress != nil {
		u.o.OnProgress(u.prog.snapshot())
	}
}

// refreshHeaders asks GetHeader (if any) for the caller's headers and merges them over
// Options.Header: before the first request, and again after a 401.
func (u *Upload) refreshHeaders(ctx Context) error {
	h := Header{}
	for k, v := range u.o.Header {
		h.Set(k, v) // the caller may write "Authorization": keys are kept lower-case
	}
	if u.o.GetHeader != nil {
		got, err := u.o.GetHeader(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if _, bad := Find[*ArgumentError](err); bad {
				return err // what it returned was no headers at all
			}
			return &AuthError{Err: err}
		}
		for k, v := range got {
			if !validName(k) || !validValue(v) {
				return &ArgumentError{Field: "getHeaders", Reason: "not a valid header: " + k}
			}
			h.Set(k, v)
		}
	}
	u.hdr = h
	return nil
}

// headersFor returns the headers for a request to url: the caller's only where url is on the
// upload URL's origin, so a token never reaches a session URI on another origin.
func (u *Upload) headersFor(url string) Header {
	h := Header{}
	if originOf(url) == u.home {
		for k, v := range u.hdr {
			h[k] = v
		}
	}
	return h
}

// do sends req and tells OnRequest how it went.
func (u *Upload) do(ctx Context, req *Request) (*Response, error) {
	t0 := u.o.Clock.Now()
	u.lastURL, u.lastMethod = req.URL, req.Method
	if req.Timeout == 0 {
		req.Timeout = u.timeoutFor(req.ContentLength()) // offline.go: a stalled request is given up
	}
	u.prog.newRequest()
	resp, err := u.tr.Do(ctx, req)
	if err == nil && resp == nil {
		err = errors.New("the transport returned neither an answer nor an error")
	}
	if se, ok := err.(*StallError); ok {
		switch {
		case req.told:
			se.After, se.Counted = Duration(u.o.Clock.Now()-t0), true // the count decided
		case req.late:
			err = &LateError{After: req.Timeout, Err: se.Err} // the chunk's late bound, not a stall
		}
	}
	if resp != nil {
		u.answered = true
	}
	if resp != nil && resp.Header == nil {
		resp.Header = Header{}
	}
	u.took = u.o.Clock.Now() - t0
	if u.o.OnRequest != nil {
		info := RequestInfo{Method: req.Method, URL: req.URL, ContentRange: req.Header.Get("Content-Range"), Duration: u.took, Err: err}
		if err == nil {
			info.Status = resp.Status
		}
		u.o.OnRequest(info)
	}
	return resp, err
}

// exchange sends req and deals with what every request of an upload meets alike (docs/protocol.md
// section 5): a 401 asks for the caller's headers once more, a lost connection, a 5xx, 429 or
// 408 waits (retry), anything else no retry can mend ends the upload. It returns the answer
// for the caller's own reading, with its verdict (vAnswer; for a session request also vLost
// and vHidden); or again, after the wait: the request is to be made anew (a status query, for
// a session: section 4); or the error that ends the upload. v is the verdict in every case.
func (u *Upload) exchange(ctx Context, req *Request) (resp *Response, v verdict, again bool, err error) {
	resp, err = u.do(ctx, req)
	if ctx.Err() != nil {
		return nil, vFinal, false, ctx.Err()
	}
	switch v = classify(resp, err, req.Session); v {
	case vAnswer, vLost, vHidden:
		return resp, v, false, nil
	case vLate:
		return resp, v, true, nil // cut short: ask the session at once, no retry counted
	case vAuth:
		return resp, v, true, u.reauth(ctx, resp)
	case vBackoff, vThrottle:
		return resp, v, true, u.retry(ctx, v, resp, err)
	case vFinal:
		return resp, v, false, err
	}
	if req.hashed != nil {
		// A server that checks the hashes refuses bytes that do not match them (section 9).
		if err := req.hashed.refused(resp, u.lastMethod, u.lastURL); err != nil {
			return resp, v, false, err
		}
	}
	return resp, v, false, u.httpError(resp)
}

// pausePoint waits while the upload is paused; it reports whether it waited. The time paused
// is not the link's: the rate leaves it out.
func (u *Upload) pausePoint(ctx Context) (bool, error) {
	waited := false
	for u.isPaused() {
		waited = true
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-u.wake:
		}
	}
	if waited {
		u.prog.stood(u.o.Clock.Now())
	}
	return waited, ctx.Err()
}

// retry decides whether a failed exchange may go again and, if so, waits (docs/protocol.md
// section 5). It returns the error to report when the retries have run out.
func (u *Upload) retry(ctx Context, v verdict, resp *Response, err error) error {
	if err != nil && u.o.WaitOnline != nil && isOffline(err) {
		return u.waitOnline(ctx, StateUploading) // offline.go: no retry is counted for the time offline
	}
	p := u.o.Retry
	info := RetryInfo{Err: err}
	if err == nil {
		info.Status = resp.Status
		info.Err = u.httpError(resp)
	}
	switch v {
	case vBackoff:
		retries := p.Retries
		if err != nil && !u.answered {
			// Not one answer yet: the first request cannot reach the server at all (no CORS,
			// a wrong host, a server that is down). Say so within seconds, not after the whole
			// backoff; an upload under way keeps the protocol's backoff (section 5).
			retries = min(retries, firstContactRetries)
		}
		if u.backoffs >= retries {
			return u.exhausted(u.backoffs+1, resp, err)
		}
		info.Delay = p.backoff(u.backoffs)
		if !u.answered {
			info.Delay = min(info.Delay, firstContactDelay)
		}
		u.backoffs++
		info.Attempt = u.backoffs
	case vThrottle:
		if u.throttles >= p.ThrottleRetries {
			return u.exhausted(u.throttles+1, resp, err)
		}
		d, ok := retryAfter(resp.Header.Get("Retry-After"), u.o.Clock.Unix())
		if !ok {
			d = p.backoff(u.throttles)
		}
		info.Delay = min(d, p.MaxDelay)
		u.throttles++
		info.Attempt = u.throttles
	}
	u.setState(StateRetrying)
	if u.o.OnRetry != nil {
		u.o.OnRetry(info)
	}
	if err := u.sleep(ctx, info.Delay); err != nil {
		return err
	}
	u.setState(StateUploading)
	return nil
}

// sleep waits d; a Pause ends the wait early (the pause point that follows holds the upload).
// The timer is the Clock's AfterFunc. (Outside the browser that is time.AfterFunc, not
// time.NewTimer: NewTimer reads a GODEBUG setting whose machinery once cost the wasm 88 KB.)
func (u *Upload) sleep(ctx Context, d Duration) error {
	elapsed := make(chan struct{})
	stop := u.o.Clock.AfterFunc(d, func() { close(elapsed) })
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-elapsed:
			return nil
		case <-u.wake:
			if u.isPaused() {
				return nil
			}
		}
	}
}

// firstContactRetries and firstContactDelay bound the retries of a request that has never
// reached the server: about three seconds before the page hears why.
const (
	firstContactRetries = 2
	firstContactDelay   = Second
)

func (u *Upload) exhausted(attempts int, resp *Response, err error) error {
	if err != nil {
		return &NetworkError{Attempts: attempts, URL: u.lastURL, Origin: u.o.Origin, Err: err}
	}
	return &RetriesExhaustedError{Attempts: attempts, Last: u.httpError(resp)}
}

// hiddenByCORS is what to add to the message of an answer that lacks header names when the
// request went to another origin than the page's: a browser hides every header of a
// cross-origin answer that the server's CORS configuration does not list in
// Access-Control-Expose-Headers (docs/protocol.md section 6), the commonest reason for it.
func (u *Upload) hiddenByCORS(url, names string) string {
	if u.o.Origin == "" || originOf(url) == u.o.Origin {
		return ""
	}
	return ". If the server sent it, its CORS configuration hides it from pages of " + u.o.Origin +
		": it must list " + names + " in Access-Control-Expose-Headers"
}

// httpError is resp, the answer to the latest request, as an *HTTPError.
func (u *Upload) httpError(resp *Response) *HTTPError {
	return newHTTPError(u.lastMethod, u.lastURL, resp)
}

// runSingle sends a media or multipart upload: one request, retried whole (docs/protocol.md
// section 1). A media body is counted where the transport can (progress inside the request, and
// a stall is bytes that stop moving, as for a chunk). One that uploadType "auto" chose whose
// answer is late (lateBound: the link is far slower than the page remembered it) is cut short,
// and the upload goes on as a resumable one, from byte 0 and in chunks sized to the link as it
// is now: a long silent wait is what one request was chosen to avoid.
func (u *Upload) runSingle(ctx Context) (*Result, error) {
	end := u.total
	if end < 0 {
		end = math.MaxInt64
	}
	media, err := u.src.Slice(0, end)
	if err != nil {
		return nil, &ArgumentError{Field: "source", Reason: err.Error()}
	}
	u.total = media.Len()
	u.prog.p.Total = u.total
	var sums Sums
	meta := u.o.Metadata
	if u.sum != nil {
		// One request states the hashes where the JSON API checks them (docs/protocol.md
		// section 9): a multipart upload in its metadata, a media upload in X-Goog-Hash.
		var err error
		if sums, err = u.sums(ctx); err != nil {
			return nil, err
		}
		if u.o.Type == Multipart {
			meta = sums.metadataWith(meta)
		}
	}
	url := withUploadType(u.o.URL, string(u.o.Type))
	body, ctype := []Piece{media}, u.o.ContentType
	if u.o.Type == Multipart {
		body, ctype = multipartBody(meta, u.o.ContentType, media)
	}
	for {
		if _, err := u.pausePoint(ctx); err != nil {
			return nil, err
		}
		u.setState(StateUploading)
		req := &Request{Method: u.o.Method, URL: url, Header: u.headersFor(url), Body: body}
		req.Header.Set("Content-Type", ctype)
		if u.sum != nil {
			req.hashed = &sums
			if u.o.Type == Media {
				req.Header.Set("X-Goog-Hash", sums.header())
			}
		}
		// A single request is never offered to be counted (Request.OnSent): one of "auto" is
		// short by its choice, and a counted body costs the page a stream it feeds piece by
		// piece (resumable.go, worthCounting); its answer ends its silence.
		req.Timeout = u.timeoutFor(req.ContentLength())
		if late := u.singleLate(req.ContentLength()); late > 0 && (req.Timeout == 0 || late < req.Timeout) {
			req.Timeout, req.late = late, true
		}
		resp, v, again, err := u.exchange(ctx, req)
		switch {
		case err != nil:
			return nil, err
		case v == vLate:
			if u.sizer != nil {
				u.sizer.Cut(0, u.took) // the remembered rate is no more: find out, as at the start
			}
			u.o.Type = Resumable
			return u.runResumable(ctx)
		case again:
			continue // the whole request again (section 1)
		case resp.Status == 308:
			return nil, &ProtocolError{Reason: "308 answer to a single-request upload", Status: 308}
		}
		u.prog.moved(u.o.Clock.Now(), req.ContentLength(), u.total)
		if n := req.ContentLength(); u.sizer != nil && n >= ChunkAlign {
			// What one request showed of the link, for the next upload's choice (link.go); a
			// smaller one's time is mostly its round trip. One answered on time (within a
			// quarter of a progress interval of what the remembered rate expected) shows the
			// link as fast as the choice took it: its time is mostly round trips and, with
			// uploads side by side on a busy machine, waiting, and it may raise the rate, never
			// lower it (docs/protocol.md section 8).
			was, exp := u.sizer.rate, u.sizer.Expect(n)
			u.sizer.Answered(n, u.took, u.sizer.counted)
			if exp > 0 && u.took <= exp+u.o.oneRequestTime() && u.sizer.rate < was {
				u.sizer.rate = was
			}
			u.o.Link.learn(u.sizer, u.o.Clock.Now())
		}
		return &Result{Status: resp.Status, Header: resp.Header, Body: resp.Body}, nil
	}
}

// singleLate is the late bound of a single request of n bytes that uploadType "auto" chose
// (runSingle), or 0 for none: its expected time at the rate the page remembers, plus
// lateMargin twice over or as much again, whichever is more (a cut costs the bytes sent, not a
// status query, so a moment's hiccup must not cut it; a link many times slower must).
func (u *Upload) singleLate(n int64) Duration {
	c := u.sizer
	if !u.autoType || c == nil || c.rate <= 0 || u.o.StallTimeout < 0 || n <= 0 {
		return 0
	}
	exp := c.Expect(n)
	return exp + max(2*lateMargin, exp)
}

// reauth asks GetHeader again after a 401, once; a second 401 is final.
func (u *Upload) reauth(ctx Context, resp *Response) error {
	if u.authRetried || u.o.GetHeader == nil {
		return u.httpError(resp)
	}
	u.authRetried = true
	return u.refreshHeaders(ctx)
}

// startSession starts a resumable session at Options.URL (docs/protocol.md section 2) and
// returns its URI.
func (u *Upload) startSession(ctx Context) (string, error) {
	url := withUploadType(u.o.URL, string(Resumable))
	return u.start(ctx, url, func() *Request {
		req := &Request{Method: u.o.Method, URL: url, Header: u.headersFor(url)}
		req.Header.Set("X-Upload-Content-Type", u.o.ContentType)
		if u.total >= 0 { // left out where the length is not known
			req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(u.total, 10))
		}
		if u.o.Metadata != nil {
			req.Header.Set("Content-Type", "application/json; charset=UTF-8")
			req.Body = []Piece{Bytes(u.o.Metadata)}
		}
		return req
	})
}

// start sends a session start made by build (a new request for each try) to url until it is
// answered, and returns the session URI of its Location (docs/protocol.md section 2): the
// JSON API's start (startSession) and the XML API's (startSigned, xmlapi.go) alike.
func (u *Upload) start(ctx Context, url string, build func() *Request) (string, error) {
	u.authRetried = false
	for {
		if _, err := u.pausePoint(ctx); err != nil {
			return "", err
		}
		u.setState(StateStarting)
		resp, _, again, err := u.exchange(ctx, build())
		switch {
		case err != nil:
			return "", err
		case again:
			continue
		case resp.Status == 308:
			return "", &ProtocolError{Reason: "308 answer to a session start", Status: 308}
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return "", &ProtocolError{Reason: "no Location in the answer to a session start" + u.hiddenByCORS(url, "Location"), Status: resp.Status}
		}
		abs, ok := resolveLocation(url, loc) // a relative Location is resolved against the request URL
		if !ok {
			return "", &ProtocolError{Reason: "unusable Location " + "\"" + loc + "\"", Status: resp.Status}
		}
		if u.sizer != nil {
			u.sizer.RoundTrip(u.took) // (nearly) no body: the fixed cost of a request
			u.o.Link.learn(u.sizer, u.o.Clock.Now())
		}
		return abs, nil
	}
}
