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
)

func (s *testServer) faults(t *testing.T, rules ...Rule) {
	t.Helper()
	if err := s.SetFaults(Faults{Rules: rules}); err != nil {
		t.Fatal(err)
	}
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
		if a.status != w.status {
			t.Fatalf("request %d: status %d, want %d", i, a.status, w.status)
		}
		if w.storedAfter != "" {
			q := s.query(t, loc)
			if first {
				// The query rule fires once, storing nothing.
				if q.status != 503 {
					t.Fatalf("first query: status %d, want 503", q.status)
				}
				first = false
				q = s.query(t, loc)
			}
			if q.status != 308 || q.header.Get("Range") != w.storedAfter {
				t.Errorf("after request %d: %d %q, want 308 %q (a 5xx stores nothing)", i, q.status, q.header.Get("Range"), w.storedAfter)
			}
		}
	}
	got := strings.Join(faultsLogged(s.Server), "; ")
	if want := "query: status 503; chunk: status 502; chunk: status 502"; got != want {
		t.Errorf("faults logged %q, want %q", got, want)
	}
}

func TestFaultAlways(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindMedia, Action: ActionStatus, Status: 500, Times: -1})
	for i := range 5 {
		if a := s.do(t, "POST", uploadPath+"?uploadType=media&name=x", []byte("x")); a.status != 500 {
			t.Fatalf("request %d: status %d, want 500", i, a.status)
		}
	}
	if a := s.do(t, "POST", uploadPath+"?uploadType=multipart", multipartBody("b", "{}", "text/plain", []byte("x")),
		"Content-Type: multipart/related; boundary=b"); a.status != 200 {
		t.Errorf("multipart under a media rule: status %d, want 200", a.status)
	}
}

func TestFaultClose(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(K + 100)
	loc := s.start(t, "POST", "&name=o", nil)
	s.faults(t, Rule{On: KindChunk, Action: ActionClose, AfterBytes: 1000})
	if a, err := s.try("PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*")); err == nil {
		t.Fatalf("close after 1000 bytes: got an answer %d, want a dropped connection", a.status)
	}
	if q := s.query(t, loc); q.status != 308 || q.header.Get("Range") != "" {
		t.Errorf("after the dropped chunk: %d %q, want 308 and no Range (nothing stored)", q.status, q.header.Get("Range"))
	}
	// Whole body read, then the connection dropped: stored, answer lost
	// (docs/protocol.md section 4).
	s.faults(t, Rule{On: KindAny, Action: ActionClose, AfterBytes: 1 << 30})
	if a, err := s.try("PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data)))); err == nil {
		t.Fatalf("close after the whole body: got an answer %d, want a dropped connection", a.status)
	}
	if q := s.query(t, loc); q.status != 201 {
		t.Errorf("query after the lost final answer: status %d, want 201", q.status)
	}
	if _, got, ok := s.Object("o"); !ok || !bytes.Equal(got, data) {
		t.Error("object not stored after the lost final answer")
	}
	var statuses []string
	for _, e := range s.Log() {
		if e.Fault != "" {
			statuses = append(statuses, fmt.Sprint(e.Status, " ", e.Fault))
		}
	}
	if got, want := strings.Join(statuses, "; "), "0 close after 1000 bytes; 0 close after 1073741824 bytes"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestFaultKeep(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*K + 10)
	total := strconv.Itoa(len(data))
	s.faults(t, Rule{On: KindChunk, Action: ActionKeep, Keep: 1000, Times: 2})
	loc := s.start(t, "POST", "&name=o", nil)
	a := s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	if a.status != 308 || a.header.Get("Range") != "bytes=0-999" {
		t.Fatalf("keep 1000: %d %q, want 308 bytes=0-999", a.status, a.header.Get("Range"))
	}
	// The next chunk starts where the server says: 1000, and it can be the
	// final one, which the fault cuts short again.
	a = s.do(t, "PUT", loc, data[1000:], "Content-Range: "+cr(1000, len(data)-1, total))
	if a.status != 308 || a.header.Get("Range") != "bytes=0-1999" {
		t.Fatalf("keep 1000 of the final chunk: %d %q, want 308 bytes=0-1999", a.status, a.header.Get("Range"))
	}
	a = s.do(t, "PUT", loc, data[2000:], "Content-Range: "+cr(2000, len(data)-1, total))
	if a.status != 201 {
		t.Fatalf("rest: status %d, want 201: %s", a.status, a.body)
	}
	// The checksums count the bytes kept, not the bytes sent.
	if m, _ := sums(data); a.json(t)["md5Hash"] != m {
		t.Errorf("md5Hash %v, want %s", a.json(t)["md5Hash"], m)
	}
	if _, got, _ := s.Object("o"); !bytes.Equal(got, data) {
		t.Error("stored object differs from the data")
	}
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
			if a := s.query(t, loc); a.status != c.status {
				t.Fatalf("status %d, want %d", a.status, c.status)
			}
			if a := s.query(t, loc); a.status != 404 {
				t.Errorf("after %s: status %d, want 404 (session forgotten)", c.action, a.status)
			}
		})
	}
}

