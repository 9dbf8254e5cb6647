package refserver

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const K = chunkAlign

type step struct {
	cr           string   // Content-Range, "" for none
	from, to     int      // body = data[from:to]
	body         []byte   // when not nil, the body instead
	hdr          []string // more request headers
	wantStatus   int
	wantRange    string // "" for no Range header
	wantOverride bool   // X-HTTP-Status-Code-Override: 308 expected
}

func cr(first, last int, total string) string {
	return fmt.Sprintf("bytes %d-%d/%s", first, last, total)
}

func TestResumableSequences(t *testing.T) {
	type tcase struct {
		name       string
		method     string // session start method
		size       int
		startHdr   []string
		rangeForm  string
		steps      []step
		wantObject bool // the stored object equals the data
	}
	tot := strconv.Itoa
	garbage := bytes.Repeat([]byte{0xEE}, K)
	cases := []tcase{
		{name: "whole file without content-range, POST session answers 201", method: "POST", size: 1000, wantObject: true,
			steps: []step{{from: 0, to: 1000, wantStatus: 201}}},
		{name: "PUT session answers 200", method: "PUT", size: 1000, wantObject: true,
			steps: []step{{cr: cr(0, 999, "1000"), from: 0, to: 1000, wantStatus: 200}}},
		{name: "aligned chunks with known total", method: "POST", size: 2*K + 100, wantObject: true,
			steps: []step{
				{cr: cr(0, K-1, tot(2*K+100)), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, 2*K-1, tot(2*K+100)), from: K, to: 2 * K, wantStatus: 308, wantRange: "bytes=0-524287"},
				{cr: cr(2*K, 2*K+99, tot(2*K+100)), from: 2 * K, to: 2*K + 100, wantStatus: 201},
			}},
		{name: "plain range form", method: "POST", size: K + 1, rangeForm: RangePlain, wantObject: true,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "0-262143"},
				{cr: "bytes */*", wantStatus: 308, wantRange: "0-262143"},
				{cr: cr(K, K, tot(K+1)), from: K, to: K + 1, wantStatus: 201},
			}},
		{name: "no Range header when nothing is stored", method: "POST", size: 10,
			steps: []step{
				{cr: "bytes */*", wantStatus: 308},
				{cr: "bytes */10", wantStatus: 308},
			}},
		{name: "misaligned non-final chunk is refused and stores nothing", method: "POST", size: 1000,
			steps: []step{
				{cr: cr(0, 99, "*"), from: 0, to: 100, wantStatus: 400},
				{cr: cr(0, 99, "1000"), from: 0, to: 100, wantStatus: 400},
				{cr: cr(0, K, "*"), body: testData(K + 1), wantStatus: 400},
				{cr: "bytes */*", wantStatus: 308},
			}},
		{name: "chunk starting past the stored offset is refused", method: "POST", size: 3 * K,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(2*K, 3*K-1, tot(3*K)), from: 2 * K, to: 3 * K, wantStatus: 400},
				{cr: "bytes */*", wantStatus: 308, wantRange: "bytes=0-262143"},
			}},
		{name: "overlapping bytes are stored once and compared with nothing", method: "POST", size: 3*K + 100, wantObject: true,
			steps: []step{
				{cr: cr(0, 2*K-1, "*"), from: 0, to: 2 * K, wantStatus: 308, wantRange: "bytes=0-524287"},
				// bytes K..2K-1 again, but different: skipped, not compared.
				{cr: cr(K, 3*K-1, "*"), body: append(append([]byte{}, garbage...), testData(3*K + 100)[2*K:3*K]...), wantStatus: 308, wantRange: "bytes=0-786431"},
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-786431"},
				{cr: cr(3*K, 3*K+99, tot(3*K+100)), from: 3 * K, to: 3*K + 100, wantStatus: 201},
			}},
		{name: "final chunk overlapping the stored bytes", method: "POST", size: K + 10, wantObject: true,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(0, K+9, tot(K+10)), from: 0, to: K + 10, wantStatus: 201},
			}},
		{name: "total conflicting with an earlier total", method: "POST", size: 2*K + 100,
			steps: []step{
				{cr: cr(0, K-1, tot(2*K+100)), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, 2*K-1, tot(2*K+101)), from: K, to: 2 * K, wantStatus: 400},
				{cr: "bytes */" + tot(2*K+99), wantStatus: 400},
				{cr: "bytes */*", wantStatus: 308, wantRange: "bytes=0-262143"},
			}},
		{name: "total conflicting with X-Upload-Content-Length", method: "POST", size: 2 * K, wantObject: true,
			startHdr: []string{"X-Upload-Content-Length: 524288"},
			steps: []step{
				{cr: cr(0, K-1, tot(2*K+1)), from: 0, to: K, wantStatus: 400},
				{cr: "bytes */1", wantStatus: 400},
				{cr: cr(0, K-1, tot(2*K)), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, 2*K-1, tot(2*K)), from: K, to: 2 * K, wantStatus: 201},
			}},
		{name: "stated total below the stored bytes", method: "POST", size: 2 * K,
			steps: []step{
				{cr: cr(0, 2*K-1, "*"), from: 0, to: 2 * K, wantStatus: 308, wantRange: "bytes=0-524287"},
				{cr: "bytes */1000", wantStatus: 400},
				{from: 0, to: 1000, wantStatus: 400},
			}},
		{name: "unknown length: star chunks, then the last states the total", method: "POST", size: 2*K + 50, wantObject: true,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, 2*K-1, "*"), from: K, to: 2 * K, wantStatus: 308, wantRange: "bytes=0-524287"},
				{cr: cr(2*K, 2*K+49, tot(2*K+50)), from: 2 * K, to: 2*K + 50, wantStatus: 201},
			}},
		{name: "unknown length finalized by the empty bytes */T", method: "POST", size: 2 * K, wantObject: true,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K, wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, 2*K-1, "*"), from: K, to: 2 * K, wantStatus: 308, wantRange: "bytes=0-524287"},
				{cr: "bytes */" + tot(2*K), wantStatus: 201},
				{cr: "bytes */*", wantStatus: 201},
			}},
		{name: "status query on a completed session answers again", method: "PUT", size: 100, wantObject: true,
			steps: []step{
				{from: 0, to: 100, wantStatus: 200},
				{cr: "bytes */100", wantStatus: 200},
				{cr: "bytes */*", wantStatus: 200},
				{cr: "bytes */101", wantStatus: 400},
			}},
		{name: "final chunk re-sent after completion answers again", method: "POST", size: 100, wantObject: true,
			steps: []step{
				{cr: cr(0, 99, "100"), from: 0, to: 100, wantStatus: 201},
				{cr: cr(0, 99, "100"), from: 0, to: 100, wantStatus: 201},
			}},
		{name: "X-GUploader-No-308 turns every 308 into 200 with the override", method: "POST", size: K + 5, wantObject: true,
			steps: []step{
				{cr: "bytes */*", hdr: []string{"X-GUploader-No-308: yes"}, wantStatus: 200, wantOverride: true},
				{cr: cr(0, K-1, "*"), from: 0, to: K, hdr: []string{"X-GUploader-No-308: yes"}, wantStatus: 200, wantRange: "bytes=0-262143", wantOverride: true},
				{cr: "bytes */*", wantStatus: 308, wantRange: "bytes=0-262143"},
				{cr: cr(K, K+4, tot(K+5)), from: K, to: K + 5, hdr: []string{"X-GUploader-No-308: yes"}, wantStatus: 201},
			}},
		{name: "status query with a body is refused", method: "POST", size: 10,
			steps: []step{{cr: "bytes */*", body: []byte("x"), wantStatus: 400}}},
		{name: "content-length disagreeing with the range is refused", method: "POST", size: 2 * K,
			steps: []step{
				{cr: cr(0, K-1, "*"), from: 0, to: K - 1, wantStatus: 400},
				{cr: cr(0, K-1, tot(2*K)), from: 0, to: K + 1, wantStatus: 400},
				{cr: "bytes */*", wantStatus: 308},
			}},
		{name: "malformed content-range is refused", method: "POST", size: 100,
			steps: []step{
				{cr: "bytes 0-99", from: 0, to: 100, wantStatus: 400},
				{cr: "bytes=0-99/100", from: 0, to: 100, wantStatus: 400},
				{cr: "bytes 5-4/100", body: []byte{}, wantStatus: 400},
				{cr: "bytes 0-100/100", from: 0, to: 100, wantStatus: 400},
				{cr: "bytes -1-98/100", from: 0, to: 100, wantStatus: 400},
				{cr: "bytes */-1", wantStatus: 400},
			}},
		{name: "empty file in one PUT without content-range", method: "POST", size: 0, wantObject: true,
			steps: []step{{body: []byte{}, wantStatus: 201}}},
		{name: "empty file finalized by bytes */0", method: "PUT", size: 0, wantObject: true,
			startHdr: []string{"X-Upload-Content-Length: 0"},
			steps:    []step{{cr: "bytes */0", wantStatus: 200}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Options{RangeForm: tc.rangeForm})
			data := testData(tc.size)
			loc := s.start(t, tc.method, "&name=obj", nil, tc.startHdr...)
			var final answer
			for i, st := range tc.steps {
				body := st.body
				if body == nil && st.to > st.from {
					body = data[st.from:st.to]
				}
				hdr := st.hdr
				if st.cr != "" {
					hdr = append(hdr, "Content-Range: "+st.cr)
				}
				a := s.do(t, "PUT", loc, body, hdr...)
				require.Equal(t, st.wantStatus, a.status, "step %d (%s): %s", i, st.cr, a.body)
				if a.status == 308 || st.wantOverride {
					assert.Equal(t, st.wantRange, a.header.Get("Range"), "step %d (%s): Range", i, st.cr)
					if st.wantRange == "" {
						assert.Empty(t, a.header.Values("Range"), "step %d: Range header present", i)
					}
				}
				override := a.header.Get("X-HTTP-Status-Code-Override")
				assert.Equal(t, st.wantOverride, override == "308", "step %d: X-HTTP-Status-Code-Override %q", i, override)
				if a.status == 200 || a.status == 201 {
					if !st.wantOverride {
						final = a
					}
				}
			}
			o, got, ok := s.Object("obj")
			if !tc.wantObject {
				require.False(t, ok, "object stored (%d bytes), want none", len(got))
				return
			}
			require.True(t, s.stored(t, "obj", data))
			assert.Equal(t, int64(tc.size), o.Size, "size")
			m := final.json(t)
			for k, v := range map[string]string{"size": strconv.Itoa(tc.size), "kind": "storage#object", "name": "obj", "bucket": "bkt"} {
				assert.Equal(t, v, m[k], "the final answer's %s: %v", k, m)
			}
		})
	}
}

