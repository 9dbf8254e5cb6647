//go:build js && wasm

package jsbridge

import (
	"sync"
	"sync/atomic"
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// liveFuncs counts the js.Func values made by funcOf and not yet released: the tests check
// that every upload gives back all it took.
var liveFuncs atomic.Int64

// funcOf is js.FuncOf, counted.
func funcOf(fn func(this js.Value, args []js.Value) any) js.Func {
	liveFuncs.Add(1)
	return js.FuncOf(fn)
}

// release is js.Func.Release, counted.
func release(f js.Func) {
	liveFuncs.Add(-1)
	f.Release()
}

// Await waits for the JS promise p (or any value: Promise.resolve adopts thenables and wraps
// plain values) to settle and returns its value, or its rejection as an error.
//
// It must be called from a goroutine, never from inside a function called by JS: the
// callbacks that settle it run on the JS event loop and only ever send to channels with a
// buffer of one, so the event loop never waits for Go. Whichever callback fires releases
// both.
//
// When ctx ends first, abort (if not nil) is called, and Await still waits for p to settle
// before it returns ctx.Err(): the caller's AbortController makes that prompt, and nothing
// the promise owns (a fetch's body, a connection) outlives the call. With a nil abort
// nothing can hurry p, so Await returns ctx.Err() at once; the callbacks are released when
// p settles (a promise that never settles keeps its two callbacks).
func Await(ctx core.Context, p js.Value, abort func()) (js.Value, error) {
	p = promiseResolve(p)
	okc := make(chan js.Value, 1)
	failc := make(chan js.Value, 1)
	var ok, fail js.Func
	var once sync.Once
	done := func() {
		once.Do(func() {
			release(ok)
			release(fail)
		})
	}
	ok = funcOf(func(this js.Value, args []js.Value) any {
		done()
		okc <- arg(args, 0)
		return nil
	})
	fail = funcOf(func(this js.Value, args []js.Value) any {
		done()
		failc <- arg(args, 0)
		return nil
	})
	if err := try(func() { p.Call("then", ok, fail) }); err != nil {
		done()
		return js.Undefined(), err
	}
	select {
	case v := <-okc:
		return v, nil
	case v := <-failc:
		return js.Undefined(), errorFrom(v)
	case <-ctx.Done():
	}
	if abort == nil {
		return js.Undefined(), ctx.Err()
	}
	abort()
	select { // settles promptly: the abort rejects it
	case <-okc:
	case <-failc:
	}
	return js.Undefined(), ctx.Err()
}

// promiseResolve returns Promise.resolve(v): a native promise whose then callbacks are called
// at most once between them, whatever v is (a thenable that called both would make Go call a
// released function, which ends the program).
func promiseResolve(v js.Value) js.Value {
	return js.Global().Get("Promise").Call("resolve", v)
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// jsError is an exception thrown or a rejection made by JS.
type jsError struct {
	name, message string
}

func (e *jsError) Error() string {
	if e.name == "" {
		return "jsbridge: " + e.message
	}
	return "jsbridge: " + e.name + ": " + e.message
}

// errorFrom turns a thrown or rejected JS value into a Go error.
func errorFrom(v js.Value) error {
	if v.Type() == js.TypeObject {
		msg, _ := get(v, "message")
		if msg.Type() == js.TypeString {
			name := ""
			if n, _ := get(v, "name"); n.Type() == js.TypeString {
				name = n.String()
			}
			return &jsError{name: name, message: msg.String()}
		}
	}
	s := ""
	_ = try(func() { s = js.Global().Call("String", v).String() })
	return &jsError{message: s}
}

// try runs f and turns an exception thrown by JS inside it (syscall/js panics with a
// js.Error) into an error. Other panics go on up.
func try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(js.Error)
			if !ok {
				panic(r)
			}
			err = errorFrom(je.Value)
		}
	}()
	f()
	return nil
}
