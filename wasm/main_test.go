//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRegisterHandsTheAPIToTheLoader(t *testing.T) {
	// The loader's hook takes the API and answers with the host, here one that records.
	got := js.Global().Get("Function").New(`const r = { events: [] };
	r.host = { report: (id, type, code) => r.events.push({ id, type, code }) }; // a fail: type, code, message, …
	globalThis.__mediauploadInit = (api) => { r.api = api; return r.host };
	return r`).Invoke()
	require.True(t, register(), "register found no __mediauploadInit")
	api := got.Get("api")
	require.Equal(t, "0.1.0", api.Get("version").String(), "api.version")
	for _, m := range []string{"upload", "pause", "resume", "abort"} {
		require.Equal(t, js.TypeFunction, api.Get(m).Type(), "api.%s", m)
	}
	// A bad call is answered through the host, synchronously, and never throws.
	api.Call("upload", 1, 0, "", js.ValueOf(map[string]any{}))
	ev := got.Get("events")
	events := js.Global().Get("JSON").Call("stringify", ev).String()
	require.Equal(t, 1, ev.Length(), "events: %s", events)
	require.Equal(t, "fail", ev.Index(0).Get("type").String(), "events: %s", events)
	require.Equal(t, "invalid_argument", ev.Index(0).Get("code").String(), "events: %s", events)
	api.Call("abort", 1) // an id that is not running: nothing happens
	js.Global().Delete("__mediauploadInit")
	require.False(t, register(), "register without __mediauploadInit reported success")
}