func TestUnknownSession(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, hdr := range [][]string{{"Content-Range: bytes */*"}, {"Content-Range: bytes 0-9/10"}} {
		var body []byte
		if strings.Contains(hdr[0], "0-9") {
			body = make([]byte, 10)
		}
		a := s.do(t, "PUT", uploadPath+"?uploadType=resumable&upload_id=nope", body, hdr...)
		assert.Equal(t, http.StatusNotFound, a.status, "%v", hdr)
	}
}

func TestSessionRequestsArePUT(t *testing.T) {
	s := newTestServer(t, Options{})
	loc := s.start(t, "POST", "", nil)
	a := s.do(t, "POST", loc, []byte("abc"))
	assert.Equal(t, http.StatusMethodNotAllowed, a.status, "POST to a session URI")
}

func TestStart(t *testing.T) {
	s := newTestServer(t, Options{})
	meta := []byte(`{"name":"from-meta","contentType":"text/x-meta","metadata":{"k":"v"}}`)
	loc := s.start(t, "POST", "", meta, "X-Upload-Content-Type: text/plain", "X-Upload-Content-Length: 3")
	u, err := url.Parse(loc)
	require.NoError(t, err)
	assert.Equal(t, s.ts.URL, u.Scheme+"://"+u.Host, "Location %q: want it absolute", loc)
	assert.Equal(t, uploadPath, u.Path, "Location %q", loc)
	assert.NotEmpty(t, u.Query().Get("upload_id"), "Location %q: want an upload_id", loc)
	a := s.do(t, "PUT", loc, []byte("abc"))
	require.Equal(t, 201, a.status, "%s", a.body)
	m := a.json(t)
	assert.Equal(t, "from-meta", m["name"], "the metadata wins")
	assert.Equal(t, "text/x-meta", m["contentType"], "the metadata wins")
	md, _ := m["metadata"].(map[string]any)
	assert.Equal(t, "v", md["k"], "metadata %v, want the client's fields merged", m["metadata"])

	// The query's name wins over the metadata's; without metadata the
	// content type is X-Upload-Content-Type.
	loc = s.start(t, "POST", "&name=q%2Fname", nil, "X-Upload-Content-Type: image/png")
	m = s.do(t, "PUT", loc, []byte("png")).json(t)
	assert.Equal(t, "q/name", m["name"])
	assert.Equal(t, "image/png", m["contentType"])
	// No name at all: a generated one.
	loc = s.start(t, "POST", "", nil)
	m = s.do(t, "PUT", loc, []byte("x")).json(t)
	assert.NotEmpty(t, m["name"], "no generated name: %v", m)

	bad := []struct {
		name string
		body []byte
		hdr  []string
	}{
		{"bad X-Upload-Content-Length", nil, []string{"X-Upload-Content-Length: -5"}},
		{"metadata not JSON", []byte("{nope"), []string{"Content-Type: application/json"}},
		{"metadata not an object", []byte("[1]"), []string{"Content-Type: application/json"}},
		{"metadata not sent as JSON", []byte(`{"name":"x"}`), []string{"Content-Type: text/plain"}},
	}
	for _, b := range bad {
		a := s.do(t, "POST", uploadPath+"?uploadType=resumable", b.body, b.hdr...)
		assert.Equal(t, 400, a.status, b.name)
	}
	a = s.do(t, "POST", uploadPath, []byte("x"))
	assert.Equal(t, 400, a.status, "no uploadType")
}

