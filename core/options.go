package core

// Type is the way an upload is sent (docs/protocol.md section 1), the value of uploadType.
type Type string

const (
	Media     Type = "media"     // one request, the bytes alone
	Multipart Type = "multipart" // one request, metadata and bytes as multipart/related
	Resumable Type = "resumable" // a session, then the bytes in one or more PUTs
	Auto      Type = "auto"      // media or multipart when small, resumable otherwise
)

// ChunkAlign is the unit every chunk but the last must be a multiple of (docs/protocol.md
// section 3).
const ChunkAlign = 256 << 10

// SmallSize is the largest upload that Auto ever sends in a single request: "small files
// (5 MB or less)" (docs/protocol.md section 1). Below it, what the link sends within about a
// progress interval decides (oneRequestBound).
const SmallSize = 5_000_000

// Options describe one upload. URL (or SessionURL, or Session) is required; every other field
// has a working zero value.
type Options struct {
	URL    string // the /upload URI
	Method string // "POST" (default: creates) or "PUT" (updates)
	Type   Type   // default Auto
	// Metadata is the resource's JSON metadata, sent as is; nil for none.
	Metadata []byte
	// ContentType is the media's type; default "application/octet-stream".
	ContentType string
	// ChunkSize is a positive multiple of ChunkAlign (fixed chunks), 0 for the whole rest in
	// one PUT, or ChunkAuto: each chunk sized to the link (ChunkSizer).
	ChunkSize int64
	// MaxChunkSize bounds ChunkAuto's chunks: a positive multiple of ChunkAlign; 0 means
	// DefaultMaxChunkSize (DefaultStreamMaxChunkSize for a source of unknown length).
	MaxChunkSize int64
	// Header is sent with every request to the origin of URL, never to a session URI on
	// another origin.
	Header Header
	// GetHeader, when set, is called before the first request and again after a 401; its
	// fields are merged over Header and go where Header goes.
	GetHeader func(ctx Context) (Header, error)
	// SessionURL resumes a session already started: no new session is started, the upload
	// asks the session how much it holds and goes on from there.
	SessionURL string
	// Session, when set, asks the app's backend for the upload's sessions instead of starting
	// them at URL (session.go): when the upload starts, and again when its session is lost.
	// URL is then not needed; the caller's headers go only where URL points, if set.
	Session SessionFunc
	// SessionEndpoint is the URL of the app's endpoint Session POSTs to (named in messages),
	// or "" where Session is a function of the caller's.
	SessionEndpoint string
	// SessionKept says SessionURL is one the page kept of an earlier try of this upload
	// (resume: true), not the caller's: it is asked first, and Session only once it is gone.
	SessionKept bool
	// Retry is the retry policy; nil means DefaultRetryPolicy.
	Retry *RetryPolicy
	// QueryStatusEachChunk asks the server for its offset after every chunk.
	QueryStatusEachChunk bool
	// NoRedirect308 sends "X-GUploader-No-308: yes" with the session's requests.
	NoRedirect308 bool
	// Checksum has the source hash its bytes beside the upload, states the hashes with the
	// request that completes the object (X-Goog-Hash; a multipart upload's metadata), and
	// compares them with the final metadata's (checksum.go). The source must then be a
	// HashingSource; ChecksumAuto asks for CRC32C where the upload goes to Cloud Storage.
	Checksum Checksum

	// WaitOnline, when set, waits until the device is online again (the browser's `online`
	// event), or ctx ends. A request that fails with an *OfflineError then waits in
	// StateOffline, costing no retry, instead of backing off; nil: such a failure is retried
	// as any lost connection.
	WaitOnline func(ctx Context) error

	// ProgressInterval, when positive, is the longest gap between progress reports the
	// caller bears where the transport reports none inside a request: ChunkAuto's chunks
	// (with their fixed cost) last no longer, at whatever share of the link that leaves. 0:
	// about a second, longer (up to 1.6 s) where a long round trip would otherwise cost over
	// a tenth of the link (chunksize.go).
	ProgressInterval Duration

	// Link, when set, is what earlier uploads to the same origin measured of the link, and
	// where this one keeps what it measures (link.go): the first chunk is then sized from it.
	// Shared by the uploads of a page (Links.For); nil: each upload finds out alone.
	Link *Link

	// StallTimeout bounds how long a request may go unanswered before it is taken for a lost
	// connection (the transport aborts it): 0 means the default, derived from the request's
	// size and the rate measured so far (offline.go); negative means never.
	StallTimeout Duration

	// Origin is the origin the requests are made from (a page's location.origin), named in
	// the message of a network error, where a CORS refusal is the likely reason; "" if none.
	Origin string

	// Clock is the source of time; nil means package time's clock, except on js/wasm,
	// where it is required (see Clock).
	Clock Clock

	OnProgress func(Progress)
	OnRetry    func(RetryInfo)
	OnState    func(State)
	OnSession  func(sessionURL string)
	OnRequest  func(RequestInfo)
}

