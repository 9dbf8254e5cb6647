//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"
)

func TestRegisterHandsTheAPIToTheLoader(t *testing.T) {
	// The loader's hook takes the API and answers with the host, here one that records.
	got := js.Global().Get("Function").New(`const r = { events: [] };
	r.host = { report: (id, type, code) => r.events.push({ id, type, code }) }; // a fail: type, code, message, …
	globalThis.__mediauploadInit = (api) => { r.api = api; return r.host };
	return r`).Invoke()
	if !register() {
		t.Fatal("register found no __mediauploadInit")
	}
	api := got.Get("api")
	if api.Get("version").String() != "0.1.0" || api.Get("upload").Type() != js.TypeFunction {
		t.Fatalf("api: version %v, upload %v", api.Get("version"), api.Get("upload").Type())
	}
	for _, m := range []string{"pause", "resume", "abort"} {
		if api.Get(m).Type() != js.TypeFunction {
			t.Fatalf("api.%s is not a function", m)
		}
	}
	// A bad call is answered through the host, synchronously, and never throws.
	api.Call("upload", 1, 0, "", js.ValueOf(map[string]any{}))
	ev := got.Get("events")
	if ev.Length() != 1 || ev.Index(0).Get("type").String() != "fail" || ev.Index(0).Get("code").String() != "invalid_argument" {
		t.Fatalf("events: %v", js.Global().Get("JSON").Call("stringify", ev))
	}
	api.Call("abort", 1) // an id that is not running: nothing happens
	js.Global().Delete("__mediauploadInit")
	if register() {
		t.Fatal("register without __mediauploadInit reported success")
	}
}
