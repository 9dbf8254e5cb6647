package core

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sums(b []byte) (crc, md string) {
	c := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	m := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c)), base64.StdEncoding.EncodeToString(m[:])
}

func TestChecksum(t *testing.T) {
	d := data(3*K256 + 5)
	crc, md := sums(d)
	meta := `{"kind":"storage#object","nested":{"md5Hash":"wrong"},"crc32c":"` + crc + `","md5Hash":"` + md + `"}`
	tests := []struct {
		name string
		c    Checksum
		exs  []ex
		code string
	}{
		{"both, with a chunk the server kept only part of", Both, []ex{
			start(),
			{n: K256, status: 308, rng: "bytes=0-262143", check: hashIs("")},
			{n: K256, status: 308, rng: "bytes=0-299999", check: hashIs("")},
			{n: K256, status: 308, rng: "bytes=0-562143", check: hashIs("")},
			{n: 3*K256 + 5 - 562144, status: 200, body: meta, check: hashIs("crc32c=" + crc + ",md5=" + md)},
		}, ""},
		{"crc32c only", CRC32C, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"}, {n: -1, status: 200, body: meta, check: hashIs("crc32c=" + crc)}}, ""},
		{"server's md5 differs", MD5, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"},
			{n: -1, status: 200, body: strings.Replace(meta, md, "AAAA", 1)}}, CodeChecksum},
		// A mismatch is reported only against a hash the server stated (docs/api.md).
		{"server states no hash: not checked, which is no mismatch", CRC32C, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"}, {n: -1, status: 200, body: `{}`}}, CodeProtocol},
		{"both asked, Drive states only its md5", Both, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"},
			{n: -1, status: 200, body: `{"md5Checksum":"` + hexMD5(d) + `"}`}}, ""},
		// A final answer cut off on the way: the session is asked, and answers whole.
		{"a cut-off final answer: the session asked again", Both, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"},
			{n: -1, status: 200, body: meta[:len(meta)/2]},
			{cr: "bytes */786437", n: 0, status: 200, body: meta}}, ""},
		{"a cut-off final answer the session cannot repeat: not checked, no mismatch", Both, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"},
			{n: -1, status: 200, body: `{"kind":"storage#object","name":"x","crc32`},
			{cr: "bytes */786437", n: 0, status: 404, body: `{"error":{"code":404}}`}}, CodeProtocol},
		{"Drive's md5Checksum in hex", MD5, []ex{start(), {n: -1, status: 308, rng: "bytes=0-262143"}, {n: -1, status: 308, rng: "bytes=0-524287"}, {n: -1, status: 308, rng: "bytes=0-786431"},
			{n: -1, status: 200, body: `{"md5Checksum":"` + hexMD5(d) + `"}`}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err, s := runScript(t, &memSource{data: d}, Options{ChunkSize: K256, Checksum: tt.c}, tt.exs)
			s.done()
			assert.Equal(t, tt.code, Code(err), "%v", err)
		})
	}
}

// hashIs checks a request's X-Goog-Hash ("" for none).
func hashIs(want string) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		assert.Equal(t, want, r.Header.Get("X-Goog-Hash"), "X-Goog-Hash")
	}
}

