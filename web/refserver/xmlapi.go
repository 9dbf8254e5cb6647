package refserver

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Cloud Storage's XML API, as far as a resumable upload from a signed URL meets it
// (docs/protocol.md sections 2 and 9): a POST to /BUCKET/OBJECT with "x-goog-resumable: start"
// on a V4-signed-looking URL starts a session (201, Location: the URL with its signed query and
// upload_id); the session's requests are the JSON API's, answered as they are (308 and Range,
// the no-308 form); its final answer is 200 with no body (the object's hashes in X-Goog-Hash);
// its errors are XML, <Error><Code>…</Code><Message>…</Message></Error>, and a hash that does not
// match is BadDigest.
//
// The signature is not checked (the server holds no key): what is checked is that the URL
// carries every query parameter of V4 signing, well formed and not expired, and that every
// header X-Goog-SignedHeaders names was sent, as Cloud Storage's check of the signature needs
// them.

// xmlRequest reports whether r is for the XML API: a path outside /upload/ (and outside the
// redirect fault's target, /redirected/, an unknown path) that starts a session
// (x-goog-resumable, or a signed query) or is a session's (upload_id).
func xmlRequest(r *http.Request) bool {
	p := r.URL.Path
	if strings.HasPrefix(p, "/upload/") || strings.HasPrefix(p, "/redirected/") {
		return false
	}
	return r.Header.Get("X-Goog-Resumable") != "" || r.URL.Query().Has("upload_id") || queryParam(r, "X-Goog-Signature") != ""
}

