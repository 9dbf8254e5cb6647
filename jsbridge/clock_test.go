//go:build js && wasm

package jsbridge

import (
	"testing"
	"time"

	"github.com/mediaupload/mediaupload/core"

	"github.com/stretchr/testify/require"
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
		require.GreaterOrEqual(t, at-t0, 29*core.Millisecond, "fired after (ns)")
		require.LessOrEqual(t, at-t0, core.Second, "fired after (ns)")
	case <-time.After(2 * time.Second):
		require.Fail(t, "AfterFunc never fired")
	}
	select {
	case <-stopped:
		require.Fail(t, "a stopped AfterFunc fired")
	case <-time.After(50 * time.Millisecond):
	}
	u := c.Unix()
	require.GreaterOrEqual(t, u, w0.Unix()-1, "Unix() against time.Now()")
	require.LessOrEqual(t, u, time.Now().Unix()+1, "Unix() against time.Now()")
	settleFuncs(t, base)
}
