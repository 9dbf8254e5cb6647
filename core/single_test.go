package core

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMedia(t *testing.T) {
	src := &memSource{data: data(1000)}
	res, err, s := runScript(t, src, Options{Type: Media, ContentType: "image/png", Header: Header{"Authorization": "Bearer x"}}, []ex{
		{method: "POST", url: testURL + "&uploadType=media", n: 1000, status: 503},
		{method: "POST", url: testURL + "&uploadType=media", n: 1000, status: 200, body: `{"size":"1000"}`,
			check: func(t *testing.T, r *Request) {
				assert.Equal(t, "image/png", r.Header.Get("content-type"))
				assert.Equal(t, "Bearer x", r.Header.Get("authorization"))
				assert.True(t, bytes.Equal(src.data, r.Body[0].(Bytes)), "body is not the source")
			}},
	})
	s.done()
	require.NoError(t, err)
	assert.Equal(t, `{"size":"1000"}`, string(res.Body))
}

func TestMultipartBody(t *testing.T) {
	src := &memSource{data: []byte("hello\r\n--world")}
	_, err, s := runScript(t, src, Options{Type: Multipart, Method: "put", Metadata: []byte(`{"name":"a.txt"}`), ContentType: "text/plain"}, []ex{
		{method: "PUT", url: testURL + "&uploadType=multipart", n: -1, status: 200, check: func(t *testing.T, r *Request) {
			ct := r.Header.Get("Content-Type")
			b, ok := strings.CutPrefix(ct, "multipart/related; boundary=")
			require.True(t, ok && len(b) >= 20 && len(b) <= 70, "Content-Type %q", ct)
			require.Len(t, r.Body, 3, "the media must be a piece of its own")
			require.Equal(t, Bytes(src.data), r.Body[1], "middle piece is not the source's bytes")
			var all strings.Builder
			for _, p := range r.Body {
				all.Write(p.(Bytes))
			}
			want := "--" + b + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"a.txt\"}\r\n" +
				"--" + b + "\r\nContent-Type: text/plain\r\n\r\nhello\r\n--world\r\n--" + b + "--"
			require.Equal(t, want, all.String(), "body")
			assert.Equal(t, int64(len(want)), r.ContentLength(), "content length")
		}},
	})
	s.done()
	assert.NoError(t, err)
}

func TestSingleRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{404, CodeHTTP}, {410, CodeHTTP}, {400, CodeHTTP}, {401, CodeHTTP}, {308, CodeProtocol}} {
		_, err, s := runScript(t, &memSource{data: data(5)}, Options{Type: Media}, []ex{{method: "POST", n: 5, status: tc.status}})
		s.done()
		assert.Equal(t, tc.code, Code(err), "status %d", tc.status)
	}
}

// uploadType "auto", the default (docs/protocol.md sections 1 and 8): one request for a file
// the link sends within a quarter of a progress interval at the rate the page remembers (256 KiB
// at least, and while nothing is known), never over the guide's 5 MB nor a chunk size of the
// caller's; resumable for the rest, a session, a stream. An explicit type stays.
func TestAutoPicksTheType(t *testing.T) {
	known := func(rate float64, counted bool) *Link {
		c := NewChunkSizer(DefaultMaxChunkSize)
		c.RoundTrip(20 * Millisecond)
		c.Answered(8<<20, 20*Millisecond+Duration(float64(8<<20)/rate*float64(Second)), counted)
		var l Link
		l.learn(c, Second)
		return &l
	}
	slow, fast, faster, counted := known(4e6, false), known(64e6, false), known(320e6, false), known(4e6, true)
	for _, tc := range []struct {
		name     string
		size     int64
		unknown  bool
		meta     []byte
		session  string
		typ      Type
		link     *Link
		interval Duration
		want     Type
		chunk    int64 // the caller's chunkSize; 0: "auto"
	}{
		{"nothing known: 256 KiB", K256, false, nil, "", "", nil, 0, Media, 0},
		{"nothing known: more", K256 + 1, false, nil, "", "", nil, 0, Resumable, 0},
		{"nothing known, metadata", K256, false, []byte("{}"), "", Auto, nil, 0, Multipart, 0},
		{"4 MB/s: a quarter of a second of it", 1e6, false, nil, "", "", slow, 0, Media, 0},
		{"4 MB/s: more", 1e6 + 1, false, nil, "", "", slow, 0, Resumable, 0},
		{"4 MB/s, a 200 ms interval: 256 KiB at least", K256, false, nil, "", "", slow, 200 * Millisecond, Media, 0},
		{"64 MB/s: no more than 5 MB", 5e6, false, nil, "", "", fast, 0, Media, 0},
		{"64 MB/s: more", 5e6 + 1, false, nil, "", "", fast, 0, Resumable, 0},
		{"64 MB/s, a 200 ms interval", 3.2e6 + 1, false, nil, "", "", fast, 200 * Millisecond, Resumable, 0},
		{"320 MB/s: 5 MB", 5e6, false, nil, "", "", faster, 0, Media, 0},
		// A body counted as it goes tells nothing of the link while the browser's buffers hold
		// it all: one request is sized as where nothing is counted.
		{"counted: the same", 1e6, false, nil, "", "", counted, 0, Media, 0},
		{"counted: more", 1e6 + 1, false, nil, "", "", counted, 0, Resumable, 0},
		{"a stream", 10, true, nil, "", "", nil, 0, Resumable, 0},
		{"a session", 10, false, nil, testSession, "", nil, 0, Resumable, 0},
		{"explicit media, large", 10 << 20, false, nil, "", Media, nil, 0, Media, 0},
		{"explicit resumable, small", 10, false, nil, "", Resumable, faster, 0, Resumable, 0},
		{"a chunk size of the caller's bounds one request", 3 * K256, false, nil, "", "", faster, 0, Media, 3 * K256},
		{"a chunk size of the caller's bounds one request: more", 3*K256 + 1, false, nil, "", "", faster, 0, Resumable, 3 * K256},
	} {
		chunk := int64(ChunkAuto)
		if tc.chunk > 0 {
			chunk = tc.chunk
		}
		u, err := New(&script{t: t}, &memSource{data: make([]byte, tc.size), unknown: tc.unknown},
			Options{URL: testURL, Type: tc.typ, Metadata: tc.meta, SessionURL: tc.session, ChunkSize: chunk,
				Link: tc.link, ProgressInterval: tc.interval, Clock: stdClock{origin: time.Now().Add(-2 * time.Second)}})
		if assert.NoError(t, err, tc.name) {
			assert.Equal(t, tc.want, u.Type(), tc.name)
		}
	}
}
