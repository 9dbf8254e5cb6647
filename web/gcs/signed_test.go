package gcs

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testAccount = "backend@test-project.iam.gserviceaccount.com"

// verifyV4 checks a V4 signed URL as Cloud Storage does, from Google's description of it
// (https://cloud.google.com/storage/docs/authentication/signatures and
// .../canonical-requests), written here without the library that signed it: the canonical
// request from the method, the path, the query without the signature, the signed headers as
// the page will send them and UNSIGNED-PAYLOAD; the string to sign; the RSA SHA-256 signature
// against pub. Every header the page sends must be signed, and every signed one sent.
func verifyV4(rawURL, method string, headers map[string]string, pub *rsa.PublicKey, now time.Time) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	q := u.Query()
	if q.Get("X-Goog-Algorithm") != "GOOG4-RSA-SHA256" {
		return fmt.Errorf("algorithm %q", q.Get("X-Goog-Algorithm"))
	}
	date, err := time.Parse("20060102T150405Z", q.Get("X-Goog-Date"))
	if err != nil {
		return err
	}
	secs, err := strconv.Atoi(q.Get("X-Goog-Expires"))
	if err != nil || secs > 7*24*3600 {
		return fmt.Errorf("X-Goog-Expires %q", q.Get("X-Goog-Expires"))
	}
	if !now.Before(date.Add(time.Duration(secs) * time.Second)) {
		return errors.New("expired")
	}
	sig, err := hex.DecodeString(q.Get("X-Goog-Signature"))
	if err != nil {
		return err
	}
	// RFC 3986 encoding, as the canonical request wants it: unreserved characters kept.
	enc := func(s string, keep string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~"+keep, c) >= 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String()
	}
	var params []string
	for k, vs := range q {
		if k == "X-Goog-Signature" {
			continue
		}
		for _, v := range vs {
			params = append(params, enc(k, "")+"="+enc(v, ""))
		}
	}
	sort.Strings(params)
	sent := map[string]string{"host": u.Host}
	for k, v := range headers {
		sent[strings.ToLower(k)] = strings.Join(strings.Fields(v), " ")
	}
	signedNames := strings.Split(q.Get("X-Goog-SignedHeaders"), ";")
	if len(signedNames) != len(sent) {
		return fmt.Errorf("signed headers %v, sent %v", signedNames, sent)
	}
	var canonHeaders []string
	for _, n := range signedNames {
		v, ok := sent[n]
		if !ok {
			return fmt.Errorf("signed header %s not sent", n)
		}
		canonHeaders = append(canonHeaders, n+":"+v)
	}
	canonical := strings.Join([]string{method, enc(u.Path, "/"), strings.Join(params, "&"),
		strings.Join(canonHeaders, "\n") + "\n", q.Get("X-Goog-SignedHeaders"), "UNSIGNED-PAYLOAD"}, "\n")
	_, scope, _ := strings.Cut(q.Get("X-Goog-Credential"), "/")
	sum := sha256.Sum256([]byte(canonical))
	toSign := sha256.Sum256([]byte("GOOG4-RSA-SHA256\n" + q.Get("X-Goog-Date") + "\n" + scope + "\n" + hex.EncodeToString(sum[:])))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, toSign[:], sig)
}

type staticToken struct{}

func (staticToken) Token(context.Context) (*auth.Token, error) {
	return &auth.Token{Value: "unused", Type: "Bearer"}, nil
}

func googleClient(t *testing.T, keyPEM []byte) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), Options{Endpoint: GoogleEndpoint,
		Credentials:    auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: staticToken{}}),
		GoogleAccessID: testAccount, PrivateKey: keyPEM})
	require.NoError(t, err)
	return c
}

