package interop

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mediaupload/mediaupload/core"
	"github.com/mediaupload/mediaupload/web/refserver"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Uploads of random sizes (0 to 8 MiB, a quarter of them exact multiples of 256 KiB) in random
// ways, through the reference server's seeded random faults on 15 % of requests: none lost,
// none corrupt.
func TestSoak(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 20
	}
	s, base := refServer(t, refserver.Options{})
	require.NoError(t, s.SetFaults(refserver.Faults{Random: &refserver.Random{Seed: 20261122, Rate: 0.15}}))
	r := rand.New(rand.NewPCG(1, 2))
	chunkSizes := []int64{K256, 2 * K256, 4 * K256, 0}
	types := []core.Type{core.Resumable, core.Resumable, core.Resumable, core.Media, core.Multipart, core.Auto}
	var retries, faults, boundary int
	for i := range n {
		size := r.IntN(8<<20 + 1)
		if i%4 == 0 {
			size = r.IntN(33) * K256 // 0 to 8 MiB in whole chunks
			boundary++
		}
		data := randomBytes(uint64(i), size)
		name := "soak-" + strconv.Itoa(i)
		o := core.Options{ChunkSize: chunkSizes[r.IntN(len(chunkSizes))], Type: types[r.IntN(len(types))],
			NoRedirect308: r.IntN(2) == 0, QueryStatusEachChunk: r.IntN(5) == 0,
			OnRetry: func(core.RetryInfo) { retries++ }}
		if o.Type == core.Multipart || (o.Type != core.Media && r.IntN(2) == 0) {
			o.Metadata = []byte(`{"contentType":"application/x-soak"}`)
		}
		o.Retry = quick()
		o.Retry.Retries, o.Retry.NewSessions = 20, 10
		var src core.Source
		if o.Type == core.Resumable && r.IntN(4) == 0 {
			src = &hiddenSize{data}
		}
		_, err := upload(t, base+"/upload/storage/v1/b/bkt/o?name="+name, data, o, src)
		require.NoError(t, err, "upload %d (%d bytes, %+v)", i, size, o)
		stored(t, s, name, data)
	}
	for _, e := range s.Log() {
		if e.Fault != "" {
			faults++
		}
	}
	t.Logf("%d uploads (%d on chunk boundaries), %d requests, %d faults injected, %d retries", n, boundary, len(s.Log()), faults, retries)
	assert.GreaterOrEqual(t, faults, n/4, "faults injected: the soak is not soaking")
}
