package core

// crc32cDigest is CRC-32C (Castagnoli, the polynomial Cloud Storage states as "crc32c"),
// slicing by eight, written here because package hash/crc32 brings its per-architecture
// tables, sync.Once machinery and hash interfaces into the wasm (about 2 KB gzipped with
// encoding/base64, measured with Go 1.26). Tests check it against hash/crc32.
type crc32cDigest struct{ crc uint32 }

// crc32cTable is the eight-way table of the reflected polynomial 0x82f63b78, made on first
// use (8 KiB: none of it is in the wasm's data).
var crc32cTable *[8][256]uint32

func newCRC32C() *crc32cDigest {
	if crc32cTable == nil {
		t := new([8][256]uint32)
		for i := range 256 {
			c := uint32(i)
			for range 8 {
				if c&1 == 1 {
					c = c>>1 ^ 0x82f63b78
				} else {
					c >>= 1
				}
			}
			t[0][i] = c
		}
		for i := range 256 {
			for k := 1; k < 8; k++ {
				t[k][i] = t[k-1][i]>>8 ^ t[0][byte(t[k-1][i])]
			}
		}
		crc32cTable = t
	}
	return &crc32cDigest{}
}

func (d *crc32cDigest) Write(p []byte) (int, error) {
	t, crc := crc32cTable, ^d.crc
	n := len(p)
	for len(p) >= 8 {
		crc ^= uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
		crc = t[0][p[7]] ^ t[1][p[6]] ^ t[2][p[5]] ^ t[3][p[4]] ^
			t[4][crc>>24] ^ t[5][crc>>16&0xff] ^ t[6][crc>>8&0xff] ^ t[7][crc&0xff]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	d.crc = ^crc
	return n, nil
}

func (d *crc32cDigest) Sum32() uint32 { return d.crc }

// base64Std encodes b in standard base64 with padding (RFC 4648 section 4), as X-Goog-Hash and
// Cloud Storage's metadata state hashes; encoding/base64 links tables and an init of its own.
func base64Std(b []byte) string {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	out := make([]byte, 0, (len(b)+2)/3*4)
	for len(b) > 0 {
		var v uint32
		n := min(len(b), 3)
		for i := range 3 {
			v <<= 8
			if i < n {
				v |= uint32(b[i])
			}
		}
		for i := range 4 {
			if i <= n {
				out = append(out, digits[v>>(18-6*i)&63])
			} else {
				out = append(out, '=')
			}
		}
		b = b[n:]
	}
	return string(out)
}
