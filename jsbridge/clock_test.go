//go:build js && wasm

package jsbridge

import (
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/core"
)

func TestClock(t *testing.T) {
	base := liveFuncs.Load()
	var c Clock
	t0, w0 := c.Now(), time.Now()
	fired := make(chan core.Duration, 1)
	c.AfterFunc(30*core.Millisecond, func() { fired <- c.Now() })
	stopped := make(chan bool, 1)
	stop := c.AfterFunc(10*core.Millisecond, func() { stopped <- true })
	stop()
	stop() // a second stop does nothing
	select {
	case at := <-fired:
		if d := at - t0; d < 29*core.Millisecond || d > core.Second {
			t.Fatalf("fired after %v ns", int64(d))
		}
	case <-time.After(2 * time.Second):
		t.Fatal("AfterFunc never fired")
	}
	select {
	case <-stopped:
		t.Fatal("a stopped AfterFunc fired")
	case <-time.After(50 * time.Millisecond):
	}
	if u := c.Unix(); u < w0.Unix()-1 || u > time.Now().Unix()+1 {
		t.Fatalf("Unix() = %d, time.Now() = %d", u, w0.Unix())
	}
	settleFuncs(t, base)
}
