package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestSite serves the whole demo site (memory or dataDir) on a loopback
// httptest server, with a fake dist/ folder.
func newTestSite(t *testing.T, dataDir string) *httptest.Server {
	t.Helper()
	dist := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dist, "mediaupload.js"), []byte("export async function load() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dist, "mediaupload.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	a, err := newApp(config{dist: dist, dataDir: dataDir, bucket: defaultBucket})
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	require.NoError(t, a.listening(context.Background(), srv.URL+"/", ""))
	return srv
}

func do(t *testing.T, method, url string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if body == nil {
		req.Body = http.NoBody
		req.ContentLength = 0
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s", method, url)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err, "%s %s", method, url)
	return res, b
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/1000)
	}
	return b
}

func md5B64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

func TestRoutes(t *testing.T) {
	srv := newTestSite(t, "")
	for _, tc := range []struct {
		path, wantType, wantBody string
		wantStatus               int
	}{
		{"/", "text/html", `src="/demo.js"`, 200},
		{"/index.html", "", "", 301}, // FileServer redirects to /
		{"/demo.js", "javascript", `from "/dist/mediaupload.js"`, 200},
		{"/demo.css", "text/css", "--accent", 200},
		{"/embed.go", "", "", 404},
		{"/favicon.svg", "image/svg+xml", "<svg", 200},
		{"/favicon.ico", "image/svg+xml", "<svg", 200}, // asked for by tabs without an icon link
		{"/dist/mediaupload.js", "javascript", "export async function load", 200},
		{"/dist/mediaupload.wasm", "application/wasm", "", 200},
		{"/dist/missing.js", "", "", 404},
		{"/api/config", "application/json", `"upload":"/ref/upload/storage/v1/b/demo/o"`, 200},
		{"/ref/_ref/objects", "application/json", "[]", 200},
		{"/storage/v1/b/demo/o", "application/json", "", 200},
		{"/storage/v1/b", "application/json", `"name":"demo"`, 200},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := c.Get(srv.URL + tc.path)
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Equal(t, tc.wantStatus, res.StatusCode, "status: %s", body)
			assert.Contains(t, res.Header.Get("Content-Type"), tc.wantType, "Content-Type")
			// (Not assert.Contains: the page or script whole would be the message.)
			assert.True(t, strings.Contains(string(body), tc.wantBody), "body does not contain %q: %.300s", tc.wantBody, body)
		})
	}
}

// A resumable upload to fake-gcs-server the way the module sends it from a
// page on another origin: preflight with X-Upload-* headers, session start,
// 256 KiB chunks, then the object is listed and downloadable.
func TestFakeGCSResumableCrossOrigin(t *testing.T) {
	srv := newTestSite(t, "")
	const origin = "http://127.0.0.1:1"
	data := pattern(3*262144 + 1000)
	upload := srv.URL + "/upload/storage/v1/b/demo/o?uploadType=resumable&name=" + "dir%2Fg.bin"

	res, _ := do(t, http.MethodOptions, upload, nil, map[string]string{
		"Origin":                         origin,
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "content-type,x-upload-content-type,x-upload-content-length,authorization,content-range,x-guploader-no-308,x-extra",
	})
	require.Equal(t, 2, res.StatusCode/100, "preflight: status %d", res.StatusCode)
	// Whatever is asked for is allowed, a header of the page's own (x-extra) too, as Cloud
	// Storage does.
	allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"x-upload-content-type", "x-upload-content-length", "content-range", "authorization", "x-guploader-no-308", "x-extra"} {
		assert.Contains(t, allowed, h, "preflight's Access-Control-Allow-Headers")
	}
	assert.NotEmpty(t, res.Header.Get("Access-Control-Max-Age"), "preflight has no Access-Control-Max-Age")

	cors := map[string]string{"Origin": origin}
	meta := []byte(`{"name":"dir/g.bin","contentType":"application/x-test"}`)
	res, body := do(t, http.MethodPost, upload, meta, map[string]string{
		"Origin":                  origin,
		"Content-Type":            "application/json; charset=UTF-8",
		"X-Upload-Content-Type":   "application/x-test",
		"X-Upload-Content-Length": fmt.Sprint(len(data)),
	})
	require.Equal(t, 200, res.StatusCode, "start: %s", body)
	checkExposed(t, res, origin)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, srv.URL+"/upload/storage/v1/b/demo/o?"), "Location %q", loc)
	require.Contains(t, loc, "upload_id=", "Location")

	const chunk = 262144
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		h := map[string]string{
			"Origin":        cors["Origin"],
			"Content-Range": fmt.Sprintf("bytes %d-%d/%d", off, end-1, len(data)),
		}
		res, body = do(t, http.MethodPut, loc, data[off:end], h)
		checkExposed(t, res, origin)
		if end < len(data) {
			require.Equal(t, http.StatusPermanentRedirect, res.StatusCode, "chunk at %d: %s", off, body)
			require.Equal(t, fmt.Sprintf("bytes=0-%d", end-1), res.Header.Get("Range"), "chunk at %d: Range", off)
		}
	}
	require.Equal(t, 200, res.StatusCode, "last chunk: %s", body) // docs/protocol.md section 7: 200, never 201
	var obj struct{ Name, Size, MD5Hash string }
	require.NoError(t, json.Unmarshal(body, &obj))
	require.Equal(t, struct{ Name, Size, MD5Hash string }{"dir/g.bin", fmt.Sprint(len(data)), md5B64(data)}, obj, "final object")

	_, body = do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o", nil, cors)
	assert.Contains(t, string(body), `"md5Hash":"`+md5B64(data)+`"`, "listing does not show the object")
	res, body = do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o/dir%2Fg.bin?alt=media", nil, cors)
	assert.Equal(t, 200, res.StatusCode, "download")
	assert.True(t, bytes.Equal(body, data), "download: %d bytes, not the data", len(body))
}

