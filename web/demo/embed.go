// Package demo holds the demo upload page (index.html, demo.css, demo.js, favicon.svg),
// embedded so that the serve command works from any directory. The files are
// plain HTML, CSS and JS with no build step: edit them and reload (serve
// -demo web/demo reads them from disk instead of the embedded copy).
package demo

import "embed"

// Files holds index.html, demo.css, demo.js and favicon.svg (the site's /favicon.ico too: the
// pages carry it inline, a JSON answer opened in a tab does not).
//
//go:embed index.html demo.css demo.js favicon.svg
var Files embed.FS
