package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/storage"
)

const (
	// GoogleEndpoint is Cloud Storage's own root URL, for the JSON API and the XML API alike.
	GoogleEndpoint = "https://storage.googleapis.com"
	// EmulatorEnv is the variable Google's clients read to talk to an emulator instead:
	// host:port (plain HTTP) or a URL.
	EmulatorEnv = "STORAGE_EMULATOR_HOST"
	// scopeReadWrite is the OAuth scope the tokens are asked with: enough to create objects
	// (https://cloud.google.com/storage/docs/oauth-scopes).
	scopeReadWrite = "https://www.googleapis.com/auth/devstorage.read_write"
)

// Options say where the Client sends its requests and with which credentials. The zero value
// means Cloud Storage itself with Application Default Credentials, or the emulator that
// STORAGE_EMULATOR_HOST names.
type Options struct {
	// Endpoint is the root URL of Cloud Storage or of an emulator ("http://127.0.0.1:4443", or
	// "127.0.0.1:4443" for plain HTTP). "" means the STORAGE_EMULATOR_HOST variable's, as
	// Google's clients read it, else GoogleEndpoint. An endpoint other than GoogleEndpoint is
	// an emulator: no credentials are asked for unless Credentials is set.
	Endpoint string
	// Credentials give the OAuth tokens of the session starts. nil: Application Default
	// Credentials (credentials.DetectDefault, with the devstorage.read_write scope) against
	// GoogleEndpoint, none against an emulator.
	Credentials *auth.Credentials
	// HTTPClient sends the requests to Cloud Storage. nil: one with a 30 s timeout that keeps
	// up to 256 idle connections to the endpoint.
	HTTPClient *http.Client
	// Signing, for SignStart. GoogleAccessID (the service account's email) with either
	// PrivateKey (its PEM key) or SignBytes (a signer of your own). None of them: against
	// GoogleEndpoint, cloud.google.com/go/storage finds both from the Application Default
	// Credentials (the key of a service-account file, else IAM signBlob as the account that
	// runs the backend); against an emulator, SignStart fails.
	GoogleAccessID string
	PrivateKey     []byte
	SignBytes      func([]byte) ([]byte, error)
}

// Client starts Cloud Storage resumable sessions (StartSession) and signs URLs that start
// them (SignStart), for pages that then upload without credentials. It is safe for
// concurrent use; make one and share it.
type Client struct {
	endpoint *url.URL // scheme and host, no path
	google   bool
	creds    *auth.Credentials // nil: no Authorization header (an emulator)
	hc       *http.Client
	signer   signer // nil: SignStart fails
}

// NewClient resolves the endpoint and the credentials. It fails when Cloud Storage itself is
// the endpoint and no Application Default Credentials are found; it sends no request.
func NewClient(ctx context.Context, o Options) (*Client, error) {
	raw := o.Endpoint
	if raw == "" {
		raw = os.Getenv(EmulatorEnv)
	}
	if raw == "" {
		raw = GoogleEndpoint
	}
	ep, err := parseEndpoint(raw)
	if err != nil {
		return nil, err
	}
	c := &Client{endpoint: ep, google: ep.String() == GoogleEndpoint, creds: o.Credentials, hc: o.HTTPClient}
	if c.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		c.hc = &http.Client{Transport: t, Timeout: 30 * time.Second}
	}
	if c.creds == nil && c.google {
		c.creds, err = credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{scopeReadWrite}})
		if err != nil {
			return nil, fmt.Errorf("gcs: no Application Default Credentials for Cloud Storage (run `gcloud auth "+
				"application-default login`, set GOOGLE_APPLICATION_CREDENTIALS, or run on Google Cloud): %w", err)
		}
	}
	switch {
	case o.GoogleAccessID != "" && (len(o.PrivateKey) > 0 || o.SignBytes != nil):
		c.signer = keySigner{id: o.GoogleAccessID, key: o.PrivateKey, sign: o.SignBytes}
	case o.GoogleAccessID != "" || len(o.PrivateKey) > 0 || o.SignBytes != nil:
		return nil, errors.New("gcs: signing needs GoogleAccessID with PrivateKey or SignBytes")
	case c.google:
		// The library's own detection: the key of a service-account file, else IAM signBlob.
		sc, err := storage.NewClient(ctx)
		if err != nil {
			return nil, fmt.Errorf("gcs: cloud storage client for signing: %w", err)
		}
		c.signer = adcSigner{sc}
	}
	return c, nil
}

// parseEndpoint reads an endpoint as Google's clients read STORAGE_EMULATOR_HOST: a URL, or
// host:port for plain HTTP.
func parseEndpoint(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("gcs: endpoint %q is not a root URL (https://host[:port]) nor host:port", raw)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}
