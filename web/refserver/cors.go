package refserver

import (
	"net/http"
	"slices"
	"strings"
)

// Headers a client of the protocol sends (docs/protocol.md section 6).
const allowHeaders = "Content-Type, Content-Range, X-Upload-Content-Type, X-Upload-Content-Length, Authorization, X-Goog-Hash, X-GUploader-No-308"

// Headers script must be able to read (docs/protocol.md section 6: without them
// fetch shows Location, Range and the override as null; Retry-After for 429).
const exposeHeaders = "Location, Range, X-HTTP-Status-Code-Override, X-Goog-Hash, Retry-After"

const allowMethods = "GET, POST, PUT, DELETE, OPTIONS"

// setCORS puts the CORS answer headers on every response (docs/protocol.md
// section 6); expose, when not "", replaces the headers exposed.
func setCORS(w http.ResponseWriter, r *http.Request, expose string) {
	h := w.Header()
	if origin := r.Header.Get("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	} else {
		h.Set("Access-Control-Allow-Origin", "*")
	}
	h.Add("Vary", "Origin")
	if expose == "" {
		expose = exposeHeaders
	}
	h.Set("Access-Control-Expose-Headers", expose)
}

// preflight answers an OPTIONS request: 204 allowing the requested method and
// headers (docs/protocol.md section 6: every PUT is preflighted), cached for 600 s
// so the browser does not preflight every chunk.
func preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	methods := allowMethods
	if m := r.Header.Get("Access-Control-Request-Method"); m != "" && !slices.Contains(strings.Split(allowMethods, ", "), m) {
		methods = m + ", " + allowMethods
	}
	h.Set("Access-Control-Allow-Methods", methods)
	if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
		h.Set("Access-Control-Allow-Headers", rh)
	} else {
		h.Set("Access-Control-Allow-Headers", allowHeaders)
	}
	h.Set("Access-Control-Max-Age", "600")
	// Chromium's Private Network Access preflight.
	if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	h.Set("Allow", allowMethods)
	w.WriteHeader(http.StatusNoContent)
}
