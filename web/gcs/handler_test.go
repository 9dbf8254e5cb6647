package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// putBytes sends data to a session URI in 256 KiB chunks as the module does (docs/protocol.md
// section 3), and returns the last answer's status.
func putBytes(t *testing.T, session string, data []byte) int {
	t.Helper()
	const chunk = 256 << 10
	status := 0
	for off := 0; off < len(data) || off == 0; off += chunk {
		end := min(off+chunk, len(data))
		req, err := http.NewRequest(http.MethodPut, session, strings.NewReader(string(data[off:end])))
		require.NoError(t, err)
		req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, end-1, len(data)))
		req.Header.Set("Origin", pageOrigin)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		status = res.StatusCode
		if end == len(data) {
			break
		}
		require.Equal(t, http.StatusPermanentRedirect, status, "chunk at %d", off)
	}
	return status
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/1000)
	}
	return b
}

// ann is the app's decision in these tests: the user in the cookie uploads under her own
// folder, with her name in the metadata and the page's "note".
func ann(r *http.Request, f File) (Object, error) {
	c, err := r.Cookie("user")
	if err != nil {
		return Object{}, Unauthorized("sign in to upload")
	}
	if c.Value != "ann" {
		return Object{}, Forbidden("only ann uploads here")
	}
	meta := map[string]string{"owner": c.Value}
	if note, ok := f.Metadata["note"].(string); ok {
		meta["note"] = note
	}
	return Object{Bucket: testBucket, Name: "users/ann/" + f.Name, Metadata: meta}, nil
}

// The session is started with the page's Origin, exactly, and with the object's name, type
// and metadata as the app decided; the bytes PUT to it make that object.
func TestSessionStartedWithPageOrigin(t *testing.T) {
	s := newStorage(t)
	at := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Authorize: ann, MaxSize: 1 << 20, Types: []string{"image/*"}})
	data := pattern(2*262144 + 1000)

	p := ask(t, at, http.MethodPost, map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"},
		fmt.Sprintf(`{"name":"cat 1.png","size":%d,"type":"image/png","metadata":{"note":"from the beach"}}`, len(data)))
	require.Equal(t, http.StatusOK, p.Status, p.Raw)
	session, _ := p.JSON["sessionURL"].(string)
	require.True(t, strings.HasPrefix(session, s.URL+"/upload/storage/v1/b/uploads/o?"), "sessionURL %q", session)
	assert.Equal(t, "no-store", p.Header.Get("Cache-Control"))
	assert.Empty(t, p.Header.Get("Access-Control-Allow-Origin"), "CORS answered though not asked for")

	got := s.requests()
	require.Len(t, got, 1, "storage got one request: the start")
	start := got[0]
	assert.Equal(t, http.MethodPost, start.Method)
	assert.Equal(t, "/upload/storage/v1/b/uploads/o", start.Path)
	q, err := url.ParseQuery(start.RawQuery)
	require.NoError(t, err)
	assert.Equal(t, "resumable", q.Get("uploadType"))
	assert.Equal(t, "users/ann/cat 1.png", q.Get("name"))
	assert.Equal(t, []string{pageOrigin}, start.Header.Values("Origin"), "the session's Origin as storage saw it")
	assert.Equal(t, "image/png", start.Header.Get("X-Upload-Content-Type"))
	assert.Equal(t, fmt.Sprint(len(data)), start.Header.Get("X-Upload-Content-Length"))
	assert.Empty(t, start.Header.Get("Authorization"), "no credentials against an emulator")
	assert.JSONEq(t, `{"name":"users/ann/cat 1.png","contentType":"image/png","metadata":{"owner":"ann","note":"from the beach"}}`, string(start.Body))

	// The chunks carry no Content-Type: fake-gcs-server would take the object's type from it.
	require.Equal(t, http.StatusOK, putBytes(t, session, data))
	obj, err := s.fake.GetObject(testBucket, "users/ann/cat 1.png")
	require.NoError(t, err, "the object as the app named it")
	assert.Equal(t, data, obj.Content)
	assert.Equal(t, "image/png", obj.ContentType)
	assert.Equal(t, map[string]string{"owner": "ann", "note": "from the beach"}, obj.Metadata)
}

