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
)

// newTestSite serves the whole demo site (memory or dataDir) on a loopback
// httptest server, with a fake dist/ folder.
func newTestSite(t *testing.T, dataDir string) *httptest.Server {
	t.Helper()
	dist := t.TempDir()
	if err := os.WriteFile(filepath.Join(dist, "mediaupload.js"), []byte("export async function load() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "mediaupload.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := newApp(config{dist: dist, dataDir: dataDir, bucket: defaultBucket})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	if err := a.listening(context.Background(), srv.URL+"/", ""); err != nil {
		t.Fatal(err)
	}
	return srv
}

func do(t *testing.T, method, url string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
		req.ContentLength = 0
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.wantStatus, body)
			}
			if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, tc.wantType) {
				t.Errorf("Content-Type %q, want it to contain %q", ct, tc.wantType)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body does not contain %q: %.300s", tc.wantBody, body)
			}
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
	if res.StatusCode/100 != 2 {
		t.Fatalf("preflight: status %d", res.StatusCode)
	}
	// Whatever is asked for is allowed, a header of the page's own (x-extra) too, as Cloud
	// Storage does.
	allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"x-upload-content-type", "x-upload-content-length", "content-range", "authorization", "x-guploader-no-308", "x-extra"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("preflight does not allow %s: %q", h, allowed)
		}
	}
	if res.Header.Get("Access-Control-Max-Age") == "" {
		t.Error("preflight has no Access-Control-Max-Age")
	}

	cors := map[string]string{"Origin": origin}
	meta := []byte(`{"name":"dir/g.bin","contentType":"application/x-test"}`)
	res, body := do(t, http.MethodPost, upload, meta, map[string]string{
		"Origin":                  origin,
		"Content-Type":            "application/json; charset=UTF-8",
		"X-Upload-Content-Type":   "application/x-test",
		"X-Upload-Content-Length": fmt.Sprint(len(data)),
	})
	if res.StatusCode != 200 {
		t.Fatalf("start: status %d: %s", res.StatusCode, body)
	}
	checkExposed(t, res, origin)
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, srv.URL+"/upload/storage/v1/b/demo/o?") || !strings.Contains(loc, "upload_id=") {
		t.Fatalf("Location %q", loc)
	}

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
			if res.StatusCode != http.StatusPermanentRedirect {
				t.Fatalf("chunk at %d: status %d: %s", off, res.StatusCode, body)
			}
			if want := fmt.Sprintf("bytes=0-%d", end-1); res.Header.Get("Range") != want {
				t.Fatalf("chunk at %d: Range %q, want %q", off, res.Header.Get("Range"), want)
			}
		}
	}
	if res.StatusCode != 200 { // docs/protocol.md section 7: 200, never 201
		t.Fatalf("last chunk: status %d: %s", res.StatusCode, body)
	}
	var obj struct{ Name, Size, MD5Hash string }
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Name != "dir/g.bin" || obj.Size != fmt.Sprint(len(data)) || obj.MD5Hash != md5B64(data) {
		t.Fatalf("final object %+v, want size %d md5 %s", obj, len(data), md5B64(data))
	}

	_, body = do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o", nil, cors)
	if !strings.Contains(string(body), `"md5Hash":"`+md5B64(data)+`"`) {
		t.Errorf("listing does not show the object: %s", body)
	}
	res, body = do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o/dir%2Fg.bin?alt=media", nil, cors)
	if res.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Errorf("download: status %d, %d bytes, equal %v", res.StatusCode, len(body), bytes.Equal(body, data))
	}
}

func checkExposed(t *testing.T, res *http.Response, origin string) {
	t.Helper()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != origin && got != "*" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	exposed := strings.ToLower(res.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"location", "range", "x-http-status-code-override"} {
		if !strings.Contains(exposed, h) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
		}
	}
}

func TestFakeGCSMediaAndMultipart(t *testing.T) {
	srv := newTestSite(t, "")
	data := pattern(5000)
	res, body := do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=media&name=m.bin", data,
		map[string]string{"Content-Type": "application/octet-stream"})
	if res.StatusCode != 200 || !strings.Contains(string(body), md5B64(data)) {
		t.Fatalf("media: %d %s", res.StatusCode, body)
	}
	var mp bytes.Buffer
	mp.WriteString("--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"mp.bin\"}\r\n--B\r\nContent-Type: application/octet-stream\r\n\r\n")
	mp.Write(data)
	mp.WriteString("\r\n--B--")
	res, body = do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=multipart", mp.Bytes(),
		map[string]string{"Content-Type": "multipart/related; boundary=B"})
	if res.StatusCode != 200 || !strings.Contains(string(body), md5B64(data)) || !strings.Contains(string(body), `"name":"mp.bin"`) {
		t.Fatalf("multipart: %d %s", res.StatusCode, body)
	}
}

