//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"
)

func TestRegisterHandsTheAPIToTheLoader(t *testing.T) {
	got := js.Global().Get("Function").New(`const r = {}; globalThis.__mediauploadInit = (api) => { r.api = api }; return r`).Invoke()
	if !register() {
		t.Fatal("register found no __mediauploadInit")
	}
	api := got.Get("api")
	if api.Get("version").String() != "0.1.0" || api.Get("upload").Type() != js.TypeFunction {
		t.Fatalf("api: version %v, upload %v", api.Get("version"), api.Get("upload").Type())
	}
	// A bad call is answered through sink.fail, synchronously, and never throws.
	sink := js.Global().Get("Function").New(`const s = { fail(x) { s.failed = x } }; return s`).Invoke()
	h := api.Call("upload", js.Undefined(), js.Undefined(), sink)
	if f := sink.Get("failed"); f.IsUndefined() || f.Get("code").String() != "invalid_argument" {
		t.Fatalf("fail: %v", f)
	}
	h.Call("abort") // an inert handle does nothing
	js.Global().Delete("__mediauploadInit")
	if register() {
		t.Fatal("register without __mediauploadInit reported success")
	}
}
