package netlink

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveListen serves h behind l on a listener from Listen, as the reference server does, and
// returns its address.
func serveListen(t *testing.T, l *Link, h http.Handler) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: l.Wrap(h), ConnContext: ConnContext}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// An HTTP/1.1 client that gives a request up mid-body (closes its connection) is seen at once:
// on a link without a queue the body's read ends with errGone, and the bytes the link had not
// carried are not read after it. (Read from the socket as the link carried them, the bytes
// already in the sockets' buffers went on being read at the link's rate: seconds at 1 Mbit/s.
// With a queue, its worth of them: queue_test.go.)
func TestClosedConnectionEndsTheBody(t *testing.T) {
	l := &Link{}
	l.Set(125_000, 0) // 1 Mbit/s
	l.SetQueue(0)
	type end struct {
		n   int64
		err error
		at  time.Time
	}
	ended := make(chan end, 1)
	addr := serveListen(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		ended <- end{n, err, time.Now()}
	}))
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	const size, sent = 4 << 20, 2 << 20
	_, err = c.Write([]byte("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"))
	require.NoError(t, err)
	_, err = c.Write(make([]byte, sent)) // into the sockets' buffers and the pump's
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond) // the link carries about 62 KB of it
	closed := time.Now()
	c.Close()
	select {
	case e := <-ended:
		t.Logf("read %d bytes, %v, %v after the close", e.n, e.err, e.at.Sub(closed).Round(time.Millisecond))
		assert.ErrorIs(t, e.err, errGone, "how the body ended")
		assert.LessOrEqual(t, e.n, int64(200<<10), "bytes read: more than the link carried before the close")
	case <-time.After(5 * time.Second):
		require.Fail(t, "the body still read 5 s after the client closed (at 1 Mbit/s its 2 MiB take 17 s)")
	}
}

// A pumped connection serves requests as any other: the bodies whole, a second request on the
// same connection (net/http's read after a body, and its abort by a deadline, go through the
// pump), and a read deadline that passes.
func TestPumpedConnectionKeepsAlive(t *testing.T) {
	l := &Link{}
	l.Set(10_000_000, 0) // 80 Mbit/s: metered, so pumped
	addr := serveListen(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(strconv.FormatInt(n, 10)))
	}))
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	rd := bufio.NewReader(c)
	for i, size := range []int{300 << 10, 1 << 20, 70 << 10} {
		_, err := c.Write(append([]byte("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n"), make([]byte, size)...))
		require.NoError(t, err)
		res, err := http.ReadResponse(rd, nil)
		require.NoError(t, err, "request %d", i)
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, strconv.Itoa(size), string(body), "request %d: the bytes the server read", i)
		time.Sleep(50 * time.Millisecond) // between requests: net/http's read waits on the pump
	}

	// The pump keeps the server's read deadline.
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		if cc, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			time.Sleep(2 * time.Second)
			cc.Close()
		}
	}()
	sc, err := ln.Accept()
	require.NoError(t, err)
	defer sc.Close()
	sc.(*conn).pump(1)
	_ = sc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	t0 := time.Now()
	_, err = sc.Read(make([]byte, 10))
	took := time.Since(t0)
	var ne net.Error
	if assert.ErrorAs(t, err, &ne, "a read past its deadline") {
		assert.True(t, ne.Timeout(), "a read past its deadline: %v, want a timeout", err)
	}
	assert.LessOrEqual(t, took, time.Second, "a read past its deadline: want a timeout after 100 ms")
}

// A pumped body comes at the link's rate, as one read from the socket does: the client's bytes
// held in memory, megabytes, cost no time of their own.
func TestPumpedBodyAtTheLinksRate(t *testing.T) {
	l := &Link{}
	l.Set(8_000_000, 0)
	addr := serveListen(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	t0 := time.Now()
	res, err := http.Post("http://"+addr+"/", "application/octet-stream", bytes.NewReader(make([]byte, 8_000_000)))
	require.NoError(t, err)
	res.Body.Close()
	d := time.Since(t0)
	assert.GreaterOrEqual(t, d, 950*time.Millisecond, "8 MB at 8 MB/s, want about 1 s")
	assert.LessOrEqual(t, d, 1150*time.Millisecond, "8 MB at 8 MB/s, want about 1 s")
}

// Over a fast link the pump reads no more than fastAhead ahead of the server; over a slow one
// it takes all the client sent.
func TestPumpReadsAheadByTheLinksRate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rate     int64
		min, max int
	}{
		{"40 Mbit/s", 5_000_000, 0, fastAhead + pumpRead},
		{"2 Mbit/s", 250_000, 6 << 20, pumpMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Link{}
			l.Set(tc.rate, 0)
			held := make(chan int, 1)
			addr := serveListen(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = r.Body.Read(make([]byte, 1)) // the pump starts
				time.Sleep(300 * time.Millisecond)
				c := connOf(r.Context())
				c.mu.Lock()
				held <- c.held
				c.mu.Unlock()
			}))
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			const size = 8 << 20
			go func() {
				_, _ = c.Write(append([]byte("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n"), make([]byte, size)...))
			}()
			h := <-held
			assert.GreaterOrEqual(t, h, tc.min, "bytes the pump held")
			assert.LessOrEqual(t, h, tc.max, "bytes the pump held")
		})
	}
}

// Closing a pumped connection ends the pump, also while it waits for room (the server has not
// read what it holds): without it, a connection the server gave up kept its goroutine and up
// to pumpMax of blocks for as long as the client kept the socket open.
func TestClosedPumpEnds(t *testing.T) {
	// pumps counts every pump of the process: the earlier tests' end with their servers.
	noPumps := func() bool { return pumps() == 0 }
	require.Eventually(t, noPumps, 2*time.Second, 10*time.Millisecond, "the earlier tests' pumps did not end")
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer cc.Close() // the client stays: only the server's close ends the pump
	go func() { _, _ = cc.Write(make([]byte, 8<<20)) }()
	sc, err := ln.Accept()
	require.NoError(t, err)
	pc := sc.(*conn)
	pc.pump(5_000_000) // 40 Mbit/s: it reads fastAhead ahead, then waits for room
	require.Eventually(t, func() bool {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		return pc.held >= fastAhead
	}, 2*time.Second, 10*time.Millisecond, "the pump did not come to hold fastAhead")
	require.NotZero(t, pumps(), "no pump goroutine found while it waits (pumps() looks for the wrong name)")
	_ = sc.Close()
	require.Eventually(t, noPumps, 2*time.Second, 10*time.Millisecond, "the pump did not end after the close")
}

// pumps counts the goroutines running a pump (conn.pump's).
func pumps() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "netlink.(*conn).pump.func")
}