// queryParam returns the query parameter name, matched without regard to case (Cloud Storage
// takes the signing parameters either way).
func queryParam(r *http.Request, name string) string {
	for k, v := range r.URL.Query() {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// xmlWriter marks the answer to a request of the XML API: writeGoogleError writes its errors
// as the XML API does. Unwrap lets http.NewResponseController reach Hijack.
type xmlWriter struct{ http.ResponseWriter }

func (w *xmlWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// badDigest is the reason of a hash that does not match the object (checkHashes): "invalid" in
// the JSON API's error, the code BadDigest in the XML API's.
const badDigest = "badDigest"

// xmlCode is the XML API's error code for a status and a reason of writeGoogleError.
func xmlCode(status int, reason string) string {
	switch reason {
	case badDigest:
		return "BadDigest"
	case "":
	default:
		if c, ok := xmlReasons[reason]; ok {
			return c
		}
		return reason // one of the XML API's own (xmlStart's)
	}
	switch status {
	case http.StatusBadRequest:
		return "InvalidArgument"
	case http.StatusUnauthorized:
		return "AuthenticationRequired"
	case http.StatusForbidden:
		return "AccessDenied"
	case http.StatusNotFound:
		return "NoSuchUpload"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowed"
	case http.StatusGone:
		return "Gone"
	case http.StatusTooManyRequests:
		return "SlowDown"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	}
	if status >= 500 {
		return "InternalError"
	}
	return "InvalidRequest"
}

// xmlReasons maps the JSON API's reasons a fault may give onto the XML API's codes.
var xmlReasons = map[string]string{"invalid": "InvalidArgument", "forbidden": "AccessDenied", "notFound": "NoSuchUpload", "backendError": "InternalError"}

// writeXMLError answers the XML API's error: <Error><Code>code</Code><Message>msg</Message></Error>.
func writeXMLError(w http.ResponseWriter, status int, code, msg string) {
	var b strings.Builder
	b.WriteString("<?xml version='1.0' encoding='UTF-8'?><Error><Code>")
	xml.EscapeText(&b, []byte(code))
	b.WriteString("</Code><Message>")
	xml.EscapeText(&b, []byte(msg))
	b.WriteString("</Message></Error>")
	w.Header().Set("Content-Type", "application/xml; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}

// xmlFinal answers a completed session of the XML API: 200, no body, what the object is in
// headers (its hashes in X-Goog-Hash, its generation, its ETag: the MD5 in hex).
func xmlFinal(w http.ResponseWriter, o Object) {
	h := w.Header()
	h.Set("X-Goog-Hash", "crc32c="+o.CRC32C+",md5="+o.MD5Hash)
	h.Set("X-Goog-Generation", strconv.FormatInt(o.Generation, 10))
	h.Set("X-Goog-Metageneration", "1")
	h.Set("X-Goog-Stored-Content-Length", strconv.FormatInt(o.Size, 10))
	h.Set("ETag", `"`+md5Hex(o.MD5Hash)+`"`)
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// md5Hex turns a base64 MD5 into hex, as the XML API's ETag states it.
func md5Hex(b64 string) string {
	b, _ := base64.StdEncoding.DecodeString(b64)
	return hex.EncodeToString(b)
}

// xmlStart starts a session of the XML API (docs/protocol.md section 2): POST /BUCKET/OBJECT
// with "x-goog-resumable: start", an empty body, on a V4-signed URL. The object's type is the
// start's Content-Type, its custom metadata the x-goog-meta-* headers.
func (h uploadHandler) xmlStart(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "a resumable upload of the XML API starts with POST, not "+r.Method)
		return
	}
	if v := r.Header.Get("X-Goog-Resumable"); v != "start" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("x-goog-resumable must be \"start\", not %q", v))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the connection is gone
	}
	if len(body) > 0 || r.ContentLength > 0 {
		writeError(w, http.StatusBadRequest, "the XML API's resumable start has an empty body")
		return
	}
	if status, code, msg := checkSigned(r, time.Now()); status != 0 {
		writeGoogleError(w, status, msg, code)
		return
	}
	bucket, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == "" || name == "" {
		writeError(w, http.StatusBadRequest, "the path names no object: /BUCKET/OBJECT")
		return
	}
	var meta json.RawMessage
	custom := map[string]string{}
	for k := range r.Header {
		if key, ok := strings.CutPrefix(strings.ToLower(k), "x-goog-meta-"); ok {
			custom[key] = r.Header.Get(k)
		}
	}
	if len(custom) > 0 {
		meta, _ = json.Marshal(map[string]any{"metadata": custom})
	}
	sess := &session{
		id:        newID(),
		method:    http.MethodPost,
		bucket:    bucket,
		name:      name,
		meta:      meta,
		mediaType: r.Header.Get("Content-Type"),
		declared:  -1,
		total:     -1,
		sum:       newChecksums(),
		xml:       true,
	}
	origin := h.s.addSession(sess, r)
	// The session URI is the signed URL with upload_id added, as Cloud Storage answers it.
	w.Header().Set("Location", origin+r.URL.EscapedPath()+"?"+r.URL.RawQuery+"&upload_id="+sess.id)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
}

// v4Params are the query parameters of a V4 signed URL, each required.
var v4Params = []string{"X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders", "X-Goog-Signature"}

// checkSigned checks r's URL as far as it can be without the key that signed it: every V4
// parameter, well formed; not expired at now; every signed header sent, host among them. It
// returns 0 for a URL that passes, else the status, XML code and message of the refusal.
func checkSigned(r *http.Request, now time.Time) (status int, code, msg string) {
	bad := func(format string, a ...any) (int, string, string) {
		return http.StatusBadRequest, "InvalidArgument", fmt.Sprintf(format, a...)
	}
	for _, p := range v4Params {
		if queryParam(r, p) == "" {
			return bad("the signed URL lacks %s", p)
		}
	}
	if alg := queryParam(r, "X-Goog-Algorithm"); alg != "GOOG4-RSA-SHA256" && alg != "GOOG4-HMAC-SHA256" {
		return bad("X-Goog-Algorithm %q is not GOOG4-RSA-SHA256 or GOOG4-HMAC-SHA256", alg)
	}
	date, err := time.Parse("20060102T150405Z", queryParam(r, "X-Goog-Date"))
	if err != nil {
		return bad("X-Goog-Date %q is not YYYYMMDDTHHMMSSZ", queryParam(r, "X-Goog-Date"))
	}
	cred := strings.Split(queryParam(r, "X-Goog-Credential"), "/")
	if len(cred) != 5 || cred[0] == "" || cred[1] != date.Format("20060102") || cred[3] != "storage" || cred[4] != "goog4_request" {
		return bad("X-Goog-Credential %q is not ID/DATE/LOCATION/storage/goog4_request of X-Goog-Date's day", queryParam(r, "X-Goog-Credential"))
	}
	expires, err := strconv.Atoi(queryParam(r, "X-Goog-Expires"))
	if err != nil || expires < 1 || expires > 604800 {
		return bad("X-Goog-Expires %q is not 1 to 604800 seconds", queryParam(r, "X-Goog-Expires"))
	}
	if now.After(date.Add(time.Duration(expires) * time.Second)) {
		return http.StatusBadRequest, "ExpiredToken", "Invalid argument: the signed URL expired at " + date.Add(time.Duration(expires)*time.Second).Format(time.RFC3339)
	}
	if sig := queryParam(r, "X-Goog-Signature"); len(sig)%2 != 0 || strings.Trim(sig, "0123456789abcdef") != "" {
		return bad("X-Goog-Signature is not lower-case hex")
	}
	signed := strings.Split(queryParam(r, "X-Goog-SignedHeaders"), ";")
	hasHost := false
	for _, name := range signed {
		switch {
		case name != strings.ToLower(name) || name == "":
			return bad("X-Goog-SignedHeaders %q: names are lower case, separated by ;", queryParam(r, "X-Goog-SignedHeaders"))
		case name == "host":
			hasHost = true
		case r.Header.Get(name) == "":
			return http.StatusForbidden, "SignatureDoesNotMatch", "the request signature does not match: the signed header " + name + " was not sent"
		}
	}
	if !hasHost {
		return bad("X-Goog-SignedHeaders %q lacks host", queryParam(r, "X-Goog-SignedHeaders"))
	}
	return 0, "", ""
}
