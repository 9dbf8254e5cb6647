package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sessions asked of the app's backend (session.go) and Cloud Storage's XML API (xmlapi.go).

const (
	backendSession  = "https://storage.example/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=B1"
	backendSession2 = "https://storage.example/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=B2"
	signedStart     = "https://storage.example/bkt/clip.bin?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%2F20260101%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20260101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=content-type%3Bhost%3Bx-goog-resumable&X-Goog-Signature=abc123"
	xmlSessionURI   = signedStart + "&upload_id=X1"
)

// backend is a scripted SessionFunc: it answers each call with the next of answers (an error,
// or "hang": it waits for ctx to end), and records what it was told.
type backend struct {
	answers []any // SessionAnswer, error, or "hang"
	infos   []SessionInfo
}

func (b *backend) ask(ctx Context, info SessionInfo) (SessionAnswer, error) {
	b.infos = append(b.infos, info)
	if len(b.infos) > len(b.answers) {
		return SessionAnswer{}, errors.New("the test's backend was asked once too often")
	}
	switch a := b.answers[len(b.infos)-1].(type) {
	case SessionAnswer:
		return a, nil
	case error:
		return SessionAnswer{}, a
	}
	<-ctx.Done()
	return SessionAnswer{}, ctx.Err()
}

// runBackend runs an upload of src whose sessions b gives, against the script exs, inside a
// synctest bubble (so that waits take no real time), and returns how long it took.
func runBackend(t *testing.T, src Source, o Options, b *backend, exs []ex) (*Result, error, Duration) {
	t.Helper()
	s := &script{t: t, exs: exs}
	var res *Result
	var err error
	var took Duration
	synctest.Test(t, func(t *testing.T) {
		s.t = t
		o.Session = b.ask
		if o.Retry == nil {
			o.Retry = fastRetry()
		}
		u, e := New(s, src, o)
		if e != nil {
			err = e
			return
		}
		t0 := time.Now()
		res, err = u.Run(context.Background())
		took = Duration(time.Since(t0))
	})
	s.done()
	return res, err, took
}

func TestSessionFromBackend(t *testing.T) {
	d := data(2*K256 + 10)
	crc, _ := sums(d)
	noneFrom := func(name string) func(*testing.T, *Request) {
		return func(t *testing.T, r *Request) {
			assert.Empty(t, r.Header.Get(name), "%s sent", name)
		}
	}
	res, err, _ := runBackend(t, &memSource{data: d}, Options{
		ChunkSize: K256, ContentType: "video/mp4", Metadata: []byte(`{"name":"clip.mp4"}`), Checksum: ChecksumAuto,
		Header: Header{"authorization": "Bearer page-token"},
	}, &backend{answers: []any{SessionAnswer{SessionURL: backendSession}}}, []ex{
		// No session start: the backend's session takes the first chunk, and the page's token
		// goes nowhere (the session URI is the credential).
		{url: backendSession, cr: "bytes 0-262143/524298", n: K256, status: 308, rng: "bytes=0-262143", check: noneFrom("authorization")},
		{url: backendSession, cr: "bytes 262144-524287/524298", n: K256, status: 308, rng: "bytes=0-524287"},
		{url: backendSession, cr: "bytes 524288-524297/524298", n: 10, status: 200, body: `{"name":"clip.mp4","crc32c":"` + crc + `"}`,
			check: func(t *testing.T, r *Request) {
				assert.Equal(t, "crc32c="+crc, r.Header.Get("X-Goog-Hash"), "the JSON API session decided the default checksum")
			}},
	})
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.Equal(t, backendSession, res.SessionURL)

	t.Run("what the backend is told", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SessionURL: backendSession}}}
		_, err, _ := runBackend(t, &memSource{data: data(10)}, Options{ContentType: "image/png", Metadata: []byte(`{"name":"a.png"}`)}, b, []ex{
			{url: backendSession, cr: "bytes 0-9/10", n: 10, status: 200},
		})
		require.NoError(t, err)
		assert.Equal(t, []SessionInfo{{Size: 10, Type: "image/png", Metadata: []byte(`{"name":"a.png"}`)}}, b.infos)
	})
}