func hexMD5(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// A session handed in that is already complete: the bytes are hashed from the source.
func TestChecksumAdoptedSession(t *testing.T) {
	d := data(1000)
	crc, md := sums(d)
	_, err, s := runScript(t, &memSource{data: d}, Options{SessionURL: testSession, Checksum: Both},
		[]ex{{cr: "bytes */1000", n: 0, status: 200, body: `{"crc32c":"` + crc + `","md5Hash":"` + md + `"}`}})
	s.done()
	assert.NoError(t, err)
}

func TestChecksumMedia(t *testing.T) {
	d := data(5000)
	crc, md := sums(d)
	_, err, s := runScript(t, &memSource{data: d}, Options{Type: Media, Checksum: Both}, []ex{{method: "POST", n: 5000, status: 200,
		body:  `{"crc32c":"` + crc + `","md5Hash":"` + md + `"}`,
		check: hashIs("crc32c=" + crc + ",md5=" + md)}})
	s.done()
	assert.NoError(t, err)
}

func TestJSONString(t *testing.T) {
	body := `  {"a": {"md5Hash": "no", "x": [1, "]", {"y": "}"}]}, "n": -1.5e3, "t": true, "md5Hash" : "a\/b\u0041\"",
	"z": null}`
	got, ok := jsonString([]byte(body), "md5Hash")
	assert.True(t, ok)
	assert.Equal(t, `a/bA"`, got)
	for _, b := range []string{``, `[]`, `{"md5Hash":1}`, `{"a":"b"`, `{"a" "b"}`, `{"md5Hash":"unterminated}`} {
		got, ok := jsonString([]byte(b), "md5Hash")
		assert.False(t, ok, "%s: found %q", b, got)
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add(`{"md5Hash":"x","a":[{"b":"]"}]}`)
	f.Fuzz(func(t *testing.T, b string) {
		jsonString([]byte(b), "md5Hash") // must not panic or hang
	})
}

func TestGoogleError(t *testing.T) {
	tests := []struct{ body, message, reason string }{
		{`{"error":{"code":403,"message":"The project exceeded its storage quota.","errors":[{"message":"The project exceeded its storage quota.","domain":"usageLimits","reason":"quotaExceeded"}]}}`,
			"The project exceeded its storage quota.", "quotaExceeded"},
		{`{"error": {"errors": [{"reason": "notFound"}, {"reason": "other"}], "message": "No such object: b/o", "code": 404}}`, "No such object: b/o", "notFound"},
		{`{"error":{"code":400,"message":"caf\u00e9 \"quoted\" \ud83d\ude00"}}`, "café \"quoted\" 😀", ""},
		{`{"error":"invalid_grant"}`, "", ""},
		{`<html>503</html>`, "", ""},
		{`{"error":{"message":"cut`, "", ""},
		{``, "", ""},
	}
	for _, tt := range tests {
		m, r := googleError([]byte(tt.body))
		assert.Equal(t, tt.message, m, "googleError(%s)'s message", tt.body)
		assert.Equal(t, tt.reason, r, "googleError(%s)'s reason", tt.body)
	}
}

func TestJSONObject(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":"b","c":{"d":[1,2,"]}"]}}`: true,
		` {"name":"caf\u00e9.txt"} `:     true,
		`{"a":"b"`:                       false,
		`{"a":"b"}x`:                     false,
		`["a"]`:                          false,
		``:                               false,
		`{"md5Hash":"abc`:                false,
	} {
		assert.Equal(t, want, jsonObject([]byte(body)), "jsonObject(%s)", body)
	}
}

func FuzzGoogleError(f *testing.F) {
	f.Add(`{"error":{"code":403,"message":"m","errors":[{"reason":"r"}]}}`)
	f.Add(`{"error":{"errors":[`)
	f.Fuzz(func(t *testing.T, b string) {
		googleError([]byte(b)) // must not panic or hang
		jsonObject([]byte(b))
	})
}

func TestHTTPErrorMessage(t *testing.T) {
	e := newHTTPError("PUT", "https://up.example.com/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=SECRET", &Response{
		Status: 403,
		Body:   []byte(`{"error":{"code":403,"message":"The project exceeded its storage quota.","errors":[{"reason":"quotaExceeded"}]}}`),
	})
	msg := e.Error()
	for _, want := range []string{"PUT", "https://up.example.com/upload/storage/v1/b/bkt/o", "403 Forbidden", "The project exceeded its storage quota.", "quotaExceeded"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "SECRET", "the session URI's query shown")
	e = newHTTPError("POST", "https://up.example.com/upload/wrong?name=x", &Response{Status: 404, Body: []byte("Not Found")})
	assert.Contains(t, e.Error(), "POST https://up.example.com/upload/wrong?name=x with 404 Not Found; check the URL")
}

