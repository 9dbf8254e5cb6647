//go:build js && wasm

// Command goloop is the benchmark's floor for Go in the browser: the same chunked upload as
// the plain-fetch baseline of web/bench/bench.mjs, written in Go with syscall/js and nothing
// else (no core, no jsbridge, no retries, no events). The module cannot cost less than this;
// the gap between it and plain fetch is Go's own (waking from a promise callback, the
// scheduler, JS references), not the module's.
//
// It sets globalThis.goChunked(sessionURL, blob, size, chunk, done): done("ok") once the
// server answered 200 or 201, done("fail") on any other outcome.
package main

import (
	"strconv"
	"syscall/js"
)

type settlement struct {
	v  js.Value
	ok bool
}

func main() {
	settled := make(chan settlement, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any { settled <- settlement{args[0], true}; return nil })
	fail := js.FuncOf(func(_ js.Value, args []js.Value) any { settled <- settlement{args[0], false}; return nil })
	fetch, object, rangeName := js.Global().Get("fetch"), js.Global().Get("Object"), js.ValueOf("range")
	js.Global().Set("goChunked", js.FuncOf(func(_ js.Value, args []js.Value) any {
		session, blob, size, chunk, done := args[0], args[1], int64(args[2].Int()), int64(args[3].Int()), args[4]
		go func() {
			init, h := object.New(), object.New()
			init.Set("method", "PUT")
			init.Set("headers", h)
			for off := int64(0); ; {
				end := min(off+chunk, size)
				h.Set("content-range", "bytes "+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(end-1, 10)+"/"+strconv.FormatInt(size, 10))
				init.Set("body", blob.Call("slice", float64(off), float64(end)))
				fetch.Invoke(session, init).Call("then", ok, fail)
				s := <-settled
				if !s.ok {
					done.Invoke("fail")
					return
				}
				switch s.v.Get("status").Int() {
				case 200, 201:
					done.Invoke("ok")
					return
				case 308:
				default:
					done.Invoke("fail")
					return
				}
				r := s.v.Get("headers").Call("get", rangeName).String() // "bytes=0-N"
				n := int64(0)
				for i := len("bytes=0-"); i < len(r); i++ {
					n = n*10 + int64(r[i]-'0')
				}
				off = n + 1
			}
		}()
		return nil
	}))
	select {}
}
