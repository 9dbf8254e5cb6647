//go:build js

package core

// defaultClock returns nil: on js/wasm core has no clock of its own, since package time would
// cost the module 211 KB (clock.go). Options.Clock is required there.
func defaultClock() Clock { return nil }