func TestSessionSignedURL(t *testing.T) {
	d := data(K256 + 7)
	crc, _ := sums(d)
	b := &backend{answers: []any{SessionAnswer{SignedURL: signedStart, Header: Header{"content-type": "video/webm", "x-goog-meta-owner": "u1"}}}}
	res, err, _ := runBackend(t, &memSource{data: d}, Options{
		ChunkSize: K256, ContentType: "application/octet-stream", NoRedirect308: true, Checksum: ChecksumAuto,
		Header: Header{"authorization": "Bearer page-token"},
	}, b, []ex{
		{method: "POST", url: signedStart, n: 0, status: 201, hdr: Header{"location": xmlSessionURI}, check: func(t *testing.T, r *Request) {
			assert.Equal(t, "start", r.Header.Get("x-goog-resumable"))
			assert.Equal(t, "video/webm", r.Header.Get("content-type"), "the signature's Content-Type over the upload's")
			assert.Equal(t, "u1", r.Header.Get("x-goog-meta-owner"))
			assert.Empty(t, r.Header.Get("authorization"), "the page's token never goes with a signed URL")
			assert.Empty(t, r.Header.Get("x-upload-content-length"), "the JSON API's headers are not the XML API's")
		}},
		{url: xmlSessionURI, cr: "bytes 0-262143/262151", n: K256, status: 200, rng: "bytes=0-262143", hdr: Header{"x-http-status-code-override": "308"}},
		// The XML API's final answer: 200 with an empty body. No status query follows it to
		// find metadata that the XML API never states.
		{url: xmlSessionURI, cr: "bytes 262144-262150/262151", n: 7, status: 200, check: func(t *testing.T, r *Request) {
			assert.Equal(t, "crc32c="+crc, r.Header.Get("X-Goog-Hash"), "the signed URL decided the default checksum")
		}},
	})
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.Empty(t, res.Body)
	assert.Equal(t, xmlSessionURI, res.SessionURL)

	t.Run("the page's Content-Type where the signature names none; an XML final answer", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SignedURL: signedStart}}}
		res, err, _ := runBackend(t, &memSource{data: data(5)}, Options{ContentType: "text/csv", Checksum: CRC32C}, b, []ex{
			{method: "POST", url: signedStart, n: 0, status: 201, hdr: Header{"location": xmlSessionURI}, check: func(t *testing.T, r *Request) {
				assert.Equal(t, "text/csv", r.Header.Get("content-type"))
			}},
			// Asked for by name, a checksum wants a hash in the final metadata; the XML API's
			// states none, and its taking X-Goog-Hash is the check.
			{url: xmlSessionURI, cr: "bytes 0-4/5", n: 5, status: 200, body: `<?xml version="1.0"?><PostResponse/>`},
		})
		require.NoError(t, err)
		assert.Contains(t, string(res.Body), "PostResponse")
	})

	t.Run("BadDigest on the request that completes the object", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SignedURL: signedStart}}}
		_, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256, Checksum: ChecksumAuto}, b, []ex{
			{method: "POST", url: signedStart, n: 0, status: 201, hdr: Header{"location": xmlSessionURI}},
			{url: xmlSessionURI, cr: "bytes 0-262143/262151", n: K256, status: 308, rng: "bytes=0-262143"},
			{url: xmlSessionURI, cr: "bytes 262144-262150/262151", n: 7, status: 400,
				body: `<?xml version='1.0' encoding='UTF-8'?><Error><Code>BadDigest</Code><Message>The CRC32C you specified did not match what we computed.</Message></Error>`},
		})
		require.Error(t, err)
		assert.Equal(t, CodeChecksum, Code(err), "never retried: %v", err)
		ce, ok := Find[*ChecksumError](err)
		require.True(t, ok)
		assert.Equal(t, "crc32c", ce.Kind)
		assert.Equal(t, crc, ce.Local)
		assert.Equal(t, "BadDigest", ce.Refused.Reason)
	})

	t.Run("the XML API's refusal of the start, in its words", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SignedURL: signedStart}}}
		_, err, _ := runBackend(t, &memSource{data: d}, Options{}, b, []ex{
			{method: "POST", url: signedStart, n: 0, status: 403,
				body: `<?xml version='1.0' encoding='UTF-8'?><Error><Code>SignatureDoesNotMatch</Code><Message>Access denied.</Message><StringToSign>GOOG4-RSA-SHA256 &amp;c</StringToSign></Error>`},
		})
		he, ok := Find[*HTTPError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "SignatureDoesNotMatch", he.Reason)
		assert.Equal(t, "Access denied.", he.Message)
		assert.Contains(t, err.Error(), "403 Forbidden: Access denied. (reason: SignatureDoesNotMatch)")
	})

	t.Run("an emulator's JSON API session: its metadata compared", func(t *testing.T) {
		// fake-gcs-server answers a signed start with a JSON API session URI (docs/protocol.md
		// section 7): its final answer is JSON, and compared.
		const fakeSession = "https://storage.example/upload/storage/v1/b/bkt/o?uploadType=resumable&name=clip.bin&upload_id=F1"
		b := &backend{answers: []any{SessionAnswer{SignedURL: signedStart}}}
		_, err, _ := runBackend(t, &memSource{data: data(5)}, Options{Checksum: ChecksumAuto}, b, []ex{
			{method: "POST", url: signedStart, n: 0, status: 200, hdr: Header{"location": fakeSession}},
			{url: fakeSession, cr: "bytes 0-4/5", n: 5, status: 200, body: `{"name":"clip.bin","crc32c":"AAAAAA=="}`},
		})
		assert.Equal(t, CodeChecksum, Code(err), "%v", err)
	})
}

