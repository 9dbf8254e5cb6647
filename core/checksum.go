package core

// Checksum says which hashes of the upload's bytes the server is given to check them against
// (docs/protocol.md section 9): stated with the request that completes the object (X-Goog-Hash;
// a multipart upload's metadata), and compared with the hashes of the final metadata.
type Checksum string

const (
	NoChecksum Checksum = ""
	// ChecksumAuto is CRC32C where the upload goes to Cloud Storage: its JSON API (an upload
	// path .../upload/storage/v1/b/BUCKET/o on any host, or a session URI under one) or its
	// XML API (a V4 signed URL, or a session URI started from one: xmlapi.go), and none
	// elsewhere: other APIs do not document X-Goog-Hash, and a request header they do not
	// expect can fail a CORS preflight. The browser's default.
	ChecksumAuto Checksum = "auto"
	CRC32C       Checksum = "crc32c"
	MD5          Checksum = "md5"
	Both         Checksum = "both"
)

// Sums are the hashes of an upload's bytes, in base64 as Cloud Storage states them (the
// CRC32C big-endian); "" for a hash not asked for.
type Sums struct{ CRC32C, MD5 string }

// A Hasher hashes a source's bytes, in order and each byte once, beside the upload: the
// browser's host reads a File ahead of the chunks and hashes it off the upload's path, so
// that an upload with a checksum goes at the lower of the link's rate and the reading's
// (docs/protocol.md section 9).
type Hasher interface {
	// Sum waits until the bytes [0, n) are hashed, n being the source's whole length, and
	// returns their hashes. A source that cannot be read is a *SourceError.
	Sum(ctx Context, n int64) (Sums, error)
}

// A HashingSource is a Source that hashes its own bytes. Hash starts hashing them from byte 0
// (crc32c and md5 say which hashes), as far ahead of the upload as the source allows; a
// source of unknown size hashes the bytes it hands out, as it reads them.
type HashingSource interface {
	Source
	Hash(crc32c, md5 bool) (Hasher, error)
}

// checksumFor resolves ChecksumAuto for an upload to url, or to sessionURL where it has no
// url: CRC32C for Cloud Storage, none elsewhere. strict says the caller asked for the checksum
// by name, so that a final answer stating no hash to compare is an error.
func checksumFor(c Checksum, url, sessionURL string) (resolved Checksum, strict bool) {
	if c != ChecksumAuto {
		return c, c != NoChecksum
	}
	if url == "" {
		url = sessionURL
	}
	if cloudStorageUpload(url) || signedStorageURL(url) {
		return CRC32C, false
	}
	return NoChecksum, false
}

// decideChecksum decides the checksum that "auto" left to the backend's answer (session.go):
// url is the session URI it gave, or the URL it signed. The hashing starts then, beside the
// session's start. A session lost and asked again keeps what the first answer decided: the
// hashes cover the whole file.
func (u *Upload) decideChecksum(url string) error {
	if !u.sumLater {
		return nil
	}
	u.sumLater = false
	if _, ok := u.src.(HashingSource); ok {
		u.checksum, _ = checksumFor(ChecksumAuto, url, "")
	}
	return u.startHashing()
}

// cloudStorageUpload reports whether url is an upload URI of Cloud Storage's JSON API,
// .../upload/storage/v1/b/BUCKET/o (with a query, or a session's upload_id), on any host: the
// emulators and the reference server speak the same paths.
func cloudStorageUpload(url string) bool {
	const prefix = "/upload/storage/v1/b/"
	if i := indexAny(url, "?#"); i >= 0 {
		url = url[:i]
	}
	at := index(url, prefix)
	if at < 0 {
		return false
	}
	bucket, rest, _ := cut(url[at+len(prefix):], "/")
	return bucket != "" && (rest == "o" || rest == "o/")
}

// header returns the X-Goog-Hash value of s: "crc32c=…,md5=…" (base64, as GCS states them).
func (s Sums) header() string {
	switch {
	case s.CRC32C != "" && s.MD5 != "":
		return "crc32c=" + s.CRC32C + ",md5=" + s.MD5
	case s.CRC32C != "":
		return "crc32c=" + s.CRC32C
	}
	return "md5=" + s.MD5
}