func checkExposed(t *testing.T, res *http.Response, origin string) {
	t.Helper()
	assert.Contains(t, []string{origin, "*"}, res.Header.Get("Access-Control-Allow-Origin"), "Access-Control-Allow-Origin")
	exposed := strings.ToLower(res.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"location", "range", "x-http-status-code-override"} {
		assert.Contains(t, exposed, h, "Access-Control-Expose-Headers")
	}
}

func TestFakeGCSMediaAndMultipart(t *testing.T) {
	srv := newTestSite(t, "")
	data := pattern(5000)
	res, body := do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=media&name=m.bin", data,
		map[string]string{"Content-Type": "application/octet-stream"})
	require.Equal(t, 200, res.StatusCode, "media: %s", body)
	require.Contains(t, string(body), md5B64(data), "media")
	var mp bytes.Buffer
	mp.WriteString("--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"mp.bin\"}\r\n--B\r\nContent-Type: application/octet-stream\r\n\r\n")
	mp.Write(data)
	mp.WriteString("\r\n--B--")
	res, body = do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=multipart", mp.Bytes(),
		map[string]string{"Content-Type": "multipart/related; boundary=B"})
	require.Equal(t, 200, res.StatusCode, "multipart: %s", body)
	assert.Contains(t, string(body), md5B64(data), "multipart")
	assert.Contains(t, string(body), `"name":"mp.bin"`, "multipart")
}

// The reference server is mounted under /ref/, and its session URIs must
// point back under /ref/.
func TestRefMounted(t *testing.T) {
	srv := newTestSite(t, "")
	data := pattern(2*262144 + 10)
	res, body := do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=resumable&name=r.bin", nil,
		map[string]string{"X-Upload-Content-Length": fmt.Sprint(len(data)), "X-Upload-Content-Type": "application/octet-stream"})
	require.Equal(t, 200, res.StatusCode, "start: %s", body)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, srv.URL+"/ref/upload/storage/v1/b/demo/o?"), "Location %q does not point under /ref/", loc)
	res, body = do(t, http.MethodPut, loc, data[:262144], map[string]string{"Content-Range": fmt.Sprintf("bytes 0-262143/%d", len(data))})
	require.Equal(t, http.StatusPermanentRedirect, res.StatusCode, "chunk: %s", body)
	require.Equal(t, "bytes=0-262143", res.Header.Get("Range"), "chunk")
	res, body = do(t, http.MethodPut, loc, data[262144:], map[string]string{"Content-Range": fmt.Sprintf("bytes 262144-%d/%d", len(data)-1, len(data))})
	require.Equal(t, http.StatusCreated, res.StatusCode, "last chunk: %s", body)
	require.Contains(t, string(body), md5B64(data), "last chunk")
	_, body = do(t, http.MethodGet, srv.URL+"/ref/_ref/objects", nil, nil)
	assert.Contains(t, string(body), `"name":"r.bin"`, "objects")
	assert.Contains(t, string(body), md5B64(data), "objects")
	res, body = do(t, http.MethodGet, srv.URL+"/ref/_ref/objects/r.bin", nil, nil)
	assert.Equal(t, 200, res.StatusCode, "download")
	assert.True(t, bytes.Equal(body, data), "download: %d bytes, not the data", len(body))

	// The flaky switch of the page.
	res, body = do(t, http.MethodPost, srv.URL+"/ref/_ref/faults", []byte(`{"random":{"seed":7,"rate":0.15}}`),
		map[string]string{"Content-Type": "application/json"})
	require.Equal(t, 200, res.StatusCode, "faults: %s", body)
	res, body = do(t, http.MethodDelete, srv.URL+"/ref/_ref/faults", nil, nil)
	require.Equal(t, 200, res.StatusCode, "clear faults: %s", body)
}