// A session lost (404, 410) is replaced through the backend, from byte 0 (docs/protocol.md
// section 5), as many times as new sessions are allowed; a backend that cannot replace it ends
// the upload at once.
func TestSessionLostAskedAgain(t *testing.T) {
	d := data(2 * K256)
	t.Run("replaced", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SessionURL: backendSession}, SessionAnswer{SessionURL: backendSession2}}}
		var retries []RetryInfo
		res, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256, OnRetry: func(r RetryInfo) { retries = append(retries, r) }}, b, []ex{
			{url: backendSession, cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
			{url: backendSession, cr: "bytes 262144-524287/524288", n: K256, status: 404},
			{url: backendSession2, cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
			{url: backendSession2, cr: "bytes 262144-524287/524288", n: K256, status: 200},
		})
		require.NoError(t, err)
		assert.Equal(t, backendSession2, res.SessionURL)
		assert.Len(t, b.infos, 2)
		require.Len(t, retries, 1)
		assert.True(t, retries[0].Restart)
		assert.Equal(t, 404, retries[0].Status)
	})
	t.Run("the backend fails the second time: once, no request more", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SessionURL: backendSession}, &BackendError{Kind: BackendRefused, Status: 403, Message: "quota"}}}
		_, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256}, b, []ex{
			{url: backendSession, cr: "bytes 0-262143/524288", n: K256, status: 410},
		})
		require.Error(t, err)
		assert.Equal(t, CodeBackend, Code(err))
		assert.Len(t, b.infos, 2)
	})
	t.Run("lost again and again: as many new sessions as allowed", func(t *testing.T) {
		answers := make([]any, 4)
		exs := make([]ex, 4)
		for i := range answers {
			answers[i] = SessionAnswer{SessionURL: backendSession}
			exs[i] = ex{url: backendSession, cr: "bytes 0-262143/524288", n: K256, status: 404}
		}
		b := &backend{answers: answers}
		_, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256}, b, exs)
		assert.Equal(t, CodeSessionExpired, Code(err), "%v", err)
		assert.Len(t, b.infos, 4, "the first session and three new ones (RetryPolicy.NewSessions)")
	})
	t.Run("a stream whose first bytes are gone: the backend is not asked again", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SessionURL: backendSession}}}
		_, err, _ := runBackend(t, &streamSource{data: d}, Options{ChunkSize: K256}, b, []ex{
			{url: backendSession, cr: "bytes 0-262143/*", n: K256, status: 308, rng: "bytes=0-262143"},
			{url: backendSession, cr: "bytes 262144-524287/*", n: K256, status: 404},
		})
		assert.Equal(t, CodeSessionExpired, Code(err), "%v", err)
		assert.Len(t, b.infos, 1)
	})
}

