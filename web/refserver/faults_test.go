package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (s *testServer) faults(t *testing.T, rules ...Rule) {
	t.Helper()
	require.NoError(t, s.SetFaults(Faults{Rules: rules}))
}

func (s *testServer) query(t *testing.T, loc string) answer {
	t.Helper()
	return s.do(t, "PUT", loc, nil, "Content-Range: bytes */*")
}

func faultsLogged(s *Server) []string {
	var out []string
	for _, e := range s.Log() {
		if e.Fault != "" {
			out = append(out, e.Kind+": "+e.Fault)
		}
	}
	return out
}

func TestFaultStatusTimesAndSkip(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2 * K)
	s.faults(t,
		Rule{On: KindChunk, Action: ActionStatus, Status: 502, Times: 2, Skip: 1},
		Rule{On: KindQuery, Action: ActionStatus}, // default 503, once
	)
	loc := s.start(t, "POST", "&name=o", nil)
	want := []struct {
		body        []byte
		cr          string
		status      int
		storedAfter string
	}{
		{data[:K], cr(0, K-1, "*"), 308, "bytes=0-262143"}, // skipped
		{data[K:], cr(K, 2*K-1, "524288"), 502, "bytes=0-262143"},
		{data[K:], cr(K, 2*K-1, "524288"), 502, "bytes=0-262143"},
		{data[K:], cr(K, 2*K-1, "524288"), 201, ""},
	}
	first := true
	for i, w := range want {
		a := s.do(t, "PUT", loc, w.body, "Content-Range: "+w.cr)
		require.Equal(t, w.status, a.status, "request %d", i)
		if w.storedAfter != "" {
			q := s.query(t, loc)
			if first {
				// The query rule fires once, storing nothing.
				require.Equal(t, 503, q.status, "first query")
				first = false
				q = s.query(t, loc)
			}
			assert.Equal(t, 308, q.status, "after request %d", i)
			assert.Equal(t, w.storedAfter, q.header.Get("Range"), "after request %d (a 5xx stores nothing)", i)
		}
	}
	assert.Equal(t, []string{"query: status 503", "chunk: status 502", "chunk: status 502"}, faultsLogged(s.Server), "faults logged")
}

func TestFaultAlways(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindMedia, Action: ActionStatus, Status: 500, Times: -1})
	for i := range 5 {
		a := s.do(t, "POST", uploadPath+"?uploadType=media&name=x", []byte("x"))
		require.Equal(t, 500, a.status, "request %d", i)
	}
	a := s.do(t, "POST", uploadPath+"?uploadType=multipart", multipartBody("b", "{}", "text/plain", []byte("x")),
		"Content-Type: multipart/related; boundary=b")
	assert.Equal(t, 200, a.status, "multipart under a media rule")
}