// The reference server is mounted under /ref/, and its session URIs must
// point back under /ref/.
func TestRefMounted(t *testing.T) {
	srv := newTestSite(t, "")
	data := pattern(2*262144 + 10)
	res, body := do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=resumable&name=r.bin", nil,
		map[string]string{"X-Upload-Content-Length": fmt.Sprint(len(data)), "X-Upload-Content-Type": "application/octet-stream"})
	if res.StatusCode != 200 {
		t.Fatalf("start: %d %s", res.StatusCode, body)
	}
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, srv.URL+"/ref/upload/storage/v1/b/demo/o?") {
		t.Fatalf("Location %q does not point under /ref/", loc)
	}
	res, body = do(t, http.MethodPut, loc, data[:262144], map[string]string{"Content-Range": fmt.Sprintf("bytes 0-262143/%d", len(data))})
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("chunk: %d Range %q %s", res.StatusCode, res.Header.Get("Range"), body)
	}
	res, body = do(t, http.MethodPut, loc, data[262144:], map[string]string{"Content-Range": fmt.Sprintf("bytes 262144-%d/%d", len(data)-1, len(data))})
	if res.StatusCode != http.StatusCreated || !strings.Contains(string(body), md5B64(data)) {
		t.Fatalf("last chunk: %d %s", res.StatusCode, body)
	}
	_, body = do(t, http.MethodGet, srv.URL+"/ref/_ref/objects", nil, nil)
	if !strings.Contains(string(body), `"name":"r.bin"`) || !strings.Contains(string(body), md5B64(data)) {
		t.Errorf("objects: %s", body)
	}
	res, body = do(t, http.MethodGet, srv.URL+"/ref/_ref/objects/r.bin", nil, nil)
	if res.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Errorf("download: %d, %d bytes", res.StatusCode, len(body))
	}

	// The flaky switch of the page.
	res, body = do(t, http.MethodPost, srv.URL+"/ref/_ref/faults", []byte(`{"random":{"seed":7,"rate":0.15}}`),
		map[string]string{"Content-Type": "application/json"})
	if res.StatusCode != 200 {
		t.Fatalf("faults: %d %s", res.StatusCode, body)
	}
	if res, body = do(t, http.MethodDelete, srv.URL+"/ref/_ref/faults", nil, nil); res.StatusCode != 200 {
		t.Fatalf("clear faults: %d %s", res.StatusCode, body)
	}
}

// With -data, both servers keep their objects across a restart.
func TestDataDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	data := pattern(1234)
	srv := newTestSite(t, dir)
	if res, body := do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=keep.bin", data, nil); res.StatusCode != 200 {
		t.Fatalf("ref: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, http.MethodPost, srv.URL+"/upload/storage/v1/b/demo/o?uploadType=media&name=keep.bin", data, nil); res.StatusCode != 200 {
		t.Fatalf("gcs: %d %s", res.StatusCode, body)
	}
	srv.Close()

	srv = newTestSite(t, dir) // the bucket exists already: must not panic
	if _, body := do(t, http.MethodGet, srv.URL+"/ref/_ref/objects/keep.bin", nil, nil); !bytes.Equal(body, data) {
		t.Errorf("ref lost the object: %q", body)
	}
	if _, body := do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o/keep.bin?alt=media", nil, nil); !bytes.Equal(body, data) {
		t.Errorf("fake-gcs lost the object: %q", body)
	}
}

func TestThrottle(t *testing.T) {
	srv := newTestSite(t, "")
	if res, body := do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":1000000}`), nil); res.StatusCode != 200 {
		t.Fatalf("throttle: %d %s", res.StatusCode, body)
	}
	start := time.Now()
	data := pattern(300_000)
	if res, body := do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=slow.bin", data, nil); res.StatusCode != 200 {
		t.Fatalf("upload: %d %s", res.StatusCode, body)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("300 kB at 1 MB/s took %v", d)
	}
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":0}`), nil)
	start = time.Now()
	do(t, http.MethodPost, srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=fast.bin", data, nil)
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("unthrottled upload took %v", d)
	}
}

// The network speed's queue (what a request given up still delivers: netlink.Link.SetQueue) is
// a second at start, set by "queueMs", kept by a POST without it, and shown by GET.
func TestThrottleQueue(t *testing.T) {
	srv := newTestSite(t, "")
	queue := func() any {
		t.Helper()
		_, body := do(t, http.MethodGet, srv.URL+"/api/throttle", nil, nil)
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("GET /api/throttle: %v: %s", err, body)
		}
		return v["queueMs"]
	}
	if q := queue(); q != 1000.0 {
		t.Errorf("queueMs %v at start, want 1000", q)
	}
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":262144,"queueMs":0}`), nil)
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":1048576}`), nil)
	if q := queue(); q != 0.0 {
		t.Errorf("queueMs %v after 0 then a POST without it, want 0", q)
	}
}

