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
	var end js.Value
	require.Eventually(t, func() bool {
		e := eventsOf(h, id, "done", "fail")
		if len(e) > 0 {
			end = e[0]
		}
		return len(e) > 0
	}, 30*time.Second, 5*time.Millisecond, "the upload never ended")
	return end
}

// requireDone checks that the report end is "done".
func requireDone(t *testing.T, end js.Value) {
	t.Helper()
	require.Equal(t, "done", end.Get("type").String(), "end: %s", jsonOf(end))
}

// requireFail checks that the report end is a "fail" of code whose message holds part.
func requireFail(t *testing.T, end js.Value, code, part string) {
	t.Helper()
	require.Equal(t, "fail", end.Get("type").String(), "end: %s", jsonOf(end))
	require.Equal(t, code, end.Get("code").String(), "end: %s", jsonOf(end))
	require.Contains(t, end.Get("message").String(), part)
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
	assert.Zero(t, h.Get("size").Int(), "host entries still open")
	assert.Zero(t, h.Get("pending").Int(), "host callbacks pending")
}

func object(kv ...any) js.Value {
	o := js.Global().Get("Object").New()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// jsonOf is v in JSON, for a failure's message.
func jsonOf(v js.Value) string { return js.Global().Get("JSON").Call("stringify", v).String() }

func TestAPIUpload(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	data := randomBytes(2*262144 + 7)
	id := start(h, blobOf(data, "text/plain"), jsFunc("return Promise.resolve({Authorization: 'Bearer t1'})"),
		`{url: "https://up.example/upload?uploadType=resumable", metadata: {name: "x"}, chunkSize: 262144,
		  headers: {Authorization: "Bearer t0"}, getHeaders: true, unknownOption: 1,
		  retry: {retries: 2, initialDelayMs: 10, maxDelayMs: 100, jitterMs: 0}}`)
	end := ended(t, h, id)
	requireDone(t, end)
	const session = "https://up.example/s?upload_id=1"
	assert.Equal(t, 200, end.Get("status").Int(), "done: status")
	assert.Contains(t, end.Get("body").String(), `"name":"x"`, "done: body")
	assert.Equal(t, session, end.Get("sessionURL").String(), "done: sessionURL")
	sends := sendsOf(h, id)
	require.Len(t, sends, 4, "the session start and 3 chunks: %s", jsonOf(h.Get("sends")))
	post := sends[0]
	assert.Equal(t, "POST", post.Get("method").String(), "session start")
	assert.Equal(t, `{"name":"x"}`, post.Get("pre").String(), "session start: pre")
	assert.Equal(t, -1, post.Get("start").Int(), "session start: start")
	assert.False(t, post.Get("session").Bool(), "session start: to the session")
	assert.Equal(t, "Bearer t1", post.Get("headers").Get("authorization").String(), "session start: authorization")
	for i, want := range [][2]int{{0, 262144}, {262144, 524288}, {524288, len(data)}} {
		c := sends[i+1]
		assert.Equal(t, "PUT", c.Get("method").String(), "chunk %d", i)
		assert.Equal(t, session, c.Get("url").String(), "chunk %d: url", i)
		assert.Equal(t, want[0], c.Get("start").Int(), "chunk %d: start", i)
		assert.Equal(t, want[1], c.Get("end").Int(), "chunk %d: end", i)
		assert.Empty(t, c.Get("pre").String(), "chunk %d: pre", i)
		assert.True(t, c.Get("session").Bool(), "chunk %d: to the session", i)
		assert.Equal(t, "Bearer t1", c.Get("headers").Get("authorization").String(), "chunk %d: authorization", i)
		assert.Equal(t, "yes", c.Get("headers").Get("x-guploader-no-308").String(), "chunk %d: x-guploader-no-308", i)
	}
	states := eventsOf(h, id, "state")
	require.GreaterOrEqual(t, len(states), 2, "states told")
	assert.Equal(t, "done", states[len(states)-1].Get("state").String(), "the last state")
	prog := eventsOf(h, id, "progress")
	last := prog[len(prog)-1]
	assert.Equal(t, len(data), last.Get("loaded").Int(), "the last progress: loaded")
	assert.Equal(t, len(data), last.Get("total").Int(), "the last progress: total")
	assert.Len(t, eventsOf(h, id, "request"), 4, "requests told")
	s := eventsOf(h, id, "session")
	require.Len(t, s, 1, "sessions told")
	assert.Equal(t, session, s[0].Get("url").String(), "the session told")
	// An id that has ended does nothing.
	api.Call("pause", id)
	api.Call("abort", id)
	letGo(t, h, base)
}

func TestAPIMultipartBody(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => ({ kind: "ok", status: 200, body: "{}" })`).Invoke())
	id := start(h, blobOf([]byte("hello"), ""), js.Null(), `{url: "https://up.example/u", uploadType: "multipart", metadata: {name: "é"}}`)
	requireDone(t, ended(t, h, id))
	c := sendsOf(h, id)[0]
	pre, post, ct := c.Get("pre").String(), c.Get("post").String(), c.Get("headers").Get("content-type").String()
	assert.Contains(t, pre, `{"name":"é"}`, "the part before the file")
	assert.True(t, strings.HasPrefix(post, "\r\n--"), "the part after the file: %q", post)
	assert.Equal(t, 0, c.Get("start").Int(), "the file's start")
	assert.Equal(t, 5, c.Get("end").Int(), "the file's end")
	assert.True(t, strings.HasPrefix(ct, "multipart/related; boundary="), "content-type %q", ct)
	letGo(t, h, base)
}

func TestAPIAbort(t *testing.T) {
	base := liveFuncs.Load()
	// The chunk is never answered: only the abort ends it.
	h := fakeHost(t, resumable(`(c) => c.method === "PUT" ? "hang" : null`))
	id := start(h, bigBlob(64), js.Null(), `{url: "https://up.example/u", chunkSize: 0}`)
	require.Eventually(t, func() bool { return len(sendsOf(h, id)) >= 2 }, 10*time.Second, 5*time.Millisecond, "no chunk sent")
	t0 := time.Now()
	api.Call("abort", id)
	end := ended(t, h, id)
	assert.LessOrEqual(t, time.Since(t0), 2*time.Second, "the abort's time")
	requireFail(t, end, "aborted", "")
	a := h.Get("aborts")
	require.Equal(t, 1, a.Length(), "host.abort calls: %s", jsonOf(a))
	assert.Equal(t, id, a.Index(0).Int(), "host.abort calls: %s", jsonOf(a))
	letGo(t, h, base)
}

func TestAPIPauseResume(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	id := start(h, blobOf(randomBytes(4*262144), ""), js.Null(), `{url: "https://up.example/u", chunkSize: 262144}`)
	api.Call("pause", id)
	time.Sleep(100 * time.Millisecond)
	require.Empty(t, eventsOf(h, id, "done", "fail"), "ended while paused")
	api.Call("resume", id)
	requireDone(t, ended(t, h, id))
	var states []string
	for _, s := range eventsOf(h, id, "state") {
		states = append(states, s.Get("state").String())
	}
	assert.Contains(t, states, "paused", "the states told")
	letGo(t, h, base)
}

func TestAPIHTTPErrorFailure(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => ({ kind: "ok", status: 404, body: "no such bucket" })`).Invoke())
	id := start(h, blobOf([]byte("x"), ""), js.Null(), `{url: "https://up.example/u", uploadType: "media"}`)
	end := ended(t, h, id)
	// fail: code, message, status, responseText, sessionURL
	requireFail(t, end, "http_error", "")
	assert.Equal(t, 404, end.Get("status").Int(), "status")
	assert.Equal(t, "no such bucket", end.Get("responseText").String(), "responseText")
	assert.Empty(t, end.Get("sessionURL").String(), "sessionURL")
	letGo(t, h, base)
}

