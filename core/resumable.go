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
	rate    float64 // bytes per second of the latest chunk answered, its round trip included
}

// runResumable sends a resumable upload (docs/protocol.md sections 2–5): a session, then chunks
// from the server's offset, each answer read by the method for its kind.
func (u *Upload) runResumable(ctx Context) (*Result, error) {
	r := &resumable{u: u, s: newSession(u.session != "", u.total), hidden: -1}
	r.query = u.session != "" // an adopted session: ask what it holds first
	for {
		if u.SessionURL() == "" {
			url, err := u.startSession(ctx)
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
	req, end, err := u.chunk(ctx, offset)
	if err != nil {
		return nil, 0, err
	}
	// Where the transport can tell, progress comes while the chunk is under way, confirmed
	// only with the server's answer (docs/protocol.md section 8): paced (pacer).
	r.counted = false
	pace := pacer{begun: u.o.Clock.Now(), rate: r.linkRate(), size: end - offset}
	req.OnSent = func(n int64) {
		r.counted = true
		now := u.o.Clock.Now()
		if u.prog.sending(now, offset, pace.paced(now, n)) {
			u.emitProgress()
		}
	}
	r.s.sent = max(r.s.sent, end)
	r.s.finalSent = r.s.finalSent || end == r.u.total
	return req, end, nil
}

// pacer turns the bytes of a chunk's body the transport says the network has taken into the
// bytes to count as sent (docs/protocol.md section 8). The browser takes a body megabytes ahead
// of what the server has received (its buffers and HTTP/2's window), and then waits for the
// answer with nothing more to take; counted as taken, loaded would leap and then stand still.
// So it moves no faster than the link's rate: the rate the answers measured so far, or the
// rate at which the browser goes on taking bytes after its first count (once its buffers are
// full, it takes them as fast as the link carries them), whichever is lower once that has
// been seen for a moment (slopeSpan; a rate measured on a short chunk runs high: loaded would
// reach the chunk's end early and stand until the answer). The transport tells its count again while
// it waits, and loaded follows the link through the wait too.
type pacer struct {
	begun   Duration // Clock.Now when the request was made
	rate    float64  // the link's rate as the answers measured it, bytes per second; 0: none yet
	size    int64    // the body's bytes
	told    bool     // a count was told
	firstAt Duration // when the first count was told, and that count
	first   int64
	last    int64 // the latest count, and when it grew to it
	lastAt  Duration
	slope   float64 // bytes per second taken from the first count to the latest
}

// slopeSpan is how long the browser's take is watched before its rate is trusted over the
// answers' (two of the transport's counts: jsbridge's host tells one every 200 ms).
const slopeSpan = 400 * Millisecond

func (p *pacer) paced(now Duration, n int64) int64 {
	switch {
	case !p.told:
		p.told, p.firstAt, p.first, p.last, p.lastAt = true, now, n, n, now
	case n > p.last && now > p.firstAt:
		p.slope, p.last, p.lastAt = float64(n-p.first)/(now-p.firstAt).Seconds(), n, now
	}
	rate := p.rate
	if p.slope > 0 && (rate <= 0 || p.lastAt-p.firstAt >= slopeSpan && p.slope < rate) {
		rate = p.slope
	}
	if rate <= 0 {
		if n >= p.size {
			return n // all of it taken at once, before any measure: nothing to pace it by
		}
		return 0
	}
	return min(n, int64(rate*(now-p.begun).Seconds()))
}

// linkRate is the link's rate as the server's answers show it, in bytes per second: the
// chunk sizer's measure (chunksize.go), else the latest chunk's; 0 before any answer. (Not
// the progress's rate: that counts bytes the browser took, ahead of the server.)
func (r *resumable) linkRate() float64 {
	if s := r.u.sizer; s != nil && s.Rate() > 0 {
		return s.Rate()
	}
	return r.rate
}

// measure tells the chunk sizer (with "auto") what the exchange showed of the link.
func (r *resumable) measure(v verdict, chunkEnd int64) {
	u := r.u
	if (v == vAnswer || v == vHidden) && chunkEnd > r.s.offset && u.took > 0 {
		r.rate = float64(chunkEnd-r.s.offset) / u.took.Seconds()
	}
	if u.sizer == nil {
		return
	}
	switch {
	case (v == vAnswer || v == vHidden) && chunkEnd > r.s.offset:
		u.sizer.Answered(chunkEnd-r.s.offset, u.took, r.counted)
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

// restart answers a lost session (404: expired; 410: failed): a new session from byte 0
// (section 5), a bounded number of times.
func (r *resumable) restart(resp *Response) error {
	u := r.u
	r.lost++
	if r.lost > u.o.Retry.NewSessions || u.o.URL == "" {
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
func (u *Upload) wholeFinal(ctx Context, res *Result) *Result {
	if jsonObject(res.Body) || (len(res.Body) == 0 && u.hash == nil) {
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
// a checksum, the chunk's new bytes are hashed before it goes, and the last request states
// the hashes.
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
	if err := u.hash.add(ctx, u.src, offset, piece); err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, u.sourceError(err)
	}
	url := u.SessionURL()
	h := u.sessionHeader(url)
	h.Set("Content-Range", contentRange(offset, offset+n, u.total))
	if u.hash != nil && offset+n == u.total {
		h.Set("X-Goog-Hash", u.hash.header()) // every byte is hashed by now: state the hashes
	}
	req := &Request{Method: "PUT", URL: url, Header: h, Session: true}
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
