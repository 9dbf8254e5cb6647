package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// /dist/ sends mediaupload.wasm.br or .gz in place of the wasm when the
// request accepts it, as the page's fetch of the wasm sees it.
func TestDistPrecompressed(t *testing.T) {
	dist := t.TempDir()
	for name, body := range map[string]string{
		"mediaupload.wasm":    "\x00asm raw",
		"mediaupload.wasm.br": "brotli bytes",
		"mediaupload.wasm.gz": "gzip bytes",
		"mediaupload.js":      "export {}",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dist, name), []byte(body), 0o644))
	}
	a, err := newApp(config{dist: dist, bucket: defaultBucket})
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	// A client that sends Accept-Encoding only as the test sets it, and never decodes.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	for _, tc := range []struct {
		name, method, path, accept, rangeHeader string
		wantStatus                              int
		wantEncoding, wantBody, wantVary        string
	}{
		{"no Accept-Encoding: the wasm itself", "GET", "/dist/mediaupload.wasm", "", "", 200, "", "\x00asm raw", "Accept-Encoding"},
		{"a browser's header: brotli", "GET", "/dist/mediaupload.wasm", "gzip, deflate, br, zstd", "", 200, "br", "brotli bytes", "Accept-Encoding"},
		{"gzip only", "GET", "/dist/mediaupload.wasm", "gzip", "", 200, "gzip", "gzip bytes", "Accept-Encoding"},
		{"x-gzip is gzip", "GET", "/dist/mediaupload.wasm", "x-gzip", "", 200, "gzip", "gzip bytes", "Accept-Encoding"},
		{"br refused with q=0", "GET", "/dist/mediaupload.wasm", "br;q=0, gzip", "", 200, "gzip", "gzip bytes", "Accept-Encoding"},
		{"the higher q wins", "GET", "/dist/mediaupload.wasm", "br;q=0.5, gzip;q=1.0", "", 200, "gzip", "gzip bytes", "Accept-Encoding"},
		{"equal q: brotli first", "GET", "/dist/mediaupload.wasm", "gzip;q=0.8, br;q=0.8", "", 200, "br", "brotli bytes", "Accept-Encoding"},
		{"any coding", "GET", "/dist/mediaupload.wasm", "*", "", 200, "br", "brotli bytes", "Accept-Encoding"},
		{"any but brotli", "GET", "/dist/mediaupload.wasm", "*, br;q=0", "", 200, "gzip", "gzip bytes", "Accept-Encoding"},
		{"identity only", "GET", "/dist/mediaupload.wasm", "identity", "", 200, "", "\x00asm raw", "Accept-Encoding"},
		{"nothing acceptable but identity", "GET", "/dist/mediaupload.wasm", "*;q=0, identity", "", 200, "", "\x00asm raw", "Accept-Encoding"},
		{"HEAD", "HEAD", "/dist/mediaupload.wasm", "br", "", 200, "br", "", "Accept-Encoding"},
		{"a range of the encoded bytes", "GET", "/dist/mediaupload.wasm", "br", "bytes=0-5", 206, "br", "brotli", "Accept-Encoding"},
		{"a file without variants", "GET", "/dist/mediaupload.js", "br, gzip", "", 200, "", "export {}", ""},
		{"a missing file", "GET", "/dist/missing.wasm", "br, gzip", "", 404, "", "404 page not found\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			require.NoError(t, err)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			if tc.rangeHeader != "" {
				req.Header.Set("Range", tc.rangeHeader)
			}
			res, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			require.Equal(t, tc.wantStatus, res.StatusCode, "status")
			assert.Equal(t, tc.wantEncoding, res.Header.Get("Content-Encoding"), "Content-Encoding")
			assert.Equal(t, tc.wantVary, res.Header.Get("Vary"), "Vary")
			assert.Equal(t, tc.wantBody, string(body), "body")
			if tc.wantStatus < 300 && filepath.Ext(tc.path) == ".wasm" {
				assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
			}
		})
	}
}
