package core

import (
	"math"
	"strconv"
)

// sessionState is what the client knows of one resumable session. Only the driver loop
// touches it.
type sessionState struct {
	offset    int64 // where the next chunk starts: always the server's last stated offset
	sent      int64 // the end of the furthest byte sent in this session: the most a Range may claim
	confirmed int64 // the most the server has stated it holds in this session
	finalSent bool  // a request that states the last byte (or the empty final one) has gone
	stalls    int   // chunks in a row that the server kept nothing of
}

// newSession returns the state of a session just started, or (adopted) one handed in by the
// caller, of which nothing is known: it may hold anything up to the whole size.
func newSession(adopted bool, total int64) sessionState {
	if !adopted {
		return sessionState{}
	}
	limit := total
	if limit < 0 {
		limit = math.MaxInt64
	}
	return sessionState{sent: limit, finalSent: true}
}

// resumable is one resumable upload under way: its session's state, and what the driver loop
// carries from one request to the next. Only runResumable's goroutine touches it.
type resumable struct {
	u       *Upload
	s       sessionState
	query   bool    // the next request is a status query
	hidden  int64   // the end of a chunk whose answer the transport could not read, or -1
	lost    int     // sessions lost (404, 410) so far
	counted bool    // the transport reported progress inside the latest chunk (Request.OnSent)
	offered bool    // the latest chunk was offered to be counted (worthCounting)
	rate    float64 // bytes per second of the latest chunk answered, its round trip included
	// A chunk cut short because its answer was late (lateBound): where it began and how long
	// it ran, until the status query after it tells what the server kept (cutTook 0: none).
	cutFrom int64
	cutTook Duration
	noLate  bool // the last cut chunk left nothing kept: no late bound until a chunk is answered
}

// runResumable sends a resumable upload (docs/protocol.md sections 2–5): a session, then chunks
// from the server's offset, each answer read by the method for its kind.
func (u *Upload) runResumable(ctx Context) (*Result, error) {
	r := &resumable{u: u, s: newSession(u.session != "", u.total), hidden: -1}
	r.query = u.session != "" // an adopted session: ask what it holds first
	for {
		if u.SessionURL() == "" {
			url, err := u.newSession(ctx) // session.go: started at URL, or asked of the backend
			if err != nil {
				return nil, err
			}
			u.setSession(url)
			r.s, r.query, r.hidden = newSession(false, u.total), false, -1
		}
		if waited, err := u.pausePoint(ctx); err != nil {
			return nil, err
		} else if waited {
			r.query = true // resume from the server's offset, not our own (section 4)
		}
		u.setState(StateUploading)

		req, chunkEnd, err := r.next(ctx)
		if err != nil {
			return nil, err
		}
		resp, v, again, err := u.exchange(ctx, req)
		r.measure(v, chunkEnd)
		switch {
		case err != nil:
			return nil, err
		case again:
			// After a lost connection, a 5xx or 429 and its wait, or new headers after a 401:
			// ask the session what it holds (section 4).
			r.query = true
			continue
		}
		switch v {
		case vAnswer:
			if res, err := r.answer(ctx, req, resp, chunkEnd); res != nil || err != nil {
				return res, err
			}
		case vLost:
			if err := r.restart(resp); err != nil {
				return nil, err
			}
		case vHidden:
			// The server answered the chunk with a 3xx whose headers this browser hides
			// (docs/protocol.md section 6): most likely the protocol's 308, its Range unread. Ask
			// the session what it holds at once (section 4); no retry is spent, since an
			// answer came. A status query is never answered so: the transport reads those.
			if r.query {
				return nil, &ProtocolError{Reason: "a status query was answered with a redirect whose headers cannot be read", Status: 0}
			}
			r.hidden, r.query = chunkEnd, true
		}
	}
}

