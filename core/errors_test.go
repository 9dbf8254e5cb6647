package core

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getHeaders failing is an auth_error, its error the cause, and no request is sent.
func TestGetHeaderFailureIsAuthError(t *testing.T) {
	cause := errors.New("token service unavailable")
	o := Options{GetHeader: func(Context) (Header, error) { return nil, cause }}
	_, err, s := runScript(t, &memSource{data: data(10)}, o, nil)
	s.done()
	require.Equal(t, CodeAuth, Code(err), "%v", err)
	require.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "getHeaders")
	assert.Contains(t, err.Error(), cause.Error())
}

// A bad header from getHeaders is a bad argument, not an auth failure.
func TestGetHeaderBadNameIsInvalidArgument(t *testing.T) {
	o := Options{GetHeader: func(Context) (Header, error) { return Header{"bad name": "x"}, nil }}
	_, err, s := runScript(t, &memSource{data: data(10)}, o, nil)
	s.done()
	assert.Equal(t, CodeInvalidArgument, Code(err), "%v", err)
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
	require.NoError(t, err)
	require.Len(t, retries, 1, "one restart after the 404")
	assert.True(t, retries[0].Restart, "a restart")
	assert.Equal(t, 404, retries[0].Status)
	assert.Zero(t, retries[0].Delay)
	assert.Equal(t, 1, retries[0].Attempt)
	i := slices.Index(states, StateStarting)
	assert.Contains(t, states[i+1:], StateStarting, "states %v: no second %q after the lost session", states, StateStarting)
	sawDrop := false
	for k := 1; k < len(ps); k++ {
		assert.GreaterOrEqual(t, ps[k].Loaded, ps[k-1].Loaded, "loaded went back: %+v after %+v", ps[k], ps[k-1])
		if ps[k].Confirmed == 0 && ps[k-1].Confirmed == K256 {
			sawDrop = ps[k].Loaded == ps[k-1].Loaded && ps[k].Loaded > 0
		}
	}
	assert.True(t, sawDrop, "confirmed should drop to 0 with loaded kept: %+v", ps)
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
		assert.NotContains(t, e.Error(), "core:", "a package named")
		assert.NotContains(t, e.Error(), "jsbridge", "a package named")
	}
	m := netErr.Error()
	for _, want := range []string{"https://storage.googleapis.com/upload/storage/v1/b/b/o", "https://app.example", "CORS", "3 attempts"} {
		assert.Contains(t, m, want, "the network error")
	}
	assert.NotContains(t, m, "SECRET", "the network error shows the session's query")
	assert.Contains(t, (&HTTPError{Status: 403}).Error(), "403 Forbidden")
	assert.ErrorIs(t, netErr, netErr.Err, "the network error's cause is not reachable")
}
