package refserver

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"hash/crc32"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signedURL is a V4-signed-looking URL for the XML API's resumable start of /bkt/NAME, dated
// at, valid for expires seconds, with the headers signed.
func signedURL(name string, at time.Time, expires int, signed string) string {
	q := url.Values{}
	q.Set("X-Goog-Algorithm", "GOOG4-RSA-SHA256")
	q.Set("X-Goog-Credential", "uploader@p.iam.gserviceaccount.com/"+at.UTC().Format("20060102")+"/auto/storage/goog4_request")
	q.Set("X-Goog-Date", at.UTC().Format("20060102T150405Z"))
	q.Set("X-Goog-Expires", "900")
	if expires != 0 {
		q.Set("X-Goog-Expires", strconv.Itoa(expires))
	}
	q.Set("X-Goog-SignedHeaders", signed)
	q.Set("X-Goog-Signature", "0123456789abcdef")
	return "/bkt/" + url.PathEscape(name) + "?" + q.Encode()
}

// xmlErr reads the XML API's error answer.
func xmlErr(t *testing.T, a answer) (code, message string) {
	t.Helper()
	var e struct{ Code, Message string }
	require.NoError(t, xml.Unmarshal(a.body, &e), "not the XML API's error: %s", a.body)
	assert.Equal(t, "application/xml; charset=UTF-8", a.header.Get("Content-Type"))
	return e.Code, e.Message
}