// Check asks the session that Options.SessionURL names what it holds (docs/protocol.md section 4)
// and sends nothing else: the bytes it holds, or that the upload is complete. Its request is
// retried as any request is; a session that is gone (404, 410) is a *SessionExpiredError.
// (docs/api.md, "Unfinished uploads": what a list of unfinished uploads shows of each.)
func (u *Upload) Check(ctx Context) (held int64, complete bool, err error) {
	if u.SessionURL() == "" {
		return 0, false, &ArgumentError{Field: "sessionURL", Reason: "missing: there is no session to ask"}
	}
	if err := u.refreshHeaders(ctx); err != nil {
		return 0, false, err
	}
	for {
		resp, v, again, err := u.exchange(ctx, u.statusQuery())
		switch {
		case err != nil:
			return 0, false, err
		case again:
			continue
		case v == vLost:
			return 0, false, &SessionExpiredError{Sessions: 1, Last: u.httpError(resp)}
		case v == vHidden:
			return 0, false, &ProtocolError{Reason: "a status query was answered with a redirect whose headers cannot be read"}
		}
		s := newSession(true, u.total) // nothing is known of it: it may hold anything
		done, stored, err := interpret(resp, &s)
		return stored, done, err
	}
}

// next builds the next request: a status query, or the chunk from the server's offset, and
// the end of its range (-1 for a query).
func (r *resumable) next(ctx Context) (*Request, int64, error) {
	if r.query {
		return r.u.statusQuery(), -1, nil
	}
	u, offset := r.u, r.s.offset
	if c := u.sizer; c != nil && c.last == 0 && c.rate == 0 {
		// Nothing known of the link: the first chunk is sized by whether the transport says
		// it counts the body (chunksize.go, Counter).
		ct, ok := u.tr.(Counter)
		c.Counts = ok && ct.Counts(u.SessionURL())
	}
	req, end, err := u.chunk(ctx, offset)
	if err != nil {
		return nil, 0, err
	}
	// Where the transport can tell, progress comes while the chunk is under way, confirmed
	// only with the server's answer (docs/protocol.md section 8): paced (pacer). From the first
	// count on, the count also says whether the body still moves: a stall is bytes that stop
	// moving, not a slow link (pacer.stalled).
	r.counted, r.offered = false, r.worthCounting(end-offset)
	if r.offered {
		pace := pacer{begun: u.o.Clock.Now(), rate: r.linkRate(), cost: r.linkCost(), size: end - offset}
		req.OnSent = func(n int64) bool {
			r.counted = true
			return pace.count(req, n, func(now Duration, sent int64) {
				if u.prog.sending(now, offset, sent) {
					u.emitProgress()
				}
			}, u.o.Clock.Now())
		}
	}
	// Where progress comes only with answers, a chunk whose answer is late is cut short
	// (lateBound), before the stall bound.
	req.Timeout = u.timeoutFor(end - offset)
	if late := r.lateBound(end - offset); late > 0 && (req.Timeout == 0 || late < req.Timeout) {
		req.Timeout, req.late = late, true
	}
	r.s.sent = max(r.s.sent, end)
	r.s.finalSent = r.s.finalSent || end == r.u.total
	return req, end, nil
}

// pacer turns the bytes of a chunk's body the transport says the network has taken into the
// bytes to count as sent (docs/protocol.md section 8). The browser takes a body megabytes ahead
// of what the server has received (its buffers and HTTP/2's window), and then waits for the
// answer with nothing more to take; counted as taken, loaded would leap and then stand still.
// So loaded moves at the link's rate as it is now, never past the count and never back: the
// rate at which the browser went on taking bytes over the last moment (once its buffers are
// full it takes them as fast as the link carries them, so a link that slows down or speeds up
// mid-chunk shows within a second or so), or, before that is seen, the rate this upload's
// answers measured (none for the first chunk of an upload seeded from an earlier one's
// measure: a remembered rate is a hint, and a link far slower than it would leave loaded far
// ahead of the server, then standing). Once the browser has taken the whole body, the last
// rate seen carries loaded on through the wait for the answer. The rate counts from the
// request's start plus the fixed cost of a request (a round trip, a preflight's too, and the
// server's time): a chunk's answer comes that long after the bytes' time at the rate, so loaded
// reaches the chunk's end about when the answer comes, not a round trip or two before it and
// then stands (3 Mbit/s, 150 ms, HTTP/2: it stood 0.7 s at the end of each chunk).
type pacer struct {
	begun Duration // Clock.Now when the request was made
	rate  float64  // the link's rate as this upload's answers measured it, bytes per second; 0: none
	cost  Duration // the fixed cost of a request as the upload knows it (linkCost); 0: none
	size  int64    // the body's bytes

	told     bool
	moved    int64    // the bytes counted as sent so far
	est      float64  // where the server stands, as the rates seen so far tell
	lead     float64  // how far the browser's take runs ahead of the server
	at       Duration // when est last moved
	firstN   int64    // the first count
	last     int64    // the latest count, and when the count last grew
	grewAt   Duration //
	allAt    Duration // when the count reached the body's size (0: not yet), and moved then
	allPaced int64    //
	winAt    Duration // the start of the window the take is measured over, and the count then
	winN     int64    //
	slope    float64  // bytes per second taken over the last window
	measured bool     // slope has been measured once
}