// validate checks o before any request and fills in defaults, or returns an *ArgumentError.
func (o *Options) validate(src Source) error {
	if src == nil {
		return &ArgumentError{Field: "source", Reason: "no data to upload"}
	}
	if o.URL == "" && o.SessionURL == "" && o.Session == nil {
		return &ArgumentError{Field: "url", Reason: "missing"}
	}
	if o.Session != nil && o.SessionURL != "" && !o.SessionKept {
		return &ArgumentError{Field: "session", Reason: "give session or sessionURL, not both: sessionURL is a session already started, session asks your backend for one"}
	}
	if o.SessionEndpoint != "" && originOf(o.SessionEndpoint) == "" {
		return &ArgumentError{Field: "session", Reason: "not a function or an absolute http or https URL: " + o.SessionEndpoint}
	}
	if o.URL != "" && originOf(o.URL) == "" {
		return &ArgumentError{Field: "url", Reason: "not an absolute http or https URL: " + o.URL}
	}
	if o.SessionURL != "" && originOf(o.SessionURL) == "" {
		return &ArgumentError{Field: "sessionURL", Reason: "not an absolute http or https URL: " + o.SessionURL}
	}
	switch o.Method = upper(o.Method); o.Method {
	case "":
		o.Method = "POST"
	case "POST", "PUT":
	default:
		return &ArgumentError{Field: "method", Reason: "must be POST or PUT, not " + o.Method}
	}
	switch o.Type {
	case "", Auto:
		// Decided in New, from what the page knows of the link (oneRequestBound); a session,
		// or data of unknown length, can only go resumable.
		o.Type = Auto
		if o.SessionURL != "" || o.Session != nil || src.Size() < 0 {
			o.Type = Resumable
		}
	case Resumable:
	case Media, Multipart:
		if o.SessionURL != "" {
			return &ArgumentError{Field: "sessionURL", Reason: "only resumable uploads have sessions"}
		}
		if o.Session != nil {
			return &ArgumentError{Field: "session", Reason: "only resumable uploads have sessions, not " + string(o.Type) + " ones"}
		}
		if o.Type == Media && o.Metadata != nil {
			return &ArgumentError{Field: "metadata", Reason: "media uploads carry no metadata: use multipart or resumable"}
		}
	default:
		return &ArgumentError{Field: "uploadType", Reason: "unknown upload type " + string(o.Type)}
	}
	// Data of unknown length (a stream) goes in a resumable upload, whose last request states
	// the total (docs/protocol.md section 3): a single request must state its length up front.
	// (The browser's side also refuses chunkSize 0 for a stream: there one PUT would have to
	// hold all of it in memory; a Go transport can stream the body.)
	// Metadata goes as a JSON object: the session start's body, or the first part of a
	// multipart body (docs/protocol.md sections 1, 2).
	if o.Metadata != nil && !jsonObject(o.Metadata) {
		return &ArgumentError{Field: "metadata", Reason: "not a JSON object"}
	}
	if src.Size() < 0 && o.Type != Resumable {
		return &ArgumentError{Field: "uploadType", Reason: "data of unknown length (a stream) needs a resumable upload, not " + string(o.Type)}
	}
	if o.ChunkSize != ChunkAuto && (o.ChunkSize < 0 || o.ChunkSize%ChunkAlign != 0) {
		return &ArgumentError{Field: "chunkSize", Reason: "must be \"auto\", a positive multiple of 262144, or 0 for the whole rest"}
	}
	if o.MaxChunkSize == 0 {
		o.MaxChunkSize = DefaultMaxChunkSize
		if src.Size() < 0 {
			o.MaxChunkSize = DefaultStreamMaxChunkSize
		}
	}
	if o.ProgressInterval < 0 {
		return &ArgumentError{Field: "progressIntervalMs", Reason: "must be a positive number of milliseconds"}
	}
	if o.MaxChunkSize < 0 || o.MaxChunkSize%ChunkAlign != 0 {
		return &ArgumentError{Field: "maxChunkSize", Reason: "must be a positive multiple of 262144"}
	}
	switch o.Checksum {
	case NoChecksum, ChecksumAuto, CRC32C, MD5, Both:
	default:
		return &ArgumentError{Field: "checksum", Reason: "must be false, \"crc32c\", \"md5\" or \"both\", not \"" + string(o.Checksum) + "\""}
	}
	if o.ContentType == "" {
		o.ContentType = "application/octet-stream"
	}
	if !validValue(o.ContentType) {
		return &ArgumentError{Field: "contentType", Reason: "not a valid header value"}
	}
	for k, v := range o.Header {
		if !validName(k) || !validValue(v) {
			return &ArgumentError{Field: "headers", Reason: "not a valid header: " + k}
		}
	}
	if o.Retry == nil {
		p := DefaultRetryPolicy()
		o.Retry = &p
	}
	return o.Retry.validate()
}

