package core

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const K256 = 262144

// runScript runs one upload against a script inside a synctest bubble, so backoff waits take
// no real time.
func runScript(t *testing.T, src Source, o Options, exs []ex) (*Result, error, *script) {
	t.Helper()
	s := &script{t: t, exs: exs}
	var res *Result
	var err error
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		if o.URL == "" && o.SessionURL == "" {
			o.URL = testURL
		}
		if o.Retry == nil {
			o.Retry = fastRetry()
		}
		if o.Type == "" {
			o.Type = Resumable // the scripts speak the resumable protocol; "auto" has its own tests
		}
		u, e := New(s, src, o)
		if e != nil {
			err = e
			return
		}
		res, err = u.Run(context.Background())
	})
	return res, err, s
}

func TestResumableExchanges(t *testing.T) {
	const T = 3 * K256
	tests := []struct {
		name     string
		size     int
		unknown  bool
		opts     Options
		exs      []ex
		wantCode string // "" means success
		wantText string // in the error's message, if set
	}{
		{
			name: "three chunks, Range in both forms",
			size: T, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/786432", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-524287/786432", n: K256, status: 308, rng: "0-524287"},
				{cr: "bytes 524288-786431/786432", n: K256, status: 200, body: `{"size":"786432"}`},
			},
		},
		{
			name: "server kept fewer bytes: next chunk starts at its offset",
			size: T, opts: Options{ChunkSize: 2 * K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-524287/786432", n: 2 * K256, status: 308, rng: "bytes=0-99999"},
				{cr: "bytes 100000-624287/786432", n: 2 * K256, status: 308, rng: "bytes=0-624287"},
				{cr: "bytes 624288-786431/786432", n: T - 624288, status: 201},
			},
		},
		{
			name: "308 with no Range: nothing stored, start at 0",
			size: K256 + 10, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/262154", n: K256, status: 308},
				{cr: "bytes 0-262143/262154", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-262153/262154", n: 10, status: 200},
			},
		},
		{
			name: "whole rest in one PUT with chunk size 0",
			size: 1000, opts: Options{ChunkSize: 0},
			exs: []ex{start(), {cr: "bytes 0-999/1000", n: 1000, status: 200}},
		},
		{
			name: "empty file: the final request states the total",
			size: 0, opts: Options{ChunkSize: K256},
			exs: []ex{start(), {cr: "bytes */0", n: 0, status: 200}},
		},
		{
			name: "unknown length: * until the last chunk states the total",
			size: K256 + 5, unknown: true, opts: Options{ChunkSize: K256},
			exs: []ex{
				{method: "POST", n: -1, status: 200, hdr: Header{"location": testSession}, check: func(t *testing.T, r *Request) {
					assert.NotContains(t, r.Header, "x-upload-content-length", "X-Upload-Content-Length sent for an unknown length")
				}},
				{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-262148/262149", n: 5, status: 200},
			},
		},
		{
			name: "unknown length ending on a chunk boundary: empty final request",
			size: 2 * K256, unknown: true, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-524287/*", n: K256, status: 308, rng: "bytes=0-524287"},
				{cr: "bytes */524288", n: 0, status: 200},
			},
		},
		{
			name: "no-308 header: 200 + override is a 308",
			size: 2 * K256, opts: Options{ChunkSize: K256, NoRedirect308: true},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/524288", n: K256, status: 200, rng: "bytes=0-262143",
					hdr: Header{"x-http-status-code-override": "308"},
					check: func(t *testing.T, r *Request) {
						assert.Equal(t, "yes", r.Header.Get("X-GUploader-No-308"))
					}},
				{cr: "bytes 262144-524287/524288", n: K256, status: 200},
			},
		},
		{
			name: "relative Location resolved against the request URL",
			size: 10, opts: Options{},
			exs: []ex{
				started("/upload/s?upload_id=R"),
				{url: "https://up.example.com/upload/s?upload_id=R", cr: "bytes 0-9/10", n: 10, status: 200},
			},
		},
		{
			name: "no Location after a session start",
			size: 10, exs: []ex{{method: "POST", n: -1, status: 200}}, wantCode: CodeProtocol,
		},
		{
			name: "Range beyond what was sent",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs:      []ex{start(), {cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-300000"}},
			wantCode: CodeProtocol,
		},
		{
			name: "malformed Range",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs:      []ex{start(), {cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=5-262143"}},
			wantCode: CodeProtocol,
		},
		{
			name: "server finishes before the last byte was sent",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs:      []ex{start(), {cr: "bytes 0-262143/524288", n: K256, status: 200}},
			wantCode: CodeProtocol,
		},
		{
			name: "server holds every byte but does not finish",
			size: 10, opts: Options{},
			exs:      []ex{start(), {cr: "bytes 0-9/10", n: 10, status: 308, rng: "bytes=0-9"}},
			wantCode: CodeProtocol,
		},
		{
			name: "server keeps nothing, again and again: reported, not looped on",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs:      append([]ex{start()}, repeat(6, ex{cr: "bytes 0-262143/524288", n: K256, status: 308})...),
			wantCode: CodeProtocol,
		},
		{
			// The answers of another origin's server without a Range: its CORS configuration
			// most likely hides the header, and every answer will say the same.
			name: "cross-origin answers without Range: reported at the second chunk",
			size: 2 * K256, opts: Options{ChunkSize: K256, Origin: "https://app.example"},
			exs:      append([]ex{start()}, repeat(2, ex{cr: "bytes 0-262143/524288", n: K256, status: 308})...),
			wantCode: CodeProtocol,
			wantText: "kept none of 2 chunks in a row, its answers showing no Range. If the server sent it, its CORS configuration hides it from pages of https://app.example: it must list Range in Access-Control-Expose-Headers",
		},
		{
			name: "cross-origin answers with an unmoved Range: as many chunks as retries",
			size: 3 * K256, opts: Options{ChunkSize: K256, Origin: "https://app.example"},
			exs: append([]ex{start(), {cr: "bytes 0-262143/786432", n: K256, status: 308, rng: "bytes=0-262143"}},
				repeat(6, ex{cr: "bytes 262144-524287/786432", n: K256, status: 308, rng: "bytes=0-262143"})...),
			wantCode: CodeProtocol,
			wantText: "kept none of 6 chunks in a row",
		},
		{
			name: "503 then a status query that resumes from the server's offset",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/524288", n: K256, status: 503},
				{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-131071"},
				{cr: "bytes 131072-393215/524288", n: K256, status: 308, rng: "bytes=0-393215"},
				{cr: "bytes 393216-524287/524288", n: 131072, status: 200},
			},
		},
		{
			name: "lost connection on the last chunk, status query says done",
			size: K256 + 1, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/262145", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-262144/262145", n: 1, drop: true},
				{cr: "bytes */262145", n: 0, status: 200},
			},
		},
		{
			name: "unknown length: status query with */*",
			size: 2 * K256, unknown: true, opts: Options{ChunkSize: K256},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/*", n: K256, drop: true},
				{cr: "bytes */*", n: 0, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-524287/*", n: K256, status: 308, rng: "bytes=0-524287"},
				{cr: "bytes */524288", n: 0, status: 200},
			},
		},
		{
			name: "404 on the session: a new session from byte 0",
			size: 2 * K256, opts: Options{ChunkSize: K256},
			exs: lostSessionScript(),
		},
		{
			name: "410 on every session: session_expired after the allowed new sessions",
			size: 10, opts: Options{Retry: &RetryPolicy{NewSessions: 1}},
			exs: []ex{
				start(), {cr: "bytes 0-9/10", n: 10, status: 410},
				start(), {cr: "bytes 0-9/10", n: 10, status: 410},
			},
			wantCode: CodeSessionExpired,
		},
		{
			name: "400 on a chunk: no retry",
			size: 10, exs: []ex{start(), {cr: "bytes 0-9/10", n: 10, status: 400}}, wantCode: CodeHTTP,
		},
		{
			name: "403 on the session start: no retry",
			size: 10, exs: []ex{{method: "POST", n: -1, status: 403}}, wantCode: CodeHTTP,
		},
		{
			name: "5xx on every try: retries_exhausted after 5 retries",
			size: 10,
			exs: append([]ex{start(), {cr: "bytes 0-9/10", n: 10, status: 502}},
				repeat(5, ex{cr: "bytes */10", n: 0, status: 500})...),
			wantCode: CodeRetriesExhausted,
		},
		{
			name:     "a server never reached: network_error after 2 quick retries, not the whole backoff",
			size:     10,
			exs:      repeat(3, ex{method: "POST", n: -1, drop: true}),
			wantCode: CodeNetwork,
		},
		{
			name: "lost connections once the server has answered: network_error after 5 retries",
			size: 10,
			exs: append([]ex{start(), {cr: "bytes 0-9/10", n: 10, drop: true}},
				repeat(5, ex{cr: "bytes */10", n: 0, drop: true})...),
			wantCode: CodeNetwork,
		},
		{
			name: "429 with Retry-After, then on",
			size: 10,
			exs: []ex{
				{method: "POST", n: -1, status: 429, hdr: Header{"retry-after": "3"}},
				start(),
				{cr: "bytes 0-9/10", n: 10, status: 429},
				{cr: "bytes */10", n: 0, status: 308, rng: "bytes=0-4"},
				{cr: "bytes 5-9/10", n: 5, status: 200},
			},
		},
		{
			name: "status query after every chunk",
			size: 2 * K256, opts: Options{ChunkSize: K256, QueryStatusEachChunk: true},
			exs: []ex{
				start(),
				{cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-200000"},
				{cr: "bytes 200001-462144/524288", n: K256, status: 308, rng: "bytes=0-462144"},
				{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-462144"},
				{cr: "bytes 462145-524287/524288", n: 62143, status: 200},
			},
		},
		{
			name: "sessionURL given: no new session, ask first",
			size: 2 * K256, opts: Options{ChunkSize: K256, SessionURL: testSession},
			exs: []ex{
				{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"},
				{cr: "bytes 262144-524287/524288", n: K256, status: 200},
			},
		},
		{
			name: "sessionURL given and already complete",
			size: 10, opts: Options{SessionURL: testSession},
			exs: []ex{{cr: "bytes */10", n: 0, status: 201}},
		},
		{
			name: "sessionURL alone, lost: cannot start anew",
			size: 10, opts: Options{SessionURL: testSession},
			exs:      []ex{{cr: "bytes */10", n: 0, status: 404}},
			wantCode: CodeSessionExpired,
		},
		{
			name: "metadata and upload headers on the session start",
			size: 10, opts: Options{Metadata: []byte(`{"name":"a"}`), ContentType: "image/png"},
			exs: []ex{
				{method: "POST", url: testURL + "&uploadType=resumable", n: 12, status: 200, hdr: Header{"location": testSession},
					check: func(t *testing.T, r *Request) {
						want := Header{"x-upload-content-type": "image/png", "x-upload-content-length": "10", "content-type": "application/json; charset=UTF-8"}
						for k, v := range want {
							assert.Equal(t, v, r.Header.Get(k), k)
						}
					}},
				{cr: "bytes 0-9/10", n: 10, status: 200},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &memSource{data: data(tt.size), unknown: tt.unknown}
			res, err, s := runScript(t, src, tt.opts, tt.exs)
			s.done()
			require.Equal(t, tt.wantCode, Code(err), "%v", err)
			if tt.wantText != "" {
				assert.Contains(t, err.Error(), tt.wantText)
			}
			if tt.wantCode == "" {
				require.NotNil(t, res)
				assert.Contains(t, []int{200, 201}, res.Status, "the result's status")
			}
		})
	}
}

func repeat(n int, e ex) []ex {
	r := make([]ex, n)
	for i := range r {
		r[i] = e
	}
	return r
}

// The bytes sent in each chunk are the source's bytes at the Content-Range's offsets.
func TestChunkBytes(t *testing.T) {
	src := &memSource{data: data(3*K256 + 7)}
	var exs []ex
	exs = append(exs, start(),
		ex{n: K256, status: 308, rng: "bytes=0-99"},
		ex{n: K256, status: 308, rng: "bytes=0-262243"},
		ex{n: K256, status: 308, rng: "bytes=0-524387"},
		ex{n: -1, status: 200})
	_, err, s := runScript(t, src, Options{ChunkSize: K256}, exs)
	require.NoError(t, err)
	for _, r := range s.reqs[1:] {
		var a, b int64
		cr := r.Header.Get("Content-Range")
		require.True(t, strings.HasPrefix(cr, "bytes "), "bad range %q", cr)
		parts := strings.FieldsFunc(cr[6:], func(c rune) bool { return c == '-' || c == '/' })
		a, _ = parseDecimal(parts[0])
		b, _ = parseDecimal(parts[1])
		assert.True(t, bytes.Equal(src.data[a:b+1], r.Body[0].(Bytes)), "chunk %s does not hold the source's bytes", cr)
	}
}

// Every chunk carries the media's type as Content-Type, as Google's guide shows it
// (docs/protocol.md section 3); a status query, with no body, carries none.
func TestChunkContentType(t *testing.T) {
	typed := func(want string) func(*testing.T, *Request) {
		return func(t *testing.T, r *Request) {
			assert.Equal(t, want, r.Header.Get("Content-Type"), "%s %s: Content-Type", r.Method, r.Header.Get("Content-Range"))
		}
	}
	for _, o := range []struct{ option, want string }{{"", "application/octet-stream"}, {"image/png", "image/png"}} {
		_, err, _ := runScript(t, &memSource{data: data(K256 + 5)}, Options{ChunkSize: K256, ContentType: o.option}, []ex{
			start(),
			{cr: "bytes 0-262143/262149", n: K256, status: 503, check: typed(o.want)},
			{cr: "bytes */262149", n: 0, status: 308, rng: "bytes=0-262143", check: typed("")},
			{cr: "bytes 262144-262148/262149", n: 5, status: 200, check: typed(o.want)},
		})
		require.NoError(t, err)
	}
}

func TestArgumentErrorsBeforeAnyRequest(t *testing.T) {
	src := &memSource{data: data(10)}
	tests := []struct {
		name string
		src  Source
		o    Options
	}{
		{"no url", src, Options{URL: " "}},
		{"relative url", src, Options{URL: "/upload/x"}},
		{"not http", src, Options{URL: "ftp://h/x"}},
		{"chunk size not aligned", src, Options{URL: testURL, ChunkSize: 1000}},
		{"chunk size negative", src, Options{URL: testURL, ChunkSize: -K256}},
		{"unknown type", src, Options{URL: testURL, Type: "chunked"}},
		{"bad method", src, Options{URL: testURL, Method: "GET"}},
		{"media with metadata", src, Options{URL: testURL, Type: Media, Metadata: []byte("{}")}},
		{"multipart with session", src, Options{URL: testURL, Type: Multipart, SessionURL: testSession}},
		{"bad header", src, Options{URL: testURL, Header: Header{"x-a": "b\r\nc: d"}}},
		{"max delay over a minute", src, Options{URL: testURL, Retry: &RetryPolicy{MaxDelay: 61e9}}},
		{"first delay over a minute", src, Options{URL: testURL, Retry: &RetryPolicy{InitialDelay: 61e9, MaxDelay: 1e9}}},
		{"too many retries", src, Options{URL: testURL, Retry: &RetryPolicy{Retries: MaxRetries + 1}}},
		{"max chunk size negative", src, Options{URL: testURL, MaxChunkSize: -1}},
		{"checksum unknown", src, Options{URL: testURL, Checksum: "sha1"}},
		{"metadata not a JSON object", src, Options{URL: testURL, Metadata: []byte(`"2026-11-24T10:00:00Z"`)}},
		{"metadata cut off", src, Options{URL: testURL, Metadata: []byte(`{"name":"x"`)}},
		{"no source", nil, Options{URL: testURL}},
		{"stream as media", &memSource{unknown: true}, Options{URL: testURL, Type: Media}},
		{"stream as multipart", &memSource{unknown: true}, Options{URL: testURL, Type: Multipart}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{t: t}
			u, err := New(s, tt.src, tt.o)
			var ae *ArgumentError
			assert.ErrorAs(t, err, &ae)
			assert.Equal(t, CodeInvalidArgument, Code(err))
			assert.Nil(t, u)
			assert.Empty(t, s.reqs, "a request was sent")
		})
	}
}