// A status query that the host reports redirected (a 308 with a Location, followed by a
// body-less request before anything could tell) is a protocol error, at once.
func TestAPIRedirectIsAProtocolError(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(`(c) => c.method !== "PUT" ? null : c.start >= 0 ? { kind: "fetch", name: "TypeError", message: "Failed to fetch" } : { kind: "redirect", followed: true }`))
	id := start(h, blobOf(randomBytes(1000), ""), js.Null(), `{url: "https://up.example/u", uploadType: "resumable", retry: {initialDelayMs: 1, jitterMs: 0}}`)
	end := ended(t, h, id)
	requireFail(t, end, "protocol_error", "Location")
	sends := sendsOf(h, id)
	require.Len(t, sends, 3, "sends: %s", jsonOf(h.Get("sends")))
	assert.True(t, sends[1].Get("session").Bool(), "the chunk, to the session: %s", jsonOf(sends[1]))
	assert.True(t, sends[2].Get("session").Bool(), "the status query, to the session: %s", jsonOf(sends[2]))
	assert.Equal(t, -1, sends[2].Get("start").Int(), "a status query: %s", jsonOf(sends[2]))
	letGo(t, h, base)
}

// A chunk whose 3xx answer the engine hides (docs/protocol.md section 6) is followed at once by a
// status query, with no retry: the upload goes on from what the session holds.
func TestAPIHiddenAnswerAsksAtOnce(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(`(c) => c.method === "PUT" && c.start >= 0 && c.end < 3 * 262144 ? (held = c.end, { kind: "hidden" }) : null`))
	id := start(h, blobOf(randomBytes(3*262144), ""), js.Null(), `{url: "https://up.example/u", chunkSize: 262144}`)
	requireDone(t, ended(t, h, id))
	var got []string
	for _, s := range sendsOf(h, id) {
		got = append(got, s.Get("headers").Get("content-range").String())
	}
	want := []string{"<undefined>", "bytes 0-262143/786432", "bytes */786432", "bytes 262144-524287/786432", "bytes */786432", "bytes 524288-786431/786432"}
	assert.Equal(t, want, got, "the requests' Content-Range")
	assert.Empty(t, eventsOf(h, id, "retry"), "retries")
	letGo(t, h, base)
}