// The window the browser's take is measured over: at least slopeSpan (two of the transport's
// counts: jsbridge's host tells one every 200 ms) and slopeBytes, or slopeLong where the link
// is too slow for that (the host hands the browser 64 KiB at a time: a shorter window would
// see the steps, not the rate).
const (
	slopeSpan  = 400 * Millisecond
	slopeBytes = ChunkAlign
	slopeLong  = Second
)

func (p *pacer) paced(now Duration, n int64) int64 {
	if !p.told {
		p.told, p.at, p.winAt, p.winN, p.grewAt, p.firstN = true, p.begun+p.cost, now, n, now, n
	}
	if n > p.last {
		p.last, p.grewAt = n, now
	}
	if span := now - p.winAt; p.allAt == 0 && span >= slopeSpan && (n-p.winN >= slopeBytes || span >= slopeLong) {
		p.slope = float64(n-p.winN) / span.Seconds()
		p.winAt, p.winN = now, n
		if !p.measured {
			// The first measure of the link's rate: where the server stands is that rate from
			// the request's start, and the browser's take runs ahead of it by its buffers (the
			// lead), which stay full while there is more to take. The answers' rate gone by may
			// have run high: loaded then stands until the link catches up with it, for it never
			// goes back.
			p.measured, p.est, p.at = true, p.slope*max(now-p.begun-p.cost, 0).Seconds(), now
			p.lead = max(float64(n)-p.est, 0)
		}
	}
	rate := p.rateNow()
	if dt := now - p.at; dt > 0 && (rate > 0 || p.measured) {
		// Until a rate is known, the time waits: the link carried bytes meanwhile too.
		p.est += rate * dt.Seconds()
		p.at = now
	}
	if p.allAt == 0 && n < p.size {
		// While the browser still takes bytes, the server is its lead behind the count: a link
		// that slows down mid-chunk shows here at once, before its new rate is measured.
		p.est = min(p.est, float64(n)-p.lead)
	}
	if !p.measured && p.rate <= 0 {
		// Before any rate is known: what the browser took since its first count, its buffers
		// full by then, the link has carried at least (a moment behind, never ahead).
		p.est = max(p.est, float64(n-p.firstN))
	}
	p.moved = max(p.moved, min(n, int64(p.est)))
	if n >= p.size && p.allAt == 0 {
		p.allAt, p.allPaced = now, p.moved
	}
	return p.moved
}

// count takes a count of the body of req (Request.OnSent): n bytes taken as of now. While no count
// has shown bytes still to take, the count tells nothing of the link (the browser's buffers
// took the whole body at once: docs/protocol.md section 8), and the request is watched as an
// uncounted one (its Timeout; the host keeps its timer too). Else report(now, bytes to count as
// sent) moves the progress, and count returns whether the body still moves (pacer.stalled).
func (p *pacer) count(req *Request, n int64, report func(now Duration, sent int64), now Duration) bool {
	if !req.told && n >= p.size {
		return true
	}
	req.told = true
	report(now, p.paced(now, n))
	return !p.stalled(now)
}

// rateNow is the rate loaded moves at (see pacer).
func (p *pacer) rateNow() float64 {
	if p.measured {
		return p.slope
	}
	return p.rate
}

// stalled reports whether the body has stopped moving (docs/protocol.md section 8): no byte
// taken for countedQuiet while some are left to take, or, all of it taken, no answer long after
// the server should have had the last byte (what the browser held ahead of it, at the rate
// seen, four times over, and countedQuiet). A slow link is not a stall: its bytes move.
func (p *pacer) stalled(now Duration) bool {
	if !p.told {
		return false
	}
	if p.allAt == 0 {
		return now-p.grewAt > countedQuiet
	}
	due := stallFloor
	if r := p.rateNow(); r > 0 {
		due = countedQuiet + 4*Duration(float64(p.size-p.allPaced)/r*float64(Second))
	}
	return now-p.allAt > due
}

