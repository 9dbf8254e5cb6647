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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCORSPreflight(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil)
	for _, target := range []string{loc, uploadPath + "?uploadType=resumable", "/_ref/faults", "/_ref/reset"} {
		a := s.do(t, "OPTIONS", target, nil, "Origin: http://page.test",
			"Access-Control-Request-Method: PUT",
			"Access-Control-Request-Headers: content-range,x-goog-hash,x-guploader-no-308")
		h := a.header
		assert.Equal(t, 204, a.status, "preflight of %s", target)
		assert.Equal(t, "http://page.test", h.Get("Access-Control-Allow-Origin"), "preflight of %s", target)
		assert.Contains(t, h.Get("Access-Control-Allow-Methods"), "PUT", "preflight of %s", target)
		assert.Equal(t, "content-range,x-goog-hash,x-guploader-no-308", h.Get("Access-Control-Allow-Headers"), "preflight of %s", target)
		assert.Equal(t, "600", h.Get("Access-Control-Max-Age"), "preflight of %s", target)
	}
	// Without Access-Control-Request-Headers: the protocol's list.
	a := s.do(t, "OPTIONS", loc, nil, "Origin: http://page.test", "Access-Control-Request-Method: PUT")
	allowed := strings.ToLower(a.header.Get("Access-Control-Allow-Headers"))
	for _, name := range []string{"content-type", "content-range", "x-upload-content-type", "x-upload-content-length", "authorization", "x-goog-hash", "x-guploader-no-308"} {
		assert.Contains(t, allowed, name, "Access-Control-Allow-Headers")
	}
	// Preflights are logged but never faulted.
	s.faults(t, Rule{On: KindAny, Action: ActionStatus, Times: -1})
	a = s.do(t, "OPTIONS", loc, nil, "Origin: http://page.test", "Access-Control-Request-Method: PUT")
	assert.Equal(t, 204, a.status, "preflight under an always-500 rule")
	log := s.Log()
	last := log[len(log)-1]
	assert.Equal(t, "OPTIONS", last.Method, "the last log entry, the preflight's")
	assert.Equal(t, "preflight", last.Kind, "the last log entry, the preflight's")
	assert.Equal(t, 204, last.Status, "the last log entry, the preflight's")
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
		assert.Equal(t, "http://page.test", h.Get("Access-Control-Allow-Origin"), "%s: Access-Control-Allow-Origin", r.name)
		for _, name := range []string{"Location", "Range", "X-HTTP-Status-Code-Override", "X-Goog-Hash"} {
			assert.Contains(t, expose, name, "%s: Access-Control-Expose-Headers", r.name)
		}
	}
	a := s.do(t, "GET", "/_ref/log", nil)
	assert.Equal(t, "*", a.header.Get("Access-Control-Allow-Origin"), "without Origin: Access-Control-Allow-Origin")
}

