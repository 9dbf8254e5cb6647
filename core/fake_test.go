package core

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ex is one scripted exchange: what the client must send, and what the "server" answers.
type ex struct {
	method string // wanted method; "" means PUT
	url    string // wanted URL; "" means not checked
	cr     string // wanted Content-Range; "-" means none
	n      int64  // wanted body length; -1 means not checked

	status int           // the answer's status
	rng    string        // the answer's Range header
	hdr    Header        // more answer headers
	body   string        // the answer's body
	drop   bool          // no answer at all: a lost connection
	err    error         // the transport's error instead of an answer
	wait   time.Duration // how long the answer takes (fake time, inside a synctest bubble)
	sent   []int64       // the body's bytes taken, told through Request.OnSent, evenly over wait

	check func(t *testing.T, r *Request) // more checks of the request
}

// script is a fake Transport that plays a list of exchanges and fails the test on any
// request it did not expect.
type script struct {
	t    *testing.T
	exs  []ex
	i    int
	reqs []*Request
}

var errDropped = errors.New("connection reset by peer")

func (s *script) Do(ctx Context, r *Request) (*Response, error) {
	s.t.Helper()
	s.reqs = append(s.reqs, r)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	require.Less(s.t, s.i, len(s.exs), "unexpected request %d: %s %s %q", s.i, r.Method, r.URL, r.Header.Get("Content-Range"))
	e := s.exs[s.i]
	s.i++
	method := e.method
	if method == "" {
		method = "PUT"
	}
	assert.Equal(s.t, method, r.Method, "request %d: method", s.i-1)
	if e.url != "" {
		assert.Equal(s.t, e.url, r.URL, "request %d: url", s.i-1)
	}
	switch e.cr {
	case "":
	case "-":
		assert.Empty(s.t, r.Header.Get("Content-Range"), "request %d: Content-Range", s.i-1)
	default:
		assert.Equal(s.t, e.cr, r.Header.Get("Content-Range"), "request %d: Content-Range", s.i-1)
	}
	if e.n >= 0 {
		assert.Equal(s.t, e.n, r.ContentLength(), "request %d: body length", s.i-1)
	}
	if e.check != nil {
		e.check(s.t, r)
	}
	switch {
	case e.sent != nil:
		require.NotNil(s.t, r.OnSent, "request %d: no OnSent to tell %v to", s.i-1, e.sent)
		for _, n := range e.sent {
			time.Sleep(e.wait / time.Duration(len(e.sent)))
			if !r.OnSent(n) {
				return nil, &StallError{After: Duration(e.wait), Err: errDropped}
			}
		}
	case e.wait > 0:
		time.Sleep(e.wait)
	}
	if e.drop {
		return nil, errDropped
	}
	if e.err != nil {
		return nil, e.err
	}
	h := Header{}
	for k, v := range e.hdr {
		h[k] = v
	}
	if e.rng != "" {
		h.Set("Range", e.rng)
	}
	return &Response{Status: e.status, Header: h, Body: []byte(e.body)}, nil
}

func (s *script) done() {
	s.t.Helper()
	assert.Equal(s.t, len(s.exs), s.i, "scripted exchanges used")
}

// memSource is a Source over bytes; unknown hides its size.
type memSource struct {
	data    []byte
	unknown bool
	hashed  int // calls of Hash
}

func (m *memSource) Size() int64 {
	if m.unknown {
		return -1
	}
	return int64(len(m.data))
}

func (m *memSource) Slice(start, end int64) (Piece, error) {
	end = min(end, int64(len(m.data)))
	if start > end {
		return Bytes(nil), nil
	}
	return Bytes(m.data[start:end]), nil
}

func data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// Helpers for the scripts: the answers a session start and a chunk get.
const (
	testURL     = "https://up.example.com/upload/storage/v1/b/bkt/o?name=x"
	testSession = "https://up.example.com/upload/storage/v1/b/bkt/o?name=x&uploadType=resumable&upload_id=S1"
)

func start() ex {
	return ex{method: "POST", n: -1, status: 200, hdr: Header{"location": testSession}}
}

func started(loc string) ex {
	return ex{method: "POST", n: -1, status: 200, hdr: Header{"location": loc}}
}

func fastRetry() *RetryPolicy {
	p := DefaultRetryPolicy()
	p.Jitter = 0
	return &p
}

// Hash makes memSource a HashingSource, as the browser's host is: the bytes asked for are
// hashed with the standard library's CRC-32C and MD5 (tests may link them).
func (m *memSource) Hash(crc, md bool) (Hasher, error) {
	m.hashed++
	return bytesHasher{func() []byte { return m.data }, crc, md}, nil
}

// Hash hashes the stream's bytes (all of them are known to the test).
func (s *streamSource) Hash(crc, md bool) (Hasher, error) {
	return bytesHasher{func() []byte { return s.data }, crc, md}, nil
}

type bytesHasher struct {
	data    func() []byte
	crc, md bool
}

func (h bytesHasher) Sum(_ Context, n int64) (Sums, error) {
	d := h.data()
	if n != int64(len(d)) {
		return Sums{}, &SourceError{Err: errors.New("hashed bytes to " + strconv.FormatInt(n, 10) + ", not the source's length")}
	}
	crc, md := sums(d)
	var s Sums
	if h.crc {
		s.CRC32C = crc
	}
	if h.md {
		s.MD5 = md
	}
	return s, nil
}