// worthCounting reports whether a chunk of n bytes is offered to the transport to count as it
// goes (Request.OnSent): a counted body costs the page a stream it feeds piece by piece (in
// Chromium over HTTP/2, several milliseconds of the main thread for a few megabytes: the
// many-files bench), which buys progress inside a chunk and a stall seen by bytes that stop.
// So, of the sizer's chunks: one while nothing is known of the link (its count tells whether
// the transport counts at all), one expected to take a second or more, and, until a count has
// been seen, one long enough to show one (countShows): a chunk answered before the host's
// first count (the first 256 KiB, say) does not show that the transport counts nothing. A
// chunk not offered leaves the sizer's "counted" as it was (measure). Fixed chunks are the
// caller's choice: all offered. (Where the host cannot count, an offer costs nothing: it
// sends the Blob.)
func (r *resumable) worthCounting(n int64) bool {
	c := r.u.sizer
	switch {
	case c == nil, c.rate <= 0:
		return true
	case c.counted && !c.Measured() && n >= countedMin:
		// The first chunk of an upload seeded from a counted link, sized for counting with no
		// probe (chunksize.go): the remembered rate may be far from the link's now (one
		// measured on loopback expects the whole file in a moment), and uncounted it would be a
		// bet the page cannot see (docs/protocol.md section 8, "Links that change").
		return true
	case !c.counted:
		return c.Expect(n) >= countShows
	}
	return c.Expect(n) >= Second
}

// countShows is the least a chunk takes for its count to show: the host tells it every 200 ms
// or so (web/js/src/engine/counted.js), from the first count of bytes still to take.
const countShows = 400 * Millisecond

// linkCost is the fixed cost of a request as the upload knows it (chunksize.go: its round
// trips, or what the page remembered of the link), or 0.
func (r *resumable) linkCost() Duration {
	if s := r.u.sizer; s != nil {
		return s.cost
	}
	return 0
}

// linkRate is the link's rate as this upload's answers show it, in bytes per second: the
// chunk sizer's measure (chunksize.go), else the latest chunk's; 0 before any answer. (Not
// the progress's rate: that counts bytes the browser took, ahead of the server. Nor a rate
// only remembered from an earlier upload: see pacer.)
func (r *resumable) linkRate() float64 {
	if s := r.u.sizer; s != nil {
		if s.Measured() {
			return s.Rate()
		}
		return 0
	}
	return r.rate
}

// lateBound is when the answer to a chunk of n bytes is late, or 0 for none (docs/protocol.md
// section 8). Where progress comes only with answers, a link that becomes far slower mid-chunk
// (a phone leaving Wi-Fi: twenty times slower, say) would leave the chunk in flight for many
// times its expected time with nothing to show. So a chunk sized to the link is cut short once
// it has run cutMargin (or a quarter of its time, if more) past the sizer's Expect, and never
// before cutFloor: on loopback a busy machine's hiccup is no news of the link, but a rate
// measured high early in an upload (its first chunks' time is mostly their fixed cost), or
// remembered from an upload on loopback, must not leave a chunk in flight at a drop uncut. A
// probe (chunksize.go) is no different: it is 256 KiB, which a link of 256 KiB a second
// answers before the floor. The bound is short because a cut is not the end of the wait: a
// real uplink still delivers what sat in its queue (about a second of it: web/netlink's
// model), and the status query after the cut is answered behind those bytes; the page must
// see progress within about three seconds of the last. The session is then asked at once what
// it holds (section 4), and the upload goes on from there in smaller chunks, no retry counted.
// A server that keeps what arrived of a cut request (Google's guide shows one) loses nothing
// by it. The transport cuts it as it would give up a stalled request (Request.Timeout); where
// it counts the body instead, the count decides (pacer.stalled) and the cut never comes.
func (r *resumable) lateBound(n int64) Duration {
	u := r.u
	c := u.sizer
	if c == nil || r.noLate || u.o.StallTimeout < 0 || n <= 0 || c.rate <= 0 {
		return 0
	}
	exp := c.Expect(n)
	return max(exp+max(cutMargin, exp/4), cutFloor)
}