func TestControlAPI(t *testing.T) {
	s := newTestServer(t, Options{})

	// Faults by JSON, as doc.go lists them.
	script := `{"rules":[{"on":"media","action":"status","status":503,"times":1}],"random":{"seed":5,"rate":0}}`
	a := s.do(t, "POST", "/_ref/faults", []byte(script), "Content-Type: application/json")
	require.Equal(t, 200, a.status, "POST /_ref/faults: %s", a.body)
	var got Faults
	require.NoError(t, json.Unmarshal(s.do(t, "GET", "/_ref/faults", nil).body, &got), "GET /_ref/faults")
	if assert.Len(t, got.Rules, 1, "GET /_ref/faults") {
		assert.Equal(t, 503, got.Rules[0].Status, "GET /_ref/faults")
	}
	if assert.NotNil(t, got.Random, "GET /_ref/faults") {
		assert.Equal(t, int64(5), got.Random.Seed, "GET /_ref/faults")
	}
	media := uploadPath + "?uploadType=media&name=dir/a.txt"
	a = s.do(t, "POST", media, []byte("abc"), "Content-Type: text/plain", "Authorization: Bearer xyz")
	assert.Equal(t, 503, a.status, "faulted media")
	a = s.do(t, "POST", "/_ref/faults", []byte(`{"rules":[{"on":"nope","action":"status"}]}`))
	assert.Equal(t, 400, a.status, "invalid rule")
	a = s.do(t, "POST", "/_ref/faults", []byte(`{"rules":`))
	assert.Equal(t, 400, a.status, "invalid JSON")
	s.do(t, "POST", "/_ref/faults", []byte(`{"rules":[{"on":"any","action":"status"}]}`))
	s.do(t, "DELETE", "/_ref/faults", nil)
	a = s.do(t, "POST", media, []byte("abc"), "Content-Type: text/plain")
	require.Equal(t, 200, a.status, "media after DELETE /_ref/faults")

	// The log, with the fields doc.go lists.
	var log []map[string]any
	require.NoError(t, json.Unmarshal(s.do(t, "GET", "/_ref/log", nil).body, &log), "GET /_ref/log")
	require.Len(t, log, 2, "GET /_ref/log")
	for _, k := range []string{"time", "method", "path", "query", "contentRange", "contentLength", "status", "authorization", "fault"} {
		assert.Contains(t, log[0], k, "a log entry's fields")
	}
	assert.Equal(t, 503.0, log[0]["status"], "log %v", log)
	assert.Equal(t, "status 503", log[0]["fault"], "log %v", log)
	assert.Equal(t, "Bearer xyz", log[0]["authorization"], "log %v", log)
	assert.Equal(t, 3.0, log[0]["contentLength"], "log %v", log)
	assert.Equal(t, 200.0, log[1]["status"], "log %v", log)
	assert.Equal(t, "uploadType=media&name=dir/a.txt", log[1]["query"], "log %v", log)
	s.do(t, "DELETE", "/_ref/log", nil)
	assert.Equal(t, "[]", strings.TrimSpace(string(s.do(t, "GET", "/_ref/log", nil).body)), "log after DELETE")

	// Objects.
	var objs []map[string]any
	require.NoError(t, json.Unmarshal(s.do(t, "GET", "/_ref/objects", nil).body, &objs), "GET /_ref/objects")
	require.Len(t, objs, 1, "GET /_ref/objects")
	md5b, crcb := sums([]byte("abc"))
	o := objs[0]
	for k, v := range map[string]any{"name": "dir/a.txt", "bucket": "bkt", "size": "3", "md5Hash": md5b, "crc32c": crcb, "contentType": "text/plain"} {
		assert.Equal(t, v, o[k], "the object's %s", k)
	}
	if assert.Contains(t, o, "metadataJSON") {
		assert.Nil(t, o["metadataJSON"], "metadataJSON, want null for a media upload")
	}
	a = s.do(t, "GET", "/_ref/objects/dir/a.txt", nil)
	assert.Equal(t, 200, a.status, "download")
	assert.Equal(t, "abc", string(a.body), "download")
	assert.Equal(t, "text/plain", a.header.Get("Content-Type"), "download")
	a = s.do(t, "GET", "/_ref/objects/nope", nil)
	assert.Equal(t, 404, a.status, "unknown object")

	// Config.
	a = s.do(t, "POST", "/_ref/config", []byte(`{"rangeForm":"plain","sessionOrigin":"http://127.0.0.1:1"}`))
	require.Equal(t, 200, a.status, "POST /_ref/config: %s", a.body)
	loc := s.start(t, "POST", "&name=c", []byte(`{"metadata":{"x":"1"}}`))
	assert.True(t, strings.HasPrefix(loc, "http://127.0.0.1:1/upload/"), "Location %q, want the configured origin", loc)
	s.do(t, "POST", "/_ref/config", []byte(`{"sessionOrigin":""}`))
	loc = s.start(t, "POST", "&name=c", []byte(`{"metadata":{"x":"1"}}`))
	a = s.do(t, "PUT", loc, testData(K), "Content-Range: bytes 0-262143/*")
	assert.Equal(t, "0-262143", a.header.Get("Range"), "want the plain form (rangeForm kept when only sessionOrigin is posted)")
	a = s.do(t, "POST", "/_ref/config", []byte(`{"rangeForm":"bytes"}`))
	assert.Equal(t, 400, a.status, "bad range form")
	var cfg map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	assert.Equal(t, "plain", cfg["rangeForm"], "GET /_ref/config: %v", cfg)
	assert.Equal(t, "", cfg["sessionOrigin"], "GET /_ref/config: %v", cfg)

	// The emulated link: answers one round trip late, bodies at its rate; the control API
	// is not slowed.
	a = s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":16000000,"rttMs":200}}`))
	require.Equal(t, 200, a.status, "POST link: %s", a.body)
	t0 := time.Now()
	loc = s.start(t, "POST", "&name=l", nil)
	assert.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond, "a session start over a 200 ms link")
	t0 = time.Now()
	s.do(t, "PUT", loc, testData(4*K), "Content-Range: bytes 0-1048575/1048576") // 1 MiB at 2 MB/s
	assert.GreaterOrEqual(t, time.Since(t0), 700*time.Millisecond, "1 MiB over a 16 Mbit/s link")
	t0 = time.Now()
	s.do(t, "GET", "/_ref/config", nil)
	assert.LessOrEqual(t, time.Since(t0), 150*time.Millisecond, "the control API went through the link")
	a = s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":-1}}`))
	assert.Equal(t, 400, a.status, "a negative rate")
	s.do(t, "POST", "/_ref/reset", nil)
	t0 = time.Now()
	s.start(t, "POST", "&name=m", nil)
	assert.LessOrEqual(t, time.Since(t0), 150*time.Millisecond, "reset kept the link")

	// Reset.
	s.SetFaults(Faults{Rules: []Rule{{On: KindAny, Action: ActionStatus, Times: -1}}})
	a = s.do(t, "POST", "/_ref/reset", nil)
	require.Equal(t, 200, a.status, "POST /_ref/reset")
	assert.Empty(t, s.Objects(), "objects after reset")
	assert.Empty(t, s.Log(), "log entries after reset")
	assert.Empty(t, s.CurrentFaults().Rules, "rules after reset")
	a = s.do(t, "PUT", loc, nil, "Content-Range: bytes */*")
	assert.Equal(t, 404, a.status, "session after reset")
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	assert.Equal(t, RangeBytes, cfg["rangeForm"], "range form after reset")
}

