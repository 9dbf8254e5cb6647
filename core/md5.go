package core

import "math/bits"

// md5Digest is MD5 (RFC 1321), written here because crypto/md5 brings the standard library's
// FIPS 140 machinery with it, which made the wasm about 500 KB (130 KB gzipped) larger. MD5
// is used only to compare an upload with the server's md5Hash, never for security. Tests
// check it against crypto/md5. (encoding/binary is avoided too: it links reflect.)
type md5Digest struct {
	s   [4]uint32
	buf [64]byte
	n   int    // bytes in buf
	len uint64 // bytes written
}

func newMD5() *md5Digest {
	return &md5Digest{s: [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}}
}

// md5K[i] is the integer part of 2^32·|sin(i+1)| (RFC 1321 section 3.4).
var md5K = [64]uint32{
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
	0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
	0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
	0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
	0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
}

// md5Shift holds the rotations of each round's four steps (RFC 1321 section 3.4).
var md5Shift = [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}

func (d *md5Digest) Write(p []byte) (int, error) {
	n := len(p)
	d.len += uint64(n)
	if d.n > 0 {
		c := copy(d.buf[d.n:], p)
		d.n += c
		p = p[c:]
		if d.n < 64 {
			return n, nil
		}
		d.block(d.buf[:])
		d.n = 0
	}
	for len(p) >= 64 {
		d.block(p[:64])
		p = p[64:]
	}
	d.n = copy(d.buf[:], p)
	return n, nil
}

// Sum returns the digest of what was written, without changing d.
func (d *md5Digest) Sum() []byte {
	c := *d
	pad := [72]byte{0x80}
	padLen := 56 - c.n
	if padLen <= 0 {
		padLen += 64
	}
	for i, n := 0, c.len<<3; i < 8; i++ {
		pad[padLen+i] = byte(n >> (8 * i)) // the length in bits, little-endian
	}
	c.Write(pad[:padLen+8])
	out := make([]byte, 16)
	for i, v := range c.s {
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return out
}

func (d *md5Digest) block(p []byte) {
	var m [16]uint32
	for i := range m {
		m[i] = uint32(p[4*i]) | uint32(p[4*i+1])<<8 | uint32(p[4*i+2])<<16 | uint32(p[4*i+3])<<24
	}
	a, b, c, dd := d.s[0], d.s[1], d.s[2], d.s[3]
	for i := range 64 {
		var f uint32
		var g int
		switch i / 16 {
		case 0:
			f, g = (b&c)|(^b&dd), i
		case 1:
			f, g = (dd&b)|(^dd&c), (5*i+1)%16
		case 2:
			f, g = b^c^dd, (3*i+5)%16
		default:
			f, g = c^(b|^dd), (7*i)%16
		}
		f += a + md5K[i] + m[g]
		a, dd, c = dd, c, b
		b += bits.RotateLeft32(f, md5Shift[i/16][i%4])
	}
	d.s[0] += a
	d.s[1] += b
	d.s[2] += c
	d.s[3] += dd
}