// With resume: true a kept session is asked first, the backend only once it is gone.
func TestSessionKept(t *testing.T) {
	d := data(2 * K256)
	t.Run("still there: the backend is not asked", func(t *testing.T) {
		b := &backend{}
		res, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256, SessionURL: backendSession, SessionKept: true}, b, []ex{
			{url: backendSession, cr: "bytes */524288", n: 0, status: 308, rng: "bytes=0-262143"},
			{url: backendSession, cr: "bytes 262144-524287/524288", n: K256, status: 200},
		})
		require.NoError(t, err)
		assert.Equal(t, backendSession, res.SessionURL)
		assert.Empty(t, b.infos)
	})
	t.Run("gone: the backend gives the next", func(t *testing.T) {
		b := &backend{answers: []any{SessionAnswer{SessionURL: backendSession2}}}
		_, err, _ := runBackend(t, &memSource{data: d}, Options{ChunkSize: K256, SessionURL: backendSession, SessionKept: true}, b, []ex{
			{url: backendSession, cr: "bytes */524288", n: 0, status: 404},
			{url: backendSession2, cr: "bytes 0-262143/524288", n: K256, status: 308, rng: "bytes=0-262143"},
			{url: backendSession2, cr: "bytes 262144-524287/524288", n: K256, status: 200},
		})
		require.NoError(t, err)
		assert.Len(t, b.infos, 1)
	})
	t.Run("a kept XML API session: its checksum and its final answer", func(t *testing.T) {
		crc, _ := sums(data(5))
		_, err, _ := runBackend(t, &memSource{data: data(5)}, Options{SessionURL: xmlSessionURI, SessionKept: true, Checksum: ChecksumAuto}, &backend{}, []ex{
			{url: xmlSessionURI, cr: "bytes */5", n: 0, status: 308},
			{url: xmlSessionURI, cr: "bytes 0-4/5", n: 5, status: 200, check: func(t *testing.T, r *Request) {
				assert.Equal(t, "crc32c="+crc, r.Header.Get("X-Goog-Hash"))
			}},
		})
		require.NoError(t, err)
	})
}

// A backend that fails, stalls or answers nonsense ends the upload before any request to
// storage (the script fails the test on any request), with a *BackendError that says so.
func TestSessionBackendFails(t *testing.T) {
	threw := errors.New("token service down")
	tests := []struct {
		name     string
		answer   any
		opts     Options
		kind     string
		wantText string
		after    Duration // how long it took
	}{
		{name: "throws", answer: threw, kind: BackendThrew, wantText: "the session function failed (token service down)"},
		{name: "refuses", answer: &BackendError{Kind: BackendRefused, Status: 403, Message: "not signed in"}, opts: Options{SessionEndpoint: "https://app.example/api/session"},
			kind: BackendRefused, wantText: "your backend (POST https://app.example/api/session) refused the upload with 403 Forbidden: not signed in, so no upload session was started and nothing was sent to storage"},
		{name: "unreachable", answer: &BackendError{Kind: BackendUnreachable, Err: errors.New("TypeError: Failed to fetch")}, opts: Options{SessionEndpoint: "https://app.example/api/session"},
			kind: BackendUnreachable, wantText: "could not reach your backend (POST https://app.example/api/session) (TypeError: Failed to fetch)"},
		{name: "stalls: 30 s", answer: "hang", kind: BackendStalled, wantText: "gave no session in 30.0 s", after: 30 * Second},
		{name: "stalls: stallTimeoutMs", answer: "hang", opts: Options{StallTimeout: 2 * Second}, kind: BackendStalled, wantText: "gave no session in 2.0 s", after: 2 * Second},
		{name: "answers nothing", answer: SessionAnswer{}, kind: BackendNonsense, wantText: "neither a session URI nor a signedURL"},
		{name: "answers both", answer: SessionAnswer{SessionURL: backendSession, SignedURL: signedStart}, kind: BackendNonsense, wantText: "both a sessionURL and a signedURL"},
		{name: "a relative URL", answer: SessionAnswer{SessionURL: "/upload?upload_id=1"}, kind: BackendNonsense, wantText: "the session URI is not an absolute http or https URL: /upload"},
		{name: "not http", answer: SessionAnswer{SignedURL: "ftp://storage.example/b/o"}, kind: BackendNonsense, wantText: "the signedURL is not an absolute http or https URL"},
		{name: "headers with a session URI", answer: SessionAnswer{SessionURL: backendSession, Header: Header{"x": "1"}}, kind: BackendNonsense, wantText: "headers go with a signedURL only"},
		{name: "a bad header", answer: SessionAnswer{SignedURL: signedStart, Header: Header{"bad name": "1"}}, kind: BackendNonsense, wantText: "not a valid header: bad name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &backend{answers: []any{tc.answer}}
			_, err, took := runBackend(t, &memSource{data: data(10)}, tc.opts, b, nil)
			require.Error(t, err)
			assert.Equal(t, CodeBackend, Code(err))
			be, ok := Find[*BackendError](err)
			require.True(t, ok)
			assert.Equal(t, tc.kind, be.Kind)
			assert.Contains(t, err.Error(), tc.wantText)
			assert.Contains(t, err.Error(), "nothing was sent to storage")
			assert.Len(t, b.infos, 1, "asked once")
			assert.Equal(t, tc.after, took)
			if tc.answer == threw {
				assert.ErrorIs(t, err, threw, "the cause is kept")
			}
		})
	}

	t.Run("stallTimeoutMs 0: waited for until aborted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := &backend{answers: []any{"hang"}}
			u, err := New(&script{t: t}, &memSource{data: data(10)}, Options{Session: b.ask, StallTimeout: -1})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(10*time.Minute, cancel)
			_, err = u.Run(ctx)
			assert.Equal(t, CodeAborted, Code(err))
			assert.Equal(t, StateAborted, u.State())
		})
	})
}

