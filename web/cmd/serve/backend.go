package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mediaupload/mediaupload/web/gcs"
)

const (
	sessionPath = "/api/gcs/session"
	signedPath  = "/api/gcs/signed"
)

// backend is the demo's own backend for Cloud Storage (package gcs): POST /api/gcs/session
// starts a resumable session for the page, with its Origin, in fake-gcs-server's bucket, or
// with -bucket in a real bucket with Application Default Credentials; there, POST
// /api/gcs/signed answers a signed URL instead (fake-gcs-server keeps neither the object's
// name nor its metadata from a signed start: docs/protocol.md section 10). Its handlers are
// made once the demo's addresses are known (listening): the session URIs point back at the
// origin the page asked (HTTP or HTTPS).
type backend struct {
	bucket string       // "": fake-gcs-server's
	fake   http.Handler // fake-gcs-server, as the page reaches it but without the network speed
	extra  []string     // -allow-origin
	hs     atomic.Pointer[backendHandlers]
}

type backendHandlers struct {
	session, tlsSession, signed http.Handler // tlsSession, signed: nil when there is none
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hs := b.hs.Load()
	var h http.Handler
	switch {
	case hs == nil:
	case r.URL.Path == signedPath:
		h = hs.signed
	case r.TLS != nil && hs.tlsSession != nil:
		h = hs.tlsSession
	default:
		h = hs.session
	}
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// listening makes the handlers for pages of the demo's own origins (httpURL, httpsURL if
// any, the same with localhost for 127.0.0.1) and of -allow-origin's.
func (b *backend) listening(ctx context.Context, httpURL, httpsURL string) error {
	origins := append(ownOrigins(httpURL), b.extra...)
	if httpsURL != "" {
		origins = append(origins, ownOrigins(httpsURL)...)
	}
	hs := &backendHandlers{}
	if b.bucket != "" {
		// A real bucket: Application Default Credentials for the tokens and for signing.
		client, err := gcs.NewClient(ctx, gcs.Options{})
		if err != nil {
			return err
		}
		if hs.session, err = b.handler(client, origins, false); err != nil {
			return err
		}
		hs.signed, _ = b.handler(client, origins, true) // nil where the credentials cannot sign
		b.hs.Store(hs)
		return nil
	}
	// fake-gcs-server in this process, reached without a network hop, at the origin the page
	// uploads to: the session URI is built from the endpoint's host (and scheme).
	for _, u := range []string{httpURL, httpsURL} {
		if u == "" {
			continue
		}
		client, err := gcs.NewClient(ctx, gcs.Options{Endpoint: u, HTTPClient: &http.Client{Transport: inProcess{b.fake}, Timeout: 30 * time.Second}})
		if err != nil {
			return err
		}
		h, err := b.handler(client, origins, false)
		if err != nil {
			return err
		}
		if u == httpURL {
			hs.session = h
		} else {
			hs.tlsSession = h
		}
	}
	b.hs.Store(hs)
	return nil
}

// handler is the demo's decision: any page of its origins uploads anything, named as the
// upload's metadata or the file says.
func (b *backend) handler(client *gcs.Client, origins []string, signed bool) (http.Handler, error) {
	bucket := b.bucket
	if bucket == "" {
		bucket = defaultBucket
	}
	h, err := gcs.NewHandler(gcs.HandlerConfig{Client: client, Origins: origins, Signed: signed,
		Authorize: func(r *http.Request, f gcs.File) (gcs.Object, error) {
			o := gcs.Object{Bucket: bucket, Name: f.Name, Metadata: map[string]string{}}
			if n, ok := f.Metadata["name"].(string); ok {
				o.Name = n
			}
			if o.Name == "" {
				o.Name = "upload-" + time.Now().UTC().Format("20060102-150405.000")
			}
			if t, ok := f.Metadata["contentType"].(string); ok {
				o.ContentType = t
			}
			custom, _ := f.Metadata["metadata"].(map[string]any)
			for k, v := range custom {
				o.Metadata[k] = fmt.Sprint(v)
			}
			return o, nil
		}})
	if err != nil {
		return nil, err // not a nil *gcs.Handler in an http.Handler
	}
	return h, nil
}

// ownOrigins is the origin of u, and its localhost twin where u is on 127.0.0.1.
func ownOrigins(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	o := []string{p.Scheme + "://" + p.Host}
	if p.Hostname() == "127.0.0.1" {
		o = append(o, p.Scheme+"://"+net.JoinHostPort("localhost", p.Port()))
	}
	return o
}

// inProcess hands a request to a handler of this process, as a server would receive it.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host, r.RequestURI, r.RemoteAddr = r.URL.Host, r.URL.RequestURI(), "127.0.0.1:0"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	return w.Result(), nil
}
