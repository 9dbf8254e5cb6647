package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestCORSPreflight(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil)
	for _, target := range []string{loc, uploadPath + "?uploadType=resumable", "/_ref/faults", "/_ref/reset"} {
		a := s.do(t, "OPTIONS", target, nil, "Origin: http://page.test",
			"Access-Control-Request-Method: PUT",
			"Access-Control-Request-Headers: content-range,x-goog-hash,x-guploader-no-308")
		h := a.header
		if a.status != 204 ||
			h.Get("Access-Control-Allow-Origin") != "http://page.test" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PUT") ||
			h.Get("Access-Control-Allow-Headers") != "content-range,x-goog-hash,x-guploader-no-308" ||
			h.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("preflight of %s: %d %v", target, a.status, h)
		}
	}
	// Without Access-Control-Request-Headers: the protocol's list.
	a := s.do(t, "OPTIONS", loc, nil, "Origin: http://page.test", "Access-Control-Request-Method: PUT")
	allowed := strings.ToLower(a.header.Get("Access-Control-Allow-Headers"))
	for _, name := range []string{"content-type", "content-range", "x-upload-content-type", "x-upload-content-length", "authorization", "x-goog-hash", "x-guploader-no-308"} {
		if !strings.Contains(allowed, name) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowed, name)
		}
	}
	// Preflights are logged but never faulted.
	s.faults(t, Rule{On: KindAny, Action: ActionStatus, Times: -1})
	if a := s.do(t, "OPTIONS", loc, nil, "Origin: http://page.test", "Access-Control-Request-Method: PUT"); a.status != 204 {
		t.Errorf("preflight under an always-500 rule: status %d", a.status)
	}
	log := s.Log()
	if last := log[len(log)-1]; last.Method != "OPTIONS" || last.Kind != "preflight" || last.Status != 204 {
		t.Errorf("last log entry %+v, want the preflight", last)
	}
}

func TestCORSOnEveryAnswer(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil, "Origin: http://page.test")
	type req struct {
		name, method, url string
		body              []byte
		hdr               []string
	}
	reqs := []req{
		{"308", "PUT", loc, testData(K), []string{"Content-Range: bytes 0-262143/*"}},
		{"400", "PUT", loc, []byte("x"), []string{"Content-Range: bytes 0-0/*"}},
		{"404 session", "PUT", uploadPath + "?upload_id=nope", nil, []string{"Content-Range: bytes */*"}},
		{"201", "PUT", loc, []byte("x"), []string{"Content-Range: bytes 262144-262144/262145"}},
		{"control", "GET", "/_ref/objects", nil, nil},
		{"control 404", "GET", "/_ref/nothing", nil, nil},
	}
	for _, r := range reqs {
		a := s.do(t, r.method, r.url, r.body, append(r.hdr, "Origin: http://page.test")...)
		h := a.header
		expose := h.Get("Access-Control-Expose-Headers")
		if h.Get("Access-Control-Allow-Origin") != "http://page.test" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", r.name, h.Get("Access-Control-Allow-Origin"))
		}
		for _, name := range []string{"Location", "Range", "X-HTTP-Status-Code-Override", "X-Goog-Hash"} {
			if !strings.Contains(expose, name) {
				t.Errorf("%s: Access-Control-Expose-Headers %q lacks %s", r.name, expose, name)
			}
		}
	}
	if a := s.do(t, "GET", "/_ref/log", nil); a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("without Origin: Access-Control-Allow-Origin %q, want *", a.header.Get("Access-Control-Allow-Origin"))
	}
}