// measure tells the chunk sizer (with "auto") what the exchange showed of the link.
func (r *resumable) measure(v verdict, chunkEnd int64) {
	u := r.u
	if (v == vAnswer || v == vHidden) && chunkEnd > r.s.offset && u.took > 0 {
		r.rate = float64(chunkEnd-r.s.offset) / u.took.Seconds()
		r.noLate = false
	}
	if v == vLate {
		// Cut short: what the server kept, the status query after it tells (answer).
		r.cutFrom, r.cutTook = r.s.offset, max(u.took, 1)
		return
	}
	if u.sizer == nil {
		return
	}
	switch {
	case (v == vAnswer || v == vHidden) && chunkEnd > r.s.offset:
		u.sizer.Answered(chunkEnd-r.s.offset, u.took, r.counted || !r.offered && u.sizer.counted)
		if v == vHidden {
			u.prog.moved(u.o.Clock.Now(), chunkEnd-r.s.offset, r.s.offset) // carried; where it left the upload, the query tells
		}
	case v == vAnswer:
		u.sizer.RoundTrip(u.took) // a status query: no body
	case chunkEnd > r.s.offset:
		u.sizer.Failed()
	}
	u.o.Link.learn(u.sizer, u.o.Clock.Now()) // for the next upload to the origin (link.go)
}

// answer reads the answer to a chunk or a status query (sections 3 and 4): the final result,
// an error, or neither (the upload goes on from the server's offset).
func (r *resumable) answer(ctx Context, req *Request, resp *Response, chunkEnd int64) (*Result, error) {
	u, s := r.u, &r.s
	done, stored, err := interpret(resp, s)
	if err != nil {
		if pe, ok := err.(*ProtocolError); ok && pe.Status == 200 && !s.finalSent && u.o.NoRedirect308 {
			// A 308 in the no-308 form is a 200 with X-HTTP-Status-Code-Override.
			pe.Reason += u.hiddenByCORS(req.URL, "X-HTTP-Status-Code-Override (and Range)")
		}
		return nil, err
	}
	if done {
		if chunkEnd >= 0 {
			u.prog.moved(u.o.Clock.Now(), req.ContentLength(), chunkEnd)
		}
		res := &Result{Status: resp.Status, Header: resp.Header, Body: resp.Body, SessionURL: u.SessionURL()}
		return u.wholeFinal(ctx, res), nil
	}
	wasQuery := r.query
	if r.query && r.hidden >= 0 {
		// The answer to a chunk whose own answer was hidden counts as that one's. But a
		// server that answers in the no-308 form never sends a 308: the chunk's 3xx was a
		// redirect, which is never followed (docs/protocol.md section 6).
		if u.o.NoRedirect308 && resp.Header.Get("X-HTTP-Status-Code-Override") == "308" {
			return nil, &RedirectError{Method: "PUT", URL: u.SessionURL()}
		}
		chunkEnd, r.hidden = r.hidden, -1
		u.prog.moved(u.o.Clock.Now(), 0, chunkEnd) // its bytes were counted when it was answered
	} else if chunkEnd >= 0 {
		u.prog.moved(u.o.Clock.Now(), req.ContentLength(), chunkEnd)
	} else if r.cutTook > 0 {
		r.afterCut(stored)
	} else {
		u.prog.held(stored) // what the session holds that this run did not send
	}
	if chunkEnd >= 0 {
		if chunkEnd == u.total && stored == u.total {
			return nil, &ProtocolError{Reason: "server holds all " + strconv.FormatInt(u.total, 10) + " bytes but did not finish the upload", Status: resp.Status}
		}
	}
	if stored > s.confirmed {
		s.confirmed, s.stalls = stored, 0
		u.backoffs, u.throttles = 0, 0 // progress: the retry budget starts again
	} else if chunkEnd > s.offset {
		// A server may keep nothing of a chunk now and then; it is sent again, as many times
		// in a row as a failed request is retried. But a cross-origin answer without a Range
		// is most likely a CORS configuration that hides it (docs/protocol.md section 6):
		// every answer will look the same, and a second one in a row is enough to say so.
		limit, cors := u.o.Retry.Retries, ""
		if resp.Header.Get("Range") == "" {
			if cors = u.hiddenByCORS(req.URL, "Range"); cors != "" {
				limit = min(limit, 1)
			}
		}
		if s.stalls++; s.stalls > limit {
			why := "server kept none of " + strconv.Itoa(s.stalls) + " chunks in a row"
			if resp.Header.Get("Range") == "" {
				why += ", its answers showing no Range" + cors
			}
			return nil, &ProtocolError{Reason: why, Status: resp.Status}
		}
	}
	s.offset = stored // the next chunk starts at the server's offset (section 3)
	u.prog.p.Confirmed = stored
	u.emitProgress()
	r.query = !wasQuery && chunkEnd >= 0 && u.o.QueryStatusEachChunk
	return nil, nil
}

