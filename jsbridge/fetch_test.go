//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/core"
)

func TestFetchRoundTrip(t *testing.T) {
	base := liveFuncs.Load()
	ref, bucket, name := refURL(t), unique("fetch"), unique("obj")
	data := randomBytes(262144 + 1000)
	src, _ := NewBlobSource(blobOf(data, ""))
	ctx := context.Background()
	f := &Fetch{}

	start := &core.Request{Method: "POST", URL: ref + "/upload/storage/v1/b/" + bucket + "/o?uploadType=resumable&name=" + name,
		Header: core.Header{"x-upload-content-type": "text/plain", "x-upload-content-length": "263144"}}
	resp, err := f.Do(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	loc := resp.Header.Get("Location")
	if resp.Status != 200 || !strings.Contains(loc, "upload_id") {
		t.Fatalf("session start: %d, Location %q", resp.Status, loc)
	}
	for k := range resp.Header {
		if k != strings.ToLower(k) {
			t.Errorf("header name %q is not lower-case", k)
		}
	}

	first, _ := src.Slice(0, 262144)
	resp, err = f.Do(ctx, &core.Request{Method: "PUT", URL: loc,
		Header: core.Header{"content-range": "bytes 0-262143/263144"}, Body: []core.Piece{first}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 308 || resp.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("first chunk: %d, Range %q (exposed through CORS?)", resp.Status, resp.Header.Get("Range"))
	}

	rest, _ := src.Slice(262144, 263144)
	resp, err = f.Do(ctx, &core.Request{Method: "PUT", URL: loc,
		Header: core.Header{"content-range": "bytes 262144-263143/263144"}, Body: []core.Piece{rest}})
	if err != nil {
		t.Fatal(err)
	}
	meta := parseJSON(string(resp.Body))
	if resp.Status != 200 && resp.Status != 201 || meta.IsNull() || meta.Get("name").String() != name || meta.Get("size").String() != "263144" {
		t.Fatalf("last chunk: %d %s", resp.Status, resp.Body)
	}
	if got := download(t, name); md5hex(got) != md5hex(data) {
		t.Fatal("stored bytes differ")
	}
	f.Close()
	settleFuncs(t, base)
}

func TestFetchAbortIsPrompt(t *testing.T) {
	base := liveFuncs.Load()
	ref := refURL(t)
	src, _ := NewBlobSource(bigBlob(2048)) // 2 GiB: far from sent when the abort comes
	p, _ := src.Slice(0, src.Size())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	f := &Fetch{}
	_, err := f.Do(ctx, &core.Request{Method: "POST", URL: ref + "/upload/storage/v1/b/" + unique("abort") + "/o?uploadType=media&name=" + unique("big"),
		Header: core.Header{"content-type": "application/octet-stream"}, Body: []core.Piece{p}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("abort took %v", d)
	}
	f.Close()
	settleFuncs(t, base)
}

func TestFetchNetworkFailure(t *testing.T) {
	// Port 1 on loopback refuses the connection: fetch rejects, Do reports a FetchError.
	f := &Fetch{}
	defer f.Close()
	_, err := f.Do(context.Background(), &core.Request{Method: "GET", URL: "http://127.0.0.1:1/"})
	var fe *FetchError
	if !errors.As(err, &fe) || core.Code(err) != core.CodeNetwork {
		t.Fatalf("err = %v", err)
	}
}

func TestBodyOf(t *testing.T) {
	if _, ok := bodyOf(nil); ok {
		t.Error("no pieces gave a body")
	}
	v, _ := bodyOf([]core.Piece{core.Bytes(`{"a":1}`)})
	if !v.InstanceOf(js.Global().Get("Uint8Array")) || v.Length() != 7 {
		t.Errorf("bytes body: %v", v)
	}
	src, _ := NewBlobSource(blobOf(randomBytes(100), "x/y"))
	p, _ := src.Slice(10, 20)
	if v, _ := bodyOf([]core.Piece{p}); !v.Equal(p.(BlobPiece).Value()) {
		t.Error("a single Blob piece is not sent as itself")
	}
}

// uploadVia runs a whole upload through core with the fetch transport.
func uploadVia(t *testing.T, blob js.Value, o core.Options) *core.Result {
	t.Helper()
	src, err := NewBlobSource(blob)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Fetch{}
	defer tr.Close()
	up, err := core.New(tr, src, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := up.Run(ctx)
	if err != nil {
		t.Fatalf("%s upload: %v", o.Type, err)
	}
	return res
}

func TestCoreUploadsThroughFetch(t *testing.T) {
	ref := refURL(t)
	data := randomBytes(3*262144 + 12345)
	for _, typ := range []core.Type{core.Resumable, core.Multipart, core.Media} {
		t.Run(string(typ), func(t *testing.T) {
			base := liveFuncs.Load()
			bucket, name := unique("core"), unique(string(typ))
			o := core.Options{Clock: Clock{}, URL: ref + "/upload/storage/v1/b/" + bucket + "/o?name=" + name, Type: typ,
				ContentType: "application/x-test", ChunkSize: 262144}
			if typ != core.Media {
				o.Metadata = []byte(`{"name":"` + name + `","metadata":{"k":"v"}}`)
			}
			res := uploadVia(t, blobOf(data, ""), o)
			meta := parseJSON(string(res.Body))
			if res.Status != 200 && res.Status != 201 || meta.IsNull() || meta.Get("name").String() != name || meta.Get("contentType").String() != "application/x-test" {
				t.Fatalf("result %d %s", res.Status, res.Body)
			}
			if got := download(t, name); md5hex(got) != md5hex(data) {
				t.Fatalf("stored object's md5 %s, want %s", md5hex(got), md5hex(data))
			}
			if typ == core.Resumable {
				puts := 0
				for _, e := range refLog(t, bucket) {
					if e.Get("method").String() == "PUT" {
						puts++
					}
				}
				if puts != 4 {
					t.Errorf("%d PUTs, want 4 chunks", puts)
				}
				if res.SessionURL == "" {
					t.Error("no session URL in the result")
				}
			}
			settleFuncs(t, base)
		})
	}
}

// setFaults posts a fault script to the reference server (nil clears it).
func setFaults(t *testing.T, script string) {
	t.Helper()
	method, body := "POST", js.ValueOf(script)
	if script == "" {
		method, body = "DELETE", js.Undefined()
	}
	resp := await(t, js.Global().Call("fetch", refURL(t)+"/_ref/faults", object("method", method, "body", body)))
	if s := resp.Get("status").Int(); s != 200 {
		t.Fatalf("%s /_ref/faults: status %d", method, s)
	}
}

// A 308 that carries a Location (PROTOCOL.md section 6): the chunk is never re-sent to it, and
// the upload ends with protocol_error, found by the status query that follows the failure.
func TestRedirectIsAProtocolError(t *testing.T) {
	setFaults(t, `{"rules":[{"on":"chunk","action":"redirect","times":-1},{"on":"query","action":"redirect","times":-1}]}`)
	defer setFaults(t, "")
	bucket := unique("redir")
	p := core.DefaultRetryPolicy()
	p.InitialDelay, p.Jitter = core.Millisecond, 0
	tr := &Fetch{}
	defer tr.Close()
	u, err := core.New(tr, mustSource(t, blobOf(randomBytes(300000), "")), core.Options{Clock: Clock{},
		URL: refURL(t) + "/upload/storage/v1/b/" + bucket + "/o?name=r", ChunkSize: 262144, Retry: &p,
		Header: core.Header{"Authorization": "Bearer secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Run(context.Background())
	if core.Code(err) != core.CodeProtocol {
		t.Fatalf("err %v (%s), want protocol_error", err, core.Code(err))
	}
	var chunks, redirected int
	for _, e := range refLog(t, bucket) {
		switch {
		case e.Get("method").String() == "OPTIONS": // preflights carry nothing
		case e.Get("kind").String() == "chunk":
			chunks++
		case contains(e.Get("path").String(), "/redirected/"):
			redirected++
			if e.Get("contentLength").Int() != 0 || e.Get("method").String() != "PUT" {
				t.Errorf("a request with a body reached the redirect's target: %s %d", e.Get("method").String(), e.Get("contentLength").Int())
			}
		}
	}
	if chunks != 1 || redirected != 1 {
		t.Errorf("%d chunks sent, %d requests reached the redirect's target; want 1 and 1 (the empty status query)", chunks, redirected)
	}
}

func mustSource(t *testing.T, blob js.Value) *BlobSource {
	t.Helper()
	s, err := NewBlobSource(blob)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One Fetch keeps its RequestInit from one request to the next: a header, a body or a method
// of one request must not leak into the next.
func TestFetchReuseCarriesNothingOver(t *testing.T) {
	base := liveFuncs.Load()
	ref, bucket, name := refURL(t), unique("reuse"), unique("obj")
	f := &Fetch{}
	ctx := context.Background()
	resp, err := f.Do(ctx, &core.Request{Method: "POST", URL: ref + "/upload/storage/v1/b/" + bucket + "/o?uploadType=resumable&name=" + name,
		Header: core.Header{"authorization": "Bearer first", "x-upload-content-length": "262145"}})
	if err != nil || resp.Status != 200 {
		t.Fatalf("start: %v %v", resp, err)
	}
	loc := resp.Header.Get("Location")
	src, _ := NewBlobSource(blobOf(randomBytes(262145), ""))
	first, _ := src.Slice(0, 262144)
	// A chunk with a body and without Authorization, then a status query with neither, then
	// the last byte with another token.
	resp, err = f.Do(ctx, &core.Request{Method: "PUT", URL: loc, Header: core.Header{"content-range": "bytes 0-262143/262145"}, Body: []core.Piece{first}})
	if err != nil || resp.Status != 308 {
		t.Fatalf("chunk: %v %v", resp, err)
	}
	resp, err = f.Do(ctx, &core.Request{Method: "PUT", URL: loc, Header: core.Header{"content-range": "bytes */262145"}})
	if err != nil || resp.Status != 308 || resp.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("status query: %v %v", resp, err)
	}
	last, _ := src.Slice(262144, 262145)
	resp, err = f.Do(ctx, &core.Request{Method: "PUT", URL: loc, Header: core.Header{"content-range": "bytes 262144-262144/262145", "authorization": "Bearer second"}, Body: []core.Piece{last}})
	if err != nil || resp.Status != 200 && resp.Status != 201 {
		t.Fatalf("last: %v %v", resp, err)
	}
	f.Close()
	settleFuncs(t, base)

	type seen struct {
		method, contentRange, auth string
		length                     int
	}
	var got []seen
	for _, e := range refLog(t, bucket) { // the session URI's path names the bucket too
		if e.Get("method").String() == "OPTIONS" {
			continue // CORS preflights
		}
		got = append(got, seen{e.Get("method").String(), e.Get("contentRange").String(), e.Get("authorization").String(), e.Get("contentLength").Int()})
	}
	want := []seen{
		{"POST", "", "Bearer first", 0},
		{"PUT", "bytes 0-262143/262145", "", 262144},
		{"PUT", "bytes */262145", "", 0},
		{"PUT", "bytes 262144-262144/262145", "Bearer second", 1},
	}
	if len(got) != len(want) {
		t.Fatalf("the server saw %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
