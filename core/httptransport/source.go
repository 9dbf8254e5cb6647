package httptransport

import (
	"bytes"
	"errors"
	"io"

	"github.com/mediaupload/mediaupload/core"
)

// ReaderAt returns a core.Source over r, which holds size bytes. Nothing is read until a
// transport sends a piece; a piece re-sent after a failure is read again from r.
func ReaderAt(r io.ReaderAt, size int64) core.Source { return readerAtSource{r, size} }

type readerAtSource struct {
	r    io.ReaderAt
	size int64
}

func (s readerAtSource) Size() int64 { return s.size }

func (s readerAtSource) Slice(start, end int64) (core.Piece, error) {
	end = min(end, s.size)
	start = min(start, end)
	return section{io.NewSectionReader(s.r, start, end-start)}, nil
}

type section struct{ *io.SectionReader }

func (p section) Len() int64 { return p.Size() }

func (p section) NewReader() io.Reader { return io.NewSectionReader(p.SectionReader, 0, p.Size()) }

// Reader returns a core.Source over a stream of unknown length: the upload states its total
// only with the last chunk (docs/protocol.md section 3). It keeps in memory the bytes the server has
// not confirmed yet, at most a chunk and a half or so; a server that asks again for bytes
// already dropped (a new session after 404) makes the upload fail, since a stream cannot
// rewind.
func Reader(r io.Reader) core.Source { return &streamSource{r: r} }

type streamSource struct {
	r      io.Reader
	base   int64  // the stream offset of buf[0]
	buf    []byte // bytes read, from base on
	eof    bool
	digest *digest // with a checksum: hashes every byte as it is read (hash.go)
}

func (s *streamSource) Size() int64 { return -1 }

func (s *streamSource) Slice(start, end int64) (core.Piece, error) {
	if start < s.base {
		return nil, errors.New("httptransport: the stream cannot go back to a byte already dropped")
	}
	// Bytes before start are confirmed by the server: drop them. Re-slicing (not copying)
	// keeps every piece handed out earlier intact.
	if drop := min(start-s.base, int64(len(s.buf))); drop > 0 {
		s.buf = s.buf[drop:]
		s.base += drop
	}
	for !s.eof && s.base+int64(len(s.buf)) < end {
		want := min(end-s.base-int64(len(s.buf)), 1<<20)
		chunk := make([]byte, want)
		n, err := io.ReadFull(s.r, chunk)
		s.buf = append(s.buf, chunk[:n]...)
		if s.digest != nil {
			s.digest.write(chunk[:n])
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			s.eof = true
		} else if err != nil {
			return nil, err
		}
	}
	lo := min(start-s.base, int64(len(s.buf)))
	hi := min(end-s.base, int64(len(s.buf)))
	return bytesPiece(s.buf[lo:hi:hi]), nil
}

type bytesPiece []byte

func (b bytesPiece) Len() int64 { return int64(len(b)) }

func (b bytesPiece) NewReader() io.Reader { return bytes.NewReader(b) }

// errShortHash is a source that ended before the length the upload states.
var errShortHash = errors.New("httptransport: the source ended before every byte was hashed")
