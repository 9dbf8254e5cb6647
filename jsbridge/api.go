//go:build js && wasm

package jsbridge

import (
	"errors"
	"sync"
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// API returns the object the wasm main hands to the loader (the contract is in doc.go):
//
//	{ version, upload(blob, options, sink) -> { pause(), resume(), abort() } }
//
// Its functions live as long as the module and are never released. Each handle's methods
// are the module's three shared functions bound to the upload's id, so no upload makes
// js.Func values of its own that could outlive it, and a handle used after its upload ended
// does nothing.
func API(version string) js.Value {
	api := js.Global().Get("Object").New()
	api.Set("version", version)
	api.Set("upload", funcOf(func(this js.Value, args []js.Value) (ret any) {
		sink := arg(args, 2)
		defer func() {
			if r := recover(); r != nil {
				fail(sink, internalError(r), "")
				ret = inertHandle()
			}
		}()
		return reg.start(arg(args, 0), arg(args, 1), sink)
	}))
	return api
}

// The methods shared by every handle: the first argument is the upload's id (bound).
var handleFuncs = [3]js.Func{
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, (*core.Upload).Pause) }),
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, (*core.Upload).Resume) }),
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, nil) }),
}

// registry holds the uploads running, by id.
type registry struct {
	mu   sync.Mutex
	next int
	runs map[int]*run
}

type run struct {
	up     *core.Upload
	cancel func()
}

var reg = registry{runs: map[int]*run{}}

// start validates the call, starts the upload in its own goroutine and returns its handle.
// A bad argument is told to sink.fail at once, before any request.
func (r *registry) start(blob, options, sink js.Value) js.Value {
	opts, err := Options(blob, options)
	if err != nil {
		fail(sink, err, "")
		return inertHandle()
	}
	opts.OnProgress = func(p core.Progress) { tell(sink, "progress", progressArgs(p)...) }
	opts.OnRetry = func(ri core.RetryInfo) { tell(sink, "retry", retryValue(ri)) }
	opts.OnState = func(s core.State) { tell(sink, "state", string(s)) }
	opts.OnSession = func(url string) { tell(sink, "session", url) }
	opts.OnRequest = func(ri core.RequestInfo) {
		// Only when someone listens: the loader sets sink.wantRequests. A request report
		// per chunk costs a JS call with six arguments, a URL string among them.
		if want, err := get(sink, "wantRequests"); err == nil && want.Truthy() {
			tell(sink, "request", requestArgs(ri)...)
		}
	}
	src, _ := NewBlobSource(blob) // Options checked that blob is a Blob
	tr := &Fetch{}
	up, err := core.New(tr, src, opts)
	if err != nil {
		fail(sink, err, "")
		return inertHandle()
	}
	ctx, cancel := newAbortContext()
	r.mu.Lock()
	r.next++
	id := r.next
	r.runs[id] = &run{up: up, cancel: cancel}
	r.mu.Unlock()
	go func() {
		defer tr.Close() // after Run: its Do calls have all returned
		r.wait(id, ctx, up, sink)
	}()
	return handle(id)
}

// wait runs the upload and tells its end to the sink.
func (r *registry) wait(id int, ctx core.Context, up *core.Upload, sink js.Value) {
	defer func() {
		r.mu.Lock()
		if rn := r.runs[id]; rn != nil {
			rn.cancel()
			delete(r.runs, id)
		}
		r.mu.Unlock()
		if p := recover(); p != nil {
			fail(sink, internalError(p), up.SessionURL())
		}
	}()
	res, err := up.Run(ctx)
	if err != nil {
		fail(sink, err, up.SessionURL())
		return
	}
	tell(sink, "done", resultValue(res))
}

// call runs m on the upload whose id is args[0]; a nil m aborts it. Unknown ids (an upload
// that has ended, an inert handle) do nothing.
func (r *registry) call(args []js.Value, m func(*core.Upload)) any {
	defer func() { _ = recover() }() // nothing to tell: a panic here changes no upload
	id := arg(args, 0)
	if id.Type() != js.TypeNumber {
		return nil
	}
	r.mu.Lock()
	rn := r.runs[id.Int()]
	r.mu.Unlock()
	switch {
	case rn == nil:
	case m == nil:
		rn.cancel() // Run ends with ctx.Err(): "aborted"
	default:
		m(rn.up)
	}
	return nil
}

// handle returns {pause, resume, abort} bound to id.
func handle(id int) js.Value {
	h := js.Global().Get("Object").New()
	for i, name := range [3]string{"pause", "resume", "abort"} {
		h.Set(name, handleFuncs[i].Value.Call("bind", js.Null(), id))
	}
	return h
}

func inertHandle() js.Value { return handle(0) }

// tell calls sink[method](v). Whatever the sink throws stays in JS's hands: it is dropped
// here, never turned into a Go panic.
func tell(sink js.Value, method string, args ...any) {
	// One call: the sink is the loader's own object (not the caller's), so its methods are
	// called directly. A throwing method is caught, and the upload goes on.
	_ = try(func() { sink.Call(method, args...) })
}

// errInternal marks a panic caught at the JS boundary.
var errInternal = errors.New("jsbridge: internal error")

type panicError struct{ msg string }

func (e *panicError) Error() string { return errInternal.Error() + ": " + e.msg }
func (e *panicError) Code() string  { return core.CodeProtocol }
func (e *panicError) Unwrap() error { return errInternal }

func internalError(r any) error {
	switch r := r.(type) {
	case error:
		return &panicError{msg: r.Error()}
	case string:
		return &panicError{msg: r}
	}
	return &panicError{msg: "panic"}
}

// abortContext is the core.Context of one upload, which only abort ends. (The context package
// is not linked at all: see core.Context.)
type abortContext struct {
	once sync.Once
	done chan struct{}
}

// errAborted is the error of an aborted upload's context.
var errAborted = errors.New("jsbridge: aborted")

func newAbortContext() (core.Context, func()) {
	c := &abortContext{done: make(chan struct{})}
	return c, func() { c.once.Do(func() { close(c.done) }) }
}

func (c *abortContext) Done() <-chan struct{} { return c.done }

func (c *abortContext) Err() error {
	select {
	case <-c.done:
		return errAborted
	default:
		return nil
	}
}