func TestFaultClose(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(K + 100)
	loc := s.start(t, "POST", "&name=o", nil)
	s.faults(t, Rule{On: KindChunk, Action: ActionClose, AfterBytes: 1000})
	a, err := s.try("PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	require.Error(t, err, "close after 1000 bytes: got an answer %d, want a dropped connection", a.status)
	q := s.query(t, loc)
	assert.Equal(t, 308, q.status, "after the dropped chunk")
	assert.Empty(t, q.header.Get("Range"), "after the dropped chunk (nothing stored)")
	// Whole body read, then the connection dropped: stored, answer lost
	// (docs/protocol.md section 4).
	s.faults(t, Rule{On: KindAny, Action: ActionClose, AfterBytes: 1 << 30})
	a, err = s.try("PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data))))
	require.Error(t, err, "close after the whole body: got an answer %d, want a dropped connection", a.status)
	assert.Equal(t, 201, s.query(t, loc).status, "query after the lost final answer")
	s.stored(t, "o", data)
	var statuses []string
	for _, e := range s.Log() {
		if e.Fault != "" {
			statuses = append(statuses, fmt.Sprint(e.Status, " ", e.Fault))
		}
	}
	assert.Equal(t, []string{"0 close after 1000 bytes", "0 close after 1073741824 bytes"}, statuses, "log")
}

func TestFaultKeep(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*K + 10)
	total := strconv.Itoa(len(data))
	s.faults(t, Rule{On: KindChunk, Action: ActionKeep, Keep: 1000, Times: 2})
	loc := s.start(t, "POST", "&name=o", nil)
	a := s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	require.Equal(t, 308, a.status, "keep 1000")
	require.Equal(t, "bytes=0-999", a.header.Get("Range"), "keep 1000")
	// The next chunk starts where the server says: 1000, and it can be the
	// final one, which the fault cuts short again.
	a = s.do(t, "PUT", loc, data[1000:], "Content-Range: "+cr(1000, len(data)-1, total))
	require.Equal(t, 308, a.status, "keep 1000 of the final chunk")
	require.Equal(t, "bytes=0-1999", a.header.Get("Range"), "keep 1000 of the final chunk")
	a = s.do(t, "PUT", loc, data[2000:], "Content-Range: "+cr(2000, len(data)-1, total))
	require.Equal(t, 201, a.status, "rest: %s", a.body)
	// The checksums count the bytes kept, not the bytes sent.
	m, _ := sums(data)
	assert.Equal(t, m, a.json(t)["md5Hash"])
	s.stored(t, "o", data)
}

func TestFaultExpireAndGone(t *testing.T) {
	for _, c := range []struct {
		action string
		status int
	}{{ActionExpire, 404}, {ActionGone, 410}} {
		t.Run(c.action, func(t *testing.T) {
			s := newTestServer(t, Options{})
			loc := s.start(t, "POST", "", nil)
			s.do(t, "PUT", loc, testData(K), "Content-Range: "+cr(0, K-1, "*"))
			s.faults(t, Rule{On: KindQuery, Action: c.action})
			require.Equal(t, c.status, s.query(t, loc).status)
			assert.Equal(t, 404, s.query(t, loc).status, "after %s (session forgotten)", c.action)
		})
	}
}

func TestFaultUnauthorizedOnce(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindStart, Action: ActionUnauthorized})
	a := s.do(t, "POST", uploadPath+"?uploadType=resumable", nil, "Authorization: Bearer t1")
	require.Equal(t, 401, a.status)
	require.NotEmpty(t, a.header.Get("WWW-Authenticate"), "401 without a challenge")
	a = s.do(t, "POST", uploadPath+"?uploadType=resumable", nil, "Authorization: Bearer t2")
	assert.Equal(t, 200, a.status, "second start")
	log := s.Log()
	if assert.Len(t, log, 2) {
		assert.Equal(t, "Bearer t1", log[0].Authorization, "the first start's log entry")
		assert.Equal(t, "unauthorized", log[0].Fault, "the first start's log entry")
		assert.Equal(t, "Bearer t2", log[1].Authorization, "the second start's log entry")
		assert.Empty(t, log[1].Fault, "the second start's log entry")
	}
}

func TestFaultRateLimit(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindMultipart, Action: ActionRateLimit, RetryAfter: 2})
	body := multipartBody("b", `{"name":"n"}`, "text/plain", []byte("x"))
	a := s.do(t, "POST", uploadPath+"?uploadType=multipart", body, "Content-Type: multipart/related; boundary=b")
	require.Equal(t, 429, a.status)
	require.Equal(t, "2", a.header.Get("Retry-After"))
	_, _, ok := s.Object("n")
	assert.False(t, ok, "rate-limited upload stored")
	a = s.do(t, "POST", uploadPath+"?uploadType=multipart", body, "Content-Type: multipart/related; boundary=b")
	assert.Equal(t, 200, a.status, "retry")
}

func TestFaultRulesInvalid(t *testing.T) {
	s := New(Options{})
	for _, r := range []Rule{
		{On: "chunks", Action: ActionStatus},
		{On: KindChunk, Action: "explode"},
		{On: KindChunk, Action: ActionStatus, Status: 200},
		{On: KindChunk, Action: ActionKeep, Keep: -1},
	} {
		assert.Error(t, s.SetFaults(Faults{Rules: []Rule{r}}), "rule %+v accepted", r)
	}
	assert.Error(t, s.SetFaults(Faults{Random: &Random{Rate: 1.5}}), "rate 1.5 accepted")
}

// randomRun sends a fixed request sequence (independent of the answers)
// and returns what happened to each request and the faults logged.
func randomRun(t *testing.T, seed int64, rate float64) (outcomes, faults []string) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil)
	require.NoError(t, s.SetFaults(Faults{Random: &Random{Seed: seed, Rate: rate}}))
	data := testData(K)
	for i := range 60 {
		var a answer
		var err error
		switch i % 3 {
		case 0:
			a, err = s.try("POST", uploadPath+"?uploadType=media&name=m", data[:1000+i])
		case 1:
			a, err = s.try("PUT", loc, data, "Content-Range: "+cr(0, K-1, "*"))
		case 2:
			a, err = s.try("PUT", loc, nil, "Content-Range: bytes */*")
		}
		if err != nil {
			outcomes = append(outcomes, "dropped")
		} else {
			outcomes = append(outcomes, strconv.Itoa(a.status)+" "+a.header.Get("Range"))
		}
	}
	return outcomes, faultsLogged(s.Server)
}

