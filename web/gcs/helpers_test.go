package gcs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/stretchr/testify/require"
)

const (
	testBucket = "uploads"
	pageOrigin = "http://127.0.0.1:5173" // the page's origin in these tests
)

// seen is one request as the storage in front of fake-gcs-server received it.
type seen struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// storageSpy is fake-gcs-server 1.56.1, in process, behind a recorder on 127.0.0.1: the
// emulator keeps neither a session's Origin nor its headers, so the recorder keeps every
// request it gets. With answer set, the recorder answers itself (storage answering nonsense)
// and fake-gcs-server sees nothing.
type storageSpy struct {
	URL  string
	fake *fakestorage.Server
	srv  *httptest.Server

	mu     sync.Mutex
	seen   []seen
	answer http.HandlerFunc
}

func newStorage(t *testing.T) *storageSpy {
	t.Helper()
	// PublicHost: the XML API's path-style routes (a signed URL's POST) answer only requests
	// to this host (any port).
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", PublicHost: "127.0.0.1"})
	require.NoError(t, err)
	fake.CreateBucket(testBucket)
	s := &storageSpy{fake: fake}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		answer := s.answer
		s.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.HTTPHandler().ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	t.Cleanup(func() { s.srv.Close(); fake.Stop() })
	return s
}

func (s *storageSpy) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen...)
}

func (s *storageSpy) answerWith(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = h
}

// page is a page's request to a handler served on 127.0.0.1: its status, headers and JSON.
type page struct {
	Status int
	Header http.Header
	Raw    string
	JSON   map[string]any
}

func (p page) code() string {
	e, _ := p.JSON["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (p page) message() string {
	e, _ := p.JSON["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func ask(t *testing.T, url, method string, header map[string]string, body string) page {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	p := page{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &p.JSON), "the answer is not JSON: %s", raw)
	}
	return p
}

// askJSON is the page's POST of a declaration, from origin.
func askJSON(t *testing.T, url, origin, body string) page {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if origin != "" {
		h["Origin"] = origin
	}
	return ask(t, url, http.MethodPost, h, body)
}

// serveHandler serves a handler of cfg (Origins: pageOrigin unless set) on 127.0.0.1.
func serveHandler(t *testing.T, cfg HandlerConfig) string {
	t.Helper()
	if cfg.Origins == nil {
		cfg.Origins = []string{pageOrigin}
	}
	h, err := NewHandler(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func emulatorClient(t *testing.T, s *storageSpy, o Options) *Client {
	t.Helper()
	o.Endpoint = s.URL
	c, err := NewClient(context.Background(), o)
	require.NoError(t, err)
	return c
}

// testKey is an RSA key made for the test, with its PEM.
func testKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// serviceAccountFile writes a service account's JSON key file (as the console gives them),
// whose tokens come from tokenURL, and points GOOGLE_APPLICATION_CREDENTIALS at it.
func serviceAccountFile(t *testing.T, keyPEM []byte, email, tokenURL string) {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "test-project", "private_key_id": "k1",
		"private_key": string(keyPEM), "client_email": email, "client_id": "1",
		"token_uri": tokenURL,
	})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "sa.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	t.Setenv(EmulatorEnv, "")
}

// tokenServer is an OAuth token endpoint on 127.0.0.1 that hands out token to every
// service-account assertion it gets.
func tokenServer(t *testing.T, token string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, token)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token"
}

// detectForTest finds the Application Default Credentials as NewClient does.
func detectForTest() (*auth.Credentials, error) {
	return credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{scopeReadWrite}})
}

// withHeader is a copy of h with k set to v, or left out where v is "".
func withHeader(h map[string]string, k, v string) map[string]string {
	c := map[string]string{}
	for a, b := range h {
		c[a] = b
	}
	if v == "" {
		delete(c, k)
	} else {
		c[k] = v
	}
	return c
}
