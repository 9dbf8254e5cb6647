//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"syscall/js"
	"testing"
	"time"
)

func TestAwait(t *testing.T) {
	base := liveFuncs.Load()
	ctx := context.Background()

	v, err := Await(ctx, js.Global().Get("Promise").Call("resolve", 42), nil)
	if err != nil || v.Int() != 42 {
		t.Fatalf("resolved: %v, %v", v, err)
	}
	settleFuncs(t, base)

	_, err = Await(ctx, jsFunc("return Promise.reject(new TypeError('boom'))").Invoke(), nil)
	var je *jsError
	if !errors.As(err, &je) || je.name != "TypeError" || je.message != "boom" {
		t.Fatalf("rejected: got %v", err)
	}
	settleFuncs(t, base)

	_, err = Await(ctx, jsFunc("return Promise.reject('plain')").Invoke(), nil)
	if err == nil || err.Error() != "jsbridge: plain" {
		t.Fatalf("rejected with a string: got %v", err)
	}

	// A plain value and a thenable are adopted like await does.
	if v, err := Await(ctx, js.ValueOf("x"), nil); err != nil || v.String() != "x" {
		t.Fatalf("plain value: %v, %v", v, err)
	}
	if v, err := Await(ctx, jsFunc("return {then(ok){ ok(7) }}").Invoke(), nil); err != nil || v.Int() != 7 {
		t.Fatalf("thenable: %v, %v", v, err)
	}
	settleFuncs(t, base)
}

func TestAwaitCancelAbortsAndWaits(t *testing.T) {
	base := liveFuncs.Load()
	// A promise that only an abort settles, like fetch with an AbortController.
	st := jsFunc(`const s = {}; s.p = new Promise((ok, fail) => { s.abort = () => setTimeout(() => { s.settled = true; fail(new DOMException("aborted", "AbortError")) }, 30) }); return s`).Invoke()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	aborted := false
	t0 := time.Now()
	_, err := Await(ctx, st.Get("p"), func() { aborted = true; st.Call("abort") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !aborted {
		t.Fatal("abort was not called")
	}
	if !st.Get("settled").Truthy() {
		t.Fatal("Await returned before the promise settled")
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("took %v", d)
	}
	settleFuncs(t, base)
}

func TestAwaitCancelWithoutAbortReturnsAtOnce(t *testing.T) {
	base := liveFuncs.Load()
	st := jsFunc(`const s = {}; s.p = new Promise(ok => { s.ok = ok }); return s`).Invoke()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Await(ctx, st.Get("p"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if liveFuncs.Load() != base+2 {
		t.Fatalf("live funcs %d, want %d while the promise is pending", liveFuncs.Load(), base+2)
	}
	st.Call("ok", 1) // settling later releases the callbacks
	settleFuncs(t, base)
}
