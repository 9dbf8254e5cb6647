//go:build js && wasm

package jsbridge

import (
	"syscall/js"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A session asked of the app's backend through host.session: the ask, each kind of answer,
// and nothing sent to storage when the backend fails.
func TestAPISession(t *testing.T) {
	base := liveFuncs.Load()
	h := fakeHost(t, resumable(""))
	// openWith opens an entry whose host.session answers with answer (a JS expression).
	openWith := func(blob js.Value, answer, options string) int {
		nextID++
		h.Call("open", nextID, object("blob", blob, "sink", object(), "session", jsFunc("return () => ("+answer+")").Invoke()))
		api.Call("upload", nextID, blob.Get("size"), blob.Get("type"), jsFunc("return "+options).Invoke())
		return nextID
	}
	data := randomBytes(262144 + 3)

	t.Run("a session URI from the page's function", func(t *testing.T) {
		id := openWith(blobOf(data, "video/mp4"), `{ kind: "ok", sessionURL: "https://up.example/s?upload_id=1", signedURL: "", headers: null }`,
			`{sessionFunction: true, metadata: {name: "a.mp4"}, chunkSize: 262144}`)
		end := ended(t, h, id)
		require.Equal(t, "done", end.Get("type").String(), end.Get("message").String())
		asks := h.Get("sessions")
		require.Equal(t, 1, asks.Length())
		ask := asks.Index(0)
		assert.Equal(t, "", ask.Get("endpoint").String())
		assert.Equal(t, len(data), ask.Get("size").Int())
		assert.Equal(t, "video/mp4", ask.Get("type").String())
		assert.Equal(t, `{"name":"a.mp4"}`, ask.Get("metadata").String())
		sends := sendsOf(h, id)
		require.Len(t, sends, 2, "no session start: two chunks")
		assert.Equal(t, "https://up.example/s?upload_id=1", sends[0].Get("url").String())
		assert.Equal(t, "PUT", sends[0].Get("method").String())
	})

	t.Run("a signed URL from the endpoint", func(t *testing.T) {
		h.Set("sessions", js.Global().Get("Array").New())
		id := openWith(blobOf(data, ""), `{ kind: "ok", sessionURL: "", signedURL: "https://st.example/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=ab", headers: { "Content-Type": "image/png" } }`,
			`{session: "https://app.example/api/session", chunkSize: 262144, checksum: false}`)
		end := ended(t, h, id)
		require.Equal(t, "done", end.Get("type").String(), end.Get("message").String())
		assert.Equal(t, "https://app.example/api/session", h.Get("sessions").Index(0).Get("endpoint").String())
		start := sendsOf(h, id)[0]
		assert.Equal(t, "POST", start.Get("method").String())
		assert.Equal(t, "start", start.Get("headers").Get("x-goog-resumable").String())
		assert.Equal(t, "image/png", start.Get("headers").Get("content-type").String())
	})

	for _, c := range []struct{ name, answer, kind, text string }{
		{"refused", `{ kind: "refused", status: 403, message: "not signed in", body: '{"error":{"code":403,"message":"not signed in"}}' }`, "refused", "refused the upload with 403 Forbidden: not signed in"},
		{"unreachable", `{ kind: "unreachable", name: "TypeError", message: "Failed to fetch" }`, "unreachable", "could not reach your backend (POST https://app.example/api/session) (TypeError: Failed to fetch)"},
		{"threw", `{ kind: "threw", name: "Error", message: "no token" }`, "threw", "failed (Error: no token)"},
		{"bad", `{ kind: "bad", reason: "not a string or an object but a number" }`, "nonsense", "answered without a usable session (not a string or an object but a number)"},
		{"nonsense URL", `{ kind: "ok", sessionURL: "/relative", signedURL: "", headers: null }`, "nonsense", "the session URI is not an absolute http or https URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := openWith(blobOf(data, ""), c.answer, `{session: "https://app.example/api/session"}`)
			end := ended(t, h, id)
			require.Equal(t, "fail", end.Get("type").String())
			assert.Equal(t, "backend_error", end.Get("code").String())
			assert.Contains(t, end.Get("message").String(), c.text)
			assert.Empty(t, sendsOf(h, id), "nothing sent to storage")
			if c.kind == "refused" {
				assert.Equal(t, 403, end.Get("status").Int())
				assert.Equal(t, "not signed in", end.Get("serverMessage").String())
				assert.Contains(t, end.Get("responseText").String(), `"code":403`)
			}
		})
	}
	letGo(t, h, base)
}
