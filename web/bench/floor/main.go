//go:build js && wasm

// Command floor is the wasm's size floor: a Go program that links syscall/js and nothing else,
// the least any Go module for the browser downloads. ./build.sh prints mediaupload.wasm's
// gzipped size against this one's (issue "Many files": within 1.25 times of it).
package main

import "syscall/js"

func main() {
	js.Global().Set("floor", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	select {}
}