func TestAPIGetHeadersRejects(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	id := start(h, blobOf([]byte("x"), ""), jsFunc("return Promise.reject(new Error('no token'))"), `{url: "https://up.example/u", getHeaders: true}`)
	end := ended(t, h, id)
	// A getHeaders that failed is an auth_error (docs/api.md), its message kept.
	requireFail(t, end, "auth_error", "no token")
	assert.Empty(t, sendsOf(h, id), "requests sent")
	letGo(t, h, base)
}

func TestUploadKeepsGoMemorySmall(t *testing.T) {
	// 256 MiB in 8 MiB chunks: the bytes never enter Go memory; Go passes ranges.
	h := fakeHost(t, resumable(""))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id := start(h, bigBlob(256), js.Null(), `{url: "https://up.example/u"}`)
	requireDone(t, ended(t, h, id))
	runtime.ReadMemStats(&after)
	assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "bytes a 256 MiB upload allocated in Go")
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
			requireDone(t, ended(t, h, id))
			hashes, digests := h.Get("hashes"), h.Get("digests")
			if tt.kinds == "" {
				require.Zero(t, hashes.Length(), "hashed without a checksum: %s", jsonOf(hashes))
				require.Zero(t, digests.Length(), "hashed without a checksum: %s", jsonOf(digests))
			} else {
				require.Equal(t, 1, hashes.Length(), "hashes: %s", jsonOf(hashes))
				require.Equal(t, tt.kinds, hashes.Index(0).Get("kinds").String(), "the hash's kinds")
				require.NotZero(t, digests.Length(), "digests")
				require.Equal(t, len(data), digests.Index(0).Get("n").Int(), "the first digest's bytes: %s", jsonOf(digests))
			}
			sends := sendsOf(h, id)
			for i, s := range sends {
				got := s.Get("headers").Get("x-goog-hash")
				if i < len(sends)-1 || tt.header == "" {
					assert.True(t, got.IsUndefined(), "request %d states X-Goog-Hash %v", i, got)
				} else {
					assert.Equal(t, tt.header, got.String(), "the last request's X-Goog-Hash")
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
	requireFail(t, end, "protocol_error", "malformed")
	assert.Len(t, sendsOf(h, id), 1, "requests: no retry")
	letGo(t, h, base)
}

// TestSendAnswer reads host.send's "ok" answer, one string (host.js): the fields as lines, the
// body the rest, line breaks and all; a string of another shape is a bad answer, not a status.
func TestSendAnswer(t *testing.T) {
	assert.Equal(t, answer{kind: "ok", status: 200, rng: "bytes=0-9", over: "308", body: "{\n\"a\": 1\n}"},
		sendAnswer("ok\n200\nbytes=0-9\n\n308\n\n{\n\"a\": 1\n}"))
	assert.Equal(t, answer{kind: "ok", status: 404}, sendAnswer("ok\n404\n\n\n\n\n"), "an empty body")
	for _, s := range []string{"", "ok", "ok\n200\n\n\n\n", "fine\n200\n\n\n\n\n", "ok\n2x0\n\n\n\n\n", "ok\n20\n\n\n\n\n", "ok\n2000\n\n\n\n\n"} {
		assert.Equal(t, "bad", sendAnswer(s).kind, "%q", s)
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