// With -data, both servers keep their objects across a restart.
func TestDataDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	data := pattern(1234)
	srv := newTestSite(t, dir)
	res, body := do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=keep.bin", data, nil)
	require.Equal(t, 200, res.StatusCode, "ref: %s", body)
	res, body = do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=media&name=keep.bin", data, nil)
	require.Equal(t, 200, res.StatusCode, "gcs: %s", body)
	srv.Close()

	srv = newTestSite(t, dir) // the bucket exists already: must not panic
	_, body = do(t, http.MethodGet, srv.URL+"/ref/_ref/objects/keep.bin", nil, nil)
	assert.Equal(t, data, body, "ref lost the object")
	_, body = do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o/keep.bin?alt=media", nil, nil)
	assert.Equal(t, data, body, "fake-gcs lost the object")
}

func TestThrottle(t *testing.T) {
	srv := newTestSite(t, "")
	res, body := do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":1000000}`), nil)
	require.Equal(t, 200, res.StatusCode, "throttle: %s", body)
	start := time.Now()
	data := pattern(300_000)
	res, body = do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=slow.bin", data, nil)
	require.Equal(t, 200, res.StatusCode, "upload: %s", body)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "300 kB at 1 MB/s")
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":0}`), nil)
	start = time.Now()
	do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=fast.bin", data, nil)
	assert.LessOrEqual(t, time.Since(start), 200*time.Millisecond, "unthrottled upload")
}

// The network speed's queue (what a request given up still delivers: netlink.Link.SetQueue) is
// a second at start, set by "queueMs", kept by a POST without it, and shown by GET.
func TestThrottleQueue(t *testing.T) {
	srv := newTestSite(t, "")
	queue := func() any {
		t.Helper()
		_, body := do(t, http.MethodGet, srv.URL+"/api/throttle", nil, nil)
		var v map[string]any
		require.NoError(t, json.Unmarshal(body, &v), "GET /api/throttle: %s", body)
		return v["queueMs"]
	}
	assert.Equal(t, 1000.0, queue(), "queueMs at start")
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":262144,"queueMs":0}`), nil)
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":1048576}`), nil)
	assert.Equal(t, 0.0, queue(), "queueMs after 0 then a POST without it")
}