func TestRandomFaultsDeterministic(t *testing.T) {
	o1, f1 := randomRun(t, 7, 0.5)
	o2, f2 := randomRun(t, 7, 0.5)
	require.Equal(t, o1, o2, "same seed, different outcomes")
	require.Equal(t, f1, f2, "same seed, different faults")
	assert.InDelta(t, 30, len(f1), 15, "faults in 60 requests at rate 0.5")
	_, f3 := randomRun(t, 8, 0.5)
	assert.NotEqual(t, f1, f3, "seeds 7 and 8 gave the same faults")
	_, f := randomRun(t, 7, 0)
	assert.Empty(t, f, "rate 0 injected faults")
	_, all := randomRun(t, 9, 1)
	assert.Len(t, all, 60, "rate 1: faults in 60 requests")
	for _, f := range append(f1, all...) {
		kind, fault, _ := strings.Cut(f, ": ")
		ok := strings.HasPrefix(fault, "random status 50") ||
			strings.HasPrefix(fault, "random close after ") ||
			fault == "random ratelimit retry-after 0" || fault == "random ratelimit retry-after 1" ||
			(kind == KindChunk && strings.HasPrefix(fault, "random keep ")) ||
			(fault == "random expire" && (kind == KindChunk || kind == KindQuery))
		assert.True(t, ok, "not a recoverable random fault: %s", f)
	}
}

// TestRandomFaultsRecoverable runs a simple resuming client (docs/protocol.md
// sections 4-5) against random faults: every upload must complete.
func TestRandomFaultsRecoverable(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.SetFaults(Faults{Random: &Random{Seed: 3, Rate: 0.3}}))
	data := testData(5*K + 77)
	for i := range 8 {
		name := "r" + strconv.Itoa(i)
		resumeUpload(t, s, name, data)
		require.True(t, s.stored(t, name, data), "upload %d did not complete under random faults; faults: %v", i, faultsLogged(s.Server))
	}
	assert.GreaterOrEqual(t, len(faultsLogged(s.Server)), 5, "faults injected")
}

// With EveryUpload, even at rate 0 every upload meets one fault early (a session's first chunk,
// a media upload's first try), never an expired session, and still completes.
func TestRandomEveryUpload(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.SetFaults(Faults{Random: &Random{Seed: 11, Rate: 0, EveryUpload: true}}))
	data := testData(3*K + 5)
	const sessions = 30
	for i := range sessions {
		name := "e" + strconv.Itoa(i)
		resumeUpload(t, s, name, data)
		require.True(t, s.stored(t, name, data), "upload %d did not complete; faults: %v", i, faultsLogged(s.Server))
	}
	faults := faultsLogged(s.Server)
	assert.Len(t, faults, sessions, "faults: want one for each session")
	for _, f := range faults {
		assert.True(t, strings.HasPrefix(f, "chunk: random ") && f != "chunk: random expire", "fault %q: want a random fault on a chunk, not an expired session", f)
	}

	// Three media uploads to the same URL, each tried until it goes through: the first try of
	// each fails, the second goes through.
	var tries []int
	for range 3 {
		for try := 1; ; try++ {
			if a, err := s.try("POST", uploadPath+"?uploadType=media&name=m", data[:1000]); err == nil && a.status == 200 {
				tries = append(tries, try)
				break
			}
			require.Less(t, try, 5, "a media upload failed 5 times at rate 0; faults: %v", faultsLogged(s.Server)[sessions:])
		}
	}
	assert.Equal(t, []int{2, 2, 2}, tries, "tries per media upload")

	// Without EveryUpload, rate 0 injects nothing.
	require.NoError(t, s.SetFaults(Faults{Random: &Random{Seed: 11, Rate: 0}}))
	n := len(faultsLogged(s.Server))
	resumeUpload(t, s, "plain", data)
	assert.Empty(t, faultsLogged(s.Server)[n:], "rate 0 without EveryUpload injected faults")
}

func resumeUpload(t *testing.T, s *testServer, name string, data []byte) {
	total := strconv.Itoa(len(data))
	loc := ""
	offset := 0
	for range 500 {
		if loc == "" {
			a, err := s.try("POST", uploadPath+"?uploadType=resumable&name="+name, nil)
			if err != nil || a.status != 200 {
				continue
			}
			loc, offset = a.header.Get("Location"), 0
		}
		end := min(offset+K, len(data))
		a, err := s.try("PUT", loc, data[offset:end], "Content-Range: "+cr(offset, end-1, total))
		if err == nil && (a.status == 200 || a.status == 201) {
			break
		}
		if err == nil && a.status == 404 {
			loc = ""
			continue
		}
		if err == nil && a.status == 308 {
			offset = rangeEnd(a.header.Get("Range"))
			continue
		}
		// Lost connection, 5xx or 429: ask (docs/protocol.md section 4).
		q, err := s.try("PUT", loc, nil, "Content-Range: bytes */"+total)
		switch {
		case err != nil:
		case q.status == 404:
			loc = ""
		case q.status == 201:
			offset = len(data)
		case q.status == 308:
			offset = rangeEnd(q.header.Get("Range"))
		}
		if offset == len(data) {
			break
		}
	}
}