func TestMetadataJSONListed(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", []byte(`{"name":"m","metadata":{"k":"v"}}`))
	s.do(t, "PUT", loc, []byte("x"))
	var objs []map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/objects", nil).body, &objs)
	require.Len(t, objs, 1)
	assert.Equal(t, map[string]any{"name": "m", "metadata": map[string]any{"k": "v"}}, objs[0]["metadataJSON"])
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	s := newTestServer(t, Options{Dir: dir})
	data := testData(1000)
	a := s.do(t, "POST", uploadPath+"?uploadType=media&name=../../up/../x", data, "Content-Type: application/x-test")
	require.Equal(t, 200, a.status, "%s", a.body)
	files, _ := os.ReadDir(dir)
	require.Len(t, files, 2, "files in the folder")
	s2 := New(Options{Dir: dir})
	o, got, ok := s2.Object("../../up/../x")
	require.True(t, ok, "the object not reloaded")
	require.True(t, bytes.Equal(got, data), "the reloaded object's bytes")
	require.Equal(t, "application/x-test", o.ContentType, "the reloaded object")
	require.Equal(t, int64(1000), o.Size, "the reloaded object")
	s2.Reset()
	files, _ = os.ReadDir(dir)
	assert.Empty(t, files, "files left after reset")
	assert.Empty(t, New(Options{Dir: dir}).Objects(), "objects after reset")
}