// afterCut takes in what the server kept of a chunk cut short (lateBound), now that a status
// query told it: the bytes the chunk carried there, and the rate they show (ChunkSizer.Cut).
// Where it kept nothing (a server that drops what arrived of a cut request, or a link that
// carried nothing), the next chunk is not cut: it gets the stall bound alone.
func (r *resumable) afterCut(stored int64) {
	u := r.u
	kept := max(stored-r.cutFrom, 0)
	u.prog.moved(u.o.Clock.Now(), kept, stored)
	if u.sizer != nil {
		// The bytes kept arrived until the query was answered (less its own fixed cost): a
		// link's queue went on delivering them after the cut, and the query waited behind it.
		u.sizer.Cut(kept, r.cutTook+max(u.took-u.sizer.fixedCost(), 0))
		u.o.Link.learn(u.sizer, u.o.Clock.Now())
	}
	r.noLate = kept == 0
	r.cutTook = 0
}

// restart answers a lost session (404: expired; 410: failed): a new session from byte 0
// (section 5), a bounded number of times; where the backend gives the sessions, it is asked
// for the new one (session.go).
func (r *resumable) restart(resp *Response) error {
	u := r.u
	r.lost++
	if r.lost > u.o.Retry.NewSessions || (u.o.URL == "" && u.o.Session == nil) {
		return &SessionExpiredError{Sessions: r.lost, Last: u.httpError(resp)}
	}
	// Told in this order: the retry (restart), confirmed back to 0 (loaded stays: it never
	// goes backwards, docs/api.md), then the state "starting".
	u.lostBy = u.httpError(resp)
	// A stream keeps only what the server has not confirmed: if its first bytes are gone, a
	// new session could not be filled, so none is started.
	if _, err := u.src.Slice(0, 0); err != nil {
		return u.sourceError(err)
	}
	u.setSession("")
	if u.o.OnRetry != nil {
		u.o.OnRetry(RetryInfo{Attempt: r.lost, Status: resp.Status, Err: u.httpError(resp), Restart: true})
	}
	u.prog.p.Confirmed = 0
	u.emitProgress()
	u.setState(StateStarting)
	return nil
}

// wholeFinal returns the final answer res, or, where its body is not one whole JSON object
// (cut off on the way, or unreadable) while there is one to read or hashes to compare, the
// answer of the session asked once more: a finished session answers a status query with the
// object's metadata again (docs/protocol.md section 4). Only an answer of the same kind, whole,
// replaces it.
//
// The XML API's final answer is never JSON (empty, or XML: xmlapi.go), nor is its answer to a
// status query: it is taken as it is.
func (u *Upload) wholeFinal(ctx Context, res *Result) *Result {
	if u.xmlAPI || jsonObject(res.Body) || (len(res.Body) == 0 && u.sum == nil) {
		return res
	}
	resp, err := u.do(ctx, u.statusQuery())
	if err != nil || (resp.Status != 200 && resp.Status != 201) || !jsonObject(resp.Body) {
		return res
	}
	return &Result{Status: res.Status, Header: resp.Header, Body: resp.Body, SessionURL: res.SessionURL}
}

// interpret reads the answer to a chunk or a status query (docs/protocol.md sections 3 and 4): done,
// or the number of bytes the server holds.
func interpret(resp *Response, s *sessionState) (done bool, stored int64, err error) {
	status := resp.Status
	if status == 200 && resp.Header.Get("X-HTTP-Status-Code-Override") == "308" {
		status = 308 // the X-GUploader-No-308 form of a 308 (section 3)
	}
	switch status {
	case 308:
		stored, err := parseRange(resp.Header.Get("Range"))
		if err != nil {
			return false, 0, err
		}
		if stored > s.sent {
			return false, 0, &ProtocolError{Reason: "server claims " + strconv.FormatInt(stored, 10) + " bytes but only " + strconv.FormatInt(s.sent, 10) + " were sent", Status: resp.Status}
		}
		return false, stored, nil
	case 200, 201:
		if !s.finalSent {
			return false, 0, &ProtocolError{Reason: "server finished the upload before the last byte was sent", Status: status}
		}
		return true, 0, nil
	}
	return false, 0, &ProtocolError{Reason: "unexpected status " + strconv.Itoa(status) + " on an upload session", Status: status}
}

