package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askSession is the page's POST to the demo's backend, from origin.
func askSession(t *testing.T, base, origin, body string) (*http.Response, map[string]any) {
	t.Helper()
	res, raw := do(t, http.MethodPost, base+sessionPath, []byte(body), map[string]string{"Origin": origin, "Content-Type": "application/json"})
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	return res, v
}

// The demo's backend starts a session in fake-gcs-server for a page of the demo's origin
// (and of its localhost twin), named and described as the upload's metadata says; the page's
// chunks, from its origin, make the object. Another origin is refused.
func TestBackendStartsSessionsForThePage(t *testing.T) {
	srv := newTestSite(t, "")
	data := pattern(262144 + 500)
	meta := `{"name":"dir/b.bin","contentType":"application/x-test","metadata":{"k":"v","n":7}}`
	res, v := askSession(t, srv.URL, srv.URL, fmt.Sprintf(`{"name":"b.bin","size":%d,"type":"","metadata":%s}`, len(data), meta))
	require.Equal(t, http.StatusOK, res.StatusCode, v)
	session, _ := v["sessionURL"].(string)
	require.True(t, strings.HasPrefix(session, srv.URL+"/upload/storage/v1/b/demo/o?"), session)

	for off := 0; off < len(data); off += 262144 {
		end := min(off+262144, len(data))
		res, body := do(t, http.MethodPut, session, data[off:end], map[string]string{
			"Origin": srv.URL, "Content-Range": fmt.Sprintf("bytes %d-%d/%d", off, end-1, len(data)), "X-GUploader-No-308": "yes"})
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		checkExposed(t, res, srv.URL)
	}
	_, body := do(t, http.MethodGet, srv.URL+"/storage/v1/b/demo/o/dir%2Fb.bin", nil, nil)
	var obj struct {
		Name, ContentType, Size string
		Metadata                map[string]string
	}
	require.NoError(t, json.Unmarshal(body, &obj), "%s", body)
	assert.Equal(t, "dir/b.bin", obj.Name)
	assert.Equal(t, "application/x-test", obj.ContentType)
	assert.Equal(t, fmt.Sprint(len(data)), obj.Size)
	assert.Equal(t, map[string]string{"k": "v", "n": "7"}, obj.Metadata)

	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	res, v = askSession(t, srv.URL, local, `{"name":"c.bin","size":1}`)
	assert.Equal(t, http.StatusOK, res.StatusCode, v)

	res, v = askSession(t, srv.URL, "http://127.0.0.1:1", `{"name":"c.bin","size":1}`)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Equal(t, map[string]any{"code": "origin_not_allowed", "message": v["error"].(map[string]any)["message"]}, v["error"])

	// Against fake-gcs-server there are no signed URLs (docs/protocol.md section 10).
	res, _ = do(t, http.MethodPost, srv.URL+signedPath, []byte(`{}`), map[string]string{"Origin": srv.URL, "Content-Type": "application/json"})
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	_, body = do(t, http.MethodGet, srv.URL+"/api/config", nil, nil)
	assert.Contains(t, string(body), `"session":"/api/gcs/session"`)
	assert.Contains(t, string(body), `"sessionBucket":"demo"`)
}

// -allow-origin adds origins to the backend's list.
func TestBackendAllowOrigin(t *testing.T) {
	c, err := parseFlags([]string{"-allow-origin", "http://127.0.0.1:7001, http://127.0.0.1:7002"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:7001", "http://127.0.0.1:7002"}, c.allowOrigins)
	assert.Empty(t, c.realBucket)
	c.dist = t.TempDir()
	a, err := newApp(c)
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { srv.Close(); a.Close() })
	require.NoError(t, a.listening(context.Background(), srv.URL+"/", ""))
	res, v := askSession(t, srv.URL, "http://127.0.0.1:7002", `{"name":"x","size":1}`)
	assert.Equal(t, http.StatusOK, res.StatusCode, v)
}

// -bucket NAME needs Application Default Credentials: without them the demo says so and
// stops. (With them it talks to Google, which no machine of the project reaches: untested.)
func TestBucketFlagNeedsCredentials(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/none.json") // no look at the metadata server
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-dist", t.TempDir(), "-bucket", "my-bucket"},
		func(string) string { return "" }, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "no Application Default Credentials")
}
