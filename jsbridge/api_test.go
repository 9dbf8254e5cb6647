//go:build js && wasm

package jsbridge

import (
	"runtime"
	"syscall/js"
	"testing"
	"time"
)

// recorder returns a JS object {sink, events, done, fail} that records what the Go side
// tells the sink.
func recorder() js.Value {
	return jsFunc(`const r = { events: [], done: null, fail: null, failSync: false };
	r.sink = { wantRequests: true };
	for (const m of ["state", "retry", "session"]) r.sink[m] = (x) => r.events.push([m, x]);
	r.sink.progress = (loaded, total, confirmed, bytesPerSecond, secondsLeft) =>
		r.events.push(["progress", { loaded, total, lengthComputable: total > 0, confirmed, bytesPerSecond, secondsLeft }]);
	r.sink.request = (method, url, contentRange, status, ms, error) =>
		r.events.push(["request", { method, url, contentRange, status, ms, error }]);
	r.sink.done = (x) => { r.done = x };
	r.sink.fail = (x) => { r.fail = x };
	return r`).Invoke()
}

// finish waits for the recorder's done or fail.
func finish(t *testing.T, r js.Value) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for r.Get("done").IsNull() && r.Get("fail").IsNull() {
		if time.Now().After(deadline) {
			t.Fatal("the upload never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func events(r js.Value, kind string) []js.Value {
	var out []js.Value
	ev := r.Get("events")
	for i := 0; i < ev.Length(); i++ {
		if e := ev.Index(i); e.Index(0).String() == kind {
			out = append(out, e.Index(1))
		}
	}
	return out
}

func object(kv ...any) js.Value {
	o := js.Global().Get("Object").New()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

var api = API("test")

func TestAPIUpload(t *testing.T) {
	base := liveFuncs.Load()
	ref, bucket, name := refURL(t), unique("api"), unique("obj")
	data := randomBytes(2*262144 + 7)
	r := recorder()
	h := api.Call("upload", blobOf(data, "text/plain"), object(
		"url", ref+"/upload/storage/v1/b/"+bucket+"/o",
		"metadata", object("name", name),
		"chunkSize", 262144,
		"headers", object("Authorization", "Bearer t0"),
		"getHeaders", jsFunc("return Promise.resolve({Authorization: 'Bearer t1'})"),
		"retry", object("retries", 2, "initialDelayMs", 10, "maxDelayMs", 100, "jitterMs", 0),
		"onProgress", jsFunc("throw new Error('the loader handles this, Go ignores it')"),
		"unknownOption", 1,
	), r.Get("sink"))
	for _, m := range []string{"pause", "resume", "abort"} {
		if h.Get(m).Type() != js.TypeFunction {
			t.Fatalf("handle.%s is not a function", m)
		}
	}
	finish(t, r)
	if f := r.Get("fail"); !f.IsNull() {
		t.Fatalf("failed: %s: %s", f.Get("code").String(), f.Get("message").String())
	}
	res := r.Get("done")
	if s := res.Get("status").Int(); s != 200 && s != 201 || res.Get("metadata").Get("name").String() != name ||
		res.Get("body").Type() != js.TypeString || res.Get("sessionURL").Type() != js.TypeString {
		t.Fatalf("result: %v", js.Global().Get("JSON").Call("stringify", res))
	}
	if got := download(t, name); md5hex(got) != md5hex(data) {
		t.Fatal("stored bytes differ")
	}
	states := events(r, "state")
	if len(states) < 2 || states[0].String() != "uploading" && states[0].String() != "starting" || states[len(states)-1].String() != "done" {
		t.Errorf("states: %v", states)
	}
	prog := events(r, "progress")
	last := prog[len(prog)-1]
	if last.Get("loaded").Int() != len(data) || last.Get("total").Int() != len(data) || !last.Get("lengthComputable").Bool() {
		t.Errorf("last progress: %v", js.Global().Get("JSON").Call("stringify", last))
	}
	if reqs := events(r, "request"); len(reqs) != 4 { // start + 3 chunks
		t.Errorf("%d requests told, want 4", len(reqs))
	}
	if s := events(r, "session"); len(s) != 1 || s[0].String() != res.Get("sessionURL").String() {
		t.Errorf("session: %v", s)
	}
	for _, e := range refLog(t, bucket) {
		if e.Get("method").String() == "POST" && e.Get("authorization").String() != "Bearer t1" {
			t.Errorf("getHeaders not merged over headers: %q", e.Get("authorization").String())
		}
	}
	// A handle of an ended upload does nothing.
	h.Call("pause")
	h.Call("abort")
	settleFuncs(t, base)
}

func TestAPIAbort(t *testing.T) {
	base := liveFuncs.Load()
	r := recorder()
	h := api.Call("upload", bigBlob(1024), object("url", refURL(t)+"/upload/storage/v1/b/"+unique("abort")+"/o?name="+unique("o"), "chunkSize", 0), r.Get("sink"))
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	abort := h.Get("abort")
	abort.Invoke() // unbound call: the method is bound to its upload
	finish(t, r)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("abort took %v", d)
	}
	if f := r.Get("fail"); f.IsNull() || f.Get("code").String() != "aborted" {
		t.Fatalf("fail = %v", js.Global().Get("JSON").Call("stringify", f))
	}
	settleFuncs(t, base)
}

func TestAPIPauseResume(t *testing.T) {
	r := recorder()
	name := unique("pr")
	data := randomBytes(4 * 262144)
	h := api.Call("upload", blobOf(data, ""), object("url", refURL(t)+"/upload/storage/v1/b/"+unique("pause")+"/o?name="+name, "chunkSize", 262144), r.Get("sink"))
	h.Call("pause")
	time.Sleep(100 * time.Millisecond)
	if !r.Get("done").IsNull() {
		t.Fatal("finished while paused")
	}
	h.Call("resume")
	finish(t, r)
	if !r.Get("fail").IsNull() {
		t.Fatalf("failed: %s", r.Get("fail").Get("message").String())
	}
	sawPaused := false
	for _, s := range events(r, "state") {
		sawPaused = sawPaused || s.String() == "paused"
	}
	if !sawPaused {
		t.Error("no paused state told")
	}
	if md5hex(download(t, name)) != md5hex(data) {
		t.Error("stored bytes differ")
	}
}

func TestAPIHTTPErrorFailure(t *testing.T) {
	r := recorder()
	// Not under /upload/: the reference server answers 404, which no retry fixes.
	api.Call("upload", blobOf([]byte("x"), ""), object("url", refURL(t)+"/nowhere/"+unique("e"), "uploadType", "media"), r.Get("sink"))
	finish(t, r)
	f := r.Get("fail")
	if f.IsNull() || f.Get("code").String() != "http_error" || f.Get("status").Int() != 404 || f.Get("responseText").Type() != js.TypeString || !f.Get("sessionURL").IsNull() {
		t.Fatalf("fail = %v", js.Global().Get("JSON").Call("stringify", f))
	}
}

func TestAPISinkThatThrows(t *testing.T) {
	// Whatever the sink throws stays in JS: the upload goes on and still reports its end.
	r := jsFunc(`const r = { done: null, fail: null, sink: {} };
	for (const m of ["state", "progress", "retry", "session", "request"]) r.sink[m] = () => { throw new Error("sink") };
	r.sink.done = (x) => { r.done = x };
	r.sink.fail = (x) => { r.fail = x };
	return r`).Invoke()
	api.Call("upload", blobOf(randomBytes(1000), ""), object("url", refURL(t)+"/upload/storage/v1/b/"+unique("throw")+"/o?name="+unique("o")), r.Get("sink"))
	finish(t, r)
	if !r.Get("fail").IsNull() {
		t.Fatalf("failed: %s", r.Get("fail").Get("message").String())
	}
}

func TestUploadKeepsGoMemorySmall(t *testing.T) {
	// 256 MiB in 8 MiB chunks: the bytes go from Blob to fetch without entering Go memory.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := recorder()
	api.Call("upload", bigBlob(256), object("url", refURL(t)+"/upload/storage/v1/b/"+unique("mem")+"/o?name="+unique("o")), r.Get("sink"))
	finish(t, r)
	if !r.Get("fail").IsNull() {
		t.Fatalf("failed: %s", r.Get("fail").Get("message").String())
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("a 256 MiB upload allocated %d bytes in Go", grew)
	}
	if after.Sys > 32<<20 {
		t.Errorf("Go's memory: %d bytes", after.Sys)
	}
}

// With a checksum, each chunk is read (Blob.arrayBuffer) and hashed once, the final request
// states X-Goog-Hash (which the reference server verifies) and the server's hashes are
// compared; a server whose hash differs makes the upload fail with checksum_mismatch.
func TestAPIChecksum(t *testing.T) {
	base := liveFuncs.Load()
	ref := refURL(t)
	data := randomBytes(3*262144 + 11)
	for _, c := range []string{"crc32c", "md5", "both"} {
		bucket, name := unique("sum"), unique("obj")
		r := recorder()
		api.Call("upload", blobOf(data, ""), object(
			"url", ref+"/upload/storage/v1/b/"+bucket+"/o?name="+name,
			"chunkSize", 262144, "checksum", c,
		), r.Get("sink"))
		finish(t, r)
		if f := r.Get("fail"); !f.IsNull() {
			t.Fatalf("%s: %s: %s", c, f.Get("code").String(), f.Get("message").String())
		}
		if got := download(t, name); md5hex(got) != md5hex(data) {
			t.Fatalf("%s: stored bytes differ", c)
		}
		hashed := false
		for _, e := range refLog(t, bucket) {
			hashed = hashed || e.Get("status").Int() == 200 || e.Get("status").Int() == 201
		}
		if !hashed {
			t.Fatalf("%s: no finishing request logged", c)
		}
	}
	settleFuncs(t, base)
}
