package core

import (
	"errors"
	"sync/atomic"
)

// A session asked of the app's backend (docs/api.md, "A session from your backend"): where
// Options.Session is set, the upload does not start its sessions at Options.URL. It asks the
// backend for one when it starts, and again whenever its session is lost (404, 410:
// docs/protocol.md section 5), so that an upload whose sessions the backend starts survives
// expiry as one the page started does. The backend answers a session it started (a session
// URI, which Cloud Storage answers with the CORS headers of the page's Origin only if the
// backend started it with that Origin), or a URL signed for Cloud Storage's XML API, with which
// the upload starts the session itself (xmlapi.go). A backend that fails, stalls or answers
// nonsense ends the upload with a *BackendError before any request to storage: it is never
// asked again and again.

// SessionInfo is what the backend is told of an upload when asked for a session: nothing of
// its bytes. (The browser's host adds the File's name, which only it knows.)
type SessionInfo struct {
	Size     int64  // the bytes to upload; -1 where not known (a stream)
	Type     string // the media's type (Options.ContentType, defaults applied)
	Metadata []byte // Options.Metadata, JSON; nil for none
}

// SessionAnswer is the backend's answer: a session URI it started (SessionURL: a new session,
// holding nothing), or a URL signed for Cloud Storage's XML API's resumable start (SignedURL,
// with Header: the headers its signature requires), with which the upload starts one.
type SessionAnswer struct {
	SessionURL string
	SignedURL  string
	Header     Header
}

// SessionFunc asks the app's backend for a session. An error it returns ends the upload as a
// *BackendError (one it returns itself says how the backend failed; any other is taken for a
// failure of the function: BackendThrew).
type SessionFunc func(ctx Context, info SessionInfo) (SessionAnswer, error)

// How a backend failed: the values of BackendError.Kind.
const (
	BackendThrew       = "threw"       // the page's function threw or rejected (Go: returned an error)
	BackendUnreachable = "unreachable" // the POST to the endpoint got no answer (a network failure)
	BackendRefused     = "refused"     // the endpoint answered 4xx or 5xx
	BackendStalled     = "stalled"     // no answer within the bound (backendBound)
	BackendNonsense    = "nonsense"    // an answer that names no usable session
)

// BackendError is the app's backend failing to give a session: no upload session was started
// and nothing was sent to storage. It is never retried (a backend that refuses has a reason;
// one that is down is the app's to know of).
type BackendError struct {
	Kind     string // BackendThrew, BackendUnreachable, BackendRefused, BackendStalled or BackendNonsense
	Endpoint string // the app's endpoint the upload POSTed to; "" for a function of the page's
	Status   int    // BackendRefused: the endpoint's status
	Message  string // what the backend said (its JSON error's message), or what is wrong with its answer
	Body     []byte // BackendRefused: the endpoint's answer
	After    Duration
	Err      error // the error behind it: what the function threw, the failed POST's
}

func (e *BackendError) Error() string {
	who := "the session function"
	if e.Endpoint != "" {
		who = "your backend (POST " + withoutQuery(e.Endpoint) + ")"
	}
	const none = ", so no upload session was started and nothing was sent to storage"
	switch e.Kind {
	case BackendRefused:
		msg := who + " refused the upload with " + statusText(e.Status)
		if e.Message != "" {
			msg += ": " + e.Message
		}
		return msg + none + "; its answer says why (a user not signed in, a file too large or of a type not allowed, …)"
	case BackendStalled:
		return who + " gave no session in " + formatSeconds(e.After) + none + "; check that it answers (stallTimeoutMs sets how long the upload waits)"
	case BackendNonsense:
		return who + " answered without a usable session (" + e.Message + ")" + none +
			"; it must answer a session URI, { sessionURL } or { signedURL, headers }"
	case BackendUnreachable:
		return "could not reach " + who + " (" + errText(e.Err) + ")" + none + "; check its URL, that the app's server is up, and this device's network"
	}
	return who + " failed (" + errText(e.Err) + ")" + none + "; check what it does, and that your backend is up"
}

func errText(err error) string {
	if err == nil {
		return "no reason given"
	}
	return err.Error()
}

// Code returns "backend_error".
func (e *BackendError) Code() string { return CodeBackend }

func (e *BackendError) Unwrap() error { return e.Err }

// problem says what is wrong with a, or "" for an answer the upload can go on with: one of
// SessionURL and SignedURL, an absolute http(s) URL, and headers only with a signed URL, each a
// valid header.
func (a SessionAnswer) problem() string {
	switch {
	case a.SessionURL != "" && a.SignedURL != "":
		return "both a sessionURL and a signedURL"
	case a.SessionURL == "" && a.SignedURL == "":
		return "neither a session URI nor a signedURL"
	case a.SessionURL != "" && len(a.Header) > 0:
		return "headers go with a signedURL only: a session URI needs none"
	}
	url, what := a.SessionURL, "the session URI"
	if a.SignedURL != "" {
		url, what = a.SignedURL, "the signedURL"
	}
	if originOf(url) == "" {
		return what + " is not an absolute http or https URL: " + withoutQuery(url)
	}
	for k, v := range a.Header {
		if !validName(k) || !validValue(v) {
			return "not a valid header: " + k
		}
	}
	return ""
}