// The caller's headers go to the upload URL's origin and never to a session URI elsewhere.
func TestHeadersStayOnTheUploadOrigin(t *testing.T) {
	auth := func(want bool) func(*testing.T, *Request) {
		return func(t *testing.T, r *Request) {
			assert.Equal(t, want, r.Header.Get("Authorization") != "", "%s %s: Authorization sent", r.Method, r.URL)
		}
	}
	for _, tc := range []struct {
		loc  string
		same bool
	}{
		{testSession, true},
		{"https://UP.example.com:443/s?upload_id=1", true},
		{"https://other.example.com/s?upload_id=1", false},
		{"http://up.example.com/s?upload_id=1", false},
		{"https://up.example.com:8443/s?upload_id=1", false},
	} {
		t.Run(tc.loc, func(t *testing.T) {
			o := Options{ChunkSize: K256, Header: Header{"Authorization": "Bearer t"}}
			_, err, s := runScript(t, &memSource{data: data(K256 + 1)}, o, []ex{
				{method: "POST", n: -1, status: 200, hdr: Header{"location": tc.loc}, check: auth(true)},
				{n: K256, status: 308, rng: "bytes=0-262143", check: auth(tc.same)},
				{n: 1, drop: true, check: auth(tc.same)},
				{n: 0, status: 200, check: auth(tc.same)},
			})
			s.done()
			assert.NoError(t, err)
		})
	}
}

