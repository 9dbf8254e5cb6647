package netlink

import (
	"context"
	"net"
	"os"
	"sync"
	"time"
)

// Listen is net.Listen("tcp", addr) for a server in front of a Link: give the http.Server
// ConnContext too. Over HTTP/1.1 a request body behind a link with a rate is then read from its
// connection ahead of the link (as fast as the client sends it, over a slow link: see
// fastLink), and kept until the link has carried it (conn.pump), so that a client that gives
// the request up (closes the connection) is seen at once: the bytes the link had not carried
// are lost with it (wrap.go, errGone), as over HTTP/2, where a reset stream ends its body at
// once. Read from the socket only as the link carries them, those bytes sat in the client's
// socket and then in the server's, megabytes on loopback (its segments are 64 KiB, and a
// sender's kernel sizes its send buffer by its segments), and went on being read at the link's
// rate after the client had gone: an HTTP/1.1 chunk cut short at a 20x drop was read for twenty
// seconds more at the slow rate, its bytes competing with the chunks sent after it, where
// behind a real uplink a few hundred KB would have followed.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return listener{ln}, nil
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, wake: make(chan struct{})}, nil
}

// connKey is the context key of a request's connection (ConnContext).
type connKey struct{}

// ConnContext is for an http.Server's ConnContext, with Listen: a request's body reader finds
// its connection by it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
		c = tc.NetConn()
	}
	if pc, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, pc)
	}
	return ctx
}

// connOf returns the connection of a request's context, or nil.
func connOf(ctx context.Context) *conn {
	pc, _ := ctx.Value(connKey{}).(*conn)
	return pc
}

// pumpRead is the most the pump reads from the socket at a time: each large read a block of
// its own, so that what it holds is never copied to grow (growing one buffer of megabytes cost
// an emulated link a tenth of its rate, in copies and collections).
const pumpRead = 64 << 10

// How far the pump reads ahead of the server: past it, it waits, and the sockets' buffers hold
// the rest (a few MB on loopback), which hide a close until the link has carried them. Over a
// link slow enough that they would take more than about a second (below fastLink), it reads
// up to pumpMax ahead: a close is seen at once. Over a faster one, where they drain within a
// second anyway, no more than fastAhead: reading a whole chunk at once made the browser send
// it in one burst, which on two cores cost the link's reader its pace (100 Mbit/s over
// HTTP/1.1, the module's defaults, 2026-11-26: 0.93 of the link with the pump unbounded,
// 0.969 with it bounded, 0.971 without a pump).
const (
	pumpMax   = 64 << 20
	fastAhead = 2 << 20
	fastLink  = 25e6 / 8 // bytes per second
)

// conn is a connection from Listen. It reads from the socket as the server asks until pump is
// called; from then on a goroutine reads the socket ahead of the server (as far as pump's rate
// allows), and the server's reads take from what it read (deadlines kept), so that the
// client's close is seen while bytes it sent before are still waiting for the link (gone).
type conn struct {
	net.Conn
	mu       sync.Mutex
	pumping  bool
	ahead    int              // how far the pump reads ahead (pumpMax or fastAhead, from the link's rate)
	blocks   [][]byte         // read from the socket, not yet by the server, in the pump's reads
	held     int              // their bytes
	err      error            // the socket's read error (io.EOF: the client closed it), once seen
	wake     chan struct{}    // closed, and replaced, when blocks, err or the deadline changes
	deadline time.Time        // the server's read deadline (the socket's until pumping)
	onGone   map[*func()]bool // called once err is set (afterGone)
}

// afterGone arranges for f to be called, in a goroutine of its own, once the client is seen to
// have closed the connection (the pump's read fails) or the connection is closed; at once if it
// already was. stop keeps it from being called, and reports whether it did.
func (c *conn) afterGone(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.onGone == nil {
		c.onGone = map[*func()]bool{}
	}
	key := &f
	c.onGone[key] = true
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.onGone[key]
		delete(c.onGone, key)
		return ok
	}
}

// fail sets the connection's error, once, and calls what afterGone arranged; c.mu is held.
func (c *conn) fail(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	for f := range c.onGone {
		go (*f)()
	}
	c.onGone = nil
}

// signal wakes whoever waits on the connection; c.mu is held.
func (c *conn) signal() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// pump starts reading the socket ahead of the server (once), as far as a link of rate (bytes
// per second) needs (see fastLink); each call sets it anew.
func (c *conn) pump(rate int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ahead := pumpMax
	if rate > fastLink {
		ahead = fastAhead
	}
	if c.ahead != ahead {
		c.ahead = ahead
		c.signal()
	}
	if c.pumping {
		return
	}
	c.pumping = true
	_ = c.Conn.SetReadDeadline(time.Time{}) // the pump's reads wait for ever; the server's keep theirs (Read)
	go func() {
		var b []byte
		for {
			if b == nil {
				b = make([]byte, pumpRead)
			}
			n, err := c.Conn.Read(b)
			block := b[:n]
			if n < pumpRead/4 {
				block = append([]byte(nil), block...) // a small read (a request's head) keeps b
			} else {
				b = nil // held until read
			}
			c.mu.Lock()
			if n > 0 {
				c.blocks = append(c.blocks, block)
				c.held += n
			}
			if err != nil {
				c.fail(err)
			}
			c.signal()
			for c.err == nil && c.held >= c.ahead {
				w := c.wake
				c.mu.Unlock()
				<-w
				c.mu.Lock()
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
}

// gone reports whether the client has closed the connection while it was pumped.
func (c *conn) gone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

func (c *conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if !c.pumping {
		c.mu.Unlock()
		return c.Conn.Read(p)
	}
	for {
		if c.held > 0 {
			// As much as p takes, across blocks: a read of the socket would give all it holds.
			n := 0
			for n < len(p) && len(c.blocks) > 0 {
				k := copy(p[n:], c.blocks[0])
				n += k
				if c.blocks[0] = c.blocks[0][k:]; len(c.blocks[0]) == 0 {
					c.blocks[0] = nil
					c.blocks = c.blocks[1:]
				}
			}
			c.held -= n
			c.signal() // the pump may wait for room
			c.mu.Unlock()
			return n, nil
		}
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		var t *time.Timer
		var timeout <-chan time.Time
		if !c.deadline.IsZero() {
			d := time.Until(c.deadline)
			if d <= 0 {
				c.mu.Unlock()
				return 0, os.ErrDeadlineExceeded // as the socket says it (net/http aborts its background read so)
			}
			t = time.NewTimer(d)
			timeout = t.C
		}
		w := c.wake
		c.mu.Unlock()
		select {
		case <-w:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
		c.mu.Lock()
	}
}

// Close also ends the pump's wait for room (its read of the socket then fails, and it ends).
func (c *conn) Close() error {
	c.mu.Lock()
	c.fail(net.ErrClosed)
	c.signal()
	c.mu.Unlock()
	return c.Conn.Close()
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if !c.pumping {
		return c.Conn.SetReadDeadline(t)
	}
	c.signal()
	return nil
}

func (c *conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}
