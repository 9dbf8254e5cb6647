//go:build !js

package core

import "time"

// defaultClock returns package time's clock, its origin the moment of the call.
func defaultClock() Clock { return stdClock{origin: time.Now()} }

type stdClock struct{ origin time.Time }

func (c stdClock) Now() Duration { return Duration(time.Since(c.origin)) }
func (stdClock) Unix() int64     { return time.Now().Unix() }

func (stdClock) AfterFunc(d Duration, f func()) func() {
	t := time.AfterFunc(time.Duration(d), f) // AfterFunc, not NewTimer: see sleep in upload.go
	return func() { t.Stop() }
}
