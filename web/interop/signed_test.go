package interop

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/mediaupload/mediaupload/core"
	"github.com/mediaupload/mediaupload/core/httptransport"
	"github.com/mediaupload/mediaupload/web/refserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// v4Query is the query of a URL signed for the XML API's resumable start (V4 signing, now,
// for 15 minutes): every parameter there and well formed; the servers here check no signature.
func v4Query(signedHeaders string) string {
	now := time.Now().UTC()
	q := url.Values{}
	q.Set("X-Goog-Algorithm", "GOOG4-RSA-SHA256")
	q.Set("X-Goog-Credential", "uploader@app.iam.gserviceaccount.com/"+now.Format("20060102")+"/auto/storage/goog4_request")
	q.Set("X-Goog-Date", now.Format("20060102T150405Z"))
	q.Set("X-Goog-Expires", "900")
	q.Set("X-Goog-SignedHeaders", signedHeaders)
	q.Set("X-Goog-Signature", strings.Repeat("5ca1ab1e", 32))
	return q.Encode()
}

// uploadSigned uploads data through the native transport, its session started from signed
// (the backend's answer, with header), and returns the result.
func uploadSigned(t *testing.T, signed string, header core.Header, data []byte, o core.Options) (*core.Result, error) {
	t.Helper()
	o.Session = func(core.Context, core.SessionInfo) (core.SessionAnswer, error) {
		return core.SessionAnswer{SignedURL: signed, Header: header}, nil
	}
	if o.Retry == nil {
		o.Retry = quick()
	}
	u, err := core.New(&httptransport.Transport{}, httptransport.ReaderAt(bytes.NewReader(data), int64(len(data))), o)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return u.Run(ctx)
}

// The XML API's session, started from a signed URL by core over net/http against the reference
// server: byte-exact, its final answer (200, no body) taken as it is, the default CRC32C stated
// and a changed byte refused (BadDigest: checksum_mismatch).
func TestSignedURLReferenceServer(t *testing.T) {
	s, base := refServer(t, refserver.Options{})
	data := randomBytes(71, 2*K256+9)
	signed := base + "/bkt/signed.bin?" + v4Query("content-type;host;x-goog-resumable")
	res, err := uploadSigned(t, signed, core.Header{"content-type": "image/png"}, data, core.Options{ChunkSize: K256, Checksum: core.ChecksumAuto, NoRedirect308: true})
	require.NoError(t, err, core.Code(err))
	assert.Equal(t, 200, res.Status)
	assert.Empty(t, res.Body)
	stored(t, s, "signed.bin", data)
	o, _, _ := s.Object("signed.bin")
	assert.Equal(t, "image/png", o.ContentType)
	log := s.Log()
	require.NotEmpty(t, log)
	assert.Contains(t, log[len(log)-1].GoogHash, "crc32c=")

	require.NoError(t, s.SetFaults(refserver.Faults{Rules: []refserver.Rule{{On: refserver.KindChunk, Action: refserver.ActionCorrupt, Skip: 2}}}))
	_, err = uploadSigned(t, base+"/bkt/bad.bin?"+v4Query("host;x-goog-resumable"), nil, data, core.Options{ChunkSize: K256, Checksum: core.ChecksumAuto})
	assert.Equal(t, core.CodeChecksum, core.Code(err), "%v", err)
	_, _, ok := s.Object("bad.bin")
	assert.False(t, ok)
}

// fake-gcs-server 1.56.1's own signed-URL start, on its XML path (/BUCKET/OBJECT, matched on its
// public host only): it takes a POST whose query carries X-Goog-Algorithm as a resumable start,
// checking neither the signature nor x-goog-resumable, and answers 200 (not 201) with a JSON API
// session URI; its final answer is the JSON API's. It names the object from the query's name
// (or a JSON body's), not from the path: a signed URL of the path alone makes an object whose
// name is empty.
func TestSignedURLFakeGCS(t *testing.T) {
	// The public host is the listener's, so that the XML path is routed (fakestorage matches
	// it on the host without its port).
	fs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", PublicHost: "127.0.0.1"})
	require.NoError(t, err)
	fs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "bkt"})
	ts := httptest.NewServer(fs.HTTPHandler())
	t.Cleanup(ts.Close)

	data := randomBytes(72, K256+3)
	var loc string
	opts := core.Options{ChunkSize: K256, Checksum: core.ChecksumAuto, OnSession: func(u string) { loc = u }}
	res, err := uploadSigned(t, ts.URL+"/bkt/from-path.bin?name=from-query.bin&"+v4Query("host;x-goog-resumable"), nil, data, opts)
	require.NoError(t, err, core.Code(err))
	assert.Equal(t, 200, res.Status)
	assert.Contains(t, loc, "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=from-query.bin&upload_id=", "a JSON API session URI")
	assert.Contains(t, string(res.Body), `"name":"from-query.bin"`, "its final answer is JSON, and compared (crc32c)")
	obj, err := fs.GetObject("bkt", "from-query.bin")
	require.NoError(t, err)
	assert.Equal(t, md5b64(data), md5b64(obj.Content))
	_, err = fs.GetObject("bkt", "from-path.bin")
	assert.Error(t, err, "the path's name is not the object's")

	// The path alone: an object of no name.
	_, err = uploadSigned(t, ts.URL+"/bkt/path-only.bin?"+v4Query("host;x-goog-resumable"), nil, data, core.Options{ChunkSize: K256})
	require.NoError(t, err)
	obj, err = fs.GetObject("bkt", "")
	require.NoError(t, err, "stored under an empty name")
	assert.Equal(t, md5b64(data), md5b64(obj.Content))
}