func TestFaultUnauthorizedOnce(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindStart, Action: ActionUnauthorized})
	a := s.do(t, "POST", uploadPath+"?uploadType=resumable", nil, "Authorization: Bearer t1")
	if a.status != 401 || a.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("status %d WWW-Authenticate %q, want 401 with a challenge", a.status, a.header.Get("WWW-Authenticate"))
	}
	if a := s.do(t, "POST", uploadPath+"?uploadType=resumable", nil, "Authorization: Bearer t2"); a.status != 200 {
		t.Errorf("second start: status %d, want 200", a.status)
	}
	log := s.Log()
	if len(log) != 2 || log[0].Authorization != "Bearer t1" || log[0].Fault != "unauthorized" || log[1].Authorization != "Bearer t2" || log[1].Fault != "" {
		t.Errorf("log %+v", log)
	}
}

func TestFaultRateLimit(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindMultipart, Action: ActionRateLimit, RetryAfter: 2})
	body := multipartBody("b", `{"name":"n"}`, "text/plain", []byte("x"))
	a := s.do(t, "POST", uploadPath+"?uploadType=multipart", body, "Content-Type: multipart/related; boundary=b")
	if a.status != 429 || a.header.Get("Retry-After") != "2" {
		t.Fatalf("%d Retry-After %q, want 429 and 2", a.status, a.header.Get("Retry-After"))
	}
	if _, _, ok := s.Object("n"); ok {
		t.Error("rate-limited upload stored")
	}
	if a := s.do(t, "POST", uploadPath+"?uploadType=multipart", body, "Content-Type: multipart/related; boundary=b"); a.status != 200 {
		t.Errorf("retry: status %d, want 200", a.status)
	}
}

func TestFaultRulesInvalid(t *testing.T) {
	s := New(Options{})
	for _, r := range []Rule{
		{On: "chunks", Action: ActionStatus},
		{On: KindChunk, Action: "explode"},
		{On: KindChunk, Action: ActionStatus, Status: 200},
		{On: KindChunk, Action: ActionKeep, Keep: -1},
	} {
		if err := s.SetFaults(Faults{Rules: []Rule{r}}); err == nil {
			t.Errorf("rule %+v accepted", r)
		}
	}
	if err := s.SetFaults(Faults{Random: &Random{Rate: 1.5}}); err == nil {
		t.Error("rate 1.5 accepted")
	}
}

