//go:build js && wasm

package jsbridge

import (
	"sync/atomic"
	"syscall/js"
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
		return e.message
	}
	return e.name + ": " + e.message
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