// A size not known (a stream) starts a session without X-Upload-Content-Length, where no
// limit asks for the size.
func TestSessionOfUnknownSize(t *testing.T) {
	s := newStorage(t)
	at := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Authorize: func(r *http.Request, f File) (Object, error) {
		return Object{Bucket: testBucket, Name: "stream.bin"}, nil
	}})
	p := askJSON(t, at, pageOrigin, `{"size":null}`)
	require.Equal(t, http.StatusOK, p.Status, p.Raw)
	got := s.requests()
	require.Len(t, got, 1)
	_, has := got[0].Header["X-Upload-Content-Length"]
	assert.False(t, has, "X-Upload-Content-Length sent for an unknown size")
	assert.Equal(t, "application/octet-stream", got[0].Header.Get("X-Upload-Content-Type"))
}

// Every refusal is a JSON 4xx or 5xx with a stable code and a message, and storage gets no
// request at all: no session is started.
func TestRefusalsStartNoSession(t *testing.T) {
	s := newStorage(t)
	var decided atomic.Int32
	var logged []*Error
	cfg := HandlerConfig{
		Client:  emulatorClient(t, s, Options{}),
		MaxSize: 1000,
		Types:   []string{"image/*", "application/pdf"},
		Authorize: func(r *http.Request, f File) (Object, error) {
			decided.Add(1)
			switch f.Name {
			case "db-down":
				return Object{}, errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user admin")
			case "as-html":
				return Object{Bucket: testBucket, Name: "x", ContentType: "text/html"}, nil
			case "bad-bucket":
				return Object{Bucket: "Not_A-Bucket!", Name: "x"}, nil
			case "bad-meta":
				return Object{Bucket: testBucket, Name: "x", Metadata: map[string]string{"a b": "c"}}, nil
			}
			return ann(r, f)
		},
		OnError: func(r *http.Request, err *Error) { logged = append(logged, err) },
	}
	at := serveHandler(t, cfg)
	signedIn := map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"}
	with := func(k, v string) map[string]string { return withHeader(signedIn, k, v) }
	file := func(name string, size int, typ string) string {
		return fmt.Sprintf(`{"name":%q,"size":%d,"type":%q}`, name, size, typ)
	}
	for _, tc := range []struct {
		name       string
		method     string
		header     map[string]string
		body       string
		wantStatus int
		wantCode   string
		decides    bool // the app's callback is asked
	}{
		{"no Origin", "POST", with("Origin", ""), file("a.png", 10, "image/png"), 403, CodeOriginNotAllowed, false},
		{"an Origin not allowed", "POST", with("Origin", "https://evil.example"), file("a.png", 10, "image/png"), 403, CodeOriginNotAllowed, false},
		{"the page's origin with another port", "POST", with("Origin", "http://127.0.0.1:5174"), file("a.png", 10, "image/png"), 403, CodeOriginNotAllowed, false},
		{"an opaque origin", "POST", with("Origin", "null"), file("a.png", 10, "image/png"), 403, CodeOriginNotAllowed, false},
		{"not signed in", "POST", with("Cookie", ""), file("a.png", 10, "image/png"), 401, CodeUnauthorized, true},
		{"another user", "POST", with("Cookie", "user=bob"), file("a.png", 10, "image/png"), 403, CodeForbidden, true},
		{"too large", "POST", signedIn, file("a.png", 1001, "image/png"), 413, CodeTooLarge, false},
		{"over 5 TiB", "POST", signedIn, file("a.png", 5<<40+1, "image/png"), 413, CodeTooLarge, false},
		{"size not known, under a limit", "POST", signedIn, `{"name":"a.png","type":"image/png"}`, 411, CodeBadRequest, false},
		{"a type not allowed", "POST", signedIn, file("a.html", 10, "text/html"), 415, CodeTypeNotAllowed, false},
		{"no type, under a list", "POST", signedIn, file("a", 10, ""), 415, CodeTypeNotAllowed, false},
		{"a type the app chose, not allowed", "POST", signedIn, file("as-html", 10, "image/png"), 415, CodeTypeNotAllowed, true},
		{"not a media type", "POST", signedIn, file("a.png", 10, "image"), 400, CodeBadRequest, false},
		{"a name with a line break", "POST", signedIn, file("a\nb.png", 10, "image/png"), 400, CodeBadName, true},
		{"a name with a control character", "POST", signedIn, file("a\u0086b.png", 10, "image/png"), 400, CodeBadName, true},
		{"a name over 1,024 bytes", "POST", signedIn, file(strings.Repeat("é", 511)+".png", 10, "image/png"), 400, CodeBadName, true},
		{"metadata a header cannot carry", "POST", signedIn, file("bad-meta", 10, "image/png"), 400, CodeBadMetadata, true},
		{"the app's own failure", "POST", signedIn, file("db-down", 10, "image/png"), 500, CodeInternal, true},
		{"the app's bad bucket", "POST", signedIn, file("bad-bucket", 10, "image/png"), 500, CodeInternal, true},
		{"GET", "GET", signedIn, "", 405, CodeBadRequest, false},
		{"not JSON", "POST", with("Content-Type", "text/plain"), file("a.png", 10, "image/png"), 415, CodeBadRequest, false},
		{"broken JSON", "POST", signedIn, `{"name":`, 400, CodeBadRequest, false},
		{"two JSON values", "POST", signedIn, file("a.png", 10, "image/png") + "{}", 400, CodeBadRequest, false},
		{"a name that is not a string", "POST", signedIn, `{"name":7,"size":10,"type":"image/png"}`, 400, CodeBadRequest, false},
		{"a negative size", "POST", signedIn, file("a.png", -5, "image/png"), 400, CodeBadRequest, false},
		{"a fractional size", "POST", signedIn, `{"name":"a.png","size":1.5,"type":"image/png"}`, 400, CodeBadRequest, false},
		{"a size in a string", "POST", signedIn, `{"name":"a.png","size":"10","type":"image/png"}`, 400, CodeBadRequest, false},
		{"metadata that is not an object", "POST", signedIn, `{"name":"a.png","size":10,"type":"image/png","metadata":[1]}`, 400, CodeBadRequest, false},
		{"a body over 64 KiB", "POST", signedIn, `{"name":"` + strings.Repeat("a", 65<<10) + `"}`, 413, CodeBadRequest, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, logs := decided.Load(), len(logged)
			p := ask(t, at, tc.method, tc.header, tc.body)
			assert.Equal(t, tc.wantStatus, p.Status, p.Raw)
			assert.Equal(t, tc.wantCode, p.code(), p.Raw)
			assert.NotEmpty(t, p.message())
			assert.True(t, strings.HasPrefix(p.Header.Get("Content-Type"), "application/json"))
			assert.Equal(t, tc.decides, decided.Load() > before, "whether the app's callback was asked")
			assert.Len(t, logged, logs+1, "OnError told once")
			assert.NotContains(t, p.Raw+fmt.Sprint(p.Header), "evil.example", "the Origin reflected")
			assert.NotContains(t, p.Raw, "password", "the app's error reached the page")
			assert.Empty(t, p.Header.Get("Access-Control-Allow-Origin"))
			assert.Empty(t, s.requests(), "storage got a request")
		})
	}
	assert.Equal(t, "POST", ask(t, at, "GET", signedIn, "").Header.Get("Allow"))
	causes := ""
	for _, e := range logged {
		causes += e.Error() + "\n"
	}
	assert.Contains(t, causes, "password authentication failed", "the app's own failure is the log's")
}