// sessionHeader returns the headers of a request to the session URI.
func (u *Upload) sessionHeader(url string) Header {
	h := u.headersFor(url)
	if u.o.NoRedirect308 {
		h.Set("X-GUploader-No-308", "yes") // answers come as 200 + X-HTTP-Status-Code-Override (section 3)
	}
	return h
}

// statusQuery asks the session how much it holds (docs/protocol.md section 4): an empty PUT with
// "bytes */TOTAL", or "bytes */*" where the total is not known.
func (u *Upload) statusQuery() *Request {
	url := u.SessionURL()
	h := u.sessionHeader(url)
	h.Set("Content-Range", contentRange(0, 0, u.total))
	return &Request{Method: "PUT", URL: url, Header: h, Session: true}
}

// chunk builds the PUT of the bytes from offset (docs/protocol.md section 3) and returns it with the
// end of its range. Every chunk but the last is ChunkSize long (or as long as the sizer says,
// with ChunkAuto), a multiple of 256 KiB. Where the size is not known, a chunk shorter than
// that is the last and states the total; when
// the data ends exactly on a chunk boundary, the last request is empty: "bytes */TOTAL". With
// a checksum, the last request states the hashes of every byte.
func (u *Upload) chunk(ctx Context, offset int64) (*Request, int64, error) {
	want := u.o.ChunkSize
	if u.sizer != nil {
		want = u.sizer.Next(offset, u.total) // sized to the link (chunksize.go)
	}
	end := int64(math.MaxInt64)
	if want > 0 {
		end = offset + want
	}
	if u.total >= 0 {
		end = min(end, u.total)
	}
	piece, err := u.src.Slice(offset, end)
	if err != nil {
		return nil, 0, u.sourceError(err)
	}
	n := piece.Len()
	if n < 0 || n > end-offset {
		return nil, 0, &ArgumentError{Field: "source", Reason: "slice longer than asked for"}
	}
	if u.total < 0 && (want == 0 || n < want) {
		u.total = offset + n // the data ends here: this request states the total
		u.prog.p.Total = u.total
	}
	url := u.SessionURL()
	h := u.sessionHeader(url)
	h.Set("Content-Range", contentRange(offset, offset+n, u.total))
	req := &Request{Method: "PUT", URL: url, Header: h, Session: true}
	if u.sum != nil && offset+n == u.total {
		// The request that completes the object states the hashes of every byte, which the
		// source has hashed beside the chunks before it (docs/protocol.md section 9); the
		// server refuses it if what it received differs.
		sums, err := u.sums(ctx)
		if err != nil {
			return nil, 0, err
		}
		h.Set("X-Goog-Hash", sums.header())
		req.hashed = &sums
	}
	if n > 0 {
		// The media's type on every chunk, as Google's guide shows it (docs/protocol.md
		// section 3). It also spares the browser a slice per file: fetch gives a body the
		// type of its Blob only where the request has no Content-Type (jsbridge's host sends
		// a typed File as it is).
		h.Set("Content-Type", u.o.ContentType)
		req.Body = []Piece{piece}
	}
	return req, offset + n, nil
}

// sourceError is the error of a source that could not hand out a chunk: a source error as it
// is; a stream's bytes no longer kept, asked for again after a lost session (docs/protocol.md
// section 5: a new session starts from byte 0), the end of the upload; anything else is a
// bad source.
func (u *Upload) sourceError(err error) error {
	switch {
	case Code(err) == CodeSource:
		return err
	case isNotKept(err) && u.lostBy != nil:
		return &SessionExpiredError{Sessions: 1, Last: u.lostBy, NotKept: true}
	case isNotKept(err):
		return &SourceError{Err: err}
	}
	return &ArgumentError{Field: "source", Reason: err.Error()}
}