func TestControlAPI(t *testing.T) {
	s := newTestServer(t, Options{})

	// Faults by JSON, as doc.go lists them.
	script := `{"rules":[{"on":"media","action":"status","status":503,"times":1}],"random":{"seed":5,"rate":0}}`
	if a := s.do(t, "POST", "/_ref/faults", []byte(script), "Content-Type: application/json"); a.status != 200 {
		t.Fatalf("POST /_ref/faults: %d %s", a.status, a.body)
	}
	var got Faults
	if err := json.Unmarshal(s.do(t, "GET", "/_ref/faults", nil).body, &got); err != nil || len(got.Rules) != 1 || got.Rules[0].Status != 503 || got.Random == nil || got.Random.Seed != 5 {
		t.Errorf("GET /_ref/faults: %+v %v", got, err)
	}
	media := uploadPath + "?uploadType=media&name=dir/a.txt"
	if a := s.do(t, "POST", media, []byte("abc"), "Content-Type: text/plain", "Authorization: Bearer xyz"); a.status != 503 {
		t.Errorf("faulted media: status %d, want 503", a.status)
	}
	if a := s.do(t, "POST", "/_ref/faults", []byte(`{"rules":[{"on":"nope","action":"status"}]}`)); a.status != 400 {
		t.Errorf("invalid rule: status %d, want 400", a.status)
	}
	if a := s.do(t, "POST", "/_ref/faults", []byte(`{"rules":`)); a.status != 400 {
		t.Errorf("invalid JSON: status %d, want 400", a.status)
	}
	s.do(t, "POST", "/_ref/faults", []byte(`{"rules":[{"on":"any","action":"status"}]}`))
	s.do(t, "DELETE", "/_ref/faults", nil)
	if a := s.do(t, "POST", media, []byte("abc"), "Content-Type: text/plain"); a.status != 200 {
		t.Fatalf("media after DELETE /_ref/faults: status %d, want 200", a.status)
	}

	// The log, with the fields doc.go lists.
	var log []map[string]any
	if err := json.Unmarshal(s.do(t, "GET", "/_ref/log", nil).body, &log); err != nil || len(log) != 2 {
		t.Fatalf("GET /_ref/log: %v %v", log, err)
	}
	for _, k := range []string{"time", "method", "path", "query", "contentRange", "contentLength", "status", "authorization", "fault"} {
		if _, ok := log[0][k]; !ok {
			t.Errorf("log entry lacks %q: %v", k, log[0])
		}
	}
	if log[0]["status"] != 503.0 || log[0]["fault"] != "status 503" || log[0]["authorization"] != "Bearer xyz" ||
		log[0]["contentLength"] != 3.0 || log[1]["status"] != 200.0 || log[1]["query"] != "uploadType=media&name=dir/a.txt" {
		t.Errorf("log %v", log)
	}
	s.do(t, "DELETE", "/_ref/log", nil)
	if b := s.do(t, "GET", "/_ref/log", nil).body; strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("log after DELETE: %s", b)
	}

	// Objects.
	var objs []map[string]any
	if err := json.Unmarshal(s.do(t, "GET", "/_ref/objects", nil).body, &objs); err != nil || len(objs) != 1 {
		t.Fatalf("GET /_ref/objects: %v %v", objs, err)
	}
	md5b, crcb := sums([]byte("abc"))
	o := objs[0]
	if o["name"] != "dir/a.txt" || o["bucket"] != "bkt" || o["size"] != "3" || o["md5Hash"] != md5b || o["crc32c"] != crcb || o["contentType"] != "text/plain" {
		t.Errorf("object %v", o)
	}
	if v, ok := o["metadataJSON"]; !ok || v != nil {
		t.Errorf("metadataJSON %v (present %v), want null for a media upload", v, ok)
	}
	a := s.do(t, "GET", "/_ref/objects/dir/a.txt", nil)
	if a.status != 200 || string(a.body) != "abc" || a.header.Get("Content-Type") != "text/plain" {
		t.Errorf("download: %d %q %q", a.status, a.body, a.header.Get("Content-Type"))
	}
	if a := s.do(t, "GET", "/_ref/objects/nope", nil); a.status != 404 {
		t.Errorf("unknown object: status %d, want 404", a.status)
	}

	// Config.
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"rangeForm":"plain","sessionOrigin":"http://127.0.0.1:1"}`)); a.status != 200 {
		t.Fatalf("POST /_ref/config: %d %s", a.status, a.body)
	}
	loc := s.start(t, "POST", "&name=c", []byte(`{"metadata":{"x":"1"}}`))
	if !strings.HasPrefix(loc, "http://127.0.0.1:1/upload/") {
		t.Errorf("Location %q, want the configured origin", loc)
	}
	s.do(t, "POST", "/_ref/config", []byte(`{"sessionOrigin":""}`))
	loc = s.start(t, "POST", "&name=c", []byte(`{"metadata":{"x":"1"}}`))
	if a := s.do(t, "PUT", loc, testData(K), "Content-Range: bytes 0-262143/*"); a.header.Get("Range") != "0-262143" {
		t.Errorf("Range %q, want the plain form (rangeForm kept when only sessionOrigin is posted)", a.header.Get("Range"))
	}
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"rangeForm":"bytes"}`)); a.status != 400 {
		t.Errorf("bad range form: status %d, want 400", a.status)
	}
	var cfg map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if cfg["rangeForm"] != "plain" || cfg["sessionOrigin"] != "" {
		t.Errorf("GET /_ref/config: %v", cfg)
	}

	// The emulated link: answers one round trip late, bodies at its rate; the control API
	// is not slowed.
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":16000000,"rttMs":200}}`)); a.status != 200 {
		t.Fatalf("POST link: %d %s", a.status, a.body)
	}
	t0 := time.Now()
	loc = s.start(t, "POST", "&name=l", nil)
	if d := time.Since(t0); d < 200*time.Millisecond {
		t.Errorf("a session start over a 200 ms link took %v", d)
	}
	t0 = time.Now()
	s.do(t, "PUT", loc, testData(4*K), "Content-Range: bytes 0-1048575/1048576") // 1 MiB at 2 MB/s
	if d := time.Since(t0); d < 700*time.Millisecond {
		t.Errorf("1 MiB over a 16 Mbit/s link took %v", d)
	}
	t0 = time.Now()
	s.do(t, "GET", "/_ref/config", nil)
	if d := time.Since(t0); d > 150*time.Millisecond {
		t.Errorf("the control API went through the link: %v", d)
	}
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":-1}}`)); a.status != 400 {
		t.Errorf("a negative rate: %d", a.status)
	}
	s.do(t, "POST", "/_ref/reset", nil)
	t0 = time.Now()
	s.start(t, "POST", "&name=m", nil)
	if d := time.Since(t0); d > 150*time.Millisecond {
		t.Errorf("reset kept the link: %v", d)
	}

	// Reset.
	s.SetFaults(Faults{Rules: []Rule{{On: KindAny, Action: ActionStatus, Times: -1}}})
	if a := s.do(t, "POST", "/_ref/reset", nil); a.status != 200 {
		t.Fatalf("POST /_ref/reset: %d", a.status)
	}
	if len(s.Objects()) != 0 || len(s.Log()) != 0 || len(s.CurrentFaults().Rules) != 0 {
		t.Errorf("after reset: %d objects, %d log entries, %d rules", len(s.Objects()), len(s.Log()), len(s.CurrentFaults().Rules))
	}
	if a := s.do(t, "PUT", loc, nil, "Content-Range: bytes */*"); a.status != 404 {
		t.Errorf("session after reset: status %d, want 404", a.status)
	}
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if cfg["rangeForm"] != RangeBytes {
		t.Errorf("range form after reset: %q", cfg["rangeForm"])
	}
}

