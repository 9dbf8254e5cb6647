package core

import "errors"

// Checksum says which hashes an upload computes while it sends, states in X-Goog-Hash with
// its final request, and compares with the hashes of the final metadata.
type Checksum string

const (
	NoChecksum Checksum = ""
	CRC32C     Checksum = "crc32c"
	MD5        Checksum = "md5"
	Both       Checksum = "both"
)

// ReadablePiece is a piece whose bytes can be read, which a checksum needs. Bytes is one; the
// browser's Blob slices are read with Blob.arrayBuffer, one chunk at a time, only when a
// checksum was asked for.
type ReadablePiece interface {
	Piece
	Read(ctx Context) ([]byte, error)
}

// Read returns b itself.
func (b Bytes) Read(Context) ([]byte, error) { return b, nil }

// hashReadStep is how much of the source a catch-up reads at once.
const hashReadStep = 8 << 20

// hasher hashes the upload's bytes in order, each byte once, however often it is sent.
type hasher struct {
	crc  *crc32cDigest
	md5  *md5Digest
	upTo int64 // bytes [0, upTo) are hashed
}

func newHasher(c Checksum) *hasher {
	if c == NoChecksum {
		return nil
	}
	h := &hasher{}
	if c == CRC32C || c == Both {
		h.crc = newCRC32C()
	}
	if c == MD5 || c == Both {
		h.md5 = newMD5()
	}
	return h
}

// add hashes what piece p, which starts at offset, holds beyond the bytes already hashed,
// reading the source first for any gap before offset.
func (h *hasher) add(ctx Context, src Source, offset int64, p Piece) error {
	if h == nil || offset+p.Len() <= h.upTo {
		return nil
	}
	if err := h.catchUp(ctx, src, offset); err != nil {
		return err
	}
	return h.write(ctx, offset, p)
}

// catchUp hashes the source's bytes from upTo to `to`, a step at a time.
func (h *hasher) catchUp(ctx Context, src Source, to int64) error {
	for h != nil && h.upTo < to {
		p, err := src.Slice(h.upTo, min(to, h.upTo+hashReadStep))
		if err != nil {
			return err
		}
		if p.Len() == 0 {
			return nil // the data ends here
		}
		if err := h.write(ctx, h.upTo, p); err != nil {
			return err
		}
	}
	return nil
}

func (h *hasher) write(ctx Context, offset int64, p Piece) error {
	rp, ok := p.(ReadablePiece)
	if !ok {
		return errors.New("the source's bytes cannot be read for a checksum")
	}
	b, err := rp.Read(ctx)
	if err != nil {
		return err
	}
	b = b[h.upTo-offset:]
	if h.crc != nil {
		h.crc.Write(b)
	}
	if h.md5 != nil {
		h.md5.Write(b)
	}
	h.upTo += int64(len(b))
	return nil
}

func (h *hasher) sums() (crc, md string) {
	if h.crc != nil {
		v := h.crc.Sum32()
		crc = base64Std([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	if h.md5 != nil {
		md = base64Std(h.md5.Sum())
	}
	return crc, md
}

// header returns the X-Goog-Hash value: "crc32c=…,md5=…" (base64, as GCS states them).
func (h *hasher) header() string {
	crc, md := h.sums()
	switch {
	case crc != "" && md != "":
		return "crc32c=" + crc + ",md5=" + md
	case crc != "":
		return "crc32c=" + crc
	}
	return "md5=" + md
}

// verify compares the hashes with those of the final metadata (GCS: "crc32c", "md5Hash";
// Drive: "md5Checksum", in hex). A mismatch is reported only against a hash the server
// stated; one that states none of those asked for cannot be checked, and the caller asked to
// be sure: that is a protocol error (of status, the final answer's).
func (h *hasher) verify(body []byte, status int) error {
	if h == nil {
		return nil
	}
	crc, md := h.sums()
	checked := 0
	if crc != "" {
		if got, ok := jsonString(body, "crc32c"); ok && got != "" {
			if got != crc {
				return &ChecksumError{Kind: "crc32c", Local: crc, Server: got}
			}
			checked++
		}
	}
	if md != "" {
		got, ok := jsonString(body, "md5Hash")
		if !ok {
			if hex, ok := jsonString(body, "md5Checksum"); ok {
				got = hexToBase64(hex)
			}
		}
		if got != "" {
			if got != md {
				return &ChecksumError{Kind: "md5", Local: md, Server: got}
			}
			checked++
		}
	}
	if checked == 0 {
		return &ProtocolError{Reason: "the server's final answer states no hash (crc32c, md5Hash or md5Checksum) to compare the file's with, so the stored object could not be checked", Status: status}
	}
	return nil
}

func hexToBase64(s string) string {
	if len(s)%2 != 0 {
		return s
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, lo := unhex(s[2*i]), unhex(s[2*i+1])
		if hi < 0 || lo < 0 {
			return s
		}
		b[i] = byte(hi<<4 | lo)
	}
	return base64Std(b)
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