func TestNotUploadPath(t *testing.T) {
	s := newTestServer(t, Options{})
	a := s.do(t, "POST", "/storage/v1/b/x/o?uploadType=media", []byte("x"))
	assert.Equal(t, http.StatusNotFound, a.status)
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
	a := s.do(t, "PUT", done, []byte("abc"))
	require.Equal(t, http.StatusCreated, a.status, "upload: %s", a.body)
	// A second session of the same name, still running, and another object.
	running := s.start(t, "POST", "&name=gone", nil)
	s.do(t, "PUT", running, testData(K), "Content-Range: bytes 0-262143/*")
	s.do(t, "POST", uploadPath+"?uploadType=media&name=kept", []byte("k"), "Content-Type: text/plain")

	a = s.do(t, "DELETE", "/_ref/objects/gone", nil)
	require.Equal(t, 200, a.status, "DELETE /_ref/objects/gone: %s", a.body)
	a = s.do(t, "GET", "/_ref/objects/gone", nil)
	assert.Equal(t, 404, a.status, "deleted object")
	_, _, ok := s.Object("kept")
	assert.True(t, ok, "other objects: %v", s.Objects())
	assert.Len(t, s.Objects(), 1, "other objects")
	// The completed session went with its object (it held the bytes); the running one did not.
	a = s.do(t, "PUT", done, nil, "Content-Range: bytes */3")
	assert.Equal(t, 404, a.status, "completed session after DELETE")
	a = s.do(t, "PUT", running, nil, "Content-Range: bytes */*")
	assert.Equal(t, 308, a.status, "running session after DELETE")
	assert.Equal(t, "bytes=0-262143", a.header.Get("Range"), "running session after DELETE")
	a = s.do(t, "DELETE", "/_ref/objects/gone", nil)
	assert.Equal(t, 404, a.status, "DELETE again")
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
	a := s.do(t, "POST", "/_ref/config", []byte(sched))
	require.Equal(t, 200, a.status, "POST schedule: %s", a.body)
	l := getLink()
	assert.Equal(t, int64(8000000), l.BitsPerSecond, "GET link: want the first step in force")
	assert.Equal(t, int64(300), l.RTTMs, "GET link: want the first step in force")
	assert.Equal(t, `[map[atMs:0 bitsPerSecond:8e+06 blackout:false rttMs:300] map[atMs:300 bitsPerSecond:0 blackout:true rttMs:0] map[atMs:400 bitsPerSecond:1.6e+07 blackout:false rttMs:0]]`,
		fmt.Sprint(l.Schedule), "GET link's schedule")

	// The clock starts with the first request: it gets the first step's round trip, however
	// long after the POST it comes.
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	s.start(t, "POST", "&name=s", nil)
	assert.GreaterOrEqual(t, time.Since(t0), 300*time.Millisecond, "a session start at the schedule's start: want its 300 ms round trip")
	time.Sleep(150 * time.Millisecond) // past the blackout
	l = getLink()
	assert.Equal(t, int64(16000000), l.BitsPerSecond, "GET link after 450 ms: want the last step in force")
	assert.Zero(t, l.RTTMs, "GET link after 450 ms: want the last step in force")

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
		assert.Equal(t, 400, a.status, "%s: %s", body, a.body)
		m, _ := a.json(t)["error"].(map[string]any)
		assert.Contains(t, fmt.Sprint(m["message"]), msg, body)
	}
	var cfg map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	assert.Equal(t, RangeBytes, cfg["rangeForm"], "after the refused POSTs: want the config as it was")
	assert.Len(t, getLink().Schedule, 3, "after the refused POSTs: want the schedule as it was")

	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":24000000,"rttMs":7}}`))
	assert.Equal(t, link{BitsPerSecond: 24000000, RTTMs: 7}, getLink(), "after a steady link")
	s.do(t, "POST", "/_ref/config", []byte(sched))
	s.do(t, "POST", "/_ref/reset", nil)
	assert.Equal(t, link{}, getLink(), "after reset: want no link")
}