// A signed URL for Cloud Storage verifies against the key's public half, with exactly the
// headers it comes with; any change to them, the method, the object or the key, or time
// past its expiry, breaks it.
func TestSignedURLVerifies(t *testing.T) {
	key, keyPEM := testKey(t)
	other, _ := testKey(t)
	c := googleClient(t, keyPEM)
	now := time.Now()
	s, err := c.SignStart(Object{Bucket: "my-bucket", Name: "users/ann/cat 1+2é.png", ContentType: "image/png",
		Metadata: map[string]string{"Owner": "  ann   smith ", "note": "x", "blank": "   "}}, now.Add(15*time.Minute))
	require.NoError(t, err)

	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	assert.Equal(t, "https", u.Scheme)
	assert.Equal(t, "storage.googleapis.com", u.Host)
	assert.Equal(t, "/my-bucket/users/ann/cat 1+2é.png", u.Path)
	assert.True(t, strings.HasPrefix(u.Query().Get("X-Goog-Credential"), testAccount+"/"), u.Query().Get("X-Goog-Credential"))
	assert.Equal(t, map[string]string{"x-goog-resumable": "start", "content-type": "image/png",
		"x-goog-meta-owner": "ann smith", "x-goog-meta-note": "x"}, s.Headers)
	require.NoError(t, verifyV4(s.URL, "POST", s.Headers, &key.PublicKey, now))

	with := func(k, v string) map[string]string { return withHeader(s.Headers, k, v) }
	for name, err := range map[string]error{
		"another type":         verifyV4(s.URL, "POST", with("content-type", "image/gif"), &key.PublicKey, now),
		"metadata left out":    verifyV4(s.URL, "POST", with("x-goog-meta-note", ""), &key.PublicKey, now),
		"metadata of its own":  verifyV4(s.URL, "POST", with("x-goog-meta-extra", "1"), &key.PublicKey, now),
		"no resumable header":  verifyV4(s.URL, "POST", with("x-goog-resumable", ""), &key.PublicKey, now),
		"PUT":                  verifyV4(s.URL, "PUT", s.Headers, &key.PublicKey, now),
		"another object":       verifyV4(strings.Replace(s.URL, "cat", "dog", 1), "POST", s.Headers, &key.PublicKey, now),
		"another key":          verifyV4(s.URL, "POST", s.Headers, &other.PublicKey, now),
		"after it has expired": verifyV4(s.URL, "POST", s.Headers, &key.PublicKey, now.Add(16*time.Minute)),
	} {
		assert.Error(t, err, name)
	}
}

// Without a key of its own, a Client for Cloud Storage signs as the Application Default
// Credentials say (cloud.google.com/go/storage's detection): here a service account's key
// file, whose key signs locally, with no request.
func TestSignedWithApplicationDefaultCredentials(t *testing.T) {
	key, keyPEM := testKey(t)
	serviceAccountFile(t, keyPEM, testAccount, "http://127.0.0.1:1/token")
	c, err := NewClient(context.Background(), Options{})
	require.NoError(t, err)
	s, err := c.SignStart(Object{Bucket: "my-bucket", Name: "a.bin"}, time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(s.URL, "https://storage.googleapis.com/my-bucket/a.bin?"), s.URL)
	assert.Contains(t, s.URL, url.QueryEscape(testAccount+"/"))
	assert.Equal(t, "application/octet-stream", s.Headers["content-type"])
	assert.NoError(t, verifyV4(s.URL, "POST", s.Headers, &key.PublicKey, time.Now()))
}

// The handler's signed answer: {signedURL, headers, expires}, and what it holds verifies.
func TestHandlerSignedAnswer(t *testing.T) {
	key, keyPEM := testKey(t)
	at := serveHandler(t, HandlerConfig{Client: googleClient(t, keyPEM), Authorize: ann, Signed: true, SignedURLExpiry: 10 * time.Minute})
	p := ask(t, at, http.MethodPost, map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"},
		`{"name":"a.png","size":10,"type":"image/png","metadata":{"note":"hi"}}`)
	require.Equal(t, http.StatusOK, p.Status, p.Raw)
	signedURL, _ := p.JSON["signedURL"].(string)
	raw, _ := p.JSON["headers"].(map[string]any)
	headers := map[string]string{}
	for k, v := range raw {
		headers[k], _ = v.(string)
	}
	assert.Equal(t, map[string]string{"x-goog-resumable": "start", "content-type": "image/png",
		"x-goog-meta-owner": "ann", "x-goog-meta-note": "hi"}, headers)
	expires, err := time.Parse(time.RFC3339, fmt.Sprint(p.JSON["expires"]))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), expires, 5*time.Second)
	assert.NoError(t, verifyV4(signedURL, "POST", headers, &key.PublicKey, time.Now()))
	assert.Error(t, verifyV4(signedURL, "POST", headers, &key.PublicKey, time.Now().Add(11*time.Minute)))
	assert.NotContains(t, p.Raw, "sessionURL")
}