func TestMetadataJSONListed(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", []byte(`{"name":"m","metadata":{"k":"v"}}`))
	s.do(t, "PUT", loc, []byte("x"))
	var objs []map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/objects", nil).body, &objs)
	mj, _ := objs[0]["metadataJSON"].(map[string]any)
	if mj["name"] != "m" || mj["metadata"].(map[string]any)["k"] != "v" {
		t.Errorf("metadataJSON %v", objs[0]["metadataJSON"])
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	s := newTestServer(t, Options{Dir: dir})
	data := testData(1000)
	if a := s.do(t, "POST", uploadPath+"?uploadType=media&name=../../up/../x", data, "Content-Type: application/x-test"); a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 2 {
		t.Fatalf("%d files in the folder, want 2", len(files))
	}
	s2 := New(Options{Dir: dir})
	o, got, ok := s2.Object("../../up/../x")
	if !ok || !bytes.Equal(got, data) || o.ContentType != "application/x-test" || o.Size != 1000 {
		t.Fatalf("reloaded object: %v %+v", ok, o)
	}
	s2.Reset()
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d files left after reset", len(files))
	}
	if len(New(Options{Dir: dir}).Objects()) != 0 {
		t.Error("objects after reset")
	}
}

func TestNotUploadPath(t *testing.T) {
	s := newTestServer(t, Options{})
	if a := s.do(t, "POST", "/storage/v1/b/x/o?uploadType=media", []byte("x")); a.status != http.StatusNotFound {
		t.Errorf("status %d, want 404", a.status)
	}
}

func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/100", "bytes 0-262143/*", "bytes */*", "bytes */5", "bytes 5-4/10", "bytes=0-1/2", "bytes 1-2/2", "bytes 00-0/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := parseContentRange(s)
		if err != nil {
			return
		}
		if cr.total < -1 {
			t.Fatalf("%q: total %d", s, cr.total)
		}
		if !cr.query && (cr.first < 0 || cr.first > cr.last || (cr.total >= 0 && cr.last >= cr.total)) {
			t.Fatalf("%q: accepted %+v", s, cr)
		}
	})
}

func TestDeleteObject(t *testing.T) {
	s := newTestServer(t, Options{})
	done := s.start(t, "POST", "&name=gone", nil)
	if a := s.do(t, "PUT", done, []byte("abc")); a.status != http.StatusCreated {
		t.Fatalf("upload: status %d: %s", a.status, a.body)
	}
	// A second session of the same name, still running, and another object.
	running := s.start(t, "POST", "&name=gone", nil)
	s.do(t, "PUT", running, testData(K), "Content-Range: bytes 0-262143/*")
	s.do(t, "POST", uploadPath+"?uploadType=media&name=kept", []byte("k"), "Content-Type: text/plain")

	if a := s.do(t, "DELETE", "/_ref/objects/gone", nil); a.status != 200 {
		t.Fatalf("DELETE /_ref/objects/gone: %d %s", a.status, a.body)
	}
	if a := s.do(t, "GET", "/_ref/objects/gone", nil); a.status != 404 {
		t.Errorf("deleted object: status %d, want 404", a.status)
	}
	if _, _, ok := s.Object("kept"); !ok || len(s.Objects()) != 1 {
		t.Errorf("other objects: %v", s.Objects())
	}
	// The completed session went with its object (it held the bytes); the running one did not.
	if a := s.do(t, "PUT", done, nil, "Content-Range: bytes */3"); a.status != 404 {
		t.Errorf("completed session after DELETE: status %d, want 404", a.status)
	}
	if a := s.do(t, "PUT", running, nil, "Content-Range: bytes */*"); a.status != 308 || a.header.Get("Range") != "bytes=0-262143" {
		t.Errorf("running session after DELETE: status %d, Range %q", a.status, a.header.Get("Range"))
	}
	if a := s.do(t, "DELETE", "/_ref/objects/gone", nil); a.status != 404 {
		t.Errorf("DELETE again: status %d, want 404", a.status)
	}
}

