package core

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"
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
	hashIs := func(want string) func(*testing.T, *Request) {
		return func(t *testing.T, r *Request) {
			if got := r.Header.Get("X-Goog-Hash"); got != want {
				t.Errorf("X-Goog-Hash %q, want %q", got, want)
			}
		}
	}
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
			if Code(err) != tt.code {
				t.Fatalf("code %q (%v), want %q", Code(err), err, tt.code)
			}
		})
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
	if err != nil {
		t.Fatal(err)
	}
}

func TestChecksumMedia(t *testing.T) {
	d := data(5000)
	crc, md := sums(d)
	_, err, s := runScript(t, &memSource{data: d}, Options{Type: Media, Checksum: Both}, []ex{{method: "POST", n: 5000, status: 200,
		body: `{"crc32c":"` + crc + `","md5Hash":"` + md + `"}`,
		check: func(t *testing.T, r *Request) {
			if r.Header.Get("x-goog-hash") != "crc32c="+crc+",md5="+md {
				t.Error("X-Goog-Hash missing or wrong")
			}
		}}})
	s.done()
	if err != nil {
		t.Fatal(err)
	}
}

func TestJSONString(t *testing.T) {
	body := `  {"a": {"md5Hash": "no", "x": [1, "]", {"y": "}"}]}, "n": -1.5e3, "t": true, "md5Hash" : "a\/b\u0041\"",
	"z": null}`
	if got, ok := jsonString([]byte(body), "md5Hash"); !ok || got != `a/bA"` {
		t.Fatalf("got %q, %v", got, ok)
	}
	for _, b := range []string{``, `[]`, `{"md5Hash":1}`, `{"a":"b"`, `{"a" "b"}`, `{"md5Hash":"unterminated}`} {
		if got, ok := jsonString([]byte(b), "md5Hash"); ok {
			t.Errorf("%s: found %q", b, got)
		}
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add(`{"md5Hash":"x","a":[{"b":"]"}]}`)
	f.Fuzz(func(t *testing.T, b string) {
		jsonString([]byte(b), "md5Hash") // must not panic or hang
	})
}

func FuzzMD5(f *testing.F) {
	f.Add([]byte("abc"), 3)
	f.Add(make([]byte, 200), 64)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		d := newMD5()
		if split < 0 || split > len(b) {
			split = len(b) / 2
		}
		d.Write(b[:split])
		d.Write(b[split:])
		want := md5.Sum(b)
		if got := d.Sum(); string(got) != string(want[:]) {
			t.Fatalf("md5(%x) = %x, want %x", b, got, want)
		}
	})
}

func TestMD5(t *testing.T) {
	for n := range 300 {
		b := data(n)
		d := newMD5()
		for i := 0; i < len(b); i += 7 {
			d.Write(b[i:min(i+7, len(b))])
		}
		want := md5.Sum(b)
		if got := d.Sum(); string(got) != string(want[:]) {
			t.Fatalf("md5 of %d bytes = %x, want %x", n, got, want)
		}
	}
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
		if m != tt.message || r != tt.reason {
			t.Errorf("googleError(%s) = %q, %q; want %q, %q", tt.body, m, r, tt.message, tt.reason)
		}
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
		if got := jsonObject([]byte(body)); got != want {
			t.Errorf("jsonObject(%s) = %v, want %v", body, got, want)
		}
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
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "SECRET") {
		t.Errorf("message %q shows the session URI's query", msg)
	}
	e = newHTTPError("POST", "https://up.example.com/upload/wrong?name=x", &Response{Status: 404, Body: []byte("Not Found")})
	if msg := e.Error(); !strings.Contains(msg, "POST https://up.example.com/upload/wrong?name=x with 404 Not Found; check the URL") {
		t.Errorf("404: %q", msg)
	}
}

// The package's own CRC-32C and base64 (crc32c.go) against the standard library's.
func TestCRC32CAndBase64(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 63, 64, 1000, 1 << 20} {
		b := data(n)
		d := newCRC32C()
		d.Write(b[:n/3])
		d.Write(b[n/3:])
		if want := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)); d.Sum32() != want {
			t.Errorf("%d bytes: crc32c %08x, want %08x", n, d.Sum32(), want)
		}
		for _, k := range []int{n, n % 7} {
			if got, want := base64Std(b[:k]), base64.StdEncoding.EncodeToString(b[:k]); got != want {
				t.Errorf("%d bytes: base64 %q, want %q", k, got, want)
			}
		}
	}
}
