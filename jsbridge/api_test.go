//go:build js && wasm

package jsbridge

import (
	"runtime"
	"strconv"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var api = API("test")

// nextID gives each test upload an id of its own, as the loader does.
var nextID = 0

// start opens an entry for blob on the host h and starts the upload with the plain options o
// (a JS expression); it returns the id.
func start(h, blob js.Value, getHeaders js.Value, o string) int {
	nextID++
	entry := object("blob", blob, "sink", object(), "getHeaders", getHeaders)
	h.Call("open", nextID, entry)
	api.Call("upload", nextID, blob.Get("size"), blob.Get("type"), jsFunc("return "+o).Invoke())
	return nextID
}

// resumable is a scripted resumable server: a session start answers with a Location; a chunk
// is held and answered 308 with the Range, or 200 with body once the whole file is there; a
// status query answers with what is held. faults(call) may answer first: an array, or "hang"
// for no answer at all (until an abort).
func resumable(faults string) js.Value {
	if faults == "" {
		faults = "null"
	}
	return jsFunc(`const faults = ` + faults + `; let held = 0;
	return (c) => {
		const f = faults && faults(c);
		if (f === "hang") return null; // never answered
		if (f !== null && f !== undefined) return f;
		const ok = (status, range = null, location = null, body = null) => ({ kind: "ok", status, range, location, body });
		if (c.method === "POST") return ok(200, "", "https://up.example/s?upload_id=1");
		const cr = c.headers["content-range"] ?? "";
		let m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(cr);
		if (m) {
			held = Number(m[2]) + 1;
			if (m[3] !== "*" && held === Number(m[3])) return ok(200, "", "", '{"name":"x","size":"' + held + '"}');
			return ok(308, "bytes=0-" + m[2]);
		}
		m = /^bytes \*\/(\d+|\*)$/.exec(cr);
		if (m && m[1] !== "*" && held === Number(m[1])) return ok(200, "", "", '{"name":"x"}');
		return ok(308, held ? "bytes=0-" + (held - 1) : "");
	}`).Invoke()
}

// ended waits for the upload id's "done" or "fail" report and returns it.
func ended(t *testing.T, h js.Value, id int) js.Value {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if e := eventsOf(h, id, "done", "fail"); len(e) > 0 {
			return e[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("the upload never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventsOf returns the reports {id, type, ...fields} of upload id whose type is one of types.
func eventsOf(h js.Value, id int, types ...string) []js.Value {
	var out []js.Value
	ev := h.Get("events")
	for i := 0; i < ev.Length(); i++ {
		e := ev.Index(i)
		if e.Get("id").Int() != id {
			continue
		}
		for _, typ := range types {
			if e.Get("type").String() == typ {
				out = append(out, e)
			}
		}
	}
	return out
}

// sendsOf returns the sends of upload id.
func sendsOf(h js.Value, id int) []js.Value {
	var out []js.Value
	s := h.Get("sends")
	for i := 0; i < s.Length(); i++ {
		if c := s.Index(i); c.Get("id").Int() == id {
			out = append(out, c)
		}
	}
	return out
}

// letGo checks that the upload let go of everything: the host's entry is closed, no callback
// is pending, every js.Func is released.
func letGo(t *testing.T, h js.Value, base int64) {
	t.Helper()
	settleFuncs(t, base)
	if n := h.Get("size").Int(); n != 0 {
		t.Errorf("%d host entries still open", n)
	}
	if n := h.Get("pending").Int(); n != 0 {
		t.Errorf("%d host callbacks pending", n)
	}
}

func object(kv ...any) js.Value {
	o := js.Global().Get("Object").New()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func TestAPIUpload(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	data := randomBytes(2*262144 + 7)
	id := start(h, blobOf(data, "text/plain"), jsFunc("return Promise.resolve({Authorization: 'Bearer t1'})"),
		`{url: "https://up.example/upload?uploadType=resumable", metadata: {name: "x"}, chunkSize: 262144,
		  headers: {Authorization: "Bearer t0"}, getHeaders: true, unknownOption: 1,
		  retry: {retries: 2, initialDelayMs: 10, maxDelayMs: 100, jitterMs: 0}}`)
	end := ended(t, h, id)
	if end.Get("type").String() != "done" {
		t.Fatalf("failed: %s: %s", end.Get("code").String(), end.Get("message").String())
	}
	if end.Get("status").Int() != 200 || !strings.Contains(end.Get("body").String(), `"name":"x"`) || end.Get("sessionURL").String() != "https://up.example/s?upload_id=1" {
		t.Fatalf("done: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	sends := sendsOf(h, id)
	if len(sends) != 4 {
		t.Fatalf("%d sends, want the session start and 3 chunks", len(sends))
	}
	post := sends[0]
	if post.Get("method").String() != "POST" || post.Get("pre").String() != `{"name":"x"}` || post.Get("start").Int() != -1 ||
		post.Get("session").Bool() || post.Get("headers").Get("authorization").String() != "Bearer t1" {
		t.Errorf("session start: %v", js.Global().Get("JSON").Call("stringify", post))
	}
	for i, want := range [][2]int{{0, 262144}, {262144, 524288}, {524288, len(data)}} {
		c := sends[i+1]
		if c.Get("method").String() != "PUT" || c.Get("url").String() != "https://up.example/s?upload_id=1" ||
			c.Get("start").Int() != want[0] || c.Get("end").Int() != want[1] || c.Get("pre").String() != "" ||
			!c.Get("session").Bool() || c.Get("headers").Get("authorization").String() != "Bearer t1" ||
			c.Get("headers").Get("x-guploader-no-308").String() != "yes" {
			t.Errorf("chunk %d: %v", i, js.Global().Get("JSON").Call("stringify", c))
		}
	}
	states := eventsOf(h, id, "state")
	if len(states) < 2 || states[len(states)-1].Get("state").String() != "done" {
		t.Errorf("states: %d, last %v", len(states), states)
	}
	prog := eventsOf(h, id, "progress")
	if last := prog[len(prog)-1]; last.Get("loaded").Int() != len(data) || last.Get("total").Int() != len(data) {
		t.Errorf("last progress: %v", js.Global().Get("JSON").Call("stringify", last))
	}
	if n := len(eventsOf(h, id, "request")); n != 4 {
		t.Errorf("%d requests told, want 4", n)
	}
	if s := eventsOf(h, id, "session"); len(s) != 1 || s[0].Get("url").String() != "https://up.example/s?upload_id=1" {
		t.Errorf("session: %v", s)
	}
	// An id that has ended does nothing.
	api.Call("pause", id)
	api.Call("abort", id)
	letGo(t, h, base)
}

func TestAPIMultipartBody(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => ({ kind: "ok", status: 200, body: "{}" })`).Invoke())
	id := start(h, blobOf([]byte("hello"), ""), js.Null(), `{url: "https://up.example/u", uploadType: "multipart", metadata: {name: "é"}}`)
	if end := ended(t, h, id); end.Get("type").String() != "done" {
		t.Fatalf("failed: %s", end.Get("message").String())
	}
	c := sendsOf(h, id)[0]
	pre, post := c.Get("pre").String(), c.Get("post").String()
	if !strings.Contains(pre, `{"name":"é"}`) || !strings.HasPrefix(post, "\r\n--") || c.Get("start").Int() != 0 || c.Get("end").Int() != 5 ||
		!strings.HasPrefix(c.Get("headers").Get("content-type").String(), "multipart/related; boundary=") {
		t.Fatalf("multipart: %v", js.Global().Get("JSON").Call("stringify", c))
	}
	letGo(t, h, base)
}

func TestAPIAbort(t *testing.T) {
	base := liveFuncs.Load()
	// The chunk is never answered: only the abort ends it.
	h := fakeHost(t, resumable(`(c) => c.method === "PUT" ? "hang" : null`))
	id := start(h, bigBlob(64), js.Null(), `{url: "https://up.example/u", chunkSize: 0}`)
	deadline := time.Now().Add(10 * time.Second)
	for len(sendsOf(h, id)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no chunk sent")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	api.Call("abort", id)
	end := ended(t, h, id)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("abort took %v", d)
	}
	if end.Get("type").String() != "fail" || end.Get("code").String() != "aborted" {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	if a := h.Get("aborts"); a.Length() != 1 || a.Index(0).Int() != id {
		t.Errorf("host.abort calls: %v", js.Global().Get("JSON").Call("stringify", a))
	}
	letGo(t, h, base)
}

func TestAPIPauseResume(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	id := start(h, blobOf(randomBytes(4*262144), ""), js.Null(), `{url: "https://up.example/u", chunkSize: 262144}`)
	api.Call("pause", id)
	time.Sleep(100 * time.Millisecond)
	if len(eventsOf(h, id, "done", "fail")) != 0 {
		t.Fatal("ended while paused")
	}
	api.Call("resume", id)
	if end := ended(t, h, id); end.Get("type").String() != "done" {
		t.Fatalf("failed: %s", end.Get("message").String())
	}
	sawPaused := false
	for _, s := range eventsOf(h, id, "state") {
		sawPaused = sawPaused || s.Get("state").String() == "paused"
	}
	if !sawPaused {
		t.Error("no paused state told")
	}
	letGo(t, h, base)
}

func TestAPIHTTPErrorFailure(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => ({ kind: "ok", status: 404, body: "no such bucket" })`).Invoke())
	id := start(h, blobOf([]byte("x"), ""), js.Null(), `{url: "https://up.example/u", uploadType: "media"}`)
	end := ended(t, h, id)
	// fail: code, message, status, responseText, sessionURL
	if end.Get("type").String() != "fail" || end.Get("code").String() != "http_error" || end.Get("status").Int() != 404 ||
		end.Get("responseText").String() != "no such bucket" || end.Get("sessionURL").String() != "" {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	letGo(t, h, base)
}

// A status query that the host reports redirected (a 308 with a Location, followed by a
// body-less request before anything could tell) is a protocol error, at once.
func TestAPIRedirectIsAProtocolError(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(`(c) => c.method !== "PUT" ? null : c.start >= 0 ? { kind: "fetch", name: "TypeError", message: "Failed to fetch" } : { kind: "redirect", followed: true }`))
	id := start(h, blobOf(randomBytes(1000), ""), js.Null(), `{url: "https://up.example/u", uploadType: "resumable", retry: {initialDelayMs: 1, jitterMs: 0}}`)
	end := ended(t, h, id)
	if end.Get("type").String() != "fail" || end.Get("code").String() != "protocol_error" || !strings.Contains(end.Get("message").String(), "Location") {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	sends := sendsOf(h, id)
	if len(sends) != 3 || !sends[1].Get("session").Bool() || !sends[2].Get("session").Bool() || sends[2].Get("start").Int() != -1 {
		t.Fatalf("sends: %v", js.Global().Get("JSON").Call("stringify", h.Get("sends")))
	}
	letGo(t, h, base)
}

// A chunk whose 3xx answer the engine hides (docs/protocol.md section 6) is followed at once by a
// status query, with no retry: the upload goes on from what the session holds.
func TestAPIHiddenAnswerAsksAtOnce(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(`(c) => c.method === "PUT" && c.start >= 0 && c.end < 3 * 262144 ? (held = c.end, { kind: "hidden" }) : null`))
	id := start(h, blobOf(randomBytes(3*262144), ""), js.Null(), `{url: "https://up.example/u", chunkSize: 262144}`)
	if end := ended(t, h, id); end.Get("type").String() != "done" {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	var got []string
	for _, s := range sendsOf(h, id) {
		got = append(got, s.Get("headers").Get("content-range").String())
	}
	want := []string{"<undefined>", "bytes 0-262143/786432", "bytes */786432", "bytes 262144-524287/786432", "bytes */786432", "bytes 524288-786431/786432"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("requests %q, want %q", got, want)
	}
	if r := eventsOf(h, id, "retry"); len(r) != 0 {
		t.Fatalf("%d retries, want none", len(r))
	}
	letGo(t, h, base)
}

func TestAPIGetHeadersRejects(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	id := start(h, blobOf([]byte("x"), ""), jsFunc("return Promise.reject(new Error('no token'))"), `{url: "https://up.example/u", getHeaders: true}`)
	end := ended(t, h, id)
	// A getHeaders that failed is an auth_error (docs/api.md), its message kept.
	if end.Get("type").String() != "fail" || end.Get("code").String() != "auth_error" || !strings.Contains(end.Get("message").String(), "no token") {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	if n := len(sendsOf(h, id)); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	letGo(t, h, base)
}

func TestUploadKeepsGoMemorySmall(t *testing.T) {
	// 256 MiB in 8 MiB chunks: the bytes never enter Go memory; Go passes ranges.
	h := fakeHost(t, resumable(""))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id := start(h, bigBlob(256), js.Null(), `{url: "https://up.example/u"}`)
	if end := ended(t, h, id); end.Get("type").String() != "done" {
		t.Fatalf("failed: %s", end.Get("message").String())
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("a 256 MiB upload allocated %d bytes in Go", grew)
	}
}

// With a checksum, the host is asked to hash the source as the upload starts (host.hash), and
// for the hashes before the request that completes the object (host.digest), which states them
// in X-Goog-Hash; the final metadata is compared with them. By default (no checksum option) a
// Cloud Storage upload path asks for crc32c, and checksum: false for none.
func TestAPIChecksum(t *testing.T) {
	base := liveFuncs.Load()
	data := randomBytes(3*262144 + 11)
	const crc = "AbCdEf=="
	for _, tt := range []struct {
		name, options, kinds, header string
	}{
		{"crc32c", `{url: "https://up.example/u", chunkSize: 262144, checksum: "crc32c"}`, "crc32c", "crc32c=" + crc},
		{"both", `{url: "https://up.example/u", chunkSize: 262144, checksum: "both"}`, "both", "crc32c=" + crc + ",md5=MMMM"},
		{"the default, to Cloud Storage", `{url: "https://up.example/upload/storage/v1/b/bkt/o?name=x", chunkSize: 262144}`, "crc32c", "crc32c=" + crc},
		{"the default, elsewhere", `{url: "https://up.example/u", chunkSize: 262144}`, "", ""},
		{"off", `{url: "https://up.example/upload/storage/v1/b/bkt/o?name=x", chunkSize: 262144, checksum: false}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := fakeHost(t, resumable(`(c) => /\/`+strconv.Itoa(len(data))+`$/.test(c.headers["content-range"] ?? "") && c.end === `+
				strconv.Itoa(len(data))+` ? { kind: "ok", status: 200, body: '{"crc32c":"`+crc+`","md5Hash":"MMMM"}' } : null`))
			h.Set("sums", js.Global().Get("JSON").Call("parse", `{"crc32c":"`+crc+`","md5":"MMMM"}`))
			id := start(h, blobOf(data, ""), js.Null(), tt.options)
			if end := ended(t, h, id); end.Get("type").String() != "done" {
				t.Fatalf("failed: %s: %s", end.Get("code").String(), end.Get("message").String())
			}
			hashes, digests := h.Get("hashes"), h.Get("digests")
			if tt.kinds == "" {
				if hashes.Length() != 0 || digests.Length() != 0 {
					t.Fatalf("hashed without a checksum: %v %v", js.Global().Get("JSON").Call("stringify", hashes), js.Global().Get("JSON").Call("stringify", digests))
				}
			} else if hashes.Length() != 1 || hashes.Index(0).Get("kinds").String() != tt.kinds ||
				digests.Length() == 0 || digests.Index(0).Get("n").Int() != len(data) {
				t.Fatalf("hashes %v, digests %v: want one hash of %s and digests of %d bytes", js.Global().Get("JSON").Call("stringify", hashes),
					js.Global().Get("JSON").Call("stringify", digests), tt.kinds, len(data))
			}
			sends := sendsOf(h, id)
			for i, s := range sends {
				got := s.Get("headers").Get("x-goog-hash")
				if want := tt.header; i < len(sends)-1 || want == "" {
					if !got.IsUndefined() {
						t.Errorf("request %d states X-Goog-Hash %v", i, got)
					}
				} else if got.String() != want {
					t.Errorf("X-Goog-Hash %v, want %q", got, want)
				}
			}
			letGo(t, h, base)
		})
	}
}

// An answer of a shape the host never gives ends the upload as a protocol error at once: a
// bug of the module's, not a lost connection to retry.
func TestAPIMalformedAnswerIsFinal(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => "ok\n2x0\n\n\n\n\n"`).Invoke())
	id := start(h, blobOf([]byte("x"), ""), js.Null(), `{url: "https://up.example/u", uploadType: "media", retry: {initialDelayMs: 1, jitterMs: 0}}`)
	end := ended(t, h, id)
	if end.Get("type").String() != "fail" || end.Get("code").String() != "protocol_error" || !strings.Contains(end.Get("message").String(), "malformed") {
		t.Fatalf("end: %v", js.Global().Get("JSON").Call("stringify", end))
	}
	if n := len(sendsOf(h, id)); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry)", n)
	}
	letGo(t, h, base)
}

// TestSendAnswer reads host.send's "ok" answer, one string (host.js): the fields as lines, the
// body the rest, line breaks and all; a string of another shape is a bad answer, not a status.
func TestSendAnswer(t *testing.T) {
	got := sendAnswer("ok\n200\nbytes=0-9\n\n308\n\n{\n\"a\": 1\n}")
	want := answer{kind: "ok", status: 200, rng: "bytes=0-9", over: "308", body: "{\n\"a\": 1\n}"}
	if got.kind != want.kind || got.status != want.status || got.rng != want.rng || got.loc != "" || got.over != want.over || got.after != "" || got.body != want.body {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := sendAnswer("ok\n404\n\n\n\n\n"); got.kind != "ok" || got.status != 404 || got.body != "" {
		t.Errorf("an empty body: got %+v", got)
	}
	for _, s := range []string{"", "ok", "ok\n200\n\n\n\n", "fine\n200\n\n\n\n\n", "ok\n2x0\n\n\n\n\n", "ok\n20\n\n\n\n\n", "ok\n2000\n\n\n\n\n"} {
		if got := sendAnswer(s); got.kind != "bad" {
			t.Errorf("%q: got %+v, want a bad answer", s, got)
		}
	}
}

// The first chunk of an upload that knows nothing of the link is sized by the host's word
// (host.js, countable; core's Counter): 4 MiB where it says it counts a body to the session's
// URL, 256 KiB where it does not, or has no such call. (An origin each: what an upload learns of
// one sizes the next one's first chunk.)
func TestAPIFirstChunkByTheHostsWord(t *testing.T) {
	data := randomBytes(6 << 20)
	for _, tt := range []struct {
		name, countable, origin string
		want                    int
	}{
		{"no such call", "", "https://count-none.example", 262144},
		{"counts", "(url) => url === 'https://up.example/s?upload_id=1'", "https://count-yes.example", 4 << 20},
		{"does not count", "(url) => false", "https://count-no.example", 262144},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := liveFuncs.Load()
			h := fakeHost(t, resumable(""))
			if tt.countable != "" {
				h.Set("countable", jsFunc("return "+tt.countable).Invoke())
			}
			id := start(h, blobOf(data, ""), jsFunc("return Promise.resolve({})"), `{url: "`+tt.origin+`/upload?name=x", checksum: false}`)
			end := ended(t, h, id)
			require.Equal(t, "done", end.Get("type").String(), end.Get("message").String())
			sends := sendsOf(h, id)
			require.GreaterOrEqual(t, len(sends), 2, "the session start and a chunk")
			first := sends[1]
			assert.Equal(t, tt.want, first.Get("end").Int()-first.Get("start").Int(), "the first chunk's bytes")
			letGo(t, h, base)
		})
	}
}
