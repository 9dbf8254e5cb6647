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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cut sends a PUT to loc, as a client whose connection breaks would: the headers, then only
// the body bytes given, then the connection closed. With chunked, the body goes in chunked
// encoding without its closing chunk (a body of unknown length cut off, however many bytes it
// had); else with Content-Length n. It returns the request's log entry once the server is
// done with it.
func (s *testServer) cut(t *testing.T, loc, contentRange string, n int, body []byte, chunked bool) LogEntry {
	t.Helper()
	u, err := url.Parse(loc)
	require.NoError(t, err)
	before := len(s.Log())
	conn, err := net.Dial("tcp", s.ts.Listener.Addr().String())
	require.NoError(t, err)
	var req bytes.Buffer
	fmt.Fprintf(&req, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Range: %s\r\n", u.RequestURI(), u.Host, contentRange)
	if chunked {
		fmt.Fprintf(&req, "Transfer-Encoding: chunked\r\n\r\n%x\r\n", len(body))
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", n)
	}
	req.Write(body)
	_, err = conn.Write(req.Bytes())
	require.NoError(t, err)
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
	require.Equal(t, 201, a.status, "the rest from %d: %s", from, a.body)
	md5b, crcb := sums(data)
	m := a.json(t)
	assert.Equal(t, md5b, m["md5Hash"], "object %v", m)
	assert.Equal(t, crcb, m["crc32c"], "object %v", m)
	assert.Equal(t, total, m["size"], "object %v", m)
	s.stored(t, name, data)
}

// The bytes that arrived of a cut chunk are kept, and the status query reports them
// (docs/protocol.md section 4); the next chunk from there completes the object.
func TestCutChunkKept(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*K + 1000)
	const got = 300_000

	loc := s.start(t, "POST", "&name=a", nil)
	e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:got], false)
	assert.Equal(t, 0, e.Status, "the cut chunk's log entry: status")
	assert.Equal(t, int64(got), e.Received, "the cut chunk's log entry: received")
	assert.Equal(t, int64(got), e.Kept, "the cut chunk's log entry: kept")
	q := s.query(t, loc)
	require.Equal(t, 308, q.status, "status query after the cut")
	require.Equal(t, "bytes=0-299999", q.header.Get("Range"), "status query after the cut")
	s.finish(t, loc, "a", data, got)

	// A cut chunk that re-sends stored bytes adds only those beyond them, and the checksums
	// count each byte once.
	loc = s.start(t, "POST", "&name=b", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	e = s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:got], false)
	assert.Equal(t, int64(got), e.Received, "a cut chunk over %d stored bytes: received", K)
	assert.Equal(t, int64(got-K), e.Kept, "a cut chunk over %d stored bytes: kept", K)
	require.Equal(t, "bytes=0-299999", s.query(t, loc).header.Get("Range"), "status query")
	s.finish(t, loc, "b", data, got)

	// Nothing of a chunk that would have been refused whole: one past the stored bytes.
	loc = s.start(t, "POST", "&name=c", nil)
	e = s.cut(t, loc, cr(K, 2*K-1, "*"), K, data[K:K+1000], false)
	assert.Zero(t, e.Kept, "a cut chunk past the stored bytes: kept")
	assert.Empty(t, s.query(t, loc).header.Get("Range"), "status query")
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
	assert.Equal(t, true, keepCut(), "keepCut at first")
	a := s.do(t, "POST", "/_ref/config", []byte(`{"keepCut":false}`))
	require.Equal(t, 200, a.status, "POST keepCut: %s", a.body)
	assert.Equal(t, false, keepCut(), "keepCut after POST false")
	loc := s.start(t, "POST", "&name=d", nil)
	e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false)
	assert.Equal(t, int64(100_000), e.Received, "dropped cut chunk: received")
	assert.Zero(t, e.Kept, "dropped cut chunk: kept")
	q := s.query(t, loc)
	assert.Equal(t, 308, q.status, "status query after a dropped cut")
	assert.Empty(t, q.header.Get("Range"), "status query after a dropped cut")
	s.do(t, "POST", "/_ref/reset", nil)
	assert.Equal(t, true, keepCut(), "keepCut after reset")
	loc = s.start(t, "POST", "&name=d", nil)
	e = s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false)
	assert.Equal(t, int64(100_000), e.Kept, "cut chunk after reset: kept")
}

// A cut final chunk never completes the object, even with every byte arrived: the request
// failed. A status query stating the total completes it.
func TestCutFinalChunk(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(100_000)
	whole := cr(0, len(data)-1, strconv.Itoa(len(data)))

	loc := s.start(t, "POST", "&name=all", nil)
	e := s.cut(t, loc, whole, len(data), data, true)
	assert.Equal(t, int64(len(data)), e.Kept, "a cut final chunk with every byte: kept")
	_, _, ok := s.Object("all")
	require.False(t, ok, "a cut final chunk completed the object")
	q := s.query(t, loc)
	assert.Equal(t, 308, q.status, "status query")
	assert.Equal(t, "bytes=0-99999", q.header.Get("Range"), "status query")
	a := s.do(t, "PUT", loc, nil, "Content-Range: bytes */100000")
	md5b, _ := sums(data)
	if assert.Equal(t, 201, a.status, "bytes */100000 after it: %s", a.body) {
		assert.Equal(t, md5b, a.json(t)["md5Hash"], "bytes */100000 after it")
	}

	loc = s.start(t, "POST", "&name=part", nil)
	e = s.cut(t, loc, whole, len(data), data[:60_000], false)
	assert.Equal(t, int64(60_000), e.Kept, "a cut final chunk: kept")
	_, _, ok = s.Object("part")
	require.False(t, ok, "a cut final chunk completed the object")
	s.finish(t, loc, "part", data, 60_000)
}

