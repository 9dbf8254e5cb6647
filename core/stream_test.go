package core

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamSource behaves as the JS side's stream source does: its size is unknown, it keeps
// the bytes from the last chunk asked for on (what the server has not confirmed), and
// asking for bytes before that is ErrNotKept. fail, when set, is what reading byte failAt
// gives.
type streamSource struct {
	data   []byte
	from   int64
	failAt int64
	fail   error
}

func (s *streamSource) Size() int64 { return -1 }

func (s *streamSource) Slice(start, end int64) (Piece, error) {
	if start < s.from {
		return nil, ErrNotKept
	}
	s.from = start
	end = min(end, int64(len(s.data)))
	if s.fail != nil && end > s.failAt {
		return nil, &SourceError{Err: s.fail}
	}
	return Bytes(s.data[start:end]), nil
}

func runStream(t *testing.T, src *streamSource, o Options, exs []ex) error {
	t.Helper()
	_, err, s := runScript(t, src, o, exs)
	s.done()
	return err
}

// A session lost (404) after the server confirmed some of a stream: its first bytes are gone,
// so the upload ends with session_expired saying why, without starting a session it could
// not fill.
func TestStreamLostSessionAfterConfirmedBytes(t *testing.T) {
	src := &streamSource{data: data(3 * K256)}
	err := runStream(t, src, Options{ChunkSize: K256}, []ex{
		start(),
		{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-524287/*", n: K256, status: 404},
	})
	var se *SessionExpiredError
	require.ErrorAs(t, err, &se)
	require.Equal(t, CodeSessionExpired, Code(err))
	require.True(t, se.NotKept, "a session_expired for bytes no longer kept")
	assert.Equal(t, 404, se.Last.Status, "Last: %v", se.Last)
}

// Lost before the server confirmed anything: every byte is still kept, so a new session
// starts from byte 0 (docs/protocol.md section 5) and the upload finishes.
func TestStreamLostSessionWhileAllIsKept(t *testing.T) {
	src := &streamSource{data: data(K256 + 7)}
	err := runStream(t, src, Options{ChunkSize: K256}, []ex{
		start(),
		{cr: "bytes 0-262143/*", n: K256, status: 404},
		start(),
		{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
		{cr: "bytes 262144-262150/262151", n: 7, status: 200},
	})
	assert.NoError(t, err)
}

// A stream that errors ends the upload with source_error, at once: no retry, no request for
// the chunk it could not give.
func TestStreamErrorIsASourceError(t *testing.T) {
	boom := errors.New("the recorder stopped")
	src := &streamSource{data: data(3 * K256), failAt: K256 + 1, fail: boom}
	err := runStream(t, src, Options{ChunkSize: K256}, []ex{
		start(),
		{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
	})
	assert.Equal(t, CodeSource, Code(err), "%v", err)
	assert.ErrorIs(t, err, boom, "the stream's error wrapped")
}

// A transport that says the source could not be read (a File changed on disk) ends the
// upload at once: it is not a network failure to retry.
func TestSourceErrorFromTheTransportIsFinal(t *testing.T) {
	s := &sourceFailingTransport{}
	u, err := New(s, &memSource{data: data(K256)}, Options{URL: testURL, Type: Resumable, ChunkSize: K256, Retry: fastRetry()})
	require.NoError(t, err)
	_, err = u.Run(context.Background())
	assert.Equal(t, CodeSource, Code(err), "%v", err)
	assert.Equal(t, 2, s.n, "requests: the start and one chunk")
}

type sourceFailingTransport struct{ n int }

func (s *sourceFailingTransport) Do(ctx Context, r *Request) (*Response, error) {
	s.n++
	if r.Method == "POST" {
		return &Response{Status: 200, Header: Header{"location": testSession}}, nil
	}
	return nil, &SourceError{Err: errors.New("NotReadableError: the file changed")}
}