// Storage down, or answering what is not a session: a 5xx with a JSON reason; the page's
// message holds nothing of storage's answer (it may name the service account), the log does.
func TestStorageFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answer     http.HandlerFunc // nil: storage down
		wantStatus int
		wantCode   string
	}{
		{"storage down", nil, 503, CodeStorageUnavailable},
		{"storage answering 503", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "backend error", http.StatusServiceUnavailable)
		}, 503, CodeStorageUnavailable},
		{"storage answering 429", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
		}, 503, CodeStorageUnavailable},
		{"storage refusing the credentials", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":{"code":403,"message":"backend@my-project.iam.gserviceaccount.com does not have storage.objects.create access"}}`)
		}, 502, CodeStorageError},
		{"200 without Location", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"kind":"storage#object"}`)
		}, 502, CodeStorageError},
		{"a relative Location", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/upload?upload_id=1")
		}, 502, CodeStorageError},
		{"a Location that is not http", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "javascript:alert(1)")
		}, 502, CodeStorageError},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>captive portal backend@my-project.iam.gserviceaccount.com</html>")
		}, 502, CodeStorageError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStorage(t)
			if tc.answer == nil {
				s.srv.Close()
			} else {
				s.answerWith(tc.answer)
			}
			var logged *Error
			at := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Authorize: ann,
				OnError: func(r *http.Request, err *Error) { logged = err }})
			p := ask(t, at, http.MethodPost, map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"},
				`{"name":"a.png","size":10,"type":"image/png"}`)
			assert.Equal(t, tc.wantStatus, p.Status, p.Raw)
			assert.Equal(t, tc.wantCode, p.code(), p.Raw)
			assert.NotEmpty(t, p.message())
			assert.NotContains(t, p.Raw, "iam.gserviceaccount.com")
			assert.NotContains(t, p.Raw, "sessionURL")
			require.NotNil(t, logged)
			if tc.name == "storage refusing the credentials" {
				assert.ErrorContains(t, logged, "does not have storage.objects.create")
			}
			if tc.answer != nil {
				assert.Len(t, s.requests(), 1, "one start, not retried")
			}
		})
	}
}

// Tokens come from the credentials (here a service account's, through
// cloud.google.com/go/auth, from a token endpoint on 127.0.0.1) and go to storage only: no
// answer to the page holds one, not even where storage echoes the request back.
func TestNoTokenReachesThePage(t *testing.T) {
	const token = "ya29.a-token-for-storage-only"
	_, keyPEM := testKey(t)
	serviceAccountFile(t, keyPEM, "backend@test-project.iam.gserviceaccount.com", tokenServer(t, token))
	creds, err := detectForTest()
	require.NoError(t, err)
	s := newStorage(t)
	client := emulatorClient(t, s, Options{Credentials: creds, GoogleAccessID: "backend@test-project.iam.gserviceaccount.com", PrivateKey: keyPEM})
	session := serveHandler(t, HandlerConfig{Client: client, Authorize: ann})
	signed := serveHandler(t, HandlerConfig{Client: client, Authorize: ann, Signed: true})
	hdr := map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"}
	body := `{"name":"a.png","size":10,"type":"image/png"}`

	var answers []page
	answers = append(answers, ask(t, session, http.MethodPost, hdr, body))
	require.Equal(t, http.StatusOK, answers[0].Status, answers[0].Raw)
	require.Len(t, s.requests(), 1)
	assert.Equal(t, "Bearer "+token, s.requests()[0].Header.Get("Authorization"), "storage got the token")

	answers = append(answers, ask(t, signed, http.MethodPost, hdr, body))
	require.Equal(t, http.StatusOK, answers[1].Status, answers[1].Raw)

	s.answerWith(func(w http.ResponseWriter, r *http.Request) { // storage echoing the request
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"code":401,"message":"bad token %s"}}`, r.Header.Get("Authorization"))
	})
	answers = append(answers, ask(t, session, http.MethodPost, hdr, body))
	assert.Equal(t, http.StatusBadGateway, answers[2].Status)
	for i, p := range answers {
		all := p.Raw + fmt.Sprint(p.Header)
		assert.NotContains(t, all, token, "answer %d", i)
		assert.NotContains(t, all, "PRIVATE KEY", "answer %d", i)
		assert.NotContains(t, all, strings.Split(string(keyPEM), "\n")[1][:40], "answer %d", i)
	}
}

