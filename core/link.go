package core

import "sync"

// What the uploads of a page learn of the link to an origin, shared (docs/protocol.md
// section 8). An upload that knows nothing sizes its first chunk small (256 KiB: the first
// progress at once, and a measure of the link), and that chunk costs a round trip of its own;
// so does every step of the ramp after it. The next upload to the same origin need not find
// out again: it starts from the rate, the fixed cost and whether the transport counted bytes
// inside a chunk, as the last chunk answered left them, if that was recent (linkMemory).
// Uploads running side by side each measure their own share of the link, which is what the
// next one will get too.

// linkMemory is how long what a link showed is taken as still true: a phone moves from Wi-Fi
// to a cellular network, a laptop from the office to a train.
const linkMemory = 10 * 60 * Second

// Link is what was last measured of the link to one origin; safe for concurrent use (the
// uploads of a page run side by side). The zero Link knows nothing.
type Link struct {
	mu      sync.Mutex
	rate    float64  // bytes per second
	cost    Duration // the fixed cost of a request
	counted bool     // the transport reported progress inside a chunk (Request.OnSent)
	at      Duration // Clock.Now when it was measured; 0: never
}

// Links holds a Link per origin: one for every upload of a page (jsbridge keeps one).
type Links struct {
	mu sync.Mutex
	m  map[string]*Link
}

// For returns the Link of url's origin (nil for a URL without one).
func (ls *Links) For(url string) *Link {
	o := originOf(url)
	if o == "" {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*Link{}
	}
	l := ls.m[o]
	if l == nil {
		l = &Link{}
		ls.m[o] = l
	}
	return l
}

// ForUpload returns the Link of the origin an upload with o talks to: its URL's, else (a
// session adopted by its URI) the session's.
func (ls *Links) ForUpload(o *Options) *Link {
	if o.URL != "" {
		return ls.For(o.URL)
	}
	return ls.For(o.SessionURL)
}

// seed starts c from what l knows, if it knows something recent.
func (l *Link) seed(c *ChunkSizer, now Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == 0 || now-l.at > linkMemory || l.rate <= 0 {
		return
	}
	c.rate, c.cost, c.counted, c.seeded = l.rate, l.cost, l.counted, true
}

// hint returns the rate l knows, and whether progress came from inside a chunk, if it knows
// something recent (ok).
func (l *Link) hint(now Duration) (rate float64, counted, ok bool) {
	if l == nil {
		return 0, false, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == 0 || now-l.at > linkMemory || l.rate <= 0 {
		return 0, false, false
	}
	return l.rate, l.counted, true
}

// learn keeps what c has measured, as of now.
func (l *Link) learn(c *ChunkSizer, now Duration) {
	if l == nil || c.rate <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rate, l.cost, l.counted, l.at = c.rate, c.cost, c.counted, max(now, 1)
}