// randomRun sends a fixed request sequence (independent of the answers)
// and returns what happened to each request and the faults logged.
func randomRun(t *testing.T, seed int64, rate float64) (outcomes, faults []string) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil)
	if err := s.SetFaults(Faults{Random: &Random{Seed: seed, Rate: rate}}); err != nil {
		t.Fatal(err)
	}
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
	if fmt.Sprint(o1) != fmt.Sprint(o2) || fmt.Sprint(f1) != fmt.Sprint(f2) {
		t.Fatalf("same seed, different runs:\n%v\n%v\n%v\n%v", o1, o2, f1, f2)
	}
	if len(f1) < 15 || len(f1) > 45 {
		t.Errorf("%d faults in 60 requests at rate 0.5", len(f1))
	}
	_, f3 := randomRun(t, 8, 0.5)
	if fmt.Sprint(f1) == fmt.Sprint(f3) {
		t.Error("seeds 7 and 8 gave the same faults")
	}
	if _, f := randomRun(t, 7, 0); len(f) != 0 {
		t.Errorf("rate 0 injected %v", f)
	}
	_, all := randomRun(t, 9, 1)
	if len(all) != 60 {
		t.Errorf("rate 1: %d faults in 60 requests", len(all))
	}
	for _, f := range append(f1, all...) {
		kind, fault, _ := strings.Cut(f, ": ")
		ok := strings.HasPrefix(fault, "random status 50") ||
			strings.HasPrefix(fault, "random close after ") ||
			fault == "random ratelimit retry-after 0" || fault == "random ratelimit retry-after 1" ||
			(kind == KindChunk && strings.HasPrefix(fault, "random keep ")) ||
			(fault == "random expire" && (kind == KindChunk || kind == KindQuery))
		if !ok {
			t.Errorf("not a recoverable random fault: %s", f)
		}
	}
}

// TestRandomFaultsRecoverable runs a simple resuming client (docs/protocol.md
// sections 4-5) against random faults: every upload must complete.
func TestRandomFaultsRecoverable(t *testing.T) {
	s := newTestServer(t, Options{})
	if err := s.SetFaults(Faults{Random: &Random{Seed: 3, Rate: 0.3}}); err != nil {
		t.Fatal(err)
	}
	data := testData(5*K + 77)
	for i := range 8 {
		name := "r" + strconv.Itoa(i)
		resumeUpload(t, s, name, data)
		if _, got, ok := s.Object(name); !ok || !bytes.Equal(got, data) {
			t.Fatalf("upload %d did not complete under random faults (stored %v); faults: %v", i, ok, faultsLogged(s.Server))
		}
	}
	if n := len(faultsLogged(s.Server)); n < 5 {
		t.Errorf("only %d faults injected", n)
	}
}

// With EveryUpload, even at rate 0 every upload meets one fault early (a session's first chunk,
// a media upload's first try), never an expired session, and still completes.
func TestRandomEveryUpload(t *testing.T) {
	s := newTestServer(t, Options{})
	if err := s.SetFaults(Faults{Random: &Random{Seed: 11, Rate: 0, EveryUpload: true}}); err != nil {
		t.Fatal(err)
	}
	data := testData(3*K + 5)
	const sessions = 30
	for i := range sessions {
		name := "e" + strconv.Itoa(i)
		resumeUpload(t, s, name, data)
		if _, got, ok := s.Object(name); !ok || !bytes.Equal(got, data) {
			t.Fatalf("upload %d did not complete (stored %v); faults: %v", i, ok, faultsLogged(s.Server))
		}
	}
	faults := faultsLogged(s.Server)
	if len(faults) != sessions {
		t.Errorf("%d faults for %d sessions, want one each: %v", len(faults), sessions, faults)
	}
	for _, f := range faults {
		if !strings.HasPrefix(f, "chunk: random ") || f == "chunk: random expire" {
			t.Errorf("fault %q: want a random fault on a chunk, not an expired session", f)
		}
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
			if try == 5 {
				t.Fatalf("a media upload failed 5 times at rate 0; faults: %v", faultsLogged(s.Server)[sessions:])
			}
		}
	}
	if fmt.Sprint(tries) != "[2 2 2]" {
		t.Errorf("tries per media upload %v, want [2 2 2]", tries)
	}

	// Without EveryUpload, rate 0 injects nothing.
	if err := s.SetFaults(Faults{Random: &Random{Seed: 11, Rate: 0}}); err != nil {
		t.Fatal(err)
	}
	n := len(faultsLogged(s.Server))
	resumeUpload(t, s, "plain", data)
	if got := faultsLogged(s.Server)[n:]; len(got) != 0 {
		t.Errorf("rate 0 without EveryUpload injected %v", got)
	}
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
	if fmt.Sprint(got) != "[200 200 200 504 504 200]" {
		t.Errorf("statuses %v, want [200 200 200 504 504 200]", got)
	}
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
	if err == nil || time.Since(t0) < 250*time.Millisecond {
		t.Fatalf("answered after %v (%v); want no answer until the client's timeout", time.Since(t0), err)
	}
	if a := s.query(t, loc); a.status != 308 || a.header.Get("Range") != "" {
		t.Fatalf("after the stall: %d Range %q, want 308 with nothing stored", a.status, a.header.Get("Range"))
	}
}