// With CrossOrigin, the handler answers preflights and CORS for its origins alone; without,
// it sends no CORS header at all.
func TestCrossOrigin(t *testing.T) {
	s := newStorage(t)
	cross := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Authorize: ann, CrossOrigin: true})
	same := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Authorize: ann})
	preflight := func(at, origin string) page {
		return ask(t, at, http.MethodOptions, map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-csrf-token"}, "")
	}

	p := preflight(cross, pageOrigin)
	assert.Equal(t, http.StatusNoContent, p.Status)
	assert.Equal(t, pageOrigin, p.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", p.Header.Get("Access-Control-Allow-Credentials"))
	assert.Equal(t, "POST", p.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "content-type,x-csrf-token", p.Header.Get("Access-Control-Allow-Headers"))
	assert.NotEmpty(t, p.Header.Get("Access-Control-Max-Age"))
	assert.Contains(t, p.Header.Values("Vary"), "Origin")

	p = preflight(cross, "https://evil.example")
	assert.Equal(t, http.StatusForbidden, p.Status)
	assert.Equal(t, CodeOriginNotAllowed, p.code())
	assert.Empty(t, p.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, p.Header.Get("Access-Control-Allow-Headers"))

	// An error answer to an allowed origin is readable by its page.
	p = askJSON(t, cross, pageOrigin, `{"name":"a.png"}`) // no cookie
	assert.Equal(t, http.StatusUnauthorized, p.Status)
	assert.Equal(t, pageOrigin, p.Header.Get("Access-Control-Allow-Origin"))

	p = preflight(same, pageOrigin)
	assert.Equal(t, http.StatusMethodNotAllowed, p.Status)
	assert.Empty(t, p.Header.Get("Access-Control-Allow-Origin"))
	p = askJSON(t, same, pageOrigin, `{"name":"a.png"}`)
	assert.Empty(t, p.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, s.requests())
}

// STORAGE_EMULATOR_HOST, as Google's clients read it (host:port, or a URL), points a Client
// made with no endpoint at the emulator; no credentials are asked for.
func TestEmulatorHostVariable(t *testing.T) {
	s := newStorage(t)
	for _, v := range []string{strings.TrimPrefix(s.URL, "http://"), s.URL, s.URL + "/"} {
		t.Setenv(EmulatorEnv, v)
		c, err := NewClient(context.Background(), Options{})
		require.NoError(t, err, v)
		uri, err := c.StartSession(context.Background(), Object{Bucket: testBucket, Name: "env.bin"}, 5, pageOrigin)
		require.NoError(t, err, v)
		assert.True(t, strings.HasPrefix(uri, s.URL+"/upload/storage/v1/b/uploads/o?"), uri)
	}
	assert.Len(t, s.requests(), 3)
	for _, bad := range []string{"ftp://x", "http://", "http://h/path"} {
		_, err := NewClient(context.Background(), Options{Endpoint: bad})
		assert.Error(t, err, bad)
	}
}

// StartSession checks its arguments before any request.
func TestStartSessionArguments(t *testing.T) {
	s := newStorage(t)
	c := emulatorClient(t, s, Options{})
	ok := Object{Bucket: testBucket, Name: "a"}
	for _, tc := range []struct {
		name   string
		obj    Object
		size   int64
		origin string
		code   string
	}{
		{"no origin", ok, 1, "", CodeOriginNotAllowed},
		{"an origin with a path", ok, 1, pageOrigin + "/x", CodeOriginNotAllowed},
		{"an origin not serialized as browsers do", ok, 1, "HTTP://127.0.0.1:5173", CodeOriginNotAllowed},
		{"no bucket", Object{Name: "a"}, 1, pageOrigin, CodeInternal},
		{"no name", Object{Bucket: testBucket}, 1, pageOrigin, CodeBadName},
		{"size -2", ok, -2, pageOrigin, CodeBadRequest},
		{"a bad type", Object{Bucket: testBucket, Name: "a", ContentType: "nope"}, 1, pageOrigin, CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.StartSession(context.Background(), tc.obj, tc.size, tc.origin)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.code, e.Code)
		})
	}
	assert.Empty(t, s.requests())
}

