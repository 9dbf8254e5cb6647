package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"
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
