package netlink

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyEnd is how a body read through the link ended, as a handler saw it.
type bodyEnd struct {
	n     int64
	err   error
	at    time.Time
	proto int // the request's HTTP major version
}

// ending is a handler that reads a body whole and tells how it ended on ended; a request
// without a body tells when it arrived on arrived.
type ending struct {
	ended   chan bodyEnd
	arrived chan time.Time
}

func newEnding() *ending {
	return &ending{ended: make(chan bodyEnd, 4), arrived: make(chan time.Time, 4)}
}

func (e *ending) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		e.arrived <- time.Now()
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	e.ended <- bodyEnd{n, err, time.Now(), r.ProtoMajor}
}

func (e *ending) wait(t *testing.T) bodyEnd {
	t.Helper()
	select {
	case b := <-e.ended:
		return b
	case <-time.After(10 * time.Second):
		require.Fail(t, "the body still read 10 s after the client gave it up")
	}
	return bodyEnd{}
}

// A request given up delivers its queue: the oldest bytes it had handed to the link go on
// arriving at the link's rate for the queue's time, the rest are dropped (then errGone); a
// request that arrives meanwhile waits behind the queue. Queue 0: today's model, everything
// the link had not carried dropped at once, and nothing waits. Over HTTP/1.1 (the client
// closes its connection: Listen) and HTTP/2 (it resets the stream, the bytes held in the
// stream's window), at 1 Mbit/s, the request given up half a second in with 2 MiB handed over.
func TestQueueOfARequestGivenUp(t *testing.T) {
	const rate = 125_000 // 1 Mbit/s
	for _, h2 := range []bool{false, true} {
		for _, queue := range []time.Duration{0, 500 * time.Millisecond, -1} { // -1: the default
			name := "HTTP/1.1"
			if h2 {
				name = "HTTP/2"
			}
			label := "queue " + queue.String()
			if queue < 0 {
				label = "the default queue"
			}
			t.Run(name+", "+label, func(t *testing.T) {
				l := &Link{}
				l.Set(rate, 0)
				if queue < 0 {
					queue = DefaultQueue
				} else {
					l.SetQueue(queue)
				}
				e := newEnding()
				var gaveUp time.Time
				var query func()
				if h2 {
					srv := httptest.NewUnstartedServer(l.Wrap(e))
					srv.EnableHTTP2 = true
					srv.StartTLS()
					t.Cleanup(srv.Close)
					c := srv.Client()
					gaveUp = putAndCancel(t, c, srv.URL, 2<<20, 500*time.Millisecond)
					query = func() { timed(t, c, "PUT", srv.URL, 0) }
				} else {
					addr := serveListen(t, l, e)
					gaveUp = writeAndClose(t, addr, 4<<20, 2<<20, 500*time.Millisecond)
					query = func() { timed(t, http.DefaultClient, "PUT", "http://"+addr+"/", 0) }
				}
				// As a client asks what arrived, soon after (a browser's abort reaches the page, then
				// the page asks): the server has seen the request given up by then.
				time.Sleep(50 * time.Millisecond)
				var asked sync.WaitGroup
				asked.Go(query)
				defer asked.Wait()
				b := e.wait(t)
				var arrived time.Time
				select {
				case arrived = <-e.arrived:
				case <-time.After(5 * time.Second):
					require.Fail(t, "the request sent after the cut never arrived")
				}
				after := b.at.Sub(gaveUp)
				t.Logf("read %d bytes, %v, the body ended %v after it was given up; a request sent then arrived %v after it",
					b.n, b.err, after.Round(time.Millisecond), arrived.Sub(gaveUp).Round(time.Millisecond))
				require.Equal(t, map[bool]int{false: 1, true: 2}[h2], b.proto, "the request's HTTP version")
				assert.ErrorIs(t, b.err, errGone, "how the body ended")
				// Half a second of the link before, then the queue's worth.
				carried := int64(rate / 2)
				want := carried + int64(rate*queue.Seconds())
				assert.InDelta(t, want, b.n, rate/4, "bytes read (%d before, then the queue's %v)", carried, queue)
				assert.GreaterOrEqual(t, after, queue-100*time.Millisecond, "the body's end after it was given up, want about the queue's %v", queue)
				assert.LessOrEqual(t, after, queue+400*time.Millisecond, "the body's end after it was given up, want about the queue's %v", queue)
				d := arrived.Sub(gaveUp)
				assert.GreaterOrEqual(t, d, queue-100*time.Millisecond, "a request sent at the cut arrived after it, want behind the queue (%v)", queue)
				assert.LessOrEqual(t, d, max(queue+500*time.Millisecond, time.Second), "a request sent at the cut arrived after it, want behind the queue (%v)", queue)
			})
		}
	}
}