func TestSessionOrigin(t *testing.T) {
	s := newTestServer(t, Options{SessionOrigin: "http://127.0.0.1:9"})
	loc := s.start(t, "POST", "", nil)
	assert.True(t, strings.HasPrefix(loc, "http://127.0.0.1:9/upload/"), "Location %q, want it on the configured origin", loc)
	s.SetSessionOrigin("")
	loc = s.start(t, "POST", "", nil)
	assert.True(t, strings.HasPrefix(loc, s.ts.URL+"/upload/"), "Location %q, want it on the request's origin", loc)
}

func sums(data []byte) (md5b64, crcb64 string) {
	m := md5.Sum(data)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	return base64.StdEncoding.EncodeToString(m[:]), base64.StdEncoding.EncodeToString(c[:])
}

func multipartBody(boundary, meta, mediaType string, media []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n%s\r\n", boundary, meta)
	fmt.Fprintf(&b, "--%s\r\nContent-Type: %s\r\n\r\n", boundary, mediaType)
	b.Write(media)
	fmt.Fprintf(&b, "\r\n--%s--\r\n", boundary)
	return b.Bytes()
}

func TestChecksums(t *testing.T) {
	// GCS's values for the empty object.
	m, c := sums(nil)
	require.Equal(t, "1B2M2Y8AsgTpgAmY7PhCfg==", m, "helper sums of nothing: md5")
	require.Equal(t, "AAAAAA==", c, "helper sums of nothing: crc32c")
	data := testData(K + 1234)
	wantMD5, wantCRC := sums(data)
	s := newTestServer(t, Options{})
	answers := map[string]answer{
		"media": s.do(t, "POST", uploadPath+"?uploadType=media&name=m", data, "Content-Type: application/octet-stream"),
		"multipart": s.do(t, "POST", uploadPath+"?uploadType=multipart", multipartBody("BND", `{"name":"mp"}`, "text/plain", data),
			"Content-Type: multipart/related; boundary=BND"),
	}
	total := strconv.Itoa(len(data))
	loc := s.start(t, "POST", "&name=r", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	answers["resumable"] = s.do(t, "PUT", loc, data[K:], "Content-Range: "+cr(K, len(data)-1, total))
	// The checksums are made as the bytes arrive: in one PUT, and with bytes sent again (the
	// second PUT starts before the stored end, so its hash so far does not count).
	loc = s.start(t, "POST", "&name=r1", nil)
	answers["resumable, one PUT"] = s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, total))
	loc = s.start(t, "POST", "&name=r2", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	answers["resumable, sent again"] = s.do(t, "PUT", loc, data, "Content-Range: "+cr(0, len(data)-1, total))
	for kind, a := range answers {
		m := a.json(t)
		assert.Equal(t, wantMD5, m["md5Hash"], kind)
		assert.Equal(t, wantCRC, m["crc32c"], kind)
		assert.Equal(t, strconv.Itoa(len(data)), m["size"], kind)
	}
	for _, name := range []string{"m", "mp", "r", "r1", "r2"} {
		s.stored(t, name, data)
	}
}