func TestSessionOptions(t *testing.T) {
	ask := (&backend{}).ask
	for _, tc := range []struct {
		name  string
		opts  Options
		field string
	}{
		{"session and sessionURL", Options{Session: ask, SessionURL: backendSession}, "session"},
		{"a relative endpoint", Options{Session: ask, SessionEndpoint: "/api/session"}, "session"},
		{"a single request", Options{Session: ask, Type: Media}, "session"},
		{"neither url nor session", Options{}, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(&script{t: t}, &memSource{data: data(10)}, tc.opts)
			ae, ok := Find[*ArgumentError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.field, ae.Field)
		})
	}
	t.Run("a kept session with session; no url", func(t *testing.T) {
		u, err := New(&script{t: t}, &memSource{data: data(10)}, Options{Session: ask, SessionURL: backendSession, SessionKept: true})
		require.NoError(t, err)
		assert.Equal(t, Resumable, u.Type(), `"auto" with a session is resumable`)
	})
}

func TestSignedStorageURL(t *testing.T) {
	for url, want := range map[string]bool{
		signedStart:   true,
		xmlSessionURI: true,
		"https://storage.googleapis.com/b/o?x-goog-algorithm=GOOG4-RSA-SHA256&x-goog-signature=ab&upload_id=1": true, // Cloud Storage's Location, in lower case
		"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256":                                 false,
		"https://storage.googleapis.com/b/o?upload_id=1":                                                       false,
		"https://storage.googleapis.com/b/o#X-Goog-Algorithm=1&X-Goog-Signature=2":                             false,
		"https://storage.googleapis.com/b/o?GoogleAccessId=a&Expires=1&Signature=s":                            false, // V2
	} {
		assert.Equal(t, want, signedStorageURL(url), url)
	}
	assert.False(t, xmlSession("https://storage.example/upload/storage/v1/b/bkt/o?X-Goog-Algorithm=a&X-Goog-Signature=b&upload_id=1"), "a JSON API path is the JSON API's")
	c, strict := checksumFor(ChecksumAuto, signedStart, "")
	assert.Equal(t, CRC32C, c)
	assert.False(t, strict)
}

func TestXMLError(t *testing.T) {
	for _, tc := range []struct{ body, code, message string }{
		{`<?xml version='1.0' encoding='UTF-8'?><Error><Code>BadDigest</Code><Message>The CRC32C you specified did not match.</Message></Error>`, "BadDigest", "The CRC32C you specified did not match."},
		{"<Error>\n  <Code>AccessDenied</Code>\n  <Message>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &x</Message>\n</Error>", "AccessDenied", `a <b> & "c" 'd' &x`},
		{`<Error><Code>NoSuchUpload</Code></Error>`, "NoSuchUpload", ""},
		{`<Other><Code>X</Code></Other>`, "", ""},
		{`<Error><Code>A<b/></Code></Error>`, "", ""},
		{`<Error><Code>open`, "", ""},
		{`{"error":{"message":"json"}}`, "", ""},
	} {
		code, message := xmlError([]byte(tc.body))
		assert.Equal(t, tc.code, code, tc.body)
		assert.Equal(t, tc.message, message, tc.body)
	}
}