// Injected faults keep their own behaviour: a keep fault keeps nothing of a body the client
// cut, and a close fault (the server cutting the body) keeps nothing.
func TestCutUnderInjectedFaults(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2 * K)
	loc := s.start(t, "POST", "&name=f", nil)
	s.faults(t, Rule{On: KindChunk, Action: ActionKeep, Keep: 1000})
	e := s.cut(t, loc, cr(0, 2*K-1, "*"), 2*K, data[:100_000], false)
	assert.Equal(t, "keep 1000", e.Fault, "a cut chunk under a keep fault")
	assert.Zero(t, e.Kept, "a cut chunk under a keep fault: kept")
	s.faults(t, Rule{On: KindChunk, Action: ActionClose, AfterBytes: 1000})
	_, err := s.try("PUT", loc, data, "Content-Range: "+cr(0, 2*K-1, "*"))
	require.Error(t, err, "close after 1000 bytes: got an answer")
	assert.Empty(t, s.query(t, loc).header.Get("Range"), "after both faults")
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
	assert.Equal(t, want, got, "log (kind status received/kept)")
	var raw []map[string]any
	json.Unmarshal(s.do(t, "GET", "/_ref/log", nil).body, &raw)
	require.Greater(t, len(raw), 1, "GET /_ref/log")
	assert.Equal(t, float64(K), raw[1]["received"], "GET /_ref/log: %v", raw[1])
	assert.Equal(t, float64(K), raw[1]["kept"], "GET /_ref/log: %v", raw[1])
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
			require.NoError(t, err)
			ts := httptest.NewUnstartedServer(s.Server)
			ts.Listener.Close()
			ts.Listener, ts.Config.ConnContext = ln, netlink.ConnContext
			ts.Start()
			t.Cleanup(ts.Close)
			s.ts = ts

			conf := `{"link":{"bitsPerSecond":1000000,"rttMs":0,"queueMs":` + strconv.FormatInt(queueMs, 10) + `}}`
			a := s.do(t, "POST", "/_ref/config", []byte(conf))
			require.Equal(t, 200, a.status, "POST %s: %s", conf, a.body)
			var cfg struct{ Link LinkConfig }
			json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
			if assert.NotNil(t, cfg.Link.QueueMs, "GET /_ref/config: link %+v", cfg.Link) {
				assert.Equal(t, queueMs, *cfg.Link.QueueMs, "GET /_ref/config: queueMs")
			}
			loc := s.start(t, "POST", "&name=q", nil)
			u, _ := url.Parse(loc)
			conn, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			head := fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Range: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, cr(0, 4*K-1, "*"), 4*K)
			_, err = conn.Write(append([]byte(head), testData(2*K)...))
			require.NoError(t, err)
			time.Sleep(500 * time.Millisecond) // 62.5 KB carried
			conn.Close()
			gaveUp := time.Now()
			time.Sleep(50 * time.Millisecond) // the page learns of its abort, then asks
			q := s.query(t, loc)
			waited := time.Since(gaveUp)
			end, err := parseRangeEnd(q.header.Get("Range"))
			t.Logf("status query after %v: %d Range %q", waited.Round(time.Millisecond), q.status, q.header.Get("Range"))
			require.NoError(t, err)
			want := 62_500 + queueMs*125 // the queue's worth of 125 KB/s
			assert.InDelta(t, want, end, 30_000, "bytes the server kept of the cut chunk")
			assert.GreaterOrEqual(t, waited, time.Duration(queueMs-100)*time.Millisecond, "the status query's answer after the cut, want behind the queue (%d ms)", queueMs)
		})
	}
	s := newTestServer(t, Options{})
	a := s.do(t, "POST", "/_ref/config", []byte(`{"link":{"queueMs":-1}}`))
	assert.Equal(t, 400, a.status, "queueMs -1: %s", a.body)
	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":8000,"queueMs":0}}`))
	s.do(t, "POST", "/_ref/config", []byte(`{"link":{"bitsPerSecond":16000}}`))
	var cfg struct{ Link LinkConfig }
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if assert.NotNil(t, cfg.Link.QueueMs, "link %+v", cfg.Link) {
		assert.Equal(t, int64(0), *cfg.Link.QueueMs, "a link posted without queueMs changed it: want 0 as set before")
	}
	s.do(t, "POST", "/_ref/reset", nil)
	json.Unmarshal(s.do(t, "GET", "/_ref/config", nil).body, &cfg)
	if assert.NotNil(t, cfg.Link.QueueMs, "after reset: link %+v", cfg.Link) {
		assert.Equal(t, int64(1000), *cfg.Link.QueueMs, "after reset: queueMs")
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