// oneRequestBound is the largest file that uploadType "auto" (the default) sends in one request
// (media, or multipart with metadata) rather than resumable, now (docs/protocol.md section 1:
// one request for small files, resumable for large ones or unreliable links; section 8). Never
// over the guide's 5 MB. A file in one request shows nothing until its answer (even where the
// transport counts a body: the browser takes a small one at once into its buffers, and its
// count tells nothing), and what the page remembers of the link is a hint, not a promise: one
// request is a file the remembered rate (this upload's share of the link, as the page's
// uploads measured it) sends within a quarter of a progress interval, and at least 256 KiB
// (what a resumable upload sends first too); while nothing is known, 256 KiB. On a link 40
// times slower than remembered such a request would be a long wait: it is cut short within a
// couple of seconds, and the upload goes on resumable (runSingle, singleLate). A larger file
// goes resumable, and its first chunk is a probe (chunksize.go).
func (o *Options) oneRequestBound(now Duration) int64 {
	rate, _, ok := o.Link.hint(now)
	if !ok {
		return firstChunk
	}
	return min(SmallSize, max(int64(rate*o.oneRequestTime().Seconds()), firstChunk))
}

// oneRequestTime is the time a request that uploadType "auto" sends whole should take at the
// remembered rate: a share (singleShare) of the progress interval. It is also how much later
// than expected such a request may be answered and still count as on time (runSingle).
func (o *Options) oneRequestTime() Duration {
	interval := o.ProgressInterval
	if interval <= 0 {
		interval = Second
	}
	return interval / singleShare
}

// singleShare: one request is a file the remembered rate sends within this fraction of a
// progress interval (oneRequestBound).
const singleShare = 4

// upper upper-cases ASCII letters only (see lower).
func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// validName reports whether s is an HTTP field name (an RFC 9110 token).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || indexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// validValue reports whether s may be sent as a field value: no control characters.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// State is where an upload stands (docs/api.md, up.state).
type State string

const (
	StateStarting  State = "starting"
	StateUploading State = "uploading"
	StatePaused    State = "paused"
	StateRetrying  State = "retrying"
	StateOffline   State = "offline" // the device is offline: waiting for it to come back
	StateDone      State = "done"
	StateFailed    State = "failed"
	StateAborted   State = "aborted"
)

// RetryInfo is told to OnRetry before each wait.
type RetryInfo struct {
	Attempt int      // 1 for the first retry of this kind of failure
	Delay   Duration // the wait about to start
	Status  int      // the answer's status, 0 for a lost connection
	Err     error    // the failure, as it would be reported if the retries ran out
	// Restart is true when the session was lost (404 or 410) and a new one starts from byte 0
	// (docs/protocol.md section 5): Delay is then 0, the state goes back to "starting", and
	// Progress.Confirmed drops to 0 while Loaded stays.
	Restart bool
}

// RequestInfo is told to OnRequest after each request, answered or not.
type RequestInfo struct {
	Method       string
	URL          string
	ContentRange string
	Status       int // 0: no answer
	Duration     Duration
	Err          error
}

// Result is a finished upload.
type Result struct {
	Status     int    // 200 or 201
	Header     Header // the final answer's header
	Body       []byte // the final answer: the resource's JSON metadata
	SessionURL string // resumable only
}