// The network speed moves the uploads under way too: an upload begun with no limit slows down
// when the page picks a speed.
func TestThrottleMovesUploadsUnderWay(t *testing.T) {
	srv := newTestSite(t, "")
	pr, pw := io.Pipe()
	answered := make(chan time.Time, 1)
	go func() {
		res, err := http.Post(srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=moved.bin", "application/octet-stream", pr)
		if assert.NoError(t, err) {
			res.Body.Close()
		}
		answered <- time.Now()
	}()
	_, err := pw.Write(pattern(256 << 10))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // read at once: no limit yet
	set := time.Now()
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":262144}`), nil)
	_, err = pw.Write(pattern(128 << 10))
	require.NoError(t, err)
	pw.Close()
	// The last 128 KiB at 256 KiB/s: half a second.
	assert.GreaterOrEqual(t, (<-answered).Sub(set), 350*time.Millisecond, "the upload's end after the speed was set to 256 KiB/s with 128 KiB to go, want 0.5 s")
}

func TestAddrFromEnvAndFlag(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == addrEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "127.0.0.1:8080"},
		{"127.0.0.1:9999", nil, "127.0.0.1:9999"},
		{"127.0.0.1:9999", []string{"-addr", "127.0.0.1:7777"}, "127.0.0.1:7777"},
	} {
		c, err := parseFlags(tc.args, env(tc.env), io.Discard)
		if assert.NoError(t, err, "env %q args %q", tc.env, tc.args) {
			assert.Equal(t, tc.want, c.addr, "env %q args %q: addr", tc.env, tc.args)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Port 0 prints the real address, which then serves the page.
func TestRunPrintsRealURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-addr", "127.0.0.1:0", "-dist", t.TempDir()}, func(string) string { return "" }, &stdout, &stderr)
	}()
	var url string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && url == ""; time.Sleep(20 * time.Millisecond) {
		line, _ := bufio.NewReader(strings.NewReader(stdout.String())).ReadString('\n')
		if strings.HasSuffix(line, "\n") {
			url = strings.TrimSpace(strings.TrimPrefix(line, "mediaupload demo: "))
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0/") {
		cancel()
		require.Fail(t, "no URL on the first line", "first line gives %q; stdout %q stderr %q", url, stdout.String(), stderr.String())
	}
	res, err := http.Get(url)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 200, res.StatusCode, "GET %s", url)
	assert.Contains(t, stderr.String(), "mediaupload.js not found", "no warning about the missing dist/")
	cancel()
	assert.Zero(t, <-code, "exit code after interrupt")
}

// A busy port gives one clear line and exit code 1, not a stack trace.
func TestBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-addr", ln.Addr().String(), "-dist", t.TempDir()},
		func(string) string { return "" }, &stdout, &stderr)
	assert.Equal(t, 1, code, "exit code")
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"already in use", ln.Addr().String(), addrEnv} {
		assert.Contains(t, last, want, "the last line")
	}
	assert.NotContains(t, stderr.String(), "goroutine", "a stack trace")
	assert.Empty(t, stdout.String(), "stdout")
}

func TestExamplesAndTheirWidgets(t *testing.T) {
	examples, modules := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write(filepath.Join(examples, "uppy.html"), "<title>uppy example</title>")
	write(filepath.Join(modules, "jquery/dist/jquery.min.js"), "/*! jQuery */")
	write(filepath.Join(modules, "esbuild/lib/main.js"), "/* not a widget */")
	a, err := newApp(config{dist: t.TempDir(), bucket: defaultBucket, examples: examples, modules: modules})
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	for path, want := range map[string]int{
		"/examples/uppy.html":                     200,
		"/node_modules/jquery/dist/jquery.min.js": 200,
		"/node_modules/esbuild/lib/main.js":       404,
		"/node_modules/../go.mod":                 404,
	} {
		res, body := do(t, "GET", srv.URL+path, nil, nil)
		assert.Equal(t, want, res.StatusCode, "GET %s: %.100s", path, body)
	}
}

// The examples' index links the React example only once it is built (web/examples/react is a
// Vite app built on demand): before, a bare 404.
func TestExamplesIndexLinksWhatIsBuilt(t *testing.T) {
	index, err := os.ReadFile("../../examples/index.html")
	require.NoError(t, err)
	examples := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(examples, "index.html"), index, 0o644))
	a, err := newApp(config{dist: t.TempDir(), bucket: defaultBucket, examples: examples, modules: t.TempDir()})
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	get := func() string {
		t.Helper()
		res, body := do(t, "GET", srv.URL+"/examples/", nil, nil)
		require.Equal(t, 200, res.StatusCode, "GET /examples/")
		require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"), "GET /examples/: %s", res.Header.Get("Content-Type"))
		return string(body)
	}
	page := get()
	assert.NotContains(t, page, `href="react/dist/"`, "before the React example is built, the index links it")
	assert.Contains(t, page, "React <em>(not built here yet)</em>", "before the React example is built, the index does not say so")
	assert.Contains(t, page, `href="uppy.html"`, "the other examples' links went")
	require.NoError(t, os.MkdirAll(filepath.Join(examples, "react/dist"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(examples, "react/dist/index.html"), []byte("<title>built</title>"), 0o644))
	assert.Contains(t, get(), `<a href="react/dist/">React</a>`, "once the React example is built, the index does not link it")
	res, _ := do(t, "GET", srv.URL+"/examples/react/dist/", nil, nil)
	assert.Equal(t, 200, res.StatusCode, "GET /examples/react/dist/")
}
