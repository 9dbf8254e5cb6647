package main

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// encodings are the precompressed variants a file may have beside it, in the
// order preferred when the client accepts several equally: ./build.sh writes
// dist/mediaupload.wasm.br and .gz (about 530 and 690 KB for a 2.4 MB wasm).
var encodings = []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// precompressed serves fsys like http.FileServerFS, but sends FILE.br or
// FILE.gz in place of FILE when one exists and the request's Accept-Encoding
// allows it, with Content-Encoding, FILE's Content-Type and Vary:
// Accept-Encoding, as nginx's gzip_static/brotli_static and Caddy's
// precompressed do.
func precompressed(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if servePrecompressed(w, r, fsys) {
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}

// servePrecompressed sends the best variant of the requested file that the
// client accepts and reports whether it did. Whenever variants exist it adds
// Vary: Accept-Encoding, so that a cache never hands one client's encoding to
// another (RFC 9110 section 12.5.5).
func servePrecompressed(w http.ResponseWriter, r *http.Request, fsys fs.FS) bool {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || strings.HasSuffix(r.URL.Path, "/") {
		return false
	}
	accept := r.Header.Get("Accept-Encoding")
	best, bestQ, varies := -1, 0.0, false
	for i, e := range encodings {
		if st, err := fs.Stat(fsys, name+e.ext); err != nil || st.IsDir() {
			continue
		}
		varies = true
		if q := acceptQ(accept, e.coding); q > bestQ {
			best, bestQ = i, q
		}
	}
	if varies {
		w.Header().Add("Vary", "Accept-Encoding")
	}
	if best < 0 {
		return false
	}
	f, err := fsys.Open(name + encodings[best].ext)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	rs, seekable := f.(io.ReadSeeker)
	if err != nil || !seekable {
		return false
	}
	ctype := mime.TypeByExtension(path.Ext(name)) // .wasm: application/wasm, which instantiateStreaming requires
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Encoding", encodings[best].coding)
	http.ServeContent(w, r, name, st.ModTime(), rs)
	return true
}

// acceptQ is the weight an Accept-Encoding header gives a content coding: its
// own q, else that of "*", else 0 (RFC 9110 section 12.5.3; no header at all
// asks for no coding). q=0 means "not acceptable".
func acceptQ(header, coding string) float64 {
	q, wild := -1.0, -1.0
	for _, item := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(item, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "x-gzip" { // an old alias (RFC 9110 section 8.4.1.3)
			name = "gzip"
		}
		w := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
					w = f
				}
			}
		}
		switch name {
		case coding:
			q = max(q, w)
		case "*":
			wild = max(wild, w)
		}
	}
	if q < 0 {
		q = wild
	}
	return max(q, 0)
}
