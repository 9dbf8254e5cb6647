package main

import (
	"bufio"
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

func TestCommand(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-alt-addr", "127.0.0.1:0", "-range-form", "plain")
	cmd.Env = append(os.Environ(), "REFSERVER_RUN_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
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
