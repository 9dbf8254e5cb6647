//go:build js && wasm

package jsbridge

import (
	"context"
	"syscall/js"
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/core"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvalidArgumentsSendNothing(t *testing.T) {
	url := "https://up.example/upload/x?name=x"
	blob := blobOf([]byte("hello"), "text/plain")
	// Each case: the options as a JS expression over `url` (the blob is checked by the
	// loader, which also turns getHeaders into true or false).
	cases := []struct {
		name, blob, opts, wantField string
	}{
		{"options not an object", "blob", "'x'", "options"},
		{"no options", "blob", "undefined", "url"},
		{"no url", "blob", "({})", "url"},
		{"url not a string", "blob", "({url: 1})", "url"},
		{"relative url", "blob", "({url: '/upload/x'})", "url"},
		{"url with a throwing getter", "blob", "({get url() { throw new Error('no') }})", "url"},
		{"options whose keys throw", "blob", "new Proxy({url}, {ownKeys() { throw new Error('no') }})", "options"},
		{"method", "blob", "({url, method: 'DELETE'})", "method"},
		{"method not a string", "blob", "({url, method: 5})", "method"},
		{"chunkSize not aligned", "blob", "({url, chunkSize: 1000})", "chunkSize"},
		{"chunkSize negative", "blob", "({url, chunkSize: -262144})", "chunkSize"},
		{"chunkSize fraction", "blob", "({url, chunkSize: 262144.5})", "chunkSize"},
		{"chunkSize string", "blob", "({url, chunkSize: '262144'})", "chunkSize"},
		{"chunkSize other word", "blob", "({url, chunkSize: 'fast'})", "chunkSize"},
		{"maxChunkSize not aligned", "blob", "({url, maxChunkSize: 1000})", "maxChunkSize"},
		{"maxChunkSize zero", "blob", "({url, maxChunkSize: 0})", "maxChunkSize"},
		{"chunkSize NaN", "blob", "({url, chunkSize: NaN})", "chunkSize"},
		{"chunkSize Infinity", "blob", "({url, chunkSize: Infinity})", "chunkSize"},
		{"uploadType", "blob", "({url, uploadType: 'chunked'})", "uploadType"},
		{"metadata array", "blob", "({url, metadata: [1]})", "metadata"},
		{"metadata string", "blob", "({url, metadata: '{}'})", "metadata"},
		{"metadata date", "blob", "({url, metadata: new Date()})", "metadata"},
		{"metadata cycle", "blob", "(() => { const m = {}; m.m = m; return {url, metadata: m} })()", "metadata"},
		{"metadata bigint", "blob", "({url, metadata: {n: 1n}})", "metadata"},
		{"metadata on media", "blob", "({url, uploadType: 'media', metadata: {name: 'x'}})", "metadata"},
		{"contentType", "blob", "({url, contentType: 3})", "contentType"},
		{"contentType control", "blob", "({url, contentType: 'a\\nb'})", "contentType"},
		{"headers string", "blob", "({url, headers: 'x'})", "headers"},
		{"headers array", "blob", "({url, headers: [['a', 'b']]})", "headers"},
		{"headers number value", "blob", "({url, headers: {'X-A': 1}})", "headers"},
		{"headers bad name", "blob", "({url, headers: {'a b': 'c'}})", "headers"},
		{"getHeaders not a boolean", "blob", "({url, getHeaders: {}})", "getHeaders"},
		{"sessionURL", "blob", "({url, sessionURL: 7})", "sessionURL"},
		{"sessionURL relative", "blob", "({sessionURL: 'x'})", "sessionURL"},
		{"sessionURL with media", "blob", "({url, uploadType: 'media', sessionURL: url})", "sessionURL"},
		{"checksum true", "blob", "({url, checksum: true})", "checksum"},
		{"checksum unknown", "blob", "({url, checksum: 'sha1'})", "checksum"},
		{"retry not an object", "blob", "({url, retry: 3})", "retry"},
		{"retry negative", "blob", "({url, retry: {retries: -1}})", "retry"},
		{"retry maxDelayMs", "blob", "({url, retry: {maxDelayMs: 60001}})", "retry"},
		{"retry delay string", "blob", "({url, retry: {initialDelayMs: '10'}})", "retry"},
		{"queryStatusEachChunk", "blob", "({url, queryStatusEachChunk: 'yes'})", "queryStatusEachChunk"},
		{"noRedirect308", "blob", "({url, noRedirect308: 1})", "noRedirect308"},
		{"session a number", "blob", "({session: 5})", "session"},
		{"session an object", "blob", "({session: {url}})", "session"},
		{"session relative", "blob", "({session: '/api/session'})", "session"},
		{"session and sessionURL", "blob", "({session: 'https://app.example/api/session', sessionURL: url})", "session"},
		{"session function and sessionURL", "blob", "({sessionFunction: true, sessionURL: url})", "session"},
		{"session with media", "blob", "({sessionFunction: true, uploadType: 'media'})", "session"},
	}
	base := liveFuncs.Load()
	h := fakeHost(t, jsFunc(`return () => ({ kind: "ok", status: 200 })`).Invoke())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nextID++
			id := nextID
			h.Call("open", id, object("blob", blob, "sink", object()))
			o := jsFunc("url", "return "+c.opts).Invoke(url)
			api.Call("upload", id, blob.Get("size"), blob.Get("type"), o)
			// Told at once, inside upload(), before anything could be sent.
			ev := eventsOf(h, id, "state", "progress", "request", "done", "fail")
			require.Len(t, ev, 1, "reports: %v", js.Global().Get("JSON").Call("stringify", h.Get("events")))
			require.Equal(t, "fail", ev[0].Get("type").String())
			assert.Equal(t, "invalid_argument", ev[0].Get("code").String(), ev[0].Get("message").String())
			assert.Contains(t, ev[0].Get("message").String(), c.wantField)
		})
	}
	time.Sleep(50 * time.Millisecond)
	require.Zero(t, h.Get("sends").Length(), "requests sent")
	letGo(t, h, base)
}