// Against fake-gcs-server, a signed URL's POST with the returned headers and the page's
// Origin starts a session, and the bytes PUT to its Location make an object. What the
// emulator does not do (1.56.1, fakestorage/upload.go insertObject and resumableUpload): it
// checks no signature, no expiry and no x-goog-resumable header (any POST whose query has
// X-Goog-Algorithm starts a session), it answers 200 with JSON where Cloud Storage answers
// 201, and it keeps neither the object's name from the path nor its type or metadata from
// the headers (the object is stored under the name ""). So this test checks what reached the
// emulator, and TestSignedURLVerifies checks the signature.
func TestSignedURLStartsSessionOnFakeGCS(t *testing.T) {
	_, keyPEM := testKey(t)
	s := newStorage(t)
	at := serveHandler(t, HandlerConfig{Client: emulatorClient(t, s, Options{GoogleAccessID: testAccount, PrivateKey: keyPEM}), Authorize: ann, Signed: true})
	p := ask(t, at, http.MethodPost, map[string]string{"Origin": pageOrigin, "Content-Type": "application/json", "Cookie": "user=ann"},
		`{"name":"a.png","size":300000,"type":"image/png","metadata":{"note":"hi"}}`)
	require.Equal(t, http.StatusOK, p.Status, p.Raw)
	assert.Empty(t, s.requests(), "signing sends no request")
	signedURL, _ := p.JSON["signedURL"].(string)
	require.True(t, strings.HasPrefix(signedURL, s.URL+"/uploads/users/ann/a.png?"), signedURL)

	req, err := http.NewRequest(http.MethodPost, signedURL, nil)
	require.NoError(t, err)
	for k, v := range p.JSON["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	req.Header.Set("Origin", pageOrigin) // as the browser adds it
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "fake-gcs-server's answer to the start (Cloud Storage's is 201)")
	session := res.Header.Get("Location")
	require.NotEmpty(t, session)

	got := s.requests()
	require.Len(t, got, 1)
	assert.Equal(t, "/uploads/users/ann/a.png", got[0].Path)
	assert.Equal(t, "start", got[0].Header.Get("X-Goog-Resumable"))
	assert.Equal(t, "image/png", got[0].Header.Get("Content-Type"))
	assert.Equal(t, "hi", got[0].Header.Get("X-Goog-Meta-Note"))
	assert.Equal(t, "ann", got[0].Header.Get("X-Goog-Meta-Owner"))
	assert.Equal(t, pageOrigin, got[0].Header.Get("Origin"))

	assert.Equal(t, http.StatusOK, putBytes(t, session, pattern(300000)))
}

// Signing checks its arguments first: a metadata value a header cannot carry.
func TestSignStartArguments(t *testing.T) {
	_, keyPEM := testKey(t)
	c := googleClient(t, keyPEM)
	_, err := c.SignStart(Object{Bucket: "b-1", Name: "a", Metadata: map[string]string{"k": "café"}}, time.Now().Add(time.Minute))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CodeBadMetadata, e.Code)
	_, err = c.SignStart(Object{Bucket: "b-1", Name: "a"}, time.Now().Add(8*24*time.Hour))
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CodeInternal, e.Code, "over seven days")

	// A metadata value that is not ASCII is fine in a session start (JSON).
	s := newStorage(t)
	_, err = emulatorClient(t, s, Options{}).StartSession(context.Background(),
		Object{Bucket: testBucket, Name: "a", Metadata: map[string]string{"k": "café"}}, 1, pageOrigin)
	assert.NoError(t, err)
}