// A body given up after its last byte was handed to the link (its client waited for the answer
// and gave up) arrives whole where the queue holds it: the handler reads it to its end.
func TestQueueDeliversAWholeBody(t *testing.T) {
	l := &Link{}
	l.Set(125_000, 0) // 1 Mbit/s: 100 KB in 0.8 s, within the queue's second
	e := newEnding()
	addr := serveListen(t, l, e)
	writeAndClose(t, addr, 100_000, 100_000, 100*time.Millisecond)
	b := e.wait(t)
	assert.NoError(t, b.err)
	assert.Equal(t, int64(100_000), b.n, "bytes read: want the whole body")
}

// The queue's worth is the rate in force when the request is given up; in a blackout, the rate
// before it, and it arrives once the blackout is over.
func TestQueueThroughABlackout(t *testing.T) {
	l := &Link{}
	setSchedule(t, l, Step{Rate: 125_000}, Step{At: 300 * time.Millisecond, Blackout: true}, Step{At: 900 * time.Millisecond, Rate: 125_000})
	l.SetQueue(400 * time.Millisecond)
	e := newEnding()
	addr := serveListen(t, l, e)
	t0 := time.Now()
	writeAndClose(t, addr, 4<<20, 2<<20, 500*time.Millisecond) // in the blackout
	b := e.wait(t)
	// 300 ms of the link before the blackout (37.5 KB and an idle link's slack), then the queue
	// (50 KB) from 900 ms on.
	at := b.at.Sub(t0)
	t.Logf("read %d bytes, %v, ended at %v", b.n, b.err, at.Round(time.Millisecond))
	assert.ErrorIs(t, b.err, errGone, "how the body ended")
	assert.InDelta(t, 90_000, b.n, 20_000, "bytes read: want about 90 KB")
	assert.GreaterOrEqual(t, at, 1200*time.Millisecond, "the queue's end, want about 1.3 s (after the blackout, 0.4 s of the link)")
	assert.LessOrEqual(t, at, 1800*time.Millisecond, "the queue's end, want about 1.3 s (after the blackout, 0.4 s of the link)")
}

// The zero Link's queue is DefaultQueue; SetQueue changes it, never below 0.
func TestQueueDefault(t *testing.T) {
	var l Link
	assert.Equal(t, time.Second, DefaultQueue)
	assert.Equal(t, DefaultQueue, l.Queue(), "the zero Link's queue")
	l.SetQueue(-time.Second)
	assert.Zero(t, l.Queue(), "SetQueue(-1 s)")
	l.SetQueue(250 * time.Millisecond)
	l.Set(1000, 0) // a new rate keeps the queue
	assert.Equal(t, 250*time.Millisecond, l.Queue(), "after Set")
}

// writeAndClose sends the head of a PUT of size bytes and sent bytes of its body to addr over
// HTTP/1.1, closes the connection after hold, and returns when it closed it.
func writeAndClose(t *testing.T, addr string, size, sent int, hold time.Duration) time.Time {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = c.Write([]byte("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"))
	require.NoError(t, err)
	_, err = c.Write(make([]byte, sent)) // into the sockets' buffers and the pump's
	require.NoError(t, err)
	time.Sleep(hold)
	closed := time.Now()
	c.Close()
	return closed
}

// putAndCancel sends a PUT of size bytes with c (HTTP/2), gives it up after hold (the stream is
// reset), and returns when it gave it up.
func putAndCancel(t *testing.T, c *http.Client, url string, size int, hold time.Duration) time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "PUT", url, io.LimitReader(zeros{}, int64(size)))
	require.NoError(t, err)
	req.ContentLength = int64(size)
	var wg sync.WaitGroup
	wg.Go(func() {
		if res, err := c.Do(req); err == nil {
			res.Body.Close()
		}
	})
	time.Sleep(hold)
	cancelled := time.Now()
	cancel()
	wg.Wait()
	return cancelled
}

// zeros reads as endless zeros.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