// base64Std against the standard library's.
func TestBase64(t *testing.T) {
	for n := range 70 {
		b := data(n)
		assert.Equal(t, base64.StdEncoding.EncodeToString(b), base64Std(b), "%d bytes", n)
	}
}

// Which URLs are Cloud Storage's JSON API upload paths, where ChecksumAuto hashes.
func TestCloudStorageUpload(t *testing.T) {
	for url, want := range map[string]bool{
		"https://storage.googleapis.com/upload/storage/v1/b/my-bucket/o?uploadType=resumable&name=a": true,
		"https://storage.googleapis.com/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=X":    true, // a session URI
		"http://127.0.0.1:4443/upload/storage/v1/b/demo/o":                                           true, // an emulator
		"/ref/upload/storage/v1/b/demo/o?name=x":                                                     true, // the demo's, behind a prefix
		"https://storage.googleapis.com/upload/storage/v1/b/b/o/":                                    true,
		"https://storage.googleapis.com/upload/storage/v1/b//o":                                      false, // no bucket
		"https://storage.googleapis.com/upload/storage/v1/b/b/o/name":                                false,
		"https://storage.googleapis.com/storage/v1/b/b/o":                                            false, // not an upload path
		"https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable":                      false, // Drive
		"https://www.googleapis.com/upload/youtube/v3/videos":                                        false,
		"https://example.com/x?next=/upload/storage/v1/b/b/o":                                        false, // only in the query
		"": false,
	} {
		assert.Equal(t, want, cloudStorageUpload(url), "cloudStorageUpload(%q)", url)
	}
}

// The default: CRC32C to Cloud Storage, stated with the request that completes the object and
// compared with the final metadata where it states one; nothing elsewhere.
func TestChecksumAuto(t *testing.T) {
	d := data(2*K256 + 7)
	crc, _ := sums(d)
	chunks := func(final ex) []ex {
		return []ex{start(),
			{n: K256, status: 308, rng: "bytes=0-262143", check: hashIs("")},
			{n: K256, status: 308, rng: "bytes=0-524287", check: hashIs("")},
			final}
	}
	tests := []struct {
		name   string
		url    string
		exs    []ex
		code   string
		hashed int
	}{
		{"cloud storage: crc32c, compared", testURL, chunks(ex{n: 7, status: 200, body: `{"crc32c":"` + crc + `"}`, check: hashIs("crc32c=" + crc)}), "", 1},
		// The server was given the hash to check, and did not refuse it.
		{"cloud storage, the final answer states none: fine", testURL, chunks(ex{n: 7, status: 200, body: `{"name":"x"}`, check: hashIs("crc32c=" + crc)}), "", 1},
		{"cloud storage, the final answer differs", testURL, chunks(ex{n: 7, status: 200, body: `{"crc32c":"AAAAAA=="}`}), CodeChecksum, 1},
		{"another API: no hash", "https://www.googleapis.com/upload/drive/v3/files", []ex{start(),
			{n: K256, status: 308, rng: "bytes=0-262143", check: hashIs("")},
			{n: K256, status: 308, rng: "bytes=0-524287", check: hashIs("")},
			{n: 7, status: 200, body: `{"crc32c":"AAAAAA=="}`, check: hashIs("")}}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &memSource{data: d}
			_, err, s := runScript(t, src, Options{URL: tt.url, ChunkSize: K256, Checksum: ChecksumAuto}, tt.exs)
			s.done()
			assert.Equal(t, tt.code, Code(err), "%v", err)
			assert.Equal(t, tt.hashed, src.hashed, "times the source was asked to hash")
		})
	}
}

