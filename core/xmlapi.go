package core

// Cloud Storage's XML API, as far as a resumable upload meets it (docs/protocol.md sections 2,
// 3 and 9). A backend that keeps credentials off the page signs a URL for the XML API's
// resumable start (V4 signing: POST with "x-goog-resumable: start"); the upload starts the
// session with it, from the page, so that the session's Origin is the page's. The session's
// requests and their answers are then the JSON API's (chunks, 308 and Range, status queries),
// but the final answer states no metadata (an empty body, or XML), and errors are XML:
// <Error><Code>…</Code><Message>…</Message></Error>.

// signedStorageURL reports whether url is signed for Cloud Storage by its V4 signing: its query
// carries X-Goog-Algorithm and X-Goog-Signature (names matched without regard to case: Cloud
// Storage writes them in lower case in the Location it answers). So is the session URI started
// from one: that Location keeps the signed URL's query and adds upload_id. On any host, as the
// JSON API's upload paths are (emulators take signed URLs too).
func signedStorageURL(url string) bool {
	url, _, _ = cut(url, "#")
	_, query, _ := cut(url, "?")
	alg, sig := false, false
	for query != "" {
		var kv string
		kv, query, _ = cut(query, "&")
		k, _, _ := cut(kv, "=")
		switch lower(k) {
		case "x-goog-algorithm":
			alg = true
		case "x-goog-signature":
			sig = true
		}
	}
	return alg && sig
}

// xmlSession reports whether url is a session URI of the XML API: signed (as its start was),
// and not a JSON API upload path.
func xmlSession(url string) bool { return signedStorageURL(url) && !cloudStorageUpload(url) }

// startSigned starts a session at a URL signed for the XML API's resumable start
// (docs/protocol.md section 2): POST, "x-goog-resumable: start", the headers the signature
// requires, an empty body; the answer is 201 with the session URI in Location. The browser
// sends the page's Origin with it, and the session answers that origin's CORS headers. The
// caller's own headers (a token) never go with it: the signature is the credential. The
// object's type is the XML API's Content-Type of the start, which the upload sends where the
// signature does not name its own.
func (u *Upload) startSigned(ctx Context, signed string, h Header) (string, error) {
	return u.start(ctx, signed, func() *Request {
		req := &Request{Method: "POST", URL: signed, Header: Header{}}
		req.Header.Set("Content-Type", u.o.ContentType)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		req.Header.Set("X-Goog-Resumable", "start")
		return req
	})
}

// xmlError returns the Code and Message of the XML API's error answer,
// <Error><Code>BadDigest</Code><Message>…</Message>…</Error>, or "" for what it does not
// state. A plain scan of a small body: encoding/xml would cost the wasm far more.
func xmlError(b []byte) (code, message string) {
	_, s, ok := cut(string(b), "<Error>")
	if !ok {
		return "", ""
	}
	s, _, _ = cut(s, "</Error>")
	return xmlText(s, "Code"), xmlText(s, "Message")
}

// xmlText is the text of the first element name in s, its entities decoded.
func xmlText(s, name string) string {
	_, rest, ok := cut(s, "<"+name+">")
	if !ok {
		return ""
	}
	v, _, ok := cut(rest, "</"+name+">")
	if !ok || indexByte(v, '<') >= 0 {
		return ""
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '&' {
			for k, e := range xmlEntities {
				if hasPrefix(v[i:], e) {
					c, i = "&<>\"'"[k], i+len(e)-1
					break
				}
			}
		}
		out = append(out, c)
	}
	return string(out)
}

// xmlEntities are the entities XML predefines, in the order of the characters they stand for:
// & < > " '.
var xmlEntities = [...]string{"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}

// digestRefused reports whether code, an XML error's, is the XML API refusing the bytes it
// received for not matching the hashes stated (X-Goog-Hash): it answers 400 with BadDigest,
// InvalidDigest or CrcMismatch as the case may be (docs/protocol.md section 9).
func digestRefused(code string) bool {
	return code == "BadDigest" || code == "InvalidDigest" || code == "CrcMismatch"
}
