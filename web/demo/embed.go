// Package demo holds the demo upload page (index.html, demo.css, demo.js),
// embedded so that the serve command works from any directory. The files are
// plain HTML, CSS and JS with no build step: edit them and reload (serve
// -demo web/demo reads them from disk instead of the embedded copy).
package demo

import "embed"

// Files holds index.html, demo.css and demo.js.
//
//go:embed index.html demo.css demo.js
var Files embed.FS