// cutbody: the final chunk completes the object, and its answer's JSON comes cut in half; the
// session, asked, gives the whole metadata again.
func TestFaultCutBody(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(K + 10)
	s.faults(t, Rule{On: KindChunk, Action: ActionCutBody})
	loc := s.start(t, "POST", "&name=cut", nil)
	a := s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data))))
	if a.status != 201 || json.Valid(a.body) || len(a.body) == 0 {
		t.Fatalf("cutbody: %d %q, want 201 and JSON cut off", a.status, a.body)
	}
	if _, got, _ := s.Object("cut"); !bytes.Equal(got, data) {
		t.Error("the object was not stored whole")
	}
	if q := s.query(t, loc); q.status != 201 || q.json(t)["md5Hash"] == nil {
		t.Errorf("status query after it: %d %s, want 201 with the metadata", q.status, q.body)
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
	if a := s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data)))); a.status != 201 {
		t.Fatalf("without a hash: %d %s, want 201", a.status, a.body)
	}
	_, got, _ := s.Object("bare")
	want := bytes.Clone(data)
	want[7] ^= 0xff
	if !bytes.Equal(got, want) {
		t.Fatalf("stored %d bytes, not the data with byte 7 changed", len(got))
	}

	s.faults(t, Rule{On: KindChunk, Action: ActionCorrupt, Skip: 1}) // the second chunk's middle byte
	loc = s.start(t, "POST", "&name=hashed", nil)
	if a := s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*")); a.status != 308 {
		t.Fatalf("first chunk: %d", a.status)
	}
	a := s.do(t, "PUT", loc, data[K:], "Content-Range: "+cr(K, len(data)-1, strconv.Itoa(len(data))), "X-Goog-Hash: crc32c="+crcb+",md5="+md5b)
	if a.status != 400 || !strings.Contains(string(a.body), "doesn't match calculated CRC32C") {
		t.Fatalf("a changed byte with X-Goog-Hash: %d %s, want 400 in Cloud Storage's words", a.status, a.body)
	}
	if _, _, ok := s.Object("hashed"); ok {
		t.Error("the refused object was stored")
	}
}

// A status fault in Google's JSON form, with the caller's message and reason.
func TestFaultStatusGoogleJSON(t *testing.T) {
	s := newTestServer(t, Options{})
	s.faults(t, Rule{On: KindStart, Action: ActionStatus, Status: 403, Message: "The project exceeded its storage quota.", Reason: "quotaExceeded"})
	a := s.do(t, "POST", s.ts.URL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=x", nil)
	e, _ := a.json(t)["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	if a.status != 403 || e["message"] != "The project exceeded its storage quota." || len(errs) != 1 || errs[0].(map[string]any)["reason"] != "quotaExceeded" {
		t.Fatalf("answer %d %s", a.status, a.body)
	}
}
