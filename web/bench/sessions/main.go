// Command sessions prints how many Cloud Storage sessions the backend package (web/gcs)
// starts a second, and their latency, under 1,000 page requests at once: a benchmark, not a
// test (it asserts nothing but that every answer was a session).
//
//	go run ./web/bench/sessions [-n 1000] [-rounds 5] [-cpuprofile FILE]
//
// Everything runs in this one process, over loopback: fake-gcs-server 1.56.1 on its own
// 127.0.0.1 listener (storage), the gcs.Handler on another (the backend, keeping its
// connections to storage as a backend does), and n page requests at once, each on a new
// connection, as n pages of n browsers would. Each round is also run straight at
// fake-gcs-server (the same session start, sent by the "pages" themselves), so that what the
// package adds shows beside what the emulator costs. ./build.sh bench runs it as
// BENCH_ONLY=sessions.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/mediaupload/mediaupload/web/gcs"
)

const origin = "http://127.0.0.1:5173"

func main() {
	n := flag.Int("n", 1000, "page requests at once")
	rounds := flag.Int("rounds", 5, "rounds, each way")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sessions:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*n, *rounds); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

func run(n, rounds int) error {
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http"})
	if err != nil {
		return err
	}
	fake.CreateBucket("bench")
	var storageRequests atomic.Int64
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storageRequests.Add(1)
		fake.HTTPHandler().ServeHTTP(w, r)
	}))
	defer storage.Close()

	client, err := gcs.NewClient(context.Background(), gcs.Options{Endpoint: storage.URL})
	if err != nil {
		return err
	}
	var seq atomic.Int64
	h, err := gcs.NewHandler(gcs.HandlerConfig{Client: client, Origins: []string{origin}, MaxSize: 1 << 30, Types: []string{"video/*"},
		Authorize: func(r *http.Request, f gcs.File) (gcs.Object, error) {
			return gcs.Object{Bucket: "bench", Name: fmt.Sprintf("u/%d/%s", seq.Add(1), f.Name), Metadata: map[string]string{"by": "bench"}}, nil
		}})
	if err != nil {
		return err
	}
	backend := httptest.NewServer(h)
	defer backend.Close()

	// A page is a browser of its own: a new connection for every request.
	pages := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 60 * time.Second}
	viaBackend := func(i int) error {
		return post(pages, backend.URL, []byte(fmt.Sprintf(`{"name":"clip-%d.mp4","size":104857600,"type":"video/mp4"}`, i)),
			map[string]string{"Content-Type": "application/json"}, `"sessionURL"`)
	}
	direct := func(i int) error {
		return post(pages, storage.URL+fmt.Sprintf("/upload/storage/v1/b/bench/o?uploadType=resumable&name=d/%d", i),
			[]byte(fmt.Sprintf(`{"name":"d/%d","contentType":"video/mp4"}`, i)),
			map[string]string{"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Type": "video/mp4", "X-Upload-Content-Length": "104857600"}, "")
	}

	fmt.Printf("session starts, %d page requests at once, %d rounds each way in turn; in one process over loopback "+
		"(fake-gcs-server 1.56.1 and the handler on their own 127.0.0.1 listeners), %d cores, %s\n",
		n, rounds, runtime.NumCPU(), runtime.Version())
	// A first round of each, not counted: the backend's connections to storage are made.
	if _, err := round(n, viaBackend); err != nil {
		return err
	}
	if _, err := round(n, direct); err != nil {
		return err
	}
	var via, dir []result
	for r := 0; r < rounds; r++ {
		before := storageRequests.Load()
		v, err := round(n, viaBackend)
		if err != nil {
			return err
		}
		if got := storageRequests.Load() - before; got != int64(n) {
			return fmt.Errorf("storage got %d requests for %d sessions", got, n)
		}
		d, err := round(n, direct)
		if err != nil {
			return err
		}
		via, dir = append(via, v), append(dir, d)
		fmt.Printf("  round %d: backend %s; direct %s\n", r+1, v, d)
	}
	fmt.Printf("median of %d rounds: backend (gcs.Handler) %s; direct to fake-gcs-server %s\n", rounds, median(via), median(dir))
	return nil
}

// post sends one request and checks that its answer is a 200 (holding want, where given).
func post(c *http.Client, url string, body []byte, header map[string]string, want string) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Origin", origin)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("%s: %d %s", url, res.StatusCode, b)
	}
	return nil
}

type result struct {
	perSecond         float64
	p50, p99, slowest time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%.0f starts/s, p50 %.1f ms, p99 %.1f ms, slowest %.1f ms",
		r.perSecond, ms(r.p50), ms(r.p99), ms(r.slowest))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// round sends n requests at once (all goroutines released together) and times each.
func round(n int, send func(int) error) (result, error) {
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			errs[i] = send(i)
			lat[i] = time.Since(t0)
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)
	for _, err := range errs {
		if err != nil {
			return result{}, err
		}
	}
	slices.Sort(lat)
	return result{perSecond: float64(n) / wall.Seconds(), p50: lat[n/2], p99: lat[n*99/100], slowest: lat[n-1]}, nil
}

// median is the median round by each figure on its own.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return result{
		perSecond: pick(func(r result) float64 { return r.perSecond }),
		p50:       time.Duration(pick(func(r result) float64 { return float64(r.p50) })),
		p99:       time.Duration(pick(func(r result) float64 { return float64(r.p99) })),
		slowest:   time.Duration(pick(func(r result) float64 { return float64(r.slowest) })),
	}
}
