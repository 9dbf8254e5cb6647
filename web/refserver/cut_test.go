package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
)

// cut sends a PUT to loc, as a client whose connection breaks would: the headers, then only
// the body bytes given, then the connection closed. With chunked, the body goes in chunked
// encoding without its closing chunk (a body of unknown length cut off, however many bytes it
// had); else with Content-Length n. It returns the request's log entry once the server is
// done with it.
func (s *testServer) cut(t *testing.T, loc, contentRange string, n int, body []byte, chunked bool) LogEntry {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.Log())
	conn, err := net.Dial("tcp", s.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Range: %s\r\n", u.RequestURI(), u.Host, contentRange)
	if chunked {
		fmt.Fprintf(&req, "Transfer-Encoding: chunked\r\n\r\n%x\r\n", len(body))
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", n)
	}
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		// Received is set as the handler returns, after it kept what it kept.
		if log := s.Log(); len(log) > before && log[before].Received == int64(len(body)) {
			return log[before]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cut request did not end: log %+v", s.Log()[before:])
		}
	}
}

// finish sends data from offset `from` as the last chunk and checks that it completes the
// object named name, byte for byte, with data's checksums.
func (s *testServer) finish(t *testing.T, loc, name string, data []byte, from int) {
	t.Helper()
	total := strconv.Itoa(len(data))
	a := s.do(t, "PUT", loc, data[from:], "Content-Range: "+cr(from, len(data)-1, total))
	if a.status != 201 {
		t.Fatalf("the rest from %d: %d %s", from, a.status, a.body)
	}
	md5b, crcb := sums(data)
	if m := a.json(t); m["md5Hash"] != md5b || m["crc32c"] != crcb || m["size"] != total {
		t.Errorf("object %v, want md5Hash %s crc32c %s size %s", m, md5b, crcb, total)
	}
	if _, got, ok := s.Object(name); !ok || !bytes.Equal(got, data) {
		t.Errorf("object %s: stored %v, %d bytes, want the data's %d", name, ok, len(got), len(data))
	}
}

// The bytes that arrived of a cut chunk are kept, and the status query reports them
// (docs/protocol.md section 4); the next chunk from there completes the object.
func TestCutChunkKept(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*K + 1000)
	const got = 300_000

	loc := s.start(t, "POST", "&name=a", nil)
	e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:got], false)
	if e.Status != 0 || e.Received != got || e.Kept != got {
		t.Errorf("the cut chunk's log entry: status %d, received %d, kept %d; want 0, %d, %d", e.Status, e.Received, e.Kept, got, got)
	}
	if q := s.query(t, loc); q.status != 308 || q.header.Get("Range") != "bytes=0-299999" {
		t.Fatalf("status query after the cut: %d Range %q, want 308 bytes=0-299999", q.status, q.header.Get("Range"))
	}
	s.finish(t, loc, "a", data, got)

	// A cut chunk that re-sends stored bytes adds only those beyond them, and the checksums
	// count each byte once.
	loc = s.start(t, "POST", "&name=b", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	e = s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:got], false)
	if e.Received != got || e.Kept != got-K {
		t.Errorf("a cut chunk over %d stored bytes: received %d, kept %d; want %d, %d", K, e.Received, e.Kept, got, got-K)
	}
	if q := s.query(t, loc); q.header.Get("Range") != "bytes=0-299999" {
		t.Fatalf("status query: Range %q, want bytes=0-299999", q.header.Get("Range"))
	}
	s.finish(t, loc, "b", data, got)

	// Nothing of a chunk that would have been refused whole: one past the stored bytes.
	loc = s.start(t, "POST", "&name=c", nil)
	e = s.cut(t, loc, cr(K, 2*K-1, "*"), K, data[K:K+1000], false)
	if e.Kept != 0 {
		t.Errorf("a cut chunk past the stored bytes kept %d", e.Kept)
	}
	if q := s.query(t, loc); q.header.Get("Range") != "" {
		t.Errorf("status query: Range %q, want none", q.header.Get("Range"))
	}
}

