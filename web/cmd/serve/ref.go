package main

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mediaupload/mediaupload/web/refserver"
)

const refPrefix = "/ref"

// newRef returns the strict reference server mounted under /ref/: in memory,
// or keeping its objects under dataDir/ref.
func newRef(dataDir string) (http.Handler, func(), error) {
	var opts refserver.Options
	if dataDir != "" {
		opts.Dir = filepath.Join(dataDir, "ref")
	}
	return mountRef(refserver.New(opts)), func() {}, nil
}

// mountRef serves h under /ref/. The reference server builds its session URIs
// from the path it sees, so the prefix is put back into the Location header
// of its answers.
func mountRef(h http.Handler) http.Handler {
	strip := http.StripPrefix(refPrefix, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		strip.ServeHTTP(&prefixLocation{ResponseWriter: w}, r)
	})
}

type prefixLocation struct {
	http.ResponseWriter
	wrote bool
}

func (w *prefixLocation) fix() {
	if w.wrote {
		return
	}
	w.wrote = true
	loc := w.Header().Get("Location")
	if loc == "" {
		return
	}
	u, err := url.Parse(loc)
	if err != nil || !strings.HasPrefix(u.Path, "/upload/") {
		return
	}
	u.Path = refPrefix + u.Path
	if u.RawPath != "" {
		u.RawPath = refPrefix + u.RawPath
	}
	w.Header().Set("Location", u.String())
}

func (w *prefixLocation) WriteHeader(code int) {
	w.fix()
	w.ResponseWriter.WriteHeader(code)
}

func (w *prefixLocation) Write(p []byte) (int, error) {
	w.fix()
	return w.ResponseWriter.Write(p)
}

func (w *prefixLocation) Unwrap() http.ResponseWriter { return w.ResponseWriter }
