package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseRange(t *testing.T) {
	for h, want := range map[string]int64{"": 1 - 1, "bytes=0-0": 1, "bytes=0-262143": 262144, "0-99": 100, " bytes=0-5 ": 6} {
		got, err := parseRange(h)
		assert.NoError(t, err, "parseRange(%q)", h)
		assert.Equal(t, want, got, "parseRange(%q)", h)
	}
	for _, h := range []string{"bytes=1-5", "bytes=0-", "bytes=-5", "bytes=0-5,7-9", "bytes 0-5", "items=0-5", "0-+5", "0-0x10", "bytes=0-99999999999999999999"} {
		_, err := parseRange(h)
		assert.Equal(t, CodeProtocol, Code(err), "parseRange(%q): %v", h, err)
	}
}

func TestContentRange(t *testing.T) {
	for _, tc := range []struct {
		a, b, t int64
		want    string
	}{{0, 262144, 2000000, "bytes 0-262143/2000000"}, {5, 10, -1, "bytes 5-9/*"}, {0, 0, -1, "bytes */*"}, {0, 0, 77, "bytes */77"}} {
		assert.Equal(t, tc.want, contentRange(tc.a, tc.b, tc.t), "contentRange(%d,%d,%d)", tc.a, tc.b, tc.t)
	}
}

func TestResolveLocation(t *testing.T) {
	base := "https://h.example/upload/a/b?uploadType=resumable"
	for loc, want := range map[string]string{
		"https://x.example/s?upload_id=1":   "https://x.example/s?upload_id=1",
		"HTTPS://X.example:443/s?upload_id": "https://x.example/s?upload_id",
		"//y.example/s?upload_id=2":         "https://y.example/s?upload_id=2",
		"/s?upload_id=3":                    "https://h.example/s?upload_id=3",
		"?upload_id=4":                      "https://h.example/upload/a/b?upload_id=4",
		"c?upload_id=5":                     "https://h.example/upload/a/c?upload_id=5",
		"../c?upload_id=6":                  "https://h.example/upload/c?upload_id=6",
		"./../../../c":                      "https://h.example/c",
	} {
		got, ok := resolveLocation(base, loc)
		assert.True(t, ok, "resolveLocation(%q) refused", loc)
		assert.Equal(t, want, got, "resolveLocation(%q)", loc)
	}
	for _, loc := range []string{"", "ftp://x/y", "https:///nohost", "https://u:p@h/s", "a b"} {
		got, ok := resolveLocation(base, loc)
		assert.False(t, ok, "resolveLocation(%q) = %q, accepted", loc, got)
	}
}

func TestWithUploadType(t *testing.T) {
	for in, want := range map[string]string{
		"https://h/u":                            "https://h/u?uploadType=resumable",
		"https://h/u?name=a":                     "https://h/u?name=a&uploadType=resumable",
		"https://h/u?uploadType=media&name=a#f":  "https://h/u?name=a&uploadType=resumable#f",
		"https://h/u?uploadTypeX=1&uploadType=x": "https://h/u?uploadTypeX=1&uploadType=resumable",
	} {
		assert.Equal(t, want, withUploadType(in, "resumable"), "withUploadType(%q)", in)
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-262143", "0-5", "", "bytes=1-2", "bytes=0-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		n, err := parseRange(h)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseRange(%q) = %d", h, n)
		}
		if n > 0 && !strings.HasSuffix(strings.TrimSpace(h), itoa(n-1)) {
			t.Fatalf("parseRange(%q) = %d does not match its end", h, n)
		}
	})
}

func FuzzContentRange(f *testing.F) {
	f.Add(int64(0), int64(262144), int64(-1))
	f.Fuzz(func(t *testing.T, a, n, total int64) {
		if a < 0 || n < 0 || a > 1<<50 || n > 1<<50 {
			return
		}
		cr := contentRange(a, a+n, total)
		rest, ok := strings.CutPrefix(cr, "bytes ")
		if !ok {
			t.Fatal(cr)
		}
		span, tot, _ := strings.Cut(rest, "/")
		if (total < 0) != (tot == "*") {
			t.Fatalf("%q for total %d", cr, total)
		}
		if n == 0 {
			if span != "*" {
				t.Fatalf("%q for an empty range", cr)
			}
			return
		}
		first, last, _ := strings.Cut(span, "-")
		x, _ := parseDecimal(first)
		y, _ := parseDecimal(last)
		if x != a || y != a+n-1 {
			t.Fatalf("%q for [%d,%d)", cr, a, a+n)
		}
	})
}

func FuzzResolveLocation(f *testing.F) {
	for _, s := range []string{"https://x/s?upload_id=1", "/s", "?q", "../a", "//h/p", "a/./b/../c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		got, ok := resolveLocation("https://h.example/upload/a/b?x=1", loc)
		if !ok {
			return
		}
		o, p, _, ok2 := splitURL(got)
		if !ok2 || o == "" || !strings.HasPrefix(p, "/") {
			t.Fatalf("resolveLocation(%q) = %q: not absolute", loc, got)
		}
		if strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
			t.Fatalf("resolveLocation(%q) = %q: dot segments left", loc, got)
		}
	})
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}