// keepCut false plays a server that drops a cut chunk; reset makes it keep them again.
func TestCutChunkDropped(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2 * K)
	keepCut := func() any {
		var cfg map[string]any
		json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
		return cfg["keepCut"]
	}
	if v := keepCut(); v != true {
		t.Errorf("keepCut %v at first, want true", v)
	}
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"keepCut":false}`)); a.status != 200 {
		t.Fatalf("POST keepCut: %d %s", a.status, a.body)
	}
	if v := keepCut(); v != false {
		t.Errorf("keepCut %v after POST false", v)
	}
	loc := s.start(t, "POST", "&name=d", nil)
	if e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false); e.Received != 100_000 || e.Kept != 0 {
		t.Errorf("dropped cut chunk: received %d, kept %d; want 100000, 0", e.Received, e.Kept)
	}
	if q := s.query(t, loc); q.status != 308 || q.header.Get("Range") != "" {
		t.Errorf("status query after a dropped cut: %d Range %q, want 308 and none", q.status, q.header.Get("Range"))
	}
	s.do(t, "POST", "/_ref/reset", nil)
	if v := keepCut(); v != true {
		t.Errorf("keepCut %v after reset, want true", v)
	}
	loc = s.start(t, "POST", "&name=d", nil)
	if e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false); e.Kept != 100_000 {
		t.Errorf("cut chunk after reset: kept %d, want 100000", e.Kept)
	}
}

// A cut final chunk never completes the object, even with every byte arrived: the request
// failed. A status query stating the total completes it.
func TestCutFinalChunk(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(100_000)
	whole := cr(0, len(data)-1, strconv.Itoa(len(data)))

	loc := s.start(t, "POST", "&name=all", nil)
	if e := s.cut(t, loc, whole, len(data), data, true); e.Kept != int64(len(data)) {
		t.Errorf("a cut final chunk with every byte: kept %d, want %d", e.Kept, len(data))
	}
	if _, _, ok := s.Object("all"); ok {
		t.Fatal("a cut final chunk completed the object")
	}
	if q := s.query(t, loc); q.status != 308 || q.header.Get("Range") != "bytes=0-99999" {
		t.Errorf("status query: %d Range %q, want 308 bytes=0-99999", q.status, q.header.Get("Range"))
	}
	a := s.do(t, "PUT", loc, nil, "Content-Range: bytes */100000")
	if md5b, _ := sums(data); a.status != 201 || a.json(t)["md5Hash"] != md5b {
		t.Errorf("bytes */100000 after it: %d %s, want 201 with md5Hash %s", a.status, a.body, md5b)
	}

	loc = s.start(t, "POST", "&name=part", nil)
	if e := s.cut(t, loc, whole, len(data), data[:60_000], false); e.Kept != 60_000 {
		t.Errorf("a cut final chunk: kept %d, want 60000", e.Kept)
	}
	if _, _, ok := s.Object("part"); ok {
		t.Fatal("a cut final chunk completed the object")
	}
	s.finish(t, loc, "part", data, 60_000)
}

// Injected faults keep their own behaviour: a keep fault keeps nothing of a body the client
// cut, and a close fault (the server cutting the body) keeps nothing.
func TestCutUnderInjectedFaults(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2 * K)
	loc := s.start(t, "POST", "&name=f", nil)
	s.faults(t, Rule{On: KindChunk, Action: ActionKeep, Keep: 1000})
	if e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false); e.Fault != "keep 1000" || e.Kept != 0 {
		t.Errorf("a cut chunk under a keep fault: fault %q, kept %d; want keep 1000, 0", e.Fault, e.Kept)
	}
	s.faults(t, Rule{On: KindChunk, Action: ActionClose, AfterBytes: 1000})
	if _, err := s.try("PUT", loc, data, "Content-Range: "+cr(0, 2*K-1, "*")); err == nil {
		t.Fatal("close after 1000 bytes: got an answer")
	}
	if q := s.query(t, loc); q.header.Get("Range") != "" {
		t.Errorf("after both faults: Range %q, want none", q.header.Get("Range"))
	}
}

// The log counts the bytes of each chunk received and kept, to tell bytes sent twice.
func TestLogReceivedAndKept(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(3 * K)
	loc := s.start(t, "POST", "&name=l", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	s.do(t, "PUT", loc, data[:2*K], "Content-Range: "+cr(0, 2*K-1, "*"))         // K sent again
	s.do(t, "PUT", loc, data[2*K:2*K+10], "Content-Range: "+cr(2*K, 2*K+9, "*")) // refused: not aligned
	s.query(t, loc)
	s.faults(t, Rule{On: KindChunk, Action: ActionKeep, Keep: 1000})
	s.do(t, "PUT", loc, data[2*K:], "Content-Range: "+cr(2*K, 3*K-1, "*"))
	s.do(t, "PUT", loc, data[2*K+1000:], "Content-Range: "+cr(2*K+1000, 3*K-1, strconv.Itoa(3*K)))
	s.do(t, "POST", uploadPath+"?uploadType=media&name=m", []byte("abc"), "Content-Type: text/plain")

	var got []string
	for _, e := range s.Log() {
		got = append(got, fmt.Sprintf("%s %d %d/%d", e.Kind, e.Status, e.Received, e.Kept))
	}
	want := []string{
		"start 200 0/0",
		fmt.Sprintf("chunk 308 %d/%d", K, K),
		fmt.Sprintf("chunk 308 %d/%d", 2*K, K),
		"chunk 400 10/0",
		"query 308 0/0",
		fmt.Sprintf("chunk 308 %d/1000", K),
		fmt.Sprintf("chunk 201 %d/%d", K-1000, K-1000),
		"media 200 0/0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("log (kind status received/kept):\n got %v\nwant %v", got, want)
	}
	var raw []map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/log", nil).body, &raw)
	if raw[1]["received"] != float64(K) || raw[1]["kept"] != float64(K) {
		t.Errorf("GET /_ref/log: %v, want received and kept", raw[1])
	}
}

// A chunk its client gives up behind the emulated link still delivers the link's queue
// ("link" "queueMs"): what arrived in it is kept, and a status query sent at once waits behind
// it and reports it. With queueMs 0 the bytes the link had not carried are dropped at once.
// Over HTTP/1.1 from a listener of netlink.Listen, as the test servers' (web/cmd/refserver):
// 1 Mbit/s, the chunk given up half a second in, with 512 KiB handed over.
func TestCutChunkQueue(t *testing.T) {
	for _, queueMs := range []int64{0, 600} {
		t.Run("queueMs "+strconv.FormatInt(queueMs, 10), func(t *testing.T) {
			s := newTestServer(t, Options{})
			ln, err := netlink.Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(s.Server)
			ts.Listener.Close()
			ts.Listener, ts.Config.ConnContext = ln, netlink.ConnContext
			ts.Start()
			t.Cleanup(ts.Close)
			s.ts = ts

			conf := `{"link":{"bitsPerSecond":1000000,"rttMs":0,"queueMs":` + strconv.FormatInt(queueMs, 10) + `}}`
			if a := s.do(t, "POST", "/_ref/config", []byte(conf)); a.status != 200 {
				t.Fatalf("POST %s: %d %s", conf, a.status, a.body)
			}
			var cfg struct{ Link LinkConfig }
			json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
			if q := cfg.Link.QueueMs; q == nil || *q != queueMs {
				t.Errorf("GET /_ref/config: link %+v, want queueMs %d", cfg.Link, queueMs)
			}
			loc := s.start(t, "POST", "&name=q", nil)
			u, _ := url.Parse(loc)
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			head := fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Range: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, cr(0, 4*K-1, "*"), 4*K)
			if _, err := conn.Write(append([]byte(head), testData(2*K)...)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // 62.5 KB carried
			conn.Close()
			gaveUp := time.Now()
			time.Sleep(50 * time.Millisecond) // the page learns of its abort, then asks
			q := s.query(t, loc)
			waited := time.Since(gaveUp)
			end, err := parseRangeEnd(q.header.Get("Range"))
			t.Logf("status query after %v: %d Range %q", waited.Round(time.Millisecond), q.status, q.header.Get("Range"))
			if err != nil {
				t.Fatal(err)
			}
			want := 62_500 + queueMs*125 // the queue's worth of 125 KB/s
			if end < want-30_000 || end > want+30_000 {
				t.Errorf("the server kept %d bytes of the cut chunk, want about %d", end, want)
			}
			if min := time.Duration(queueMs-100) * time.Millisecond; waited < min {
				t.Errorf("the status query was answered %v after the cut, want behind the queue (%d ms)", waited, queueMs)
			}
		})
	}
	s := newTestServer(t, Options{})
	if a := s.do(t, "POST", "/_ref/config", []byte(`{"link":{"queueMs":-1}}`)); a.status != 400 {
		t.Errorf("queueMs -1: %d %s, want 400", a.status, a.body)
	}
	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":8000,"queueMs":0}}`))
	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":16000}}`))
	var cfg struct{ Link LinkConfig }
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if q := cfg.Link.QueueMs; q == nil || *q != 0 {
		t.Errorf("a link posted without queueMs changed it: %+v, want 0 as set before", cfg.Link)
	}
	s.do(t, "POST", "/_ref/reset", nil)
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if q := cfg.Link.QueueMs; q == nil || *q != 1000 {
		t.Errorf("after reset: %+v, want queueMs 1000", cfg.Link)
	}
}

// parseRangeEnd returns the bytes a Range header "bytes=0-N" says are held (N+1; none: 0).
func parseRangeEnd(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	_, last, ok := strings.Cut(strings.TrimPrefix(v, "bytes="), "-")
	n, err := strconv.ParseInt(last, 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("range %q", v)
	}
	return n + 1, nil
}
