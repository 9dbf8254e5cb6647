package httptransport

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"hash/crc32"

	"github.com/mediaupload/mediaupload/core"
)

// digest hashes bytes in order for a checksum (core.Hasher's work): CRC32C and MD5 as Cloud
// Storage states them, base64 (the CRC32C big-endian).
type digest struct {
	crc, md5 hash.Hash
	n        int64 // bytes hashed
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newDigest(withCRC, withMD5 bool) *digest {
	d := &digest{}
	if withCRC {
		d.crc = crc32.New(castagnoli)
	}
	if withMD5 {
		d.md5 = md5.New()
	}
	return d
}

func (d *digest) write(b []byte) {
	if d.crc != nil {
		d.crc.Write(b)
	}
	if d.md5 != nil {
		d.md5.Write(b)
	}
	d.n += int64(len(b))
}

func (d *digest) sums() core.Sums {
	var s core.Sums
	if d.crc != nil {
		s.CRC32C = base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, d.crc.(hash.Hash32).Sum32()))
	}
	if d.md5 != nil {
		s.MD5 = base64.StdEncoding.EncodeToString(d.md5.Sum(nil))
	}
	return s
}

// Hash hashes the whole source in a goroutine of its own, beside the upload, as the browser's
// host does (core.HashingSource).
func (s readerAtSource) Hash(withCRC, withMD5 bool) (core.Hasher, error) {
	h := &readerAtHasher{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		d := newDigest(withCRC, withMD5)
		buf := make([]byte, 1<<20)
		for off := int64(0); off < s.size; {
			n, err := s.r.ReadAt(buf[:min(int64(len(buf)), s.size-off)], off)
			d.write(buf[:n])
			off += int64(n)
			if err != nil && off < s.size {
				h.err = &core.SourceError{Err: err}
				return
			}
		}
		h.sums, h.n = d.sums(), d.n
	}()
	return h, nil
}

type readerAtHasher struct {
	done chan struct{}
	sums core.Sums
	n    int64
	err  error
}

func (h *readerAtHasher) Sum(ctx core.Context, n int64) (core.Sums, error) {
	select {
	case <-h.done:
	case <-ctx.Done():
		return core.Sums{}, ctx.Err()
	}
	if h.err == nil && h.n != n {
		h.err = &core.SourceError{Err: errShortHash}
	}
	return h.sums, h.err
}

// Hash hashes the stream's bytes as the upload reads them, in order (core.HashingSource): by
// the request that completes the object, every byte has been read.
func (s *streamSource) Hash(withCRC, withMD5 bool) (core.Hasher, error) {
	s.digest = newDigest(withCRC, withMD5)
	return streamHasher{s}, nil
}

type streamHasher struct{ s *streamSource }

func (h streamHasher) Sum(_ core.Context, n int64) (core.Sums, error) {
	if h.s.digest.n != n {
		return core.Sums{}, &core.SourceError{Err: errShortHash}
	}
	return h.s.digest.sums(), nil
}
