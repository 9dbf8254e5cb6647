package interop

import (
	"context"
	"strings"
	"testing"

	"github.com/mediaupload/mediaupload/core"
	"github.com/mediaupload/mediaupload/core/httptransport"
	"github.com/mediaupload/mediaupload/web/refserver"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One upload per fault kind of the injector, each ending with the stored bytes' md5 equal to
// the source's.
func TestFaultKinds(t *testing.T) {
	size := 3*K256 + 12345
	tests := []struct {
		name    string
		rules   []refserver.Rule
		opts    core.Options
		retries int // at least this many onRetry calls
		wantKs  []string
	}{
		{name: "no fault", opts: core.Options{ChunkSize: K256}},
		{name: "503 twice on a chunk", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionStatus, Status: 503, Times: 2}}, opts: core.Options{ChunkSize: K256}, retries: 2},
		{name: "500 on the session start", rules: []refserver.Rule{{On: refserver.KindStart, Action: refserver.ActionStatus, Status: 500}}, retries: 1},
		{name: "502 on a status query", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionStatus, Status: 504, Skip: 1}, {On: refserver.KindQuery, Action: refserver.ActionStatus, Status: 502}}, opts: core.Options{ChunkSize: K256}, retries: 2},
		{name: "connection closed mid-chunk", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionClose, AfterBytes: 100000, Skip: 1}}, opts: core.Options{ChunkSize: 2 * K256}, retries: 1},
		{name: "connection closed after the whole last chunk", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionClose, AfterBytes: 1 << 30, Skip: 3}}, opts: core.Options{ChunkSize: K256}, retries: 1},
		{name: "part of a chunk kept", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionKeep, Keep: 1000, Times: 2}}, opts: core.Options{ChunkSize: K256}},
		{name: "session expired (404)", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionExpire, Skip: 2}}, opts: core.Options{ChunkSize: K256}},
		{name: "session failed (410)", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionGone, Skip: 1}}, opts: core.Options{ChunkSize: K256}},
		{name: "429 with Retry-After", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionRateLimit, RetryAfter: 1}}, opts: core.Options{ChunkSize: 0}, retries: 1},
		{name: "whole file in one PUT with a drop", rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionClose, AfterBytes: 300000}}, opts: core.Options{ChunkSize: 0}, retries: 1},
		{name: "media with a 503", rules: []refserver.Rule{{On: refserver.KindMedia, Action: refserver.ActionStatus, Status: 503}}, opts: core.Options{Type: core.Media}, retries: 1},
		{name: "multipart with a drop", rules: []refserver.Rule{{On: refserver.KindMultipart, Action: refserver.ActionClose, AfterBytes: 5000}}, opts: core.Options{Type: core.Multipart, Metadata: []byte(`{"contentLanguage":"en"}`)}, retries: 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, base := refServer(t, refserver.Options{})
			require.NoError(t, s.SetFaults(refserver.Faults{Rules: tt.rules}))
			data := randomBytes(uint64(i), size)
			retries := 0
			tt.opts.OnRetry = func(core.RetryInfo) { retries++ }
			name := "fault-" + strings.ReplaceAll(tt.name, " ", "-")
			res, err := upload(t, base+"/upload/storage/v1/b/bkt/o?name="+name, data, tt.opts, nil)
			require.NoError(t, err, "code %s", core.Code(err))
			assert.GreaterOrEqual(t, retries, tt.retries, "retries")
			if tt.rules != nil {
				assert.Contains(t, logText(s), "fault", "no fault was injected")
			}
			assert.Contains(t, []int{200, 201}, res.Status, "status")
			stored(t, s, name, data)
		})
	}
}

func logText(s *refserver.Server) string {
	var b strings.Builder
	for _, e := range s.Log() {
		if e.Fault != "" {
			b.WriteString("fault " + e.Fault + "\n")
		}
	}
	return b.String()
}

func Test401AsksForHeadersAgain(t *testing.T) {
	s, base := refServer(t, refserver.Options{})
	s.SetFaults(refserver.Faults{Rules: []refserver.Rule{{On: refserver.KindStart, Action: refserver.ActionUnauthorized}}})
	calls := 0
	data := randomBytes(7, K256+1)
	_, err := upload(t, base+"/upload/x?name=auth", data, core.Options{GetHeader: func(core.Context) (core.Header, error) {
		calls++
		return core.Header{"authorization": "Bearer t"}, nil
	}}, nil)
	require.NoError(t, err)
	require.Equal(t, 2, calls, "getHeaders calls")
	stored(t, s, "auth", data)
}

