package interop

import (
	"net/http/httptest"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/mediaupload/mediaupload/core"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGCS starts fake-gcs-server 1.56.1 on 127.0.0.1 with one bucket.
func fakeGCS(t *testing.T) (*fakestorage.Server, string) {
	t.Helper()
	fs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http"})
	require.NoError(t, err)
	fs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "bkt"})
	ts := httptest.NewServer(fs.HTTPHandler())
	t.Cleanup(ts.Close)
	return fs, ts.URL
}

// The straight path against an independent implementation (docs/protocol.md section 7): it stores
// every chunk it gets without checking offsets and finishes on a status query, so only the
// paths without faults and without status queries are compared here.
func TestFakeGCS(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		unknown bool
		opts    core.Options
	}{
		{name: "media", size: 100000, opts: core.Options{Type: core.Media}},
		{name: "multipart", size: 300000, opts: core.Options{Type: core.Multipart, Metadata: []byte(`{"name":"multipart","contentType":"text/plain"}`)}},
		{name: "resumable whole", size: 3*K256 + 3, opts: core.Options{ChunkSize: 0}},
		{name: "resumable chunks", size: 3*K256 + 3, opts: core.Options{ChunkSize: K256}},
		{name: "resumable chunks, exact multiple", size: 4 * K256, opts: core.Options{ChunkSize: 2 * K256}},
		{name: "resumable with metadata", size: K256 + 1, opts: core.Options{ChunkSize: K256, Metadata: []byte(`{"name":"resumable with metadata"}`)}},
		{name: "unknown length", size: 2*K256 + 7, unknown: true, opts: core.Options{ChunkSize: K256}},
		{name: "unknown length on a chunk boundary", size: 2 * K256, unknown: true, opts: core.Options{ChunkSize: K256}},
		{name: "no-308 header", size: 3 * K256, opts: core.Options{ChunkSize: K256, NoRedirect308: true}},
		{name: "auto picks media", size: 1000, opts: core.Options{Type: core.Auto}},
		{name: "checksums compared", size: 2*K256 + 1, opts: core.Options{ChunkSize: K256, Checksum: core.Both}},
		{name: "checksums compared, multipart", size: 1000, opts: core.Options{Type: core.Multipart, Checksum: core.Both, Metadata: []byte(`{"name":"checksums compared, multipart"}`)}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, base := fakeGCS(t)
			data := randomBytes(uint64(100+i), tt.size)
			var src core.Source
			if tt.unknown {
				src = &hiddenSize{data}
			}
			requests := 0
			tt.opts.OnRequest = func(core.RequestInfo) { requests++ }
			res, err := upload(t, base+"/upload/storage/v1/b/bkt/o?name="+urlName(tt.name), data, tt.opts, src)
			require.NoError(t, err, core.Code(err))
			assert.Equal(t, 200, res.Status)
			obj, err := fs.GetObject("bkt", tt.name)
			require.NoError(t, err)
			require.Equal(t, md5b64(data), md5b64(obj.Content), "the md5 of the %d bytes stored (want %d)", len(obj.Content), len(data))
			require.Equal(t, md5b64(data), obj.Md5Hash, "the md5 fake-gcs-server says")
			if tt.opts.ChunkSize == K256 && !tt.unknown {
				assert.Equal(t, 1+(tt.size+K256-1)/K256, requests, "requests")
			}
		})
	}
}

func urlName(s string) string {
	b := []byte{}
	for _, c := range []byte(s) {
		switch {
		case c == ' ':
			b = append(b, "%20"...)
		case c == ',':
			b = append(b, "%2C"...)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// hiddenSize is a source whose size is not known in advance.
type hiddenSize struct{ data []byte }

func (h *hiddenSize) Size() int64 { return -1 }

func (h *hiddenSize) Slice(start, end int64) (core.Piece, error) {
	end = min(end, int64(len(h.data)))
	start = min(start, end)
	return core.Bytes(h.data[start:end]), nil
}
