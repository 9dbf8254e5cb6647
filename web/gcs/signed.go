package gcs

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/storage"
)

// SignedStart is a V4 signed URL for the XML API's POST with x-goog-resumable: start, and
// the headers the page must send with that POST: the signature covers each of them, so each
// goes exactly as given (docs/protocol.md section 10). The answer's Location is the session.
type SignedStart struct {
	URL     string
	Headers map[string]string // lowercase names
	Expires time.Time
}

// SignStart signs a URL that starts a resumable upload of obj with the XML API, valid until
// expires (at most seven days ahead). The content type and the metadata are signed headers;
// a metadata value of only spaces is left out (a signed header is never empty). A bad
// argument fails before any signing; every failure is an *Error.
func (c *Client) SignStart(obj Object, expires time.Time) (SignedStart, error) {
	ct, e := checkObject(obj, UnknownSize, "", true)
	if e != nil {
		return SignedStart{}, e
	}
	if c.signer == nil {
		return SignedStart{}, &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
			Message: "the backend cannot sign upload URLs: tell the site's owner",
			Err:     errors.New("no signer: against an emulator, give Options.GoogleAccessID and PrivateKey or SignBytes")}
	}
	// docs/protocol.md section 10: every header the page sends is signed, in one spelling (the
	// library collapses spaces in a signed value, so the page gets the collapsed one too).
	headers := map[string]string{"x-goog-resumable": "start", "content-type": ct}
	signed := []string{"x-goog-resumable:start"}
	for k, v := range obj.Metadata {
		if v = strings.Join(strings.Fields(v), " "); v != "" {
			name := "x-goog-meta-" + strings.ToLower(k)
			headers[name] = v
			signed = append(signed, name+":"+v)
		}
	}
	opts := &storage.SignedURLOptions{
		Method:      http.MethodPost,
		Expires:     expires,
		ContentType: ct,
		Headers:     signed,
		Scheme:      storage.SigningSchemeV4,
		Style:       storage.PathStyle(),
	}
	if !c.google {
		opts.Hostname = c.endpoint.Host
		opts.Insecure = c.endpoint.Scheme == "http"
	}
	u, err := c.signer.signURL(obj.Bucket, obj.Name, opts)
	if err != nil {
		return SignedStart{}, &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
			Message: "the backend could not sign the upload's URL: try again later, or tell the site's owner", Err: err}
	}
	return SignedStart{URL: u, Headers: headers, Expires: expires}, nil
}

type signer interface {
	signURL(bucket, object string, opts *storage.SignedURLOptions) (string, error)
}

// keySigner signs with the key (or the signer) the app gave.
type keySigner struct {
	id   string
	key  []byte
	sign func([]byte) ([]byte, error)
}

func (s keySigner) signURL(bucket, object string, opts *storage.SignedURLOptions) (string, error) {
	opts.GoogleAccessID, opts.PrivateKey, opts.SignBytes = s.id, s.key, s.sign
	if len(s.key) > 0 {
		opts.SignBytes = nil
	}
	return storage.SignedURL(bucket, object, opts)
}

// adcSigner leaves the key to cloud.google.com/go/storage: a service-account file's, else
// IAM signBlob as the account the backend runs as (its credential requirements:
// https://pkg.go.dev/cloud.google.com/go/storage#hdr-Credential_requirements_for_signing).
type adcSigner struct{ c *storage.Client }

func (s adcSigner) signURL(bucket, object string, opts *storage.SignedURLOptions) (string, error) {
	u, err := s.c.Bucket(bucket).SignedURL(object, opts)
	if err != nil {
		return "", fmt.Errorf("signing with the application default credentials: %w", err)
	}
	return u, nil
}