func TestXMLResumableUpload(t *testing.T) {
	s := newTestServer(t, Options{})
	data := testData(2*chunkAlign + 100)
	start := signedURL("clip 1.bin", time.Now(), 0, "content-type;host;x-goog-meta-owner;x-goog-resumable")
	a := s.do(t, "POST", start, nil, "X-Goog-Resumable: start", "Content-Type: video/webm", "X-Goog-Meta-Owner: u1")
	require.Equal(t, http.StatusCreated, a.status, "%s", a.body)
	loc := a.header.Get("Location")
	// The session URI is the signed URL with upload_id added, as Cloud Storage answers it.
	require.True(t, strings.HasPrefix(loc, s.ts.URL+start+"&upload_id="), loc)

	a = s.do(t, "PUT", loc, data[:chunkAlign], "Content-Range: bytes 0-262143/524388", "X-GUploader-No-308: yes")
	assert.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, "308", a.header.Get("X-HTTP-Status-Code-Override"))
	assert.Equal(t, "bytes=0-262143", a.header.Get("Range"))
	a = s.do(t, "PUT", loc, data[chunkAlign:2*chunkAlign], "Content-Range: bytes 262144-524287/524388")
	assert.Equal(t, http.StatusPermanentRedirect, a.status)

	// A hash that does not match: BadDigest, and the session as it was.
	a = s.do(t, "PUT", loc, data[2*chunkAlign:], "Content-Range: bytes 524288-524387/524388", "X-Goog-Hash: crc32c=AAAAAA==")
	require.Equal(t, http.StatusBadRequest, a.status)
	code, msg := xmlErr(t, a)
	assert.Equal(t, "BadDigest", code)
	assert.Contains(t, msg, "CRC32C")

	crc := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	crcB64 := base64.StdEncoding.EncodeToString([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	md := md5.Sum(data)
	a = s.do(t, "PUT", loc, data[2*chunkAlign:], "Content-Range: bytes 524288-524387/524388", "X-Goog-Hash: crc32c="+crcB64)
	// The XML API's final answer: 200 (the start was a POST all the same), no body.
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Empty(t, a.body)
	assert.Equal(t, "crc32c="+crcB64+",md5="+base64.StdEncoding.EncodeToString(md[:]), a.header.Get("X-Goog-Hash"))
	assert.Equal(t, `"`+hex.EncodeToString(md[:])+`"`, a.header.Get("ETag"))

	o, stored, ok := s.Object("clip 1.bin")
	require.True(t, ok)
	assert.Equal(t, data, stored)
	assert.Equal(t, "bkt", o.Bucket)
	assert.Equal(t, "video/webm", o.ContentType)
	assert.JSONEq(t, `{"metadata":{"owner":"u1"}}`, string(o.MetadataJSON))

	// Asked again, the finished session answers the same.
	a = s.do(t, "PUT", loc, nil, "Content-Range: bytes */524388")
	assert.Equal(t, http.StatusOK, a.status)
	assert.Empty(t, a.body)

	kinds := []string{}
	for _, e := range s.Log() {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []string{KindStart, KindChunk, KindChunk, KindChunk, KindChunk, KindQuery}, kinds)
}

// Every refusal of a start is the XML API's error, and starts no session.
func TestXMLStartRefusals(t *testing.T) {
	now := time.Now()
	ok := signedURL("o", now, 0, "host;x-goog-resumable")
	drop := func(param string) string {
		u, _ := url.Parse(ok)
		q := u.Query()
		q.Del(param)
		return u.Path + "?" + q.Encode()
	}
	set := func(param, value string) string {
		u, _ := url.Parse(ok)
		q := u.Query()
		q.Set(param, value)
		return u.Path + "?" + q.Encode()
	}
	for _, tc := range []struct {
		name, method, url string
		body              []byte
		hdr               []string
		status            int
		code, says        string
	}{
		{"not POST", "PUT", ok, nil, []string{"X-Goog-Resumable: start"}, 405, "MethodNotAllowed", "starts with POST"},
		{"no x-goog-resumable", "POST", ok, nil, nil, 400, "InvalidArgument", `x-goog-resumable must be "start"`},
		{"x-goog-resumable not start", "POST", ok, nil, []string{"X-Goog-Resumable: stop"}, 400, "InvalidArgument", `not "stop"`},
		{"a body", "POST", ok, []byte("{}"), []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "empty body"},
		{"no signature", "POST", drop("X-Goog-Signature"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "lacks X-Goog-Signature"},
		{"no credential", "POST", drop("X-Goog-Credential"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "lacks X-Goog-Credential"},
		{"a V2 algorithm", "POST", set("X-Goog-Algorithm", "GOOG2"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "X-Goog-Algorithm"},
		{"a bad date", "POST", set("X-Goog-Date", "yesterday"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "X-Goog-Date"},
		{"a credential of another day", "POST", set("X-Goog-Credential", "a/19990101/auto/storage/goog4_request"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "X-Goog-Credential"},
		{"expired", "POST", signedURL("o", now.Add(-time.Hour), 60, "host;x-goog-resumable"), nil, []string{"X-Goog-Resumable: start"}, 400, "ExpiredToken", "expired"},
		{"a week and more", "POST", set("X-Goog-Expires", "604801"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "X-Goog-Expires"},
		{"a signature not hex", "POST", set("X-Goog-Signature", "XYZ"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "hex"},
		{"host not signed", "POST", set("X-Goog-SignedHeaders", "x-goog-resumable"), nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "lacks host"},
		{"a signed header not sent", "POST", set("X-Goog-SignedHeaders", "content-type;host;x-goog-resumable"), nil, []string{"X-Goog-Resumable: start"}, 403, "SignatureDoesNotMatch", "content-type was not sent"},
		{"no object", "POST", "/bkt?" + strings.SplitN(ok, "?", 2)[1], nil, []string{"X-Goog-Resumable: start"}, 400, "InvalidArgument", "names no object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Options{})
			a := s.do(t, tc.method, tc.url, tc.body, tc.hdr...)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			code, msg := xmlErr(t, a)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, msg, tc.says)
			assert.Empty(t, a.header.Get("Location"))
			s.mu.Lock()
			assert.Empty(t, s.sessions, "no session started")
			s.mu.Unlock()
		})
	}
}

// An XML API session's unknown id and its faults answer in XML too; its start is a "start" for
// the fault rules.
func TestXMLSessionErrorsAndFaults(t *testing.T) {
	s := newTestServer(t, Options{})
	a := s.do(t, "PUT", signedURL("o", time.Now(), 0, "host")+"&upload_id=nope", []byte("x"), "Content-Range: bytes 0-0/1")
	require.Equal(t, http.StatusNotFound, a.status)
	code, _ := xmlErr(t, a)
	assert.Equal(t, "NoSuchUpload", code)

	s.faults(t, Rule{On: KindStart, Action: ActionStatus, Status: 503}, Rule{On: KindChunk, Action: ActionGone})
	start := signedURL("o", time.Now(), 0, "host;x-goog-resumable")
	a = s.do(t, "POST", start, nil, "X-Goog-Resumable: start")
	require.Equal(t, http.StatusServiceUnavailable, a.status)
	code, _ = xmlErr(t, a)
	assert.Equal(t, "ServiceUnavailable", code)
	a = s.do(t, "POST", start, nil, "X-Goog-Resumable: start")
	require.Equal(t, http.StatusCreated, a.status)
	a = s.do(t, "PUT", a.header.Get("Location"), []byte("x"), "Content-Range: bytes 0-0/1")
	require.Equal(t, http.StatusGone, a.status)
	code, _ = xmlErr(t, a)
	assert.Equal(t, "Gone", code)

	// The redirect fault's target stays an unknown path.
	a = s.do(t, "PUT", "/redirected"+start+"&upload_id=x", []byte("x"), "Content-Range: bytes 0-0/1")
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Contains(t, string(a.body), "not an upload path")
}
