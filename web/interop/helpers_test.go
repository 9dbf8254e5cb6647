package interop

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/core"
	"github.com/mediaupload/mediaupload/core/httptransport"
	"github.com/mediaupload/mediaupload/web/refserver"

	"github.com/stretchr/testify/require"
)

const K256 = 262144

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 99))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5b64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// quick is a retry policy with the protocol's shape but millisecond waits, so fault tests
// run fast; the wait figures themselves are tested in core with testing/synctest.
func quick() *core.RetryPolicy {
	return &core.RetryPolicy{Retries: 8, InitialDelay: core.Millisecond, MaxDelay: 20 * core.Millisecond,
		Jitter: core.Millisecond, ThrottleRetries: 10, NewSessions: 5}
}

// refServer starts the strict reference server on 127.0.0.1.
func refServer(t *testing.T, o refserver.Options) (*refserver.Server, string) {
	t.Helper()
	s := refserver.New(o)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// upload runs one upload of data (or of src, when given) through the native transport.
func upload(t *testing.T, url string, data []byte, o core.Options, src core.Source) (*core.Result, error) {
	t.Helper()
	if src == nil {
		src = httptransport.ReaderAt(bytes.NewReader(data), int64(len(data)))
	}
	o.URL = url
	if o.Retry == nil {
		o.Retry = quick()
	}
	u, err := core.New(&httptransport.Transport{}, src, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return u.Run(ctx)
}

// stored checks that the reference server holds name with exactly want's bytes.
func stored(t *testing.T, s *refserver.Server, name string, want []byte) {
	t.Helper()
	obj, got, ok := s.Object(name)
	require.True(t, ok, "object %q not stored", name)
	require.Equal(t, md5b64(want), md5b64(got), "object %q: the md5 of its %d bytes (want %d)", name, len(got), len(want))
	require.Equal(t, md5b64(want), obj.MD5Hash, "object %q: the md5 the server says", name)
	require.Equal(t, int64(len(want)), obj.Size, "object %q: the size the server says", name)
}