func TestOptionsConversions(t *testing.T) {
	gh := func(core.Context) (core.Header, error) { return core.Header{"x-token": "t"}, nil }
	o := jsFunc(`return {url: "https://h.example/upload/x", method: "put", uploadType: "multipart",
		metadata: {name: "a", n: [1, "é"]}, headers: {Authorization: "Bearer x"},
		retry: {retries: 2, initialDelayMs: 10, maxDelayMs: 20000, jitterMs: 0},
		queryStatusEachChunk: true, noRedirect308: true, resume: false, checksum: "both",
		getHeaders: true, signal: null, onProgress() {}}`).Invoke()
	opts, err := Options(o, "text/plain", gh, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(core.ChunkAuto), opts.ChunkSize)
	assert.Equal(t, "text/plain", opts.ContentType)
	assert.Equal(t, core.Multipart, opts.Type)
	assert.Equal(t, `{"name":"a","n":[1,"é"]}`, string(opts.Metadata))
	assert.Equal(t, "Bearer x", opts.Header.Get("authorization"))
	assert.True(t, opts.QueryStatusEachChunk, "queryStatusEachChunk")
	assert.True(t, opts.NoRedirect308, "noRedirect308")
	assert.Equal(t, "put", opts.Method)
	assert.Equal(t, core.Both, opts.Checksum)
	want := core.DefaultRetryPolicy()
	want.Retries, want.InitialDelay, want.MaxDelay, want.Jitter = 2, 10*core.Millisecond, 20*core.Second, 0
	require.NotNil(t, opts.Retry)
	assert.Equal(t, want, *opts.Retry, "retry")
	h, err := opts.GetHeader(context.Background())
	require.NoError(t, err, "getHeaders")
	assert.Equal(t, "t", h.Get("x-token"), "getHeaders")

	opts, err = Options(jsFunc(`return {url: "http://h/u", chunkSize: 0, metadata: null, headers: undefined, getHeaders: false}`).Invoke(), "", gh, nil)
	require.NoError(t, err, "defaults")
	assert.Nil(t, opts.GetHeader, "defaults: getHeaders")
	assert.Zero(t, opts.ChunkSize, "defaults: chunkSize")
	assert.Nil(t, opts.Metadata, "defaults: metadata")
	assert.Empty(t, opts.ContentType, "defaults: contentType")
}

// TestHasLine: Options reads an option only where its name is one of the copy's keys (joined
// by line breaks), whole: "url" is not "urls", nor in "curl".
func TestHasLine(t *testing.T) {
	for _, c := range []struct {
		keys, name string
		want       bool
	}{
		{"url\norigin", "url", true}, {"url\norigin", "origin", true}, {"origin\nurl", "url", true},
		{"", "url", false}, {"urls\norigin", "url", false}, {"curl", "url", false}, {"origin\nur", "url", false},
	} {
		assert.Equal(t, c.want, hasLine(c.keys, c.name), "hasLine(%q, %q)", c.keys, c.name)
	}
}