// The network speed moves the uploads under way too: an upload begun with no limit slows down
// when the page picks a speed.
func TestThrottleMovesUploadsUnderWay(t *testing.T) {
	srv := newTestSite(t, "")
	pr, pw := io.Pipe()
	answered := make(chan time.Time, 1)
	go func() {
		res, err := http.Post(srv.URL+"/ref/upload/storage/v1/b/demo/o?uploadType=media&name=moved.bin", "application/octet-stream", pr)
		if err != nil {
			t.Error(err)
		} else {
			res.Body.Close()
		}
		answered <- time.Now()
	}()
	if _, err := pw.Write(pattern(256 << 10)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // read at once: no limit yet
	set := time.Now()
	do(t, http.MethodPost, srv.URL+"/api/throttle", []byte(`{"bytesPerSecond":262144}`), nil)
	if _, err := pw.Write(pattern(128 << 10)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	// The last 128 KiB at 256 KiB/s: half a second.
	if d := (<-answered).Sub(set); d < 350*time.Millisecond {
		t.Errorf("the upload ended %v after the speed was set to 256 KiB/s with 128 KiB to go, want 0.5 s", d)
	}
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
		if err != nil || c.addr != tc.want {
			t.Errorf("env %q args %q: addr %q, err %v; want %q", tc.env, tc.args, c.addr, err, tc.want)
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
		t.Fatalf("first line gives %q; stdout %q stderr %q", url, stdout.String(), stderr.String())
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET %s: %d", url, res.StatusCode)
	}
	if !strings.Contains(stderr.String(), "mediaupload.js not found") {
		t.Errorf("no warning about the missing dist/: %q", stderr.String())
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit code %d after interrupt", c)
	}
}

// A busy port gives one clear line and exit code 1, not a stack trace.
func TestBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-addr", ln.Addr().String(), "-dist", t.TempDir()},
		func(string) string { return "" }, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "already in use") || !strings.Contains(last, ln.Addr().String()) || !strings.Contains(last, addrEnv) {
		t.Errorf("message %q", last)
	}
	if strings.Contains(stderr.String(), "goroutine") || stdout.String() != "" {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

func TestExamplesAndTheirWidgets(t *testing.T) {
	examples, modules := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(examples, "uppy.html"), "<title>uppy example</title>")
	write(filepath.Join(modules, "jquery/dist/jquery.min.js"), "/*! jQuery */")
	write(filepath.Join(modules, "esbuild/lib/main.js"), "/* not a widget */")
	a, err := newApp(config{dist: t.TempDir(), bucket: defaultBucket, examples: examples, modules: modules})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	for path, want := range map[string]int{
		"/examples/uppy.html":                     200,
		"/node_modules/jquery/dist/jquery.min.js": 200,
		"/node_modules/esbuild/lib/main.js":       404,
		"/node_modules/../go.mod":                 404,
	} {
		res, body := do(t, "GET", srv.URL+path, nil, nil)
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d: %.100s", path, res.StatusCode, want, body)
		}
	}
}

// The examples' index links the React example only once it is built (web/examples/react is a
// Vite app built on demand): before, a bare 404.
func TestExamplesIndexLinksWhatIsBuilt(t *testing.T) {
	index, err := os.ReadFile("../../examples/index.html")
	if err != nil {
		t.Fatal(err)
	}
	examples := t.TempDir()
	if err := os.WriteFile(filepath.Join(examples, "index.html"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := newApp(config{dist: t.TempDir(), bucket: defaultBucket, examples: examples, modules: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	get := func() string {
		t.Helper()
		res, body := do(t, "GET", srv.URL+"/examples/", nil, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /examples/: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		return string(body)
	}
	page := get()
	if strings.Contains(page, `href="react/dist/"`) || !strings.Contains(page, "React <em>(not built here yet)</em>") {
		t.Errorf("before the React example is built, the index links it or does not say so:\n%s", page)
	}
	if !strings.Contains(page, `href="uppy.html"`) {
		t.Errorf("the other examples' links went:\n%s", page)
	}
	if err := os.MkdirAll(filepath.Join(examples, "react/dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(examples, "react/dist/index.html"), []byte("<title>built</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if page := get(); !strings.Contains(page, `<a href="react/dist/">React</a>`) {
		t.Errorf("once the React example is built, the index does not link it:\n%s", page)
	}
	if res, _ := do(t, "GET", srv.URL+"/examples/react/dist/", nil, nil); res.StatusCode != 200 {
		t.Errorf("GET /examples/react/dist/: %d", res.StatusCode)
	}
}