// A server that checks the hashes refuses a last request whose bytes do not match them, as
// Cloud Storage does (400); that is checksum_mismatch, with the server's words, never retried.
func TestChecksumRefused(t *testing.T) {
	d := data(K256 + 9)
	crc, md := sums(d)
	refusal := func(msg string) ex {
		return ex{n: 9, status: 400, body: `{"error":{"code":400,"message":"` + msg + `","errors":[{"domain":"global","reason":"invalid","message":"` + msg + `"}]}}`}
	}
	tests := []struct {
		name string
		c    Checksum
		last ex
		code string
		kind string
	}{
		{"crc32c refused", ChecksumAuto, refusal(`Provided CRC32C \"` + crc + `\" doesn't match calculated CRC32C \"AAAAAA==\".`), CodeChecksum, "crc32c"},
		{"md5 refused", Both, refusal(`Provided MD5 hash \"` + md + `\" doesn't match calculated MD5 hash \"AAAA\".`), CodeChecksum, "md5"},
		{"another 400", ChecksumAuto, refusal("Invalid argument."), CodeHTTP, ""},
		{"a refusal of a hash not sent", CRC32C, refusal(`Provided MD5 hash \"x\" doesn't match calculated MD5 hash \"y\".`), CodeHTTP, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err, s := runScript(t, &memSource{data: d}, Options{ChunkSize: K256, Checksum: tt.c, Retry: fastRetry()},
				[]ex{start(), {n: K256, status: 308, rng: "bytes=0-262143"}, tt.last})
			s.done()
			require.Equal(t, tt.code, Code(err), "%v", err)
			if tt.kind != "" {
				var ce *ChecksumError
				if assert.ErrorAs(t, err, &ce) {
					assert.Equal(t, tt.kind, ce.Kind)
					assert.NotNil(t, ce.Refused, "the mismatch was not the server's refusal")
				}
				assert.Contains(t, err.Error(), "doesn't match", "the server's words")
			}
			var he *HTTPError
			if assert.ErrorAs(t, err, &he, "the 400 is not in its chain") {
				assert.Equal(t, 400, he.Status)
			}
		})
	}
}