func TestGetHeaderAskedAgainAfter401(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second int
		want   string
	}{{"then accepted", 200, ""}, {"twice: fail", 401, CodeHTTP}} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := Options{GetHeader: func(Context) (Header, error) {
				calls++
				return Header{"Authorization": "Bearer " + string(rune('0'+calls))}, nil
			}}
			tokenIs := func(tok string) func(*testing.T, *Request) {
				return func(t *testing.T, r *Request) {
					assert.Equal(t, "Bearer "+tok, r.Header.Get("authorization"), "Authorization")
				}
			}
			exs := []ex{
				{method: "POST", n: -1, status: 401, check: tokenIs("1")},
				{method: "POST", n: -1, status: tc.second, hdr: Header{"location": testSession}, check: tokenIs("2")},
			}
			if tc.second == 200 {
				exs = append(exs, ex{cr: "bytes 0-9/10", n: 10, status: 200})
			}
			_, err, s := runScript(t, &memSource{data: data(10)}, o, exs)
			s.done()
			assert.Equal(t, tc.want, Code(err), "%v", err)
			assert.Equal(t, 2, calls, "getHeaders calls")
		})
	}
}

func TestProgress(t *testing.T) {
	var ps []Progress
	var states []State
	o := Options{ChunkSize: K256, OnProgress: func(p Progress) { ps = append(ps, p) }, OnState: func(s State) { states = append(states, s) }}
	_, err, _ := runScript(t, &memSource{data: data(3 * K256)}, o, []ex{
		start(),
		{n: K256, status: 308, rng: "bytes=0-262143"},
		{n: K256, status: 308, rng: "bytes=0-99"}, // the server lost most of the second chunk
		{n: K256, status: 308, rng: "bytes=0-362243"},
		{n: K256, status: 503},
		{n: 0, status: 308, rng: "bytes=0-524287"},
		{n: K256, status: 200},
	})
	require.NoError(t, err)
	var confirmed []int64
	for i, p := range ps {
		if i > 0 {
			assert.GreaterOrEqual(t, p.Loaded, ps[i-1].Loaded, "loaded went back")
		}
		assert.Equal(t, int64(3*K256), p.Total, "total")
		confirmed = append(confirmed, p.Confirmed)
	}
	assert.Equal(t, []int64{0, K256, 100, 362244, 524288, 3 * K256}, confirmed, "confirmed")
	last := ps[len(ps)-1]
	assert.Equal(t, last.Total, last.Loaded, "last progress %+v", last)
	assert.Zero(t, last.SecondsLeft, "last progress %+v", last)
	require.GreaterOrEqual(t, len(states), 4, "states %v", states)
	assert.Equal(t, []State{StateUploading, StateRetrying, StateUploading, StateDone}, states[len(states)-4:], "states %v", states)
}