func FuzzXMLError(f *testing.F) {
	f.Add([]byte(`<Error><Code>BadDigest</Code><Message>a &amp; b</Message></Error>`))
	f.Add([]byte(`<Error><Code>&</Code>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		code, message := xmlError(b)
		for _, s := range []string{code, message} {
			if strings.Contains(s, "<") {
				t.Fatalf("%q holds markup", s)
			}
		}
		if code != "" && !strings.Contains(string(b), "<Code>") {
			t.Fatalf("a code %q out of nothing", code)
		}
	})
}

func TestBackendBoundContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := withBound(context.Background(), defaultClock(), Second)
		<-ctx.Done()
		assert.True(t, stop())
		assert.ErrorIs(t, ctx.Err(), errPastBound)

		parent, cancel := context.WithCancel(context.Background())
		ctx, stop = withBound(parent, defaultClock(), Second)
		cancel()
		<-ctx.Done()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		assert.False(t, stop())

		ctx, stop = withBound(context.Background(), defaultClock(), Second)
		assert.False(t, stop(), "stopped before the bound")
		assert.NoError(t, ctx.Err())
	})
}

// A session of the XML API handed in and lost goes on at URL, the JSON API's: its final answer
// is read as the JSON API's again (a checksum asked for by name wants a hash in it).
func TestXMLSessionLostToJSON(t *testing.T) {
	_, err, s := runScript(t, &memSource{data: data(5)}, Options{URL: testURL, SessionURL: xmlSessionURI, Checksum: CRC32C}, []ex{
		{url: xmlSessionURI, cr: "bytes */5", n: 0, status: 404},
		start(),
		{url: testSession, cr: "bytes 0-4/5", n: 5, status: 200, body: `{"name":"x"}`},
	})
	s.done()
	assert.Equal(t, CodeProtocol, Code(err), "%v", err)
}

// A backend that cannot be reached while the device is offline (the host says so: an
// *OfflineError under the BackendError) is asked again once the device is online, as a request
// to storage is: the upload waits in "offline" (longer than the backend's bound, which counts
// the ask alone), spends no retry, and goes on. Without WaitOnline it is the backend_error it
// was.
func TestSessionBackendOffline(t *testing.T) {
	offline := &BackendError{Kind: BackendUnreachable, Err: &OfflineError{Err: errors.New("TypeError: Failed to fetch")}}
	t.Run("asked again once online", func(t *testing.T) {
		b := &backend{answers: []any{offline, offline, SessionAnswer{SessionURL: backendSession}}}
		var states []State
		var retries []RetryInfo
		waited := 0
		o := Options{
			WaitOnline: func(ctx Context) error { waited++; time.Sleep(10 * time.Minute); return nil },
			OnState:    func(s State) { states = append(states, s) },
			OnRetry:    func(r RetryInfo) { retries = append(retries, r) },
		}
		res, err, took := runBackend(t, &memSource{data: data(10)}, o, b, []ex{
			{url: backendSession, cr: "bytes 0-9/10", n: 10, status: 200},
		})
		require.NoError(t, err)
		assert.Equal(t, backendSession, res.SessionURL)
		assert.Len(t, b.infos, 3, "asked, and again after each wait to be online")
		assert.Equal(t, 2, waited)
		assert.Empty(t, retries, "no retry for the time offline")
		assert.Equal(t, 20*60*Second, took)
		assert.Equal(t, []State{StateStarting, StateOffline, StateStarting, StateOffline, StateStarting, StateUploading, StateDone}, states)
	})
	t.Run("without WaitOnline: backend_error, asked once", func(t *testing.T) {
		b := &backend{answers: []any{offline}}
		_, err, _ := runBackend(t, &memSource{data: data(10)}, Options{}, b, nil)
		assert.Equal(t, CodeBackend, Code(err), "%v", err)
		assert.Len(t, b.infos, 1)
	})
}
