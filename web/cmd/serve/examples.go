package main

import (
	"bytes"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// The widget examples under /examples/ (web/examples) and the npm packages of their widgets
// under /node_modules/.

// reactLink is the index's link to the React example, a Vite app built on demand only
// (web/examples/react/README.md): until its dist/ is there, the index names it without a link,
// rather than send the reader to a 404.
const (
	reactLink    = `<a href="react/dist/">React</a>`
	reactBuilt   = "react/dist/index.html"
	reactUnbuilt = `React <em>(not built here yet)</em>`
)

// examplePages serves the example pages of examples, its index with a link only to what is built.
func examplePages(examples fs.FS) http.Handler {
	files := http.FileServerFS(examples)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "" && r.URL.Path != "/" {
			files.ServeHTTP(w, r)
			return
		}
		page, err := fs.ReadFile(examples, "index.html")
		if err != nil {
			files.ServeHTTP(w, r)
			return
		}
		if _, err := fs.Stat(examples, reactBuilt); err != nil {
			page = bytes.Replace(page, []byte(reactLink), []byte(reactUnbuilt), 1)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(page))
	})
}

// exampleWidgets are the npm packages the example pages load; nothing else of node_modules is
// served.
var exampleWidgets = map[string]bool{"jquery": true, "blueimp-file-upload": true, "uppy": true, "filepond": true}

// widgetModules serves the example widgets' packages from an npm folder under /node_modules/.
func widgetModules(modules fs.FS) http.Handler {
	files := http.StripPrefix("/node_modules/", http.FileServerFS(modules))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pkg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/node_modules/"), "/")
		if !exampleWidgets[pkg] {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
