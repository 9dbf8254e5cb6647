package core

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// getHeaders failing is an auth_error, its error the cause, and no request is sent.
func TestGetHeaderFailureIsAuthError(t *testing.T) {
	cause := errors.New("token service unavailable")
	o := Options{GetHeader: func(Context) (Header, error) { return nil, cause }}
	_, err, s := runScript(t, &memSource{data: data(10)}, o, nil)
	s.done()
	if Code(err) != CodeAuth || !errors.Is(err, cause) {
		t.Fatalf("code %q, err %v: want auth_error wrapping the cause", Code(err), err)
	}
	if !strings.Contains(err.Error(), "getHeaders") || !strings.Contains(err.Error(), cause.Error()) {
		t.Errorf("message %q should name getHeaders and its error", err)
	}
}

// A bad header from getHeaders is a bad argument, not an auth failure.
func TestGetHeaderBadNameIsInvalidArgument(t *testing.T) {
	o := Options{GetHeader: func(Context) (Header, error) { return Header{"bad name": "x"}, nil }}
	_, err, s := runScript(t, &memSource{data: data(10)}, o, nil)
	s.done()
	if Code(err) != CodeInvalidArgument {
		t.Fatalf("code %q (%v)", Code(err), err)
	}
}

// A lost session is told: a retry with Restart, the state back to "starting", confirmed to 0
// while loaded stays (docs/protocol.md section 5, docs/api.md onRetry).
func TestLostSessionIsTold(t *testing.T) {
	var retries []RetryInfo
	var states []State
	var ps []Progress
	o := Options{ChunkSize: K256,
		OnRetry:    func(r RetryInfo) { retries = append(retries, r) },
		OnState:    func(s State) { states = append(states, s) },
		OnProgress: func(p Progress) { ps = append(ps, p) },
	}
	_, err, s := runScript(t, &memSource{data: data(2 * K256)}, o, lostSessionScript())
	s.done()
	if err != nil {
		t.Fatal(err)
	}
	if len(retries) != 1 || !retries[0].Restart || retries[0].Status != 404 || retries[0].Delay != 0 || retries[0].Attempt != 1 {
		t.Fatalf("retries %+v, want one restart after the 404", retries)
	}
	i := slices.Index(states, StateStarting)
	if j := slices.Index(states[i+1:], StateStarting); j < 0 {
		t.Errorf("states %v: no second %q after the lost session", states, StateStarting)
	}
	sawDrop := false
	for k := 1; k < len(ps); k++ {
		if ps[k].Loaded < ps[k-1].Loaded {
			t.Errorf("loaded went back: %+v after %+v", ps[k], ps[k-1])
		}
		if ps[k].Confirmed == 0 && ps[k-1].Confirmed == K256 {
			sawDrop = ps[k].Loaded == ps[k-1].Loaded && ps[k].Loaded > 0
		}
	}
	if !sawDrop {
		t.Errorf("confirmed should drop to 0 with loaded kept: %+v", ps)
	}
}

// Messages are written for people: no package names, the URL without its query, the page's
// origin, and CORS among the likely reasons of a network error.
func TestMessagesForPeople(t *testing.T) {
	netErr := &NetworkError{Attempts: 3, URL: "https://storage.googleapis.com/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=SECRET",
		Origin: "https://app.example", Err: errors.New("TypeError: Failed to fetch")}
	errs := []error{
		&ArgumentError{Field: "chunkSize", Reason: "not a multiple of 262144"},
		&HTTPError{Status: 403},
		netErr,
		&RetriesExhaustedError{Attempts: 6, Last: &HTTPError{Status: 503}},
		&SessionExpiredError{Sessions: 4, Last: &HTTPError{Status: 410}},
		&ProtocolError{Reason: "no Location"},
		&AbortedError{Err: errors.New("context canceled")},
		&AuthError{Err: errors.New("down")},
		&ChecksumError{Kind: "crc32c", Local: "a", Server: "b"},
	}
	for _, e := range errs {
		if m := e.Error(); strings.Contains(m, "core:") || strings.Contains(m, "jsbridge") {
			t.Errorf("%q names a package", m)
		}
	}
	m := netErr.Error()
	for _, want := range []string{"https://storage.googleapis.com/upload/storage/v1/b/b/o", "https://app.example", "CORS", "3 attempts"} {
		if !strings.Contains(m, want) {
			t.Errorf("network error %q lacks %q", m, want)
		}
	}
	if strings.Contains(m, "SECRET") {
		t.Errorf("network error %q shows the session's query", m)
	}
	if m := (&HTTPError{Status: 403}).Error(); !strings.Contains(m, "403 Forbidden") {
		t.Errorf("%q", m)
	}
	if !errors.Is(netErr, netErr.Err) {
		t.Error("the network error's cause is not reachable")
	}
}
