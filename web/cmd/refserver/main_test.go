package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs the command itself when the test re-executes its binary.
func TestMain(m *testing.M) {
	if os.Getenv("REFSERVER_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command starts the command with args (on free ports) and returns it with the line it
// announces its addresses in.
func command(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0", "-alt-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "REFSERVER_RUN_MAIN=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
	}
	require.NoError(t, err, "reading the first line")
	return cmd, line
}

func TestCommand(t *testing.T) {
	cmd, line := command(t, "-range-form", "plain")
	defer cmd.Process.Kill()
	var urls struct{ URL, AltURL string }
	require.NoError(t, json.Unmarshal([]byte(line), &urls), "first line %q", line)
	require.True(t, strings.HasPrefix(urls.URL, "http://127.0.0.1:"), "first line %q", line)
	require.True(t, strings.HasPrefix(urls.AltURL, "http://127.0.0.1:"), "first line %q", line)
	require.NotEqual(t, urls.URL, urls.AltURL, "first line %q", line)

	// A session started on one listener continues on the other: one state.
	resp, err := http.Post(urls.URL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=x", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	loc := strings.Replace(resp.Header.Get("Location"), urls.URL, urls.AltURL, 1)
	req, _ := http.NewRequest("PUT", loc, strings.NewReader(strings.Repeat("a", 262144)))
	req.Header.Set("Content-Range", "bytes 0-262143/*")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 308, resp.StatusCode, "chunk on the alt listener")
	assert.Equal(t, "0-262143", resp.Header.Get("Range"), "chunk on the alt listener (-range-form plain)")
	resp, err = http.Get(urls.AltURL + "/_ref/log")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var log []map[string]any
	json.Unmarshal(b, &log)
	assert.Len(t, log, 2, "log on the alt listener: want both requests")

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit after SIGTERM")
	case <-time.After(5 * time.Second):
		assert.Fail(t, "still running 5 s after SIGTERM")
	}
}

// With -tls the command serves HTTPS beside HTTP, one state: a Go client that trusts the
// announced certificate uploads over HTTP/2 through the emulated link, and the log read over
// plain HTTP says which version each request came in.
func TestCommandTLS(t *testing.T) {
	cmd, line := command(t, "-tls")
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	var a struct{ URL, AltURL, TLSURL, AltTLSURL, H1TLSURL, SPKI, CertPEM string }
	require.NoError(t, json.Unmarshal([]byte(line), &a), "first line %q", line)
	for _, u := range []string{a.TLSURL, a.AltTLSURL, a.H1TLSURL} {
		require.True(t, strings.HasPrefix(u, "https://127.0.0.1:") && u != "https://127.0.0.1:0", "first line %q: no HTTPS URL", line)
	}
	pool := x509.NewCertPool()
	require.NotEmpty(t, a.SPKI, "first line %q: no SPKI", line)
	require.True(t, pool.AppendCertsFromPEM([]byte(a.CertPEM)), "first line %q: no certificate", line)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}

	post := func(url, body string) {
		t.Helper()
		res, err := http.Post(url, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		res.Body.Close()
	}
	post(a.URL+"/_ref/config", `{"link":{"bitsPerSecond":16000000,"rttMs":40}}`) // 2 MB/s
	const size = 4 * 262144
	t0 := time.Now()
	res, err := client.Post(a.TLSURL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=h2", "", nil)
	require.NoError(t, err)
	res.Body.Close()
	loc := res.Header.Get("Location")
	require.Equal(t, "HTTP/2.0", res.Proto, "the start")
	require.True(t, strings.HasPrefix(loc, a.TLSURL+"/"), "Location %q: want a session on %s", loc, a.TLSURL)
	req, _ := http.NewRequest("PUT", loc, bytes.NewReader(bytes.Repeat([]byte("h"), size)))
	req.Header.Set("Content-Range", "bytes 0-1048575/1048576")
	res, err = client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	took := time.Since(t0)
	assert.Equal(t, 201, res.StatusCode, "1 MiB at 2 MB/s over HTTP/2")
	assert.GreaterOrEqual(t, took, 400*time.Millisecond, "1 MiB at 2 MB/s over HTTP/2: want at least 0.5 s less the link's slack")

	// The same state on every listener; the log tells the versions apart.
	res, err = http.Get(a.AltURL + "/_ref/log")
	require.NoError(t, err)
	var log []struct{ Kind, Proto string }
	json.NewDecoder(res.Body).Decode(&log)
	res.Body.Close()
	if assert.Len(t, log, 2, "want the start and the chunk") {
		assert.Equal(t, "HTTP/2.0", log[0].Proto, "the start")
		assert.Equal(t, "HTTP/2.0", log[1].Proto, "the chunk")
	}
	res, err = client.Get(a.AltTLSURL + "/_ref/objects/h2")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, size, len(b), "the object read back over the alt HTTPS listener: bytes")

	// The HTTPS listener that offers HTTP/1.1 only: the same client, which would take HTTP/2,
	// gets HTTP/1.1 there.
	res, err = client.Get(a.H1TLSURL + "/_ref/objects/h2")
	require.NoError(t, err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, "HTTP/1.1", res.Proto, "over the HTTP/1.1-only HTTPS listener")
	assert.Equal(t, size, len(b), "over the HTTP/1.1-only HTTPS listener: bytes")
}
