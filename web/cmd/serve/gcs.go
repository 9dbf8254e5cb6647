package main

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// newFakeGCS starts fake-gcs-server as a library (no listener of its own) with
// bucket created, in memory or under dataDir/gcs.
func newFakeGCS(dataDir, bucket string) (*fakestorage.Server, error) {
	opts := fakestorage.Options{NoListener: true, Scheme: "http"}
	if dataDir != "" {
		opts.StorageRoot = filepath.Join(dataDir, "gcs")
	}
	s, err := fakestorage.NewServerWithOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("fake-gcs-server: %w", err)
	}
	// CreateBucket panics when the bucket exists, which it does when -data
	// points at a folder used before.
	if _, err := s.Backend().GetBucket(bucket); err != nil {
		s.CreateBucket(bucket)
	}
	return s, nil
}

// gcsCORS is the CORS layer in front of fake-gcs-server. Its own layer
// exposes only Location and refuses preflights that ask for X-Upload-*
// headers (docs/protocol.md section 7), so this one answers every
// preflight itself and hides the Origin from the emulator, whose layer then
// stays out of the way. The exposed headers are the ones the module must read
// (docs/protocol.md section 6).
func gcsCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		h := w.Header()
		if origin != "" {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
			// Whatever the page asks for, as Cloud Storage does (its buckets' CORS settings
			// name origins, methods and exposed headers, never request headers).
			allow := allowedHeaders
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				allow = rh
			}
			h.Set("Access-Control-Allow-Headers", allow)
			// Lets the browser skip the preflight before every chunk PUT.
			h.Set("Access-Control-Max-Age", "3600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if origin != "" {
			r = r.Clone(r.Context())
			r.Header.Del("Origin")
		}
		next.ServeHTTP(w, r)
	})
}

const (
	exposedHeaders = "Location, Range, X-HTTP-Status-Code-Override, X-GUploader-UploadID, Content-Length, Content-Type, ETag"
	allowedHeaders = "Authorization, Content-Type, Content-Range, Content-Encoding, Range, " +
		"X-Upload-Content-Type, X-Upload-Content-Length, X-Goog-Hash, X-GUploader-No-308"
)