// lostSessionScript is an upload of 2 × 256 KiB whose session is lost (404) after its first
// chunk, then sent whole in a new session (docs/protocol.md section 5).
func lostSessionScript() []ex {
	return []ex{
		start(),
		{cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-524287/524288", n: K256, status: 404},
		start(),
		{cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-524287/524288", n: K256, status: 200},
	}
}

// A browser in which fetch cannot read a 3xx answer hands over only that one came
// (docs/protocol.md section 6): core asks the session at once, with no wait and no retry, and the
// answer counts as the chunk's.
func TestHiddenRedirectAnswer(t *testing.T) {
	hidden := &HiddenRedirectError{URL: testSession}
	session := func(t *testing.T, r *Request) {
		assert.True(t, r.Session, "a request to the session URI is not marked Session: %s %q", r.Method, r.Header.Get("Content-Range"))
	}
	t.Run("a status query at once, no retry", func(t *testing.T) {
		var retries []RetryInfo
		var states []State
		o := Options{ChunkSize: K256, OnRetry: func(r RetryInfo) { retries = append(retries, r) }, OnState: func(s State) { states = append(states, s) }}
		var took time.Duration
		exs := []ex{
			{method: "POST", n: -1, status: 200, hdr: Header{"location": testSession}, check: func(t *testing.T, r *Request) {
				assert.False(t, r.Session, "the session start is marked Session")
			}},
			{cr: "bytes 0-262143/786432", n: K256, err: hidden, check: session},
			{cr: "bytes */786432", n: 0, status: 308, rng: "bytes=0-262143", check: session},
			{cr: "bytes 262144-524287/786432", n: K256, err: hidden},
			{cr: "bytes */786432", n: 0, status: 308, rng: "bytes=0-393215"}, // kept only half
			{cr: "bytes 393216-655359/786432", n: K256, err: hidden},
			{cr: "bytes */786432", n: 0, status: 308, rng: "bytes=0-655359"},
			{cr: "bytes 655360-786431/786432", n: 3*K256 - 655360, status: 200, body: "{}"},
		}
		var res *Result
		var err error
		synctest.Test(t, func(t *testing.T) {
			s := &script{t: t, exs: exs}
			o.URL, o.Retry = testURL, fastRetry()
			u, e := New(s, &memSource{data: data(3 * K256)}, o)
			require.NoError(t, e)
			start := time.Now()
			res, err = u.Run(context.Background())
			took = time.Since(start)
			s.done()
		})
		require.NoError(t, err)
		require.Equal(t, 200, res.Status)
		assert.Empty(t, retries, "retries")
		assert.NotContains(t, states, StateRetrying)
		assert.Zero(t, took, "fake time taken, want no wait")
	})
	t.Run("no progress behind hidden answers ends, never loops", func(t *testing.T) {
		exs := []ex{start()}
		for range 6 { // the default Retries is 5: the sixth chunk in a row kept nothing ends it
			exs = append(exs, ex{cr: "bytes 0-262143/524288", n: K256, err: hidden}, ex{cr: "bytes */524288", n: 0, status: 308})
		}
		_, err, s := runScript(t, &memSource{data: data(2 * K256)}, Options{ChunkSize: K256}, exs)
		s.done()
		require.Equal(t, CodeProtocol, Code(err), "%v", err)
		assert.Contains(t, err.Error(), "kept none")
	})
	t.Run("with the no-308 header, a hidden answer is a redirect", func(t *testing.T) {
		// The status query comes back in the no-308 form: the server honours the header, so
		// the chunk's 3xx was no 308 of the protocol's but a redirect.
		_, err, s := runScript(t, &memSource{data: data(2 * K256)}, Options{ChunkSize: K256, NoRedirect308: true}, []ex{
			start(),
			{cr: "bytes 0-262143/524288", n: K256, err: hidden},
			{cr: "bytes */524288", n: 0, status: 200, hdr: Header{"x-http-status-code-override": "308"}},
		})
		s.done()
		var re *RedirectError
		assert.ErrorAs(t, err, &re)
		assert.Equal(t, CodeProtocol, Code(err))
	})
	t.Run("a status query answered hidden is a protocol error", func(t *testing.T) {
		_, err, s := runScript(t, &memSource{data: data(2 * K256)}, Options{ChunkSize: K256, SessionURL: testSession}, []ex{
			{cr: "bytes */524288", n: 0, err: hidden},
		})
		s.done()
		assert.Equal(t, CodeProtocol, Code(err), "%v", err)
	})
	t.Run("a redirect to the session start is final", func(t *testing.T) {
		_, err, s := runScript(t, &memSource{data: data(10)}, Options{}, []ex{
			{method: "POST", n: -1, err: &RedirectError{Method: "POST", URL: testURL}},
		})
		s.done()
		require.Equal(t, CodeProtocol, Code(err), "%v", err)
		assert.Contains(t, err.Error(), "never follows", "the redirect named")
	})
}

// Check asks the session what it holds and sends nothing else.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ex       ex
		held     int64
		complete bool
		code     string
	}{
		{"holds some", ex{cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"}, K256, false, ""},
		{"holds some, no-308 form", ex{cr: "bytes */524288", n: 0, status: 200, rng: "bytes=0-99", hdr: Header{"x-http-status-code-override": "308"}}, 100, false, ""},
		{"holds nothing", ex{cr: "bytes */524288", n: 0, status: 308}, 0, false, ""},
		{"complete", ex{cr: "bytes */524288", n: 0, status: 201, body: "{}"}, 0, true, ""},
		{"gone", ex{cr: "bytes */524288", n: 0, status: 404}, 0, false, CodeSessionExpired},
		{"failed", ex{cr: "bytes */524288", n: 0, status: 410}, 0, false, CodeSessionExpired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var held int64
			var complete bool
			var err error
			synctest.Test(t, func(t *testing.T) {
				s := &script{t: t, exs: []ex{tt.ex}}
				u, e := New(s, &memSource{data: data(2 * K256)}, Options{SessionURL: testSession, Retry: fastRetry()})
				require.NoError(t, e)
				held, complete, err = u.Check(context.Background())
				s.done()
			})
			assert.Equal(t, tt.held, held, "held")
			assert.Equal(t, tt.complete, complete, "complete")
			assert.Equal(t, tt.code, Code(err), "%v", err)
		})
	}
}