// metadataWith returns the JSON object meta with the hashes of s as the fields Cloud Storage
// checks an upload against ("crc32c", "md5Hash"), where meta does not state them already:
// a multipart upload's metadata is where the JSON API takes them (docs/protocol.md section 9).
func (s Sums) metadataWith(meta []byte) []byte {
	var fields []byte
	add := func(key, v string) {
		if _, ok := jsonString(meta, key); v != "" && !ok {
			fields = append(fields, `"`+key+`":"`+v+`",`...)
		}
	}
	add("crc32c", s.CRC32C)
	add("md5Hash", s.MD5)
	i := 0
	for i < len(meta) && meta[i] != '{' {
		i++
	}
	if len(fields) == 0 || i == len(meta) {
		return meta
	}
	rest := meta[i+1:]
	j := 0
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\n' || rest[j] == '\r') {
		j++
	}
	if j < len(rest) && rest[j] == '}' {
		fields = fields[:len(fields)-1] // an empty object: no comma after the last field
	}
	out := append(append(append([]byte(nil), meta[:i+1]...), fields...), rest...)
	return out
}

// verify compares s with the hashes of the final metadata (GCS: "crc32c", "md5Hash"; Drive:
// "md5Checksum", in hex). A mismatch is reported only against a hash the server stated. One
// that states none of those asked for cannot be checked: where the caller asked for the
// checksum by name (strict), that is a protocol error (of status, the final answer's); by
// default, the server was given the hashes to check and did not refuse them.
func (s Sums) verify(body []byte, status int, strict bool) error {
	checked := 0
	if s.CRC32C != "" {
		if got, ok := jsonString(body, "crc32c"); ok && got != "" {
			if got != s.CRC32C {
				return &ChecksumError{Kind: "crc32c", Local: s.CRC32C, Server: got}
			}
			checked++
		}
	}
	if s.MD5 != "" {
		got, ok := jsonString(body, "md5Hash")
		if !ok {
			if hex, ok := jsonString(body, "md5Checksum"); ok {
				got = hexToBase64(hex)
			}
		}
		if got != "" {
			if got != s.MD5 {
				return &ChecksumError{Kind: "md5", Local: s.MD5, Server: got}
			}
			checked++
		}
	}
	if checked == 0 && strict {
		return &ProtocolError{Reason: "the server's final answer states no hash (crc32c, md5Hash or md5Checksum) to compare the file's with, so the stored object could not be checked", Status: status}
	}
	return nil
}

// refused returns the *ChecksumError of an answer resp to a request that stated s, where it is
// the server refusing the bytes it received for not matching them (Cloud Storage's JSON API:
// 400, "Provided CRC32C "…" doesn't match calculated CRC32C "…"."; its XML API: 400 with the
// code BadDigest, InvalidDigest or CrcMismatch), else nil. No retry can mend it: the bytes
// changed on the way, or the file on disk.
func (s Sums) refused(resp *Response, method, url string) error {
	if resp.Status != 400 {
		return nil
	}
	e := newHTTPError(method, url, resp)
	msg := lower(e.Message)
	xml := digestRefused(e.Reason)
	if index(msg, "match") < 0 && !xml {
		return nil
	}
	kind := ""
	switch {
	case index(msg, "crc32c") >= 0 && s.CRC32C != "":
		kind = "crc32c"
	case index(msg, "md5") >= 0 && s.MD5 != "":
		kind = "md5"
	case xml && s.CRC32C != "": // the XML API's code, its message naming no hash
		kind = "crc32c"
	case xml && s.MD5 != "":
		kind = "md5"
	default:
		return nil
	}
	local := s.CRC32C
	if kind == "md5" {
		local = s.MD5
	}
	return &ChecksumError{Kind: kind, Local: local, Refused: e}
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

// base64Std encodes b in standard base64 with padding (RFC 4648 section 4), as Cloud Storage
// states hashes; encoding/base64 links tables and an init of its own.
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