// backendBound is how long the backend may take to answer: a request without a body's bound
// (stallFloor, 30 s), or stallTimeoutMs where the caller set one (negative: for ever). A
// backend's answer is one round trip and the backend's own request to storage: longer means
// it is down, and the upload says so rather than wait for ever with nothing to show.
func (u *Upload) backendBound() Duration {
	switch {
	case u.o.StallTimeout < 0:
		return 0
	case u.o.StallTimeout > 0:
		return u.o.StallTimeout
	}
	return stallFloor
}

// askBackend asks the backend for a session (Options.Session) and checks its answer. A
// backend out of reach while the device is offline (an *OfflineError under the error, which
// the host gives) is asked again once it is online (Options.WaitOnline), as a request to
// storage is sent again (offline.go): the time offline is nobody's failure, and the bound is
// the ask's alone.
func (u *Upload) askBackend(ctx Context) (SessionAnswer, error) {
	for {
		ans, err := u.askBackendOnce(ctx)
		if err == nil || u.o.WaitOnline == nil || ctx.Err() != nil || !isOffline(err) {
			return ans, err
		}
		if err := u.waitOnline(ctx, StateStarting); err != nil {
			return ans, err
		}
	}
}

func (u *Upload) askBackendOnce(ctx Context) (SessionAnswer, error) {
	u.setState(StateStarting)
	bound := u.backendBound()
	bctx, stop := withBound(ctx, u.o.Clock, bound)
	ans, err := u.o.Session(bctx, SessionInfo{Size: u.total, Type: u.o.ContentType, Metadata: u.o.Metadata})
	timedOut := stop()
	if err == nil {
		if why := ans.problem(); why != "" {
			err = &BackendError{Kind: BackendNonsense, Message: why}
		}
	}
	switch {
	case err == nil:
		return ans, nil
	case ctx.Err() != nil:
		return ans, ctx.Err()
	case timedOut:
		err = &BackendError{Kind: BackendStalled, After: bound}
	}
	be, ok := Find[*BackendError](err)
	if !ok {
		be = &BackendError{Kind: BackendThrew, Err: err}
	}
	be.Endpoint = u.o.SessionEndpoint
	return ans, be
}

// newSession starts the upload's next session and returns its URI: asked of the backend where
// Options.Session is set (a session it started, or one started here from the URL it signed),
// else started at Options.URL (docs/protocol.md section 2). The checksum that "auto" leaves to
// the session is decided by the backend's answer (checksum.go).
func (u *Upload) newSession(ctx Context) (string, error) {
	if u.o.Session == nil {
		u.xmlAPI = false // the JSON API's (a session handed in may have been the XML API's)
		return u.startSession(ctx)
	}
	ans, err := u.askBackend(ctx)
	if err != nil {
		return "", err
	}
	if ans.SessionURL != "" {
		u.xmlAPI = xmlSession(ans.SessionURL)
		return ans.SessionURL, u.decideChecksum(ans.SessionURL)
	}
	if err := u.decideChecksum(ans.SignedURL); err != nil {
		return "", err
	}
	url, err := u.startSigned(ctx, ans.SignedURL, ans.Header)
	// The XML API's session, unless the server answered with a JSON API session URI
	// (fake-gcs-server does: docs/protocol.md section 7).
	u.xmlAPI = err == nil && !cloudStorageUpload(url)
	return url, err
}

// boundCtx is a Context that ends with its parent, or when its bound has passed.
type boundCtx struct {
	parent Context
	done   chan struct{}
	ended  atomic.Int32 // 0: not yet; 1: with its parent; 2: its bound passed
}

// errPastBound is the Err of a boundCtx whose bound has passed.
var errPastBound = errors.New("the bound has passed")

// withBound returns a Context that ends with ctx or after d (d <= 0: with ctx alone), and a
// stop function, to be called once the call it bounds has returned, that reports whether the
// bound had passed. A goroutine watches ctx meanwhile; stop ends it.
func withBound(ctx Context, c Clock, d Duration) (Context, func() bool) {
	if d <= 0 {
		return ctx, func() bool { return false }
	}
	b := &boundCtx{parent: ctx, done: make(chan struct{})}
	stopTimer := c.AfterFunc(d, func() { b.end(2) })
	quit := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			b.end(1)
		case <-quit:
		}
	}()
	return b, func() bool {
		stopTimer()
		close(quit)
		return b.ended.Load() == 2
	}
}

func (b *boundCtx) end(how int32) {
	if b.ended.CompareAndSwap(0, how) {
		close(b.done)
	}
}

func (b *boundCtx) Done() <-chan struct{} { return b.done }

func (b *boundCtx) Err() error {
	switch b.ended.Load() {
	case 1:
		return b.parent.Err()
	case 2:
		return errPastBound
	}
	return nil
}