func rangeEnd(h string) int {
	if h == "" {
		return 0
	}
	_, last, _ := strings.Cut(h, "-")
	n, _ := strconv.Atoi(last)
	return n + 1
}

func TestFaultSkip(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindMedia, Action: ActionStatus, Status: 504, Skip: 3, Times: 2})
	var got []int
	for range 6 {
		got = append(got, s.do(t, "POST", uploadPath+"?uploadType=media&name=x", []byte("x")).status)
	}
	assert.Equal(t, []int{200, 200, 200, 504, 504, 200}, got, "statuses")
}

// A stall fault holds the request unanswered until the client gives up, and stores nothing.
func TestStallHoldsTheRequestUntilTheClientGivesUp(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindChunk, Action: ActionStall, AfterBytes: 10})
	loc := s.start(t, "POST", "&name=o", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "PUT", loc, bytes.NewReader(testData(100)))
	req.Header.Set("Content-Range", "bytes 0-99/100")
	t0 := time.Now()
	resp, err := s.client.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	took := time.Since(t0)
	require.Error(t, err, "answered after %v; want no answer until the client's timeout", took)
	require.GreaterOrEqual(t, took, 250*time.Millisecond, "%v before the client's timeout", err)
	a := s.query(t, loc)
	require.Equal(t, 308, a.status, "after the stall")
	require.Empty(t, a.header.Get("Range"), "after the stall: want nothing stored")
}

// cutbody: the final chunk completes the object, and its answer's JSON comes cut in half; the
// session, asked, gives the whole metadata again.
func TestFaultCutBody(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(K + 10)
	s.faults(t, Rule{On: KindChunk, Action: ActionCutBody})
	loc := s.start(t, "POST", "&name=cut", nil)
	a := s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data))))
	require.Equal(t, 201, a.status, "cutbody")
	require.NotEmpty(t, a.body, "cutbody: want JSON cut off")
	require.False(t, json.Valid(a.body), "cutbody: %q, want JSON cut off", a.body)
	s.stored(t, "cut", data)
	q := s.query(t, loc)
	if assert.Equal(t, 201, q.status, "status query after it: %s", q.body) {
		assert.NotNil(t, q.json(t)["md5Hash"], "status query after it: %s, want the metadata", q.body)
	}
}

// corrupt: one byte of the body changes on its way in. Without a hash stated, the object is
// stored as received; with X-Goog-Hash on the last chunk, the server refuses it in Cloud
// Storage's words and stores nothing.
func TestFaultCorrupt(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*K + 10)
	md5b, crcb := sums(data)
	s.faults(t, Rule{On: KindChunk, Action: ActionCorrupt, AfterBytes: 7})
	loc := s.start(t, "POST", "&name=bare", nil)
	a := s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data))))
	require.Equal(t, 201, a.status, "without a hash: %s", a.body)
	want := bytes.Clone(data)
	want[7] ^= 0xff
	require.True(t, s.stored(t, "bare", want), "not the data with byte 7 changed")

	s.faults(t, Rule{On: KindChunk, Action: ActionCorrupt, Skip: 1}) // the second chunk's middle byte
	loc = s.start(t, "POST", "&name=hashed", nil)
	a = s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	require.Equal(t, 308, a.status, "first chunk")
	a = s.do(t, "PUT", loc, data[K:], "Content-Range: "+cr(K, len(data)-1, strconv.Itoa(len(data))), "X-Goog-Hash: crc32c="+crcb+",md5="+md5b)
	require.Equal(t, 400, a.status, "a changed byte with X-Goog-Hash: %s", a.body)
	require.Contains(t, string(a.body), "doesn't match calculated CRC32C", "a changed byte with X-Goog-Hash: want Cloud Storage's words")
	_, _, ok := s.Object("hashed")
	assert.False(t, ok, "the refused object was stored")
}

// A status fault in Google's JSON form, with the caller's message and reason.
func TestFaultStatusGoogleJSON(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindStart, Action: ActionStatus, Status: 403, Message: "The project exceeded its storage quota.", Reason: "quotaExceeded"})
	a := s.do(t, "POST", s.ts.URL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=x", nil)
	require.Equal(t, 403, a.status, "%s", a.body)
	e, _ := a.json(t)["error"].(map[string]any)
	assert.Equal(t, "The project exceeded its storage quota.", e["message"], "%s", a.body)
	errs, _ := e["errors"].([]any)
	if assert.Len(t, errs, 1, "%s", a.body) {
		assert.Equal(t, "quotaExceeded", errs[0].(map[string]any)["reason"], "%s", a.body)
	}
}
