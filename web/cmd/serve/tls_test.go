package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -tls-addr the site is served over HTTPS with HTTP/2 too: the first line names both
// addresses, the second the certificate's SPKI hash (checked here against the certificate
// the server shows), and an upload through the demo's network speed goes over HTTP/2 with a
// session URI on the HTTPS origin.
func TestRunServesHTTPS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-addr", "127.0.0.1:0", "-tls-addr", "127.0.0.1:0", "-dist", t.TempDir()},
			func(string) string { return "" }, &stdout, &stderr)
	}()
	first := regexp.MustCompile(`^mediaupload demo: (http://127\.0\.0\.1:\d+/) (https://127\.0\.0\.1:\d+/)\n  HTTPS with HTTP/2: .*spki-list=(\S+) trusts it\)\n`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && m == nil; time.Sleep(20 * time.Millisecond) {
		m = first.FindStringSubmatch(stdout.String())
	}
	require.NotNil(t, m, "first lines %q, stderr %q", stdout.String(), stderr.String())
	require.False(t, strings.HasSuffix(m[2], ":0/"), "first lines %q", stdout.String())
	plainURL, secureURL, spki := m[1], m[2], m[3]

	// A client that trusts the one key the second line names.
	tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // the check is VerifyPeerCertificate's: the SPKI hash
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			c, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			if h := sha256.Sum256(c.RawSubjectPublicKeyInfo); base64.StdEncoding.EncodeToString(h[:]) != spki {
				return errors.New("not the certificate whose SPKI hash was printed")
			}
			return nil
		},
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	res, err := client.Get(secureURL)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 200, res.StatusCode, "GET %s", secureURL)
	assert.Equal(t, "HTTP/2.0", res.Proto, "GET %s", secureURL)
	// The network speed set over HTTP holds over HTTPS: one state.
	res, err = http.Post(plainURL+"api/throttle", "application/json", strings.NewReader(`{"bytesPerSecond":1000000,"rttMs":30}`))
	require.NoError(t, err)
	res.Body.Close()
	res, err = client.Post(secureURL+"ref/upload/storage/v1/b/demo/o?uploadType=resumable&name=h2.bin", "", nil)
	require.NoError(t, err)
	res.Body.Close()
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, secureURL+"ref/upload/"), "session URI %q, want one under %sref/upload/", loc, secureURL)
	data := pattern(300_000)
	req, _ := http.NewRequest("PUT", loc, bytes.NewReader(data))
	req.Header.Set("Content-Range", "bytes 0-299999/300000")
	t0 := time.Now()
	res, err = client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	took := time.Since(t0)
	assert.Equal(t, 201, res.StatusCode, "300 kB at 1 MB/s over HTTPS")
	assert.Equal(t, "HTTP/2.0", res.Proto, "300 kB at 1 MB/s over HTTPS")
	assert.GreaterOrEqual(t, took, 250*time.Millisecond, "300 kB at 1 MB/s over HTTPS: want 0.3 s or more")
	res, body := do(t, "GET", plainURL+"ref/_ref/objects/h2.bin", nil, nil)
	assert.Equal(t, 200, res.StatusCode, "stored object")
	assert.Equal(t, md5B64(data), md5B64(body), "stored object's MD5 (%d bytes)", len(body))
	cancel()
	assert.Zero(t, <-code, "exit code after interrupt")
}
