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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTLSServer is newTestServer over HTTPS with a TestCertificate, HTTP/2 offered by ALPN,
// and a client that trusts that certificate alone and speaks HTTP/2 (every request on one
// connection).
func newTLSServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	cert, err := NewTestCertificate()
	require.NoError(t, err)
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
	require.NoError(t, err)
	block, _ := pem.Decode(c.PEM)
	require.NotNil(t, block, "PEM holds no block")
	require.Equal(t, "CERTIFICATE", block.Type)
	require.True(t, bytes.Equal(block.Bytes, c.Leaf.Raw), "PEM is not the certificate")
	pool := x509.NewCertPool()
	pool.AddCert(c.Leaf)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		_, err := c.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
		assert.NoError(t, err, "not valid for %s", host)
	}
	assert.False(t, c.Leaf.IsCA, "a CA certificate: Firefox refuses one as a server's")
	d, err := NewTestCertificate()
	require.NoError(t, err)
	assert.NotEqual(t, c.SPKI, d.SPKI, "a second certificate has the same key")
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
	assert.True(t, strings.HasPrefix(loc, "https://"), "session URI %q, want https", loc)
	// The first chunk streamed: the server learns its length only at its end.
	req, _ := http.NewRequest("PUT", loc, io.MultiReader(bytes.NewReader(data[:K])))
	req.ContentLength = -1
	req.Header.Set("Content-Range", cr(0, K-1, "*"))
	res, err := s.client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 308, res.StatusCode, "streamed chunk")
	require.Equal(t, "bytes=0-"+strconv.Itoa(K-1), res.Header.Get("Range"), "streamed chunk")
	require.Equal(t, "HTTP/2.0", res.Proto, "streamed chunk")
	a := s.do(t, "PUT", loc, data[K:], "Content-Range: "+cr(K, len(data)-1, strconv.Itoa(len(data))))
	require.Equal(t, 201, a.status, "last chunk: %s", a.body)
	took := time.Since(t0)
	s.stored(t, "h2", data)
	// Three answers a round trip late each, and the bytes at the rate (less the link's
	// slack: an idle link lets 25 ms of bytes through at once).
	want := 3*50*time.Millisecond + time.Duration(len(data))*time.Second/rate - 2*slackForTest
	assert.GreaterOrEqual(t, took, want, "the upload: less than the link allows")
	log := s.Log()
	require.Len(t, log, 3)
	for _, e := range log {
		assert.Equal(t, "HTTP/2.0", e.Proto, "%s %s logged as", e.Method, e.Kind)
	}
	assert.Equal(t, int64(-1), log[1].ContentLength, "the streamed chunk's logged content length")
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
	a, err := s.try("PUT", loc, data, "Content-Range: "+cr(0, K-1, "*"))
	require.Error(t, err, "close after 1000 bytes over HTTP/2: got an answer %d, want a failed request", a.status)
	q := s.query(t, loc)
	assert.Equal(t, 308, q.status, "after the reset chunk")
	assert.Empty(t, q.header.Get("Range"), "after the reset chunk")
	a = s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, K-1, strconv.Itoa(K)))
	assert.Equal(t, 201, a.status, "the chunk again: %s", a.body)
	log := s.Log()
	if assert.Len(t, log, 4) {
		assert.Equal(t, "close after 1000 bytes", log[1].Fault, "the chunk's fault")
		assert.Equal(t, 0, log[1].Status, "the chunk's status")
	}
}
