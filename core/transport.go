package core

// Header holds HTTP header fields under lower-case names, one value each: the protocol never
// needs repeated fields, and fetch's Headers object joins them anyway.
type Header map[string]string

// Get returns the value of field name, matched without regard to case.
func (h Header) Get(name string) string { return h[lower(name)] }

// Set stores value under the lower-case form of name.
func (h Header) Set(name, value string) { h[lower(name)] = value }

// lower lower-cases ASCII letters only: field names, schemes and hosts are ASCII, and
// strings.ToLower would link the Unicode case tables into the wasm.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// A Piece is a run of the upload's bytes, or a small byte string made by core (a multipart
// prefix, the metadata). Transports send pieces as they are; [Bytes] is the only kind core
// makes, any other kind comes from a [Source] and is the transport's to understand.
type Piece interface {
	// Len is the length in bytes.
	Len() int64
}

// Bytes is a Piece held in memory.
type Bytes []byte

// Len returns len(b).
func (b Bytes) Len() int64 { return int64(len(b)) }

// A Source hands out the bytes to upload without core reading them.
type Source interface {
	// Size is the total length in bytes, or -1 where it is not known in advance.
	Size() int64
	// Slice returns the bytes [start, end). Where the data ends before end, the piece is
	// shorter; an empty piece means the data ends at start. For a source of known size,
	// end never exceeds Size.
	Slice(start, end int64) (Piece, error)
}

// Request is one HTTP request for a [Transport] to send.
type Request struct {
	Method string
	URL    string
	Header Header
	// Body is sent as the concatenation of its pieces; Content-Length is their total.
	Body []Piece
	// Timeout, when positive, is how long the request may go unanswered: past it, the
	// transport gives it up as a lost connection (fetch never times out on its own). Where the
	// transport counts the body (OnSent), the count decides from the first count below the
	// body's length on (bytes still to take), and Timeout no longer applies.
	Timeout Duration
	// Session says the request goes to a session URI (a chunk or a status query), where the
	// protocol's 308 Resume Incomplete is an answer, not a redirect (docs/protocol.md section 3).
	// Everywhere else a redirect is never the protocol's: a transport never follows one, and
	// a browser's may report it as a *RedirectError. A transport that cannot read a 3xx
	// answer to a session request (a browser's, in some engines: docs/protocol.md section 6)
	// returns a *HiddenRedirectError instead.
	Session bool
	// OnSent, when set, is for a transport that can tell how much of the body the network has
	// taken while the request is under way (a browser's fetch with a stream body, over HTTP/2:
	// docs/protocol.md section 8): it calls OnSent(n), n the bytes of this body taken so far,
	// as they grow and again while they do not (a few times a second, the wait for the answer
	// included). It calls it before Do returns, never after, and never concurrently with itself;
	// a transport that cannot tell never calls it. OnSent returning false means the body has
	// stopped moving: the transport gives the request up as stalled (a *StallError), as it
	// would past Timeout.
	OnSent func(n int64) bool

	late   bool  // Timeout is the chunk's late bound (resumable.go, lateBound), not a stall's
	hashed *Sums // the hashes the request states (checksum.go), nil for none
	told   bool  // OnSent was called: the count, not Timeout, decided
}

// ContentLength returns the total length of r's body.
func (r *Request) ContentLength() int64 {
	var n int64
	for _, p := range r.Body {
		n += p.Len()
	}
	return n
}

// Response is the answer to a Request.
type Response struct {
	Status int
	// Header must hold at least the fields core reads: Range, Location,
	// X-HTTP-Status-Code-Override and Retry-After.
	Header Header
	// Body is the answer's body. A transport may leave it empty for a 308 (or a 200 with
	// X-HTTP-Status-Code-Override: 308): core reads nothing from it (docs/protocol.md section 3).
	Body []byte
}

// Context is what core needs of a context.Context, and every context.Context is one: Go
// callers pass theirs as they are, and cancelling it aborts the upload. Core names only these
// two methods because context.Context's Deadline returns a time.Time, and holding one in an
// interface makes the linker keep time's whole formatting code: measured with Go 1.26 for
// GOOS=js, the context package costs the wasm 92 KB (25 KB gzipped) this way.
type Context interface {
	Done() <-chan struct{}
	Err() error
}

// Transport sends one request and returns its answer. An error means no answer arrived (a lost
// connection, a refused one, or ctx ending); any HTTP status, even 500, is an answer.
type Transport interface {
	Do(ctx Context, req *Request) (*Response, error)
}

// A Counter is a Transport that can say, before a request, whether it would count the body of
// one to url as the network takes it (Request.OnSent): a browser's fetch where the engine takes
// stream bodies and url's origin has not refused one (jsbridge's host; docs/protocol.md section
// 6). Its word is a likely yes, not a promise: an origin's first stream body may still fail and
// go as a Blob, uncounted. The chunk sizer sizes a first chunk by it (chunksize.go).
type Counter interface {
	Counts(url string) bool
}
