package core

import (
	"strings"
	"testing"
)

func TestMedia(t *testing.T) {
	src := &memSource{data: data(1000)}
	res, err, s := runScript(t, src, Options{Type: Media, ContentType: "image/png", Header: Header{"Authorization": "Bearer x"}}, []ex{
		{method: "POST", url: testURL + "&uploadType=media", n: 1000, status: 503},
		{method: "POST", url: testURL + "&uploadType=media", n: 1000, status: 200, body: `{"size":"1000"}`,
			check: func(t *testing.T, r *Request) {
				if r.Header.Get("content-type") != "image/png" || r.Header.Get("authorization") != "Bearer x" {
					t.Errorf("headers %v", r.Header)
				}
				if string(r.Body[0].(Bytes)) != string(src.data) {
					t.Error("body is not the source")
				}
			}},
	})
	s.done()
	if err != nil || string(res.Body) != `{"size":"1000"}` {
		t.Fatal(res, err)
	}
}

func TestMultipartBody(t *testing.T) {
	src := &memSource{data: []byte("hello\r\n--world")}
	_, err, s := runScript(t, src, Options{Type: Multipart, Method: "put", Metadata: []byte(`{"name":"a.txt"}`), ContentType: "text/plain"}, []ex{
		{method: "PUT", url: testURL + "&uploadType=multipart", n: -1, status: 200, check: func(t *testing.T, r *Request) {
			ct := r.Header.Get("Content-Type")
			b, ok := strings.CutPrefix(ct, "multipart/related; boundary=")
			if !ok || len(b) < 20 || len(b) > 70 {
				t.Fatalf("Content-Type %q", ct)
			}
			if len(r.Body) != 3 {
				t.Fatalf("%d pieces: the media must be a piece of its own", len(r.Body))
			}
			if _, isSrc := r.Body[1].(Bytes); !isSrc || string(r.Body[1].(Bytes)) != string(src.data) {
				t.Fatal("middle piece is not the source's bytes")
			}
			var all strings.Builder
			for _, p := range r.Body {
				all.Write(p.(Bytes))
			}
			want := "--" + b + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"a.txt\"}\r\n" +
				"--" + b + "\r\nContent-Type: text/plain\r\n\r\nhello\r\n--world\r\n--" + b + "--"
			if all.String() != want {
				t.Fatalf("body\n%q\nwant\n%q", all.String(), want)
			}
			if r.ContentLength() != int64(len(want)) {
				t.Fatal("content length")
			}
		}},
	})
	s.done()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSingleRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{404, CodeHTTP}, {410, CodeHTTP}, {400, CodeHTTP}, {401, CodeHTTP}, {308, CodeProtocol}} {
		_, err, s := runScript(t, &memSource{data: data(5)}, Options{Type: Media}, []ex{{method: "POST", n: 5, status: tc.status}})
		s.done()
		if Code(err) != tc.code {
			t.Errorf("status %d: code %q, want %q", tc.status, Code(err), tc.code)
		}
	}
}

func TestAutoPicksTheType(t *testing.T) {
	for _, tc := range []struct {
		size    int
		unknown bool
		meta    []byte
		session string
		want    Type
	}{
		{SmallSize, false, nil, "", Media},
		{SmallSize, false, []byte("{}"), "", Multipart},
		{SmallSize + 1, false, nil, "", Resumable},
		{10, true, nil, "", Resumable},
		{10, false, nil, testSession, Resumable},
	} {
		u, err := New(&script{t: t}, &memSource{data: make([]byte, tc.size), unknown: tc.unknown},
			Options{URL: testURL, Type: Auto, Metadata: tc.meta, SessionURL: tc.session, ChunkSize: ChunkAuto})
		if err != nil || u.Type() != tc.want {
			t.Errorf("size %d meta %q: %v %v, want %s", tc.size, tc.meta, u.Type(), err, tc.want)
		}
	}
}
