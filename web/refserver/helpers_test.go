package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testData returns n deterministic pseudo-random bytes.
func testData(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "answer %d is not a JSON object: %q", a.status, a.body)
	return m
}

// testServer is a Server behind a real listener.
type testServer struct {
	*Server
	ts     *httptest.Server
	client *http.Client
}

func newTestServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	// No keep-alive: a dropped connection is never retried by the
	// transport behind the test's back.
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &testServer{Server: s, ts: ts, client: client}
}

// do sends a request; hdr is "Name: value" lines. A transport error fails
// the test.
func (s *testServer) do(t *testing.T, method, url string, body []byte, hdr ...string) answer {
	t.Helper()
	a, err := s.try(method, url, body, hdr...)
	require.NoError(t, err, "%s %s", method, url)
	return a
}

func (s *testServer) try(method, url string, body []byte, hdr ...string) (answer, error) {
	if body == nil {
		return s.send(method, url, nil, 0, hdr...)
	}
	return s.send(method, url, bytes.NewReader(body), int64(len(body)), hdr...)
}

// send is try with a body read as the request goes (an io.Pipe: sent while the test does
// something else) of the given Content-Length.
func (s *testServer) send(method, url string, body io.Reader, length int64, hdr ...string) (answer, error) {
	if strings.HasPrefix(url, "/") {
		url = s.ts.URL + url
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return answer{}, err
	}
	req.ContentLength = length
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

const uploadPath = "/upload/storage/v1/b/bkt/o"

// start opens a resumable session and returns its URI.
func (s *testServer) start(t *testing.T, method, query string, meta []byte, hdr ...string) string {
	t.Helper()
	if meta != nil {
		hdr = append(hdr, "Content-Type: application/json; charset=UTF-8")
	}
	a := s.do(t, method, uploadPath+"?uploadType=resumable"+query, meta, hdr...)
	require.Equal(t, http.StatusOK, a.status, "start: %s", a.body)
	loc := a.header.Get("Location")
	require.NotEmpty(t, loc, "start: no Location")
	return loc
}

// stored checks that the server holds name with exactly data's bytes, and says whether it does.
func (s *testServer) stored(t *testing.T, name string, data []byte) bool {
	t.Helper()
	_, got, ok := s.Object(name)
	return assert.True(t, ok, "object %q not stored", name) &&
		assert.True(t, bytes.Equal(got, data), "object %q: the %d bytes stored are not the %d bytes sent", name, len(got), len(data))
}

// serve runs one request through the handler directly (for requests a real
// client will not send).
func serve(s *Server, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func httptestRequest(method, target string, body []byte) *http.Request {
	return httptest.NewRequest(method, target, bytes.NewReader(body))
}
