package refserver

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newTLSServer is newTestServer over HTTPS with a TestCertificate, HTTP/2 offered by ALPN,
// and a client that trusts that certificate alone and speaks HTTP/2 (every request on one
// connection).
func newTLSServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	cert, err := NewTestCertificate()
	if err != nil {
		t.Fatal(err)
	}
	s := New(opts)
	ts := httptest.NewUnstartedServer(s)
	ts.TLS = cert.ServerConfig()
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	tr := &http.Transport{TLSClientConfig: cert.ClientConfig(), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &testServer{Server: s, ts: ts, client: client}
}

func TestTestCertificate(t *testing.T) {
	c, err := NewTestCertificate()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(c.PEM)
	if block == nil || block.Type != "CERTIFICATE" || !bytes.Equal(block.Bytes, c.Leaf.Raw) {
		t.Fatal("PEM is not the certificate")
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.Leaf)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("not valid for %s: %v", host, err)
		}
	}
	if c.Leaf.IsCA {
		t.Error("a CA certificate: Firefox refuses one as a server's")
	}
	if d, err := NewTestCertificate(); err != nil || d.SPKI == c.SPKI {
		t.Errorf("a second certificate has the same key (%v)", err)
	}
}

// A resumable upload over HTTP/2, through an emulated link: stored byte-exact, the link's
// rate and round trip held, every request logged as HTTP/2.0; a chunk of unknown length (a
// streamed body: no Content-Length) is taken as over HTTP/1.1's chunked encoding.
func TestHTTP2UploadThroughLink(t *testing.T) {
	s := newTLSServer(t, Options{})
	const rate = 4 << 20 // bytes per second
	s.link.Set(rate, 50*time.Millisecond)
	data := testData(3*K + 1000)
	t0 := time.Now()
	loc := s.start(t, "POST", "&name=h2", nil)
	if !strings.HasPrefix(loc, "https://") {
		t.Errorf("session URI %q, want https", loc)
	}
	// The first chunk streamed: the server learns its length only at its end.
	req, _ := http.NewRequest("PUT", loc, io.MultiReader(bytes.NewReader(data[:K])))
	req.ContentLength = -1
	req.Header.Set("Content-Range", cr(0, K-1, "*"))
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 308 || res.Header.Get("Range") != "bytes=0-"+strconv.Itoa(K-1) || res.Proto != "HTTP/2.0" {
		t.Fatalf("streamed chunk: %d %q over %s, want 308 bytes=0-%d over HTTP/2.0", res.StatusCode, res.Header.Get("Range"), res.Proto, K-1)
	}
	a := s.do(t, "PUT", loc, data[K:], "Content-Range: "+cr(K, len(data)-1, strconv.Itoa(len(data))))
	if a.status != 201 {
		t.Fatalf("last chunk: %d %s", a.status, a.body)
	}
	took := time.Since(t0)
	if _, got, ok := s.Object("h2"); !ok || !bytes.Equal(got, data) {
		t.Error("object not stored byte-exact")
	}
	// Three answers a round trip late each, and the bytes at the rate (less the link's
	// slack: an idle link lets 25 ms of bytes through at once).
	if want := 3*50*time.Millisecond + time.Duration(len(data))*time.Second/rate - 2*slackForTest; took < want {
		t.Errorf("the upload took %v, less than the link allows (%v)", took, want)
	}
	log := s.Log()
	if len(log) != 3 {
		t.Fatalf("log has %d entries, want 3", len(log))
	}
	for _, e := range log {
		if e.Proto != "HTTP/2.0" {
			t.Errorf("%s %s logged as %q, want HTTP/2.0", e.Method, e.Kind, e.Proto)
		}
	}
	if log[1].ContentLength != -1 {
		t.Errorf("the streamed chunk is logged with content length %d, want -1", log[1].ContentLength)
	}
}

// slackForTest is netlink's slack (unexported there).
const slackForTest = 25 * time.Millisecond

// A close fault over HTTP/2 resets the request's stream (there is no connection of its own to
// drop): the client sees a failed request, and the connection goes on serving the others.
func TestHTTP2CloseFaultResetsTheStream(t *testing.T) {
	s := newTLSServer(t, Options{})
	data := testData(K)
	loc := s.start(t, "POST", "&name=reset", nil)
	s.faults(t, Rule{On: KindChunk, Action: ActionClose, AfterBytes: 1000})
	if a, err := s.try("PUT", loc, data, "Content-Range: "+cr(0, K-1, "*")); err == nil {
		t.Fatalf("close after 1000 bytes over HTTP/2: got an answer %d, want a failed request", a.status)
	}
	if q := s.query(t, loc); q.status != 308 || q.header.Get("Range") != "" {
		t.Errorf("after the reset chunk: %d %q, want 308 and no Range", q.status, q.header.Get("Range"))
	}
	if a := s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, K-1, strconv.Itoa(K))); a.status != 201 {
		t.Errorf("the chunk again: %d %s", a.status, a.body)
	}
	log := s.Log()
	if len(log) != 4 || log[1].Fault != "close after 1000 bytes" || log[1].Status != 0 {
		t.Errorf("log: %+v", log)
	}
}
