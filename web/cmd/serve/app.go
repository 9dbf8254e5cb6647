package main

import (
	"context"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/mediaupload/mediaupload/web/demo"
)

// app is the whole demo site on one handler.
type app struct {
	mux      *http.ServeMux
	throttle *speed
	backend  *backend
	closers  []func()
}

func newApp(c config) (*app, error) {
	a := &app{mux: http.NewServeMux(), throttle: &speed{}}

	ref, closeRef, err := newRef(c.dataDir)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closeRef)

	gcs, err := newFakeGCS(c.dataDir, c.bucket)
	if err != nil {
		a.Close()
		return nil, err
	}

	var page fs.FS
	if c.demoDir != "" {
		page = os.DirFS(c.demoDir)
	} else {
		page = demo.Files
	}

	// The strict reference server lives under /ref/: it sees the rest of the
	// path, so its uploads are GCS shaped too (/ref/upload/storage/v1/b/B/o).
	a.mux.Handle("/ref/", a.throttle.wrap(ref))

	// fake-gcs-server owns the GCS paths at the root, as a client library
	// pointed at the emulator expects.
	g := gcsCORS(a.throttle.wrap(gcs.HTTPHandler()))
	a.mux.Handle("/upload/storage/v1/", g)
	a.mux.Handle("/upload/resumable/", g)
	a.mux.Handle("/storage/v1/", g)
	a.mux.Handle("/download/storage/v1/", g)

	// The demo's own backend (package gcs) starts sessions for the page, over the page's
	// network speed; it reaches fake-gcs-server without it, as a backend reaches Cloud Storage.
	a.backend = &backend{bucket: c.realBucket, fake: gcsCORS(gcs.HTTPHandler()), extra: c.allowOrigins}
	a.mux.Handle(sessionPath, a.throttle.wrap(a.backend))
	a.mux.Handle(signedPath, a.throttle.wrap(a.backend))

	a.mux.Handle("/dist/", noCache(http.StripPrefix("/dist/", precompressed(os.DirFS(c.dist)))))
	if c.examples != "" {
		a.mux.Handle("/examples/", noCache(http.StripPrefix("/examples/", examplePages(os.DirFS(c.examples)))))
		a.mux.Handle("/node_modules/", noCache(widgetModules(os.DirFS(c.modules))))
	}
	a.mux.Handle("/api/throttle", a.throttle)
	a.mux.HandleFunc("/api/config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"bucket": c.bucket,
			"targets": map[string]any{
				"ref": map[string]string{
					"upload":  "/ref/upload/storage/v1/b/" + c.bucket + "/o",
					"objects": "/ref/_ref/objects",
					"faults":  "/ref/_ref/faults",
				},
				"gcs": gcsTarget(c),
			},
			"persistent": c.dataDir != "",
		})
	})
	// The pages name their icon inline; a browser still asks for /favicon.ico on every other
	// tab it opens here (an object listing's JSON, say), and logs a 404 on its console for it.
	a.mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		http.ServeFileFS(w, r, page, "favicon.svg")
	})
	a.mux.Handle("/", noCache(onlyPage(http.FileServerFS(page))))
	return a, nil
}

// gcsTarget is /api/config's "gcs": fake-gcs-server's upload and listing URLs, and the
// backend's: "session" (POST: {sessionURL}), its bucket, and with -bucket "signed".
func gcsTarget(c config) map[string]string {
	t := map[string]string{
		"upload":        "/upload/storage/v1/b/" + c.bucket + "/o",
		"objects":       "/storage/v1/b/" + c.bucket + "/o",
		"session":       sessionPath,
		"sessionBucket": c.bucket,
	}
	if c.realBucket != "" {
		t["sessionBucket"] = c.realBucket
		t["signed"] = signedPath
	}
	return t
}

// listening is told the demo's addresses (httpsURL "" without HTTPS): the backend serves the
// pages of these origins from then on.
func (a *app) listening(ctx context.Context, httpURL, httpsURL string) error {
	return a.backend.listening(ctx, httpURL, httpsURL)
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

func (a *app) Close() {
	for _, f := range a.closers {
		f()
	}
	a.closers = nil
}

// noCache makes the browser revalidate, so a rebuilt dist/ or an edited page
// is picked up on reload.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// onlyPage keeps the Go source that sits beside the page files out of reach.
func onlyPage(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".go") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
