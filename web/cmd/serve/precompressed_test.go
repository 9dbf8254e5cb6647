package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
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
		if err := os.WriteFile(filepath.Join(dist, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := newApp(config{dist: dist, bucket: defaultBucket})
	if err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			if tc.rangeHeader != "" {
				req.Header.Set("Range", tc.rangeHeader)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.wantStatus)
			}
			if got := res.Header.Get("Content-Encoding"); got != tc.wantEncoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.wantEncoding)
			}
			if got := res.Header.Get("Vary"); got != tc.wantVary {
				t.Errorf("Vary %q, want %q", got, tc.wantVary)
			}
			if string(body) != tc.wantBody {
				t.Errorf("body %q, want %q", body, tc.wantBody)
			}
			if tc.wantStatus < 300 && filepath.Ext(tc.path) == ".wasm" {
				if got := res.Header.Get("Content-Type"); got != "application/wasm" {
					t.Errorf("Content-Type %q, want application/wasm", got)
				}
			}
		})
	}
}
