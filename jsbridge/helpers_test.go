//go:build js && wasm

package jsbridge

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall/js"
	"testing"
	"time"
)

// refURL returns the reference server's URL that build.sh's test_wasm exports. Without it
// the test fails: skipping would let a broken setup pass.
func refURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("MEDIAUPLOAD_REF_URL")
	if u == "" {
		t.Fatal("MEDIAUPLOAD_REF_URL is not set: run through ./build.sh test (test_wasm starts the reference server)")
	}
	return u
}

// unique returns a name no other test (nor the other test binary sharing the server) uses.
func unique(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatUint(rand.Uint64()%1e6, 36)
}

// jsFunc compiles a JS function: jsFunc("a", "b", "return a+b").
func jsFunc(params ...string) js.Value {
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = p
	}
	return js.Global().Get("Function").New(args...)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 42))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// blobOf returns a Blob holding a copy of b.
func blobOf(b []byte, typ string) js.Value {
	a := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(a, b)
	opts := js.Global().Get("Object").New()
	opts.Set("type", typ)
	return js.Global().Get("Blob").New([]any{a}, opts)
}

// bigBlob returns a Blob of n MiB made of references to one 1 MiB Blob: cheap to make.
func bigBlob(mib int) js.Value {
	return jsFunc("n", "const one = new Blob([new Uint8Array(1<<20)]); return new Blob(Array(n).fill(one))").Invoke(mib)
}

func await(t *testing.T, p js.Value) js.Value {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := Await(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// blobBytes reads a Blob back (test only: the library never does).
func blobBytes(t *testing.T, b js.Value) []byte {
	t.Helper()
	buf := await(t, b.Call("arrayBuffer"))
	out := make([]byte, buf.Get("byteLength").Int())
	js.CopyBytesToGo(out, js.Global().Get("Uint8Array").New(buf))
	return out
}

// download returns the stored object's bytes from the reference server.
func download(t *testing.T, name string) []byte {
	t.Helper()
	resp := await(t, js.Global().Call("fetch", refURL(t)+"/_ref/objects/"+name))
	if s := resp.Get("status").Int(); s != 200 {
		t.Fatalf("GET /_ref/objects/%s: status %d", name, s)
	}
	return blobBytes(t, await(t, resp.Call("blob")))
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// refLog returns the requests the reference server saw whose path contains marker.
func refLog(t *testing.T, marker string) []js.Value {
	t.Helper()
	resp := await(t, js.Global().Call("fetch", refURL(t)+"/_ref/log"))
	all := await(t, resp.Call("json"))
	var out []js.Value
	for i := 0; i < all.Length(); i++ {
		e := all.Index(i)
		if contains(e.Get("path").String(), marker) || contains(e.Get("query").String(), marker) {
			out = append(out, e)
		}
	}
	return out
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// settleFuncs waits until the count of live js.Funcs is back at want, or fails.
func settleFuncs(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for liveFuncs.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("live js.Funcs: %d, want %d (a func was not released)", liveFuncs.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