func TestRangeFormsAndNo308(t *testing.T) {
	for _, tc := range []struct {
		form  string
		no308 bool
	}{{refserver.RangeBytes, false}, {refserver.RangePlain, false}, {refserver.RangeBytes, true}, {refserver.RangePlain, true}} {
		s, base := refServer(t, refserver.Options{RangeForm: tc.form})
		data := randomBytes(3, 2*K256+5)
		name := "form-" + tc.form
		_, err := upload(t, base+"/upload/x?name="+name, data, core.Options{ChunkSize: K256, NoRedirect308: tc.no308}, nil)
		require.NoError(t, err, "%s no308=%v", tc.form, tc.no308)
		stored(t, s, name, data)
	}
}

func TestUnknownLength(t *testing.T) {
	for _, size := range []int{0, 5, K256, 2 * K256, 2*K256 + 1} {
		s, base := refServer(t, refserver.Options{})
		data := randomBytes(uint64(size), size)
		_, err := upload(t, base+"/upload/x?name=stream", nil, core.Options{ChunkSize: K256},
			httptransport.Reader(strings.NewReader(string(data))))
		require.NoError(t, err, "size %d", size)
		stored(t, s, "stream", data)
	}
}

// An upload stopped half-way is finished later by another client holding its session URI.
func TestResumeWithSessionURL(t *testing.T) {
	s, base := refServer(t, refserver.Options{})
	data := randomBytes(11, 4*K256)
	ctx, cancel := context.WithCancel(context.Background())
	var session string
	u, _ := core.New(&httptransport.Transport{}, httptransport.ReaderAt(strings.NewReader(string(data)), int64(len(data))), core.Options{
		URL: base + "/upload/x?name=later", ChunkSize: K256, Retry: quick(),
		OnSession: func(s string) { session = s },
		OnProgress: func(p core.Progress) {
			if p.Confirmed >= 2*K256 {
				cancel()
			}
		},
	})
	_, err := u.Run(ctx)
	require.Equal(t, core.CodeAborted, core.Code(err), "first run: %v", err)
	_, _, finished := s.Object("later")
	require.False(t, finished, "first run finished")
	require.NotEmpty(t, session, "no session")
	var first string
	o := core.Options{SessionURL: session, ChunkSize: K256, OnRequest: func(r core.RequestInfo) {
		if first == "" {
			first = r.ContentRange
		}
	}}
	_, err = upload(t, "", data, o, nil)
	require.NoError(t, err)
	assert.Equal(t, "bytes */1048576", first, "first request of the resumed upload: want a status query")
	stored(t, s, "later", data)
}

// A method the protocol has no use for is refused before any request; an answer no retry can
// fix (the server's 404 for a path that is no upload URI) is an http_error, not retried.
func TestBadMethodAndRefusedPath(t *testing.T) {
	_, base := refServer(t, refserver.Options{})
	_, err := upload(t, base+"/upload/x?name=bad", []byte("abc"), core.Options{Type: core.Media, Method: "PATCH"}, nil)
	assert.Equal(t, core.CodeInvalidArgument, core.Code(err), "PATCH: %v", err)
	_, err = upload(t, base+"/nope/x", []byte("abc"), core.Options{}, nil)
	assert.Equal(t, core.CodeHTTP, core.Code(err), "unknown path: %v", err)
}

// With a checksum the final request states X-Goog-Hash, which the reference server verifies,
// and the client compares the server's hashes with its own.
func TestChecksumEndToEnd(t *testing.T) {
	s, base := refServer(t, refserver.Options{})
	s.SetFaults(refserver.Faults{Rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionKeep, Keep: 77}}})
	for _, c := range []core.Checksum{core.CRC32C, core.MD5, core.Both} {
		for _, typ := range []core.Type{core.Resumable, core.Media, core.Multipart} {
			data := randomBytes(5, 2*K256+99)
			name := "sum-" + string(c) + "-" + string(typ)
			_, err := upload(t, base+"/upload/x?name="+name, data, core.Options{ChunkSize: K256, Checksum: c, Type: typ}, nil)
			require.NoError(t, err, "%s %s", c, typ)
			stored(t, s, name, data)
		}
	}
	sent := 0
	for _, e := range s.Log() {
		if e.Fault == "" && e.Status >= 200 && e.Status < 300 && e.Kind != refserver.KindStart {
			sent++
		}
	}
	assert.Equal(t, 9, sent, "finishing requests")
}