func TestNewHandlerChecksItsConfig(t *testing.T) {
	s := newStorage(t)
	c := emulatorClient(t, s, Options{})
	for name, cfg := range map[string]HandlerConfig{
		"no client":             {Origins: []string{pageOrigin}, Authorize: ann},
		"no callback":           {Client: c, Origins: []string{pageOrigin}},
		"no origins":            {Client: c, Authorize: ann},
		"an origin with a path": {Client: c, Authorize: ann, Origins: []string{"https://app.example.com/upload"}},
		"not an origin":         {Client: c, Authorize: ann, Origins: []string{"app.example.com"}},
		"a bad type pattern":    {Client: c, Authorize: ann, Origins: []string{pageOrigin}, Types: []string{"image/png*"}},
		"signed without a key":  {Client: c, Authorize: ann, Origins: []string{pageOrigin}, Signed: true},
		"a negative limit":      {Client: c, Authorize: ann, Origins: []string{pageOrigin}, MaxSize: -1},
	} {
		_, err := NewHandler(cfg)
		assert.Error(t, err, name)
	}
}

// The list's origins are taken as browsers send them: "HTTPS://App.Example.com:443/" is
// "https://app.example.com".
func TestOriginsNormalised(t *testing.T) {
	s := newStorage(t)
	at := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{}), Origins: []string{"HTTPS://App.Example.com:443/", "http://[::1]:8080"},
		Authorize: func(r *http.Request, f File) (Object, error) { return Object{Bucket: testBucket, Name: "n"}, nil }})
	for _, o := range []string{"https://app.example.com", "http://[::1]:8080"} {
		p := askJSON(t, at, o, `{}`)
		assert.Equal(t, http.StatusOK, p.Status, "%s: %s", o, p.Raw)
		uri, _ := p.JSON["sessionURL"].(string)
		assert.NotEmpty(t, uri)
	}
	assert.Equal(t, http.StatusForbidden, askJSON(t, at, "https://app.example.com:443", `{}`).Status, "not as a browser sends it")
	got := s.requests()
	require.Len(t, got, 2)
	assert.Equal(t, "https://app.example.com", got[0].Header.Get("Origin"))
}
