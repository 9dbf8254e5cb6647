// Package demo holds the demo upload page: index.html, demo.css, favicon.svg and the page's
// JavaScript modules (demo.js and what it imports; its opening comment says which does what),
// embedded so that the serve command works from any directory. The files are plain HTML, CSS
// and JS with no build step: edit them and reload (serve -demo web/demo reads them from disk
// instead of the embedded copy).
package demo

import "embed"

// Files holds the page's files (the site's /favicon.ico too: the pages carry it inline, a JSON
// answer opened in a tab does not).
//
//go:embed index.html demo.css *.js favicon.svg
var Files embed.FS