func TestGoogHash(t *testing.T) {
	data := testData(K + 10)
	md5b, crcb := sums(data)
	good := "X-Goog-Hash: crc32c=" + crcb + ",md5=" + md5b
	_, badCRC := sums([]byte("other"))
	bad := "X-Goog-Hash: crc32c=" + badCRC + ",md5=" + md5b
	s := newTestServer(t, Options{})
	mp := multipartBody("b1", `{}`, "text/plain", data)
	mpType := "Content-Type: multipart/related; boundary=b1"

	a := s.do(t, "POST", uploadPath+"?uploadType=media&name=m1", data, bad)
	assert.Equal(t, 400, a.status, "media with a wrong hash")
	a = s.do(t, "POST", uploadPath+"?uploadType=multipart&name=p1", mp, mpType, "X-Goog-Hash: md5=AAAAAAAAAAAAAAAAAAAAAA==")
	assert.Equal(t, 400, a.status, "multipart with a wrong hash")
	a = s.do(t, "POST", uploadPath+"?uploadType=media&name=m2", data, good)
	assert.Equal(t, 200, a.status, "media with the right hash")
	a = s.do(t, "POST", uploadPath+"?uploadType=multipart&name=p2", mp, mpType, good)
	assert.Equal(t, 200, a.status, "multipart with the right hash")
	a = s.do(t, "POST", uploadPath+"?uploadType=media&name=m3", data, "X-Goog-Hash: crc32c")
	assert.Equal(t, 400, a.status, "malformed hash")
	// The JSON API takes a multipart upload's hashes in its metadata, and refuses in Cloud
	// Storage's words (docs/protocol.md section 9).
	wrongMeta := multipartBody("b1", `{"crc32c":"`+badCRC+`"}`, "text/plain", data)
	a = s.do(t, "POST", uploadPath+"?uploadType=multipart&name=p3", wrongMeta, mpType)
	assert.Equal(t, 400, a.status, "multipart with a wrong crc32c in its metadata")
	assert.Contains(t, string(a.body), `Provided CRC32C \"`+badCRC+`\" doesn't match calculated CRC32C \"`+crcb+`\".`, "multipart with a wrong crc32c in its metadata")
	rightMeta := multipartBody("b1", `{"crc32c":"`+crcb+`","md5Hash":"`+md5b+`"}`, "text/plain", data)
	a = s.do(t, "POST", uploadPath+"?uploadType=multipart&name=p4", rightMeta, mpType)
	assert.Equal(t, 200, a.status, "multipart with the right hashes in its metadata: %s", a.body)
	a = s.do(t, "POST", uploadPath+"?uploadType=media&name=m4", data, "X-Goog-Hash: md5="+badCRC+"AAAAAAAAAAAAAA")
	assert.Equal(t, 400, a.status, "media with a wrong md5")
	assert.Contains(t, string(a.body), "doesn't match calculated MD5 hash", "media with a wrong md5")

	loc := s.start(t, "POST", "&name=r1", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"), bad) // not final: not checked
	last := "Content-Range: " + cr(K, len(data)-1, strconv.Itoa(len(data)))
	a = s.do(t, "PUT", loc, data[K:], last, bad)
	assert.Equal(t, 400, a.status, "final chunk with a wrong hash")
	a = s.do(t, "PUT", loc, nil, "Content-Range: bytes */*")
	assert.Equal(t, 308, a.status, "after the refused final chunk")
	assert.Equal(t, "bytes=0-262143", a.header.Get("Range"), "after the refused final chunk")
	a = s.do(t, "PUT", loc, data[K:], last, good)
	assert.Equal(t, 201, a.status, "final chunk with the right hash")
	// bytes */T that completes the object checks the hash too.
	loc = s.start(t, "POST", "&name=r2", nil)
	s.do(t, "PUT", loc, data[:K], "Content-Range: "+cr(0, K-1, "*"))
	md5k, crck := sums(data[:K])
	a = s.do(t, "PUT", loc, nil, "Content-Range: bytes */262144", "X-Goog-Hash: md5="+md5b)
	assert.Equal(t, 400, a.status, "finalizing query with a wrong hash")
	a = s.do(t, "PUT", loc, nil, "Content-Range: bytes */262144", "X-Goog-Hash: md5="+md5k+",crc32c="+crck)
	assert.Equal(t, 201, a.status, "finalizing query with the right hash")

	var names []string
	for _, o := range s.Objects() {
		names = append(names, o.Name)
	}
	assert.ElementsMatch(t, []string{"m2", "p2", "p4", "r1", "r2"}, names, "stored objects (none with a wrong hash)")
}

func TestMultipart(t *testing.T) {
	s := newTestServer(t, Options{})
	media := []byte("hello, multipart")
	a := s.do(t, "POST", uploadPath+"?uploadType=multipart", multipartBody("xyz", `{"name":"mp.txt","metadata":{"a":"b"}}`, "text/plain", media),
		"Content-Type: multipart/related; boundary=xyz")
	require.Equal(t, 200, a.status, "%s", a.body)
	m := a.json(t)
	assert.Equal(t, "mp.txt", m["name"], "answer %v", m)
	assert.Equal(t, "text/plain", m["contentType"], "answer %v", m)
	assert.Equal(t, strconv.Itoa(len(media)), m["size"], "answer %v", m)
	_, got, _ := s.Object("mp.txt")
	assert.Equal(t, string(media), string(got), "stored")

	onePart := []byte("--B\r\nContent-Type: application/json\r\n\r\n{}\r\n--B--\r\n")
	threeParts := []byte("--B\r\nContent-Type: application/json\r\n\r\n{}\r\n--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B\r\nContent-Type: text/plain\r\n\r\ny\r\n--B--\r\n")
	unclosed := []byte("--B\r\nContent-Type: application/json\r\n\r\n{}\r\n--B\r\nContent-Type: text/plain\r\n\r\nxyz")
	noMediaType := []byte("--B\r\nContent-Type: application/json\r\n\r\n{}\r\n--B\r\n\r\nx\r\n--B--\r\n")
	metaNotJSON := []byte("--B\r\nContent-Type: text/plain\r\n\r\n{}\r\n--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n")
	badJSON := multipartBody("B", `{"name":`, "text/plain", []byte("x"))
	good := multipartBody("B", `{}`, "text/plain", []byte("x"))
	cases := []struct {
		name, ct string
		body     []byte
	}{
		{"one part", "multipart/related; boundary=B", onePart},
		{"three parts", "multipart/related; boundary=B", threeParts},
		{"no closing boundary", "multipart/related; boundary=B", unclosed},
		{"media part without content-type", "multipart/related; boundary=B", noMediaType},
		{"metadata part not JSON", "multipart/related; boundary=B", metaNotJSON},
		{"metadata not valid JSON", "multipart/related; boundary=B", badJSON},
		{"no boundary", "multipart/related", good},
		{"not multipart/related", "multipart/form-data; boundary=B", good},
		{"wrong boundary", "multipart/related; boundary=C", good},
	}
	for _, c := range cases {
		a := s.do(t, "POST", uploadPath+"?uploadType=multipart&name=bad", c.body, "Content-Type: "+c.ct)
		assert.Equal(t, 400, a.status, c.name)
	}
	_, _, ok := s.Object("bad")
	assert.False(t, ok, "a malformed multipart upload was stored")
}

func TestMedia(t *testing.T) {
	s := newTestServer(t, Options{})
	a := s.do(t, "PUT", uploadPath+"?uploadType=media&name=pic", []byte("PNG"), "Content-Type: image/png")
	if assert.Equal(t, 200, a.status, "%s", a.body) {
		m := a.json(t)
		assert.Equal(t, "image/png", m["contentType"], "answer %v", m)
		assert.Equal(t, "3", m["size"], "answer %v", m)
	}
	a = s.do(t, "GET", uploadPath+"?uploadType=media", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, a.status, "GET")
}

func TestContentLengthHeaderDisagrees(t *testing.T) {
	// A client that lies in Content-Length, which net/http clients cannot.
	s := New(Options{})
	w := serve(s, httptestRequest("POST", uploadPath+"?uploadType=resumable", nil))
	loc := w.Header().Get("Location")
	r := httptestRequest("PUT", loc, make([]byte, K))
	r.Header.Set("Content-Range", cr(0, K-1, "*"))
	r.ContentLength = K + 1
	assert.Equal(t, 400, serve(s, r).Code)
}

// A chunk overtaken while it was read: another request stored the same range first (with other
// bytes), so the stored object keeps those and the rest of this chunk, and its checksums are
// of that, not of this chunk's bytes hashed as they came.
func TestChecksumsOfAnOvertakenChunk(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2 * K)
	other := bytes.Repeat([]byte{0xee}, K) // the first K bytes as the other request sent them
	loc := s.start(t, "POST", "&name=o", nil)

	pr, pw := io.Pipe()
	done := make(chan answer, 1)
	go func() {
		a, err := s.send("PUT", loc, pr, int64(len(data)), "Content-Range: "+cr(0, len(data)-1, strconv.Itoa(len(data))))
		if err != nil {
			a = answer{status: -1, body: []byte(err.Error())}
		}
		done <- a
	}()
	// Once the server has logged the chunk and taken some of its body, it is reading it: the
	// other request comes now.
	_, err := pw.Write(data[:1000])
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		log := s.Log()
		return len(log) == 2 && log[1].Kind == KindChunk
	}, 5*time.Second, time.Millisecond, "the chunk did not reach the server")
	time.Sleep(20 * time.Millisecond)
	a := s.do(t, "PUT", loc, other, "Content-Range: "+cr(0, K-1, "*"))
	require.Equal(t, 308, a.status, "the overtaking chunk: %s", a.body)
	_, err = pw.Write(data[1000:])
	require.NoError(t, err)
	pw.Close()
	a = <-done
	require.Equal(t, 201, a.status, "the overtaken chunk: %s", a.body)
	want := append(append([]byte{}, other...), data[K:]...)
	m, _ := sums(want)
	assert.Equal(t, m, a.json(t)["md5Hash"], "want the stored bytes'")
	s.stored(t, "o", want)
}
