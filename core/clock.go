package core

// Duration is a length of time in nanoseconds: the unit of time.Duration, so one converts to
// the other directly (core.Duration(time.Second)).
//
// core does not import package time in the browser. Its package initialisation alone, whatever
// is used of it, links its GODEBUG machinery (internal/godebug, internal/bisect, syscall's
// environment and more) into the wasm: measured with Go 1.26, 211 KB raw and 51 KB gzipped of
// the module every page downloads. Time comes from a [Clock] instead.
type Duration int64

// Units of Duration.
const (
	Millisecond Duration = 1000 * 1000
	Second      Duration = 1000 * Millisecond
)

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// Clock is core's one source of time: the monotonic time that times requests and the rate of
// progress, the wall-clock time a Retry-After date is compared with (docs/protocol.md section 5),
// and the timer of a retry's wait.
//
// Outside js/wasm, a nil Options.Clock means package time's clock (clock_std.go). On js/wasm
// core has none of its own and Options.Clock is required: jsbridge passes one built on
// performance.now(), Date.now() and setTimeout.
type Clock interface {
	// Now returns the monotonic time since an origin of the clock's choosing.
	Now() Duration
	// Unix returns the wall-clock time in seconds since 1970-01-01 UTC.
	Unix() int64
	// AfterFunc calls f once d has passed, unless stop is called first. f must not block:
	// in the browser it runs inside a JS callback. stop may be called more than once, and
	// after f ran.
	AfterFunc(d Duration, f func()) (stop func())
}
