package refserver

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"strconv"
	"strings"
)

// contentRange is a parsed Content-Range request header (docs/protocol.md
// sections 3 and 4).
type contentRange struct {
	query       bool  // bytes */T: a status query
	first, last int64 // inclusive; unset for a query
	total       int64 // -1 for *
}

// parseContentRange parses "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*",
// "bytes */TOTAL" and "bytes */*" (docs/protocol.md sections 3 and 4), strictly:
// decimal digits only, FIRST <= LAST < TOTAL.
func parseContentRange(s string) (contentRange, error) {
	var cr contentRange
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return cr, fmt.Errorf("refserver: content-range %q does not start with \"bytes \"", s)
	}
	span, total, ok := strings.Cut(rest, "/")
	if !ok {
		return cr, fmt.Errorf("refserver: content-range %q has no total", s)
	}
	cr.total = -1
	if total != "*" {
		t, err := parseDecimal(total)
		if err != nil {
			return cr, fmt.Errorf("refserver: content-range %q: bad total", s)
		}
		cr.total = t
	}
	if span == "*" {
		cr.query = true
		return cr, nil
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return cr, fmt.Errorf("refserver: content-range %q: bad range", s)
	}
	first, err1 := parseDecimal(a)
	last, err2 := parseDecimal(b)
	if err1 != nil || err2 != nil || first > last {
		return cr, fmt.Errorf("refserver: content-range %q: bad range", s)
	}
	if cr.total >= 0 && last >= cr.total {
		return cr, fmt.Errorf("refserver: content-range %q: range past the total", s)
	}
	cr.first, cr.last = first, last
	return cr, nil
}

// parseDecimal accepts 1 to 18 decimal digits (no sign, no spaces).
func parseDecimal(s string) (int64, error) {
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("refserver: not a decimal number")
	}
	return strconv.ParseInt(s, 10, 64)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksums computes the object's md5Hash and crc32c as GCS writes them:
// base64 of the MD5 digest and of the big-endian CRC32C.
type checksums struct {
	md5 hash.Hash
	crc hash.Hash32
}

func newChecksums() *checksums {
	return &checksums{md5: md5.New(), crc: crc32.New(castagnoli)}
}

func (c *checksums) Write(p []byte) (int, error) {
	c.md5.Write(p)
	c.crc.Write(p)
	return len(p), nil
}

// clone returns checksums that go on from c's bytes, leaving c as it is.
func (c *checksums) clone() *checksums {
	m, err := c.md5.(hash.Cloner).Clone()
	if err != nil {
		panic("refserver: cannot clone md5: " + err.Error())
	}
	k, err := c.crc.(hash.Cloner).Clone()
	if err != nil {
		panic("refserver: cannot clone crc32c: " + err.Error())
	}
	return &checksums{md5: m, crc: k.(hash.Hash32)}
}

func (c *checksums) MD5() string { return base64.StdEncoding.EncodeToString(c.md5.Sum(nil)) }

func (c *checksums) CRC32C() string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c.crc.Sum32())
	return base64.StdEncoding.EncodeToString(b[:])
}

// checkHashes compares the hashes a client stated for the object, in X-Goog-Hash
// ("crc32c=...,md5=...", possibly several header lines) and in its metadata ("crc32c",
// "md5Hash": where the JSON API takes them), with the computed checksums, as Cloud Storage does
// when the object is completed (docs/protocol.md section 9). Unknown algorithms are ignored; a
// malformed entry or a mismatch is an error, in Cloud Storage's words.
func checkHashes(header []string, meta json.RawMessage, c *checksums) error {
	var stated []struct{ alg, sum string }
	for _, v := range header {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			alg, sum, ok := strings.Cut(item, "=")
			if !ok || sum == "" {
				return fmt.Errorf("refserver: malformed x-goog-hash entry %q", item)
			}
			stated = append(stated, struct{ alg, sum string }{strings.ToLower(alg), sum})
		}
	}
	if len(meta) > 0 {
		var m struct {
			CRC32C  *string `json:"crc32c"`
			MD5Hash *string `json:"md5Hash"`
		}
		if json.Unmarshal(meta, &m) == nil {
			if m.CRC32C != nil {
				stated = append(stated, struct{ alg, sum string }{"crc32c", *m.CRC32C})
			}
			if m.MD5Hash != nil {
				stated = append(stated, struct{ alg, sum string }{"md5", *m.MD5Hash})
			}
		}
	}
	for _, h := range stated {
		switch h.alg {
		case "crc32c":
			if want := c.CRC32C(); h.sum != want {
				return fmt.Errorf("Provided CRC32C %q doesn't match calculated CRC32C %q.", h.sum, want)
			}
		case "md5":
			if want := c.MD5(); h.sum != want {
				return fmt.Errorf("Provided MD5 hash %q doesn't match calculated MD5 hash %q.", h.sum, want)
			}
		}
	}
	return nil
}