// The link's schedule by JSON: set, read back with the step in force, refused with a clear
// message when bad (changing nothing), replaced by a steady link, cleared by reset.
func TestConfigLinkSchedule(t *testing.T) {
	s := newTestServer(t, Options{})
	type link struct {
		BitsPerSecond int64            `json:"bitsPerSecond"`
		RTTMs         int64            `json:"rttMs"`
		Schedule      []map[string]any `json:"schedule"`
	}
	getLink := func() link {
		var cfg struct{ Link link }
		json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
		return cfg.Link
	}
	sched := `{"link":{"schedule":[{"atMs":0,"bitsPerSecond":8000000,"rttMs":300},{"atMs":300,"bitsPerSecond":0,"rttMs":0,"blackout":true},{"atMs":400,"bitsPerSecond":16000000,"rttMs":0}]}}`
	if a := s.do(t, "POST", "/_ref/config", []byte(sched)); a.status != 200 {
		t.Fatalf("POST schedule: %d %s", a.status, a.body)
	}
	l := getLink()
	want := `[map[atMs:0 bitsPerSecond:8e+06 blackout:false rttMs:300] map[atMs:300 bitsPerSecond:0 blackout:true rttMs:0] map[atMs:400 bitsPerSecond:1.6e+07 blackout:false rttMs:0]]`
	if l.BitsPerSecond != 8000000 || l.RTTMs != 300 || fmt.Sprint(l.Schedule) != want {
		t.Errorf("GET link %+v, want the first step in force and the schedule %s", l, want)
	}

	// The clock starts with the first request: it gets the first step's round trip, however
	// long after the POST it comes.
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	s.start(t, "POST", "&name=s", nil)
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("a session start at the schedule's start took %v, want its 300 ms round trip", d)
	}
	time.Sleep(150 * time.Millisecond) // past the blackout
	if l := getLink(); l.BitsPerSecond != 16000000 || l.RTTMs != 0 {
		t.Errorf("GET link after 450 ms: %+v, want the last step in force", l)
	}

	bad := map[string]string{
		`{"link":{"schedule":[]}}`:                                            "at least one step",
		`{"link":{"schedule":[{"atMs":5}]}}`:                                  "first step is at 5ms",
		`{"link":{"schedule":[{"atMs":0},{"atMs":10},{"atMs":10}]}}`:          "step 2 at 10ms does not come after step 1",
		`{"link":{"schedule":[{"atMs":0},{"atMs":10,"bitsPerSecond":-8}]}}`:   "schedule step 1",
		`{"link":{"schedule":[{"atMs":0,"rttMs":-1}]}}`:                       "must not be negative",
		`{"rangeForm":"plain","link":{"schedule":[{"atMs":0},{"atMs":-10}]}}`: "schedule step 1",
	}
	for body, msg := range bad {
		a := s.do(t, "POST", "/_ref/config", []byte(body))
		if m, _ := a.json(t)["error"].(map[string]any); a.status != 400 || !strings.Contains(fmt.Sprint(m["message"]), msg) {
			t.Errorf("%s: %d %s, want 400 saying %q", body, a.status, a.body, msg)
		}
	}
	var cfg map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if cfg["rangeForm"] != RangeBytes || len(getLink().Schedule) != 3 {
		t.Errorf("after the refused POSTs: %v, want the config as it was", cfg)
	}

	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":24000000,"rttMs":7}}`))
	if l := getLink(); l.BitsPerSecond != 24000000 || l.RTTMs != 7 || l.Schedule != nil {
		t.Errorf("after a steady link: %+v", l)
	}
	s.do(t, "POST", "/_ref/config", []byte(sched))
	s.do(t, "POST", "/_ref/reset", nil)
	if l := getLink(); l.BitsPerSecond != 0 || l.RTTMs != 0 || l.Schedule != nil {
		t.Errorf("after reset: %+v, want no link", l)
	}
}
