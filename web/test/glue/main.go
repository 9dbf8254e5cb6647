//go:build js && wasm

// Command glue is web/test/glue.test.mjs's program: it takes strings through Go's glue both
// ways (js.Value.String, js.ValueOf, Get and Set by name), as the module's calls do, and hands
// back what it got, so that the test compares it with what it gave.
package main

import (
	"syscall/js"
	"unicode/utf8"
)

func main() {
	cases := js.Global().Get("glueCases")
	out := js.Global().Get("Object").New()
	back := js.Global().Get("Array").New()
	named := js.Global().Get("Object").New()
	bytes := js.Global().Get("Array").New()
	for i := 0; i < cases.Length(); i++ {
		s := cases.Index(i).String() // JS to Go: valuePrepareString, valueLoadString
		back.Call("push", s)         // Go to JS: stringVal
		named.Set(s, i)              // a name: valueSet's loadString
		n := len(s)
		if !utf8.ValidString(s) {
			n = -1
		}
		bytes.Call("push", n)
		if got := named.Get(s); got.Type() != js.TypeNumber || got.Int() != i { // valueGet's loadString
			bytes.SetIndex(i, -2)
		}
	}
	out.Set("back", back)
	out.Set("named", named)
	out.Set("bytes", bytes)
	js.Global().Call("glueDone", out)
}
