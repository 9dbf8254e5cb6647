//go:build js && wasm

// Command wasm is the browser module, dist/mediaupload.wasm: it hands the API built by
// jsbridge to the module's starter (web/js/src/engine/module.js) through
// globalThis.__mediauploadInit, which the starter sets before it runs the module and which
// answers with the host (its contract: web/js/src/engine/host.js), and then blocks, so the
// functions it handed out stay callable.
package main

import (
	"syscall/js"

	"github.com/mediaupload/mediaupload/jsbridge"
)

// version is the module's version, api.version (docs/api.md: mu.version).
const version = "0.1.0"

func main() {
	if !register() {
		return // not started by the loader: nothing would ever call us
	}
	select {}
}

// register calls globalThis.__mediauploadInit(api), takes the host it returns, and reports
// whether the hook was there and answered with an object. Whatever the loader's function
// throws ends the module quietly instead of as a Go panic.
func register() (ok bool) {
	init := js.Global().Get("__mediauploadInit")
	if init.Type() != js.TypeFunction {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	host := init.Invoke(jsbridge.API(version))
	if host.Type() != js.TypeObject {
		return false
	}
	jsbridge.SetHost(host)
	return true
}
