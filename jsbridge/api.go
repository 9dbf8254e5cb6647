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
//	{ version, upload(id, size, type, options), check(id, size, options), pause(id), resume(id), abort(id) }
//
// Its functions live as long as the module and are never released. An upload is known by the
// id the loader chose; what belongs to it on the JS side (its Blob, sink, getHeaders) stays
// with the host under that id, and options is a plain copy of the protocol's options. Calls
// with an id that is not running (an upload that has ended) do nothing.
func API(version string) js.Value {
	api := js.Global().Get("Object").New()
	api.Set("version", version)
	// upload(id, size, type, options): size is the Blob's, or -1 for a stream (its length is
	// not known in advance).
	api.Set("upload", entry(func(c *conn, size int64, args []js.Value) {
		typ := ""
		if t := arg(args, 2); t.Type() == js.TypeString {
			typ = t.String()
		}
		reg.start(c, size, typ, arg(args, 3), false)
	}))
	// check(id, size, options): asks the session options.sessionURL names what it holds, and
	// sends nothing else; ends with a "checked" report ({held, complete}) or a "fail".
	api.Set("check", entry(func(c *conn, size int64, args []js.Value) {
		reg.start(c, size, "", arg(args, 2), true)
	}))
	for i, name := range [3]string{"pause", "resume", "abort"} {
		api.Set(name, handleFuncs[i])
	}
	return api
}

// entry makes an api function whose first two arguments are the upload's id and size (-1 when
// not a whole number): a call without an id does nothing, and a panic while starting ends the
// upload with an internal error instead of the module.
func entry(start func(c *conn, size int64, args []js.Value)) js.Func {
	return funcOf(func(this js.Value, args []js.Value) any {
		id, ok := wholeNumber(arg(args, 0))
		if !ok {
			return nil
		}
		c := newConn(int(id))
		defer func() {
			if r := recover(); r != nil {
				c.fail(internalError(r), "")
				c.close()
			}
		}()
		size, ok := wholeNumber(arg(args, 1))
		if !ok {
			size = -1
		}
		start(c, size, args)
		return nil
	})
}

// The methods that act on a running upload: the argument is the upload's id.
var handleFuncs = [3]js.Func{
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, (*core.Upload).Pause) }),
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, (*core.Upload).Resume) }),
	funcOf(func(this js.Value, args []js.Value) any { return reg.call(args, nil) }),
}

// registry holds the uploads running, by id.
type registry struct {
	mu   sync.Mutex
	runs map[int]*run
}

type run struct {
	up     *core.Upload
	cancel func()
}

var reg = registry{runs: map[int]*run{}}

// links is what the uploads of this realm (the page, or the Worker) have measured of the link
// to each origin: the first chunk of the next one is sized from it.
var links core.Links

// start validates the call and starts the upload (or, with check, the check of its session)
// in its own goroutine. A bad argument is reported at once (report "fail"), before any request.
func (r *registry) start(c *conn, size int64, typ string, options js.Value, check bool) {
	end := func(err error) {
		c.fail(err, "")
		c.close()
	}
	opts, err := Options(options, typ, c.headers, c.session)
	if err != nil {
		end(err)
		return
	}
	// What the page's uploads to the origin have measured of the link (core/link.go).
	opts.Link = links.ForUpload(&opts)
	opts.OnProgress = func(p core.Progress) { c.report("progress", progressReport(p)...) }
	opts.OnRetry = func(ri core.RetryInfo) { c.report("retry", retryReport(ri)...) }
	opts.OnState = func(s core.State) { c.report("state", jsString(string(s))) }
	opts.OnSession = func(url string) { c.report("session", url) }
	opts.WaitOnline = c.waitOnline
	opts.OnRequest = func(ri core.RequestInfo) {
		if c.wantRequests() {
			c.report("request", requestReport(ri)...)
		}
	}
	ctx, cancel := newAbortContext()
	up, err := core.New(c, &Source{c: c, size: size, ctx: ctx}, opts)
	if err != nil {
		end(err)
		return
	}
	r.mu.Lock()
	if r.runs[c.id] != nil {
		r.mu.Unlock()
		end(&core.ArgumentError{Field: "id", Reason: "already running"})
		return
	}
	r.runs[c.id] = &run{up: up, cancel: cancel}
	r.mu.Unlock()
	workers.run(func() { r.wait(c, ctx, up, check) })
}

// workers runs each upload in a goroutine of its own, reusing those whose upload has ended. A
// new goroutine's stack starts small and the first request of an upload grows it (the runtime
// copies it, two or three times): with many small files that cost the page's main thread
// 0.16 ms per file, and a goroutine that goes on to the next upload keeps its grown stack.
var workers = pool{idle: make(chan func())}

type pool struct {
	idle chan func() // received from by each goroutine waiting for work
}

// run hands f to a waiting goroutine, or starts one.
func (p pool) run(f func()) {
	select {
	case p.idle <- f:
	default:
		go p.loop(f)
	}
}

// loop runs f, then whatever it is handed next, for ever (at most as many goroutines wait as
// there were uploads at once).
func (p pool) loop(f func()) {
	for {
		f()
		f = <-p.idle
	}
}

// wait runs the upload, reports its end, and then lets go of everything: the host drops its
// entry on that report, and close releases the callbacks (Run's calls have all returned).
func (r *registry) wait(c *conn, ctx core.Context, up *core.Upload, check bool) {
	defer func() {
		r.mu.Lock()
		if rn := r.runs[c.id]; rn != nil {
			rn.cancel()
			delete(r.runs, c.id)
		}
		r.mu.Unlock()
		if p := recover(); p != nil {
			c.fail(internalError(p), up.SessionURL())
		}
		c.close()
	}()
	if check {
		held, complete, err := up.Check(ctx)
		if err != nil {
			c.fail(err, up.SessionURL())
			return
		}
		c.report("checked", held, complete)
		return
	}
	res, err := up.Run(ctx)
	if err != nil {
		c.fail(err, up.SessionURL())
		return
	}
	c.report("done", res.Status, string(res.Body), res.SessionURL)
}

// call runs m on the upload whose id is args[0]; a nil m aborts it. Unknown ids (an upload
// that has ended) do nothing.
func (r *registry) call(args []js.Value, m func(*core.Upload)) any {
	defer func() { _ = recover() }() // nothing to tell: a panic here changes no upload
	id, ok := wholeNumber(arg(args, 0))
	if !ok {
		return nil
	}
	r.mu.Lock()
	rn := r.runs[int(id)]
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