// A multipart upload states the hashes in its metadata (where the JSON API checks them), a
// media upload in X-Goog-Hash; both wait for the source's hashes before they go.
func TestChecksumSingleRequest(t *testing.T) {
	d := data(3000)
	crc, md := sums(d)
	tests := []struct {
		name     string
		o        Options
		header   string
		metadata string
	}{
		{"media", Options{Type: Media, Checksum: ChecksumAuto}, "crc32c=" + crc, ""},
		{"multipart", Options{Type: Multipart, Checksum: ChecksumAuto, Metadata: []byte(`{"name":"x"}`)}, "", `{"crc32c":"` + crc + `","name":"x"}`},
		{"multipart, both", Options{Type: Multipart, Checksum: Both, Metadata: []byte(` { } `)}, "", ` {"crc32c":"` + crc + `","md5Hash":"` + md + `" } `},
		{"multipart, the caller's own crc32c kept", Options{Type: Multipart, Checksum: ChecksumAuto, Metadata: []byte(`{"crc32c":"mine"}`)}, "", `{"crc32c":"mine"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err, s := runScript(t, &memSource{data: d}, tt.o, []ex{{method: "POST", n: -1, status: 200, body: `{"crc32c":"` + crc + `","md5Hash":"` + md + `"}`,
				check: func(t *testing.T, r *Request) {
					hashIs(tt.header)(t, r)
					if tt.metadata == "" {
						return
					}
					var body []byte
					for _, p := range r.Body {
						if b, ok := p.(Bytes); ok {
							body = append(body, b...)
						}
					}
					assert.Contains(t, string(body), "\r\n\r\n"+tt.metadata+"\r\n", "the multipart body's metadata")
				}}})
			s.done()
			assert.NoError(t, err)
		})
	}
}

// A stream states the hashes of all it read with the chunk that meets its end.
func TestChecksumStream(t *testing.T) {
	d := data(K256 + 100)
	crc, _ := sums(d)
	err := runStream(t, &streamSource{data: d}, Options{ChunkSize: K256, Checksum: CRC32C}, []ex{start(),
		// No hash before the end.
		{cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143", check: hashIs("")},
		{cr: "bytes 262144-262243/262244", n: 100, status: 200, body: `{"crc32c":"` + crc + `"}`, check: hashIs("crc32c=" + crc)},
	})
	assert.NoError(t, err)
}

// A source that cannot hash: asked for by name, an invalid argument before any request; by
// default, no checksum.
func TestChecksumSourceCannotHash(t *testing.T) {
	src := plainSource{size: 10}
	_, err := New(&script{t: t}, src, Options{URL: testURL, Checksum: CRC32C})
	assert.Equal(t, CodeInvalidArgument, Code(err), "crc32c: %v", err)
	up, err := New(&script{t: t}, src, Options{URL: testURL, Checksum: ChecksumAuto})
	require.NoError(t, err, "auto")
	assert.Equal(t, NoChecksum, up.checksum, "auto")
}

type plainSource struct{ size int64 }

func (p plainSource) Size() int64 { return p.size }
func (p plainSource) Slice(start, end int64) (Piece, error) {
	return Bytes(make([]byte, end-start)), nil
}

func TestMetadataWith(t *testing.T) {
	s := Sums{CRC32C: "C==", MD5: "M=="}
	for in, want := range map[string]string{
		`{}`:                           `{"crc32c":"C==","md5Hash":"M=="}`,
		` { "name" : "a" } `:           ` {"crc32c":"C==","md5Hash":"M==", "name" : "a" } `,
		`{"md5Hash":"mine"}`:           `{"crc32c":"C==","md5Hash":"mine"}`,
		`{"crc32c":"a","md5Hash":"b"}`: `{"crc32c":"a","md5Hash":"b"}`,
		`{"x":{"crc32c":"nested"}}`:    `{"crc32c":"C==","md5Hash":"M==","x":{"crc32c":"nested"}}`,
	} {
		assert.Equal(t, want, string(s.metadataWith([]byte(in))), "metadataWith(%s)", in)
	}
}

// Whatever the metadata (core has checked it is a JSON object), the hashes are added as
// fields of that object, and the result is JSON.
func FuzzMetadataWith(f *testing.F) {
	f.Add(`{"name":"a"}`, true)
	f.Add(` {} `, false)
	f.Add(`{"crc32c":"x","a":[1,{"b":"}"}]}`, true)
	f.Fuzz(func(t *testing.T, meta string, md bool) {
		if !jsonObject([]byte(meta)) || !json.Valid([]byte(meta)) {
			return
		}
		s := Sums{CRC32C: "AAAAAA=="}
		if md {
			s.MD5 = "1B2M2Y8AsgTpgAmY7PhCfg=="
		}
		out := s.metadataWith([]byte(meta))
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("metadataWith(%s) = %s: not JSON: %v", meta, out, err)
		}
		if _, ok := m["crc32c"]; !ok {
			t.Fatalf("metadataWith(%s) = %s: no crc32c", meta, out)
		}
		if _, ok := m["md5Hash"]; md && !ok {
			t.Fatalf("metadataWith(%s) = %s: no md5Hash", meta, out)
		}
	})
}

// A session handed in, with no upload URL: the default goes by the session URI.
func TestChecksumAutoSessionOnly(t *testing.T) {
	d := data(1000)
	crc, _ := sums(d)
	src := &memSource{data: d}
	_, err, s := runScript(t, src, Options{SessionURL: testSession, Checksum: ChecksumAuto},
		[]ex{{cr: "bytes */1000", n: 0, status: 200, body: `{"crc32c":"` + crc + `"}`}})
	s.done()
	require.NoError(t, err, "the session's bytes compared")
	assert.Equal(t, 1, src.hashed, "times the session's bytes were hashed")
}
