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
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the first line: %v", err)
	}
	return cmd, line
}

func TestCommand(t *testing.T) {
	cmd, line := command(t, "-range-form", "plain")
	defer cmd.Process.Kill()
	var urls struct{ URL, AltURL string }
	if err := json.Unmarshal([]byte(line), &urls); err != nil || !strings.HasPrefix(urls.URL, "http://127.0.0.1:") || !strings.HasPrefix(urls.AltURL, "http://127.0.0.1:") || urls.URL == urls.AltURL {
		t.Fatalf("first line %q: %v", line, err)
	}

	// A session started on one listener continues on the other: one state.
	resp, err := http.Post(urls.URL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=x", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := strings.Replace(resp.Header.Get("Location"), urls.URL, urls.AltURL, 1)
	req, _ := http.NewRequest("PUT", loc, strings.NewReader(strings.Repeat("a", 262144)))
	req.Header.Set("Content-Range", "bytes 0-262143/*")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 308 || resp.Header.Get("Range") != "0-262143" {
		t.Errorf("chunk on the alt listener: %d %q, want 308 0-262143 (-range-form plain)", resp.StatusCode, resp.Header.Get("Range"))
	}
	resp, err = http.Get(urls.AltURL + "/_ref/log")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var log []map[string]any
	if json.Unmarshal(b, &log); len(log) != 2 {
		t.Errorf("log on the alt listener: %s, want both requests", b)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("still running 5 s after SIGTERM")
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
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("first line %q: %v", line, err)
	}
	for _, u := range []string{a.TLSURL, a.AltTLSURL, a.H1TLSURL} {
		if !strings.HasPrefix(u, "https://127.0.0.1:") || u == "https://127.0.0.1:0" {
			t.Fatalf("first line %q: no HTTPS URL", line)
		}
	}
	pool := x509.NewCertPool()
	if a.SPKI == "" || !pool.AppendCertsFromPEM([]byte(a.CertPEM)) {
		t.Fatalf("first line %q: no certificate", line)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}

	post := func(url, body string) {
		t.Helper()
		res, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	post(a.URL+"/_ref/config", `{"link":{"bitsPerSecond":16000000,"rttMs":40}}`) // 2 MB/s
	const size = 4 * 262144
	t0 := time.Now()
	res, err := client.Post(a.TLSURL+"/upload/storage/v1/b/b/o?uploadType=resumable&name=h2", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.Proto != "HTTP/2.0" || !strings.HasPrefix(loc, a.TLSURL+"/") {
		t.Fatalf("start over %s, Location %q: want HTTP/2.0 and a session on %s", res.Proto, loc, a.TLSURL)
	}
	req, _ := http.NewRequest("PUT", loc, bytes.NewReader(bytes.Repeat([]byte("h"), size)))
	req.Header.Set("Content-Range", "bytes 0-1048575/1048576")
	if res, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if took := time.Since(t0); res.StatusCode != 201 || took < 400*time.Millisecond {
		t.Errorf("1 MiB at 2 MB/s over HTTP/2: %d in %v, want 201 in at least 0.5 s less the link's slack", res.StatusCode, took)
	}

	// The same state on every listener; the log tells the versions apart.
	res, err = http.Get(a.AltURL + "/_ref/log")
	if err != nil {
		t.Fatal(err)
	}
	var log []struct{ Kind, Proto string }
	json.NewDecoder(res.Body).Decode(&log)
	res.Body.Close()
	if len(log) != 2 || log[0].Proto != "HTTP/2.0" || log[1].Proto != "HTTP/2.0" {
		t.Errorf("log %+v, want the start and the chunk over HTTP/2.0", log)
	}
	res, err = client.Get(a.AltTLSURL + "/_ref/objects/h2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if len(b) != size {
		t.Errorf("the object read back over the alt HTTPS listener: %d bytes, want %d", len(b), size)
	}

	// The HTTPS listener that offers HTTP/1.1 only: the same client, which would take HTTP/2,
	// gets HTTP/1.1 there.
	res, err = client.Get(a.H1TLSURL + "/_ref/objects/h2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.Proto != "HTTP/1.1" || len(b) != size {
		t.Errorf("over the HTTP/1.1-only HTTPS listener: %s, %d bytes; want HTTP/1.1, %d", res.Proto, len(b), size)
	}
}
