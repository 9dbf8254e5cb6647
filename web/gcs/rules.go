package gcs

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxObjectSize is Cloud Storage's largest object, 5 TiB
// (https://cloud.google.com/storage/quotas#objects).
const maxObjectSize = 5 << 40

// checkName applies Cloud Storage's object naming rules
// (https://cloud.google.com/storage/docs/objects#naming): 1 to 1,024 bytes of UTF-8, no
// carriage return or line feed, not "." or "..", not under ".well-known/acme-challenge/". It
// also refuses what the rules say to avoid because the XML API cannot carry it (a signed URL
// names the object in its path, and listings are XML there): the other control characters of
// C0 and those XML 1.0 forbids, U+007F to U+0084 and U+0086 to U+009F.
func checkName(name string) *Error {
	bad := func(why string) *Error {
		return refuse(http.StatusBadRequest, CodeBadName, "the object name "+why+
			" (Cloud Storage's naming rules): choose another name")
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > 1024:
		return bad(fmt.Sprintf("is %d bytes long, over 1,024", len(name)))
	case !utf8.ValidString(name):
		return bad("is not UTF-8")
	case name == "." || name == "..":
		return bad(`is "." or ".."`)
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return bad(`starts with ".well-known/acme-challenge/"`)
	}
	for _, r := range name {
		if r == '\r' || r == '\n' {
			return bad("holds a line break")
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x84) || (r >= 0x86 && r <= 0x9f) {
			return bad(fmt.Sprintf("holds the control character U+%04X", r))
		}
	}
	return nil
}

// checkBucket applies the shape of Cloud Storage's bucket names
// (https://cloud.google.com/storage/docs/buckets#naming): 3 to 222 characters of lowercase
// letters, digits, "-", "_" and ".", starting and ending with a letter or digit. The bucket is
// the app's, so a bad one is the backend's fault (500), and the request is not sent.
func checkBucket(bucket string) *Error {
	ok := len(bucket) >= 3 && len(bucket) <= 222
	for i := 0; ok && i < len(bucket); i++ {
		c := bucket[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		ok = alnum || (i > 0 && i < len(bucket)-1 && (c == '-' || c == '_' || c == '.'))
	}
	if !ok {
		return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
			Message: "the backend chose a bucket whose name Cloud Storage cannot take: tell the site's owner",
			Err:     fmt.Errorf("bucket %q breaks Cloud Storage's bucket naming rules", bucket)}
	}
	return nil
}

// mediaType checks a declared content type and gives it in one canonical spelling (what a
// signed header must be, byte for byte): a media type with its parameters, spaces collapsed.
func mediaType(t string) (string, *Error) {
	t = strings.Join(strings.Fields(t), " ")
	mt, _, err := mime.ParseMediaType(t)
	typ, sub, _ := strings.Cut(mt, "/")
	if err != nil || typ == "" || sub == "" || !isPrintableASCII(t) {
		return "", refuse(http.StatusBadRequest, CodeBadRequest,
			fmt.Sprintf("%q is not a media type (type/subtype, as a File's type): send the file's type, or none", t))
	}
	return t, nil
}

// typeAllowed tells whether media type t (parameters allowed) matches one of the patterns
// ("image/png", "image/*", "*/*"); no patterns allow every type.
func typeAllowed(patterns []string, t string) bool {
	if len(patterns) == 0 {
		return true
	}
	base, _, _ := strings.Cut(t, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	for _, p := range patterns {
		if p == "*/*" || p == base || (strings.HasSuffix(p, "/*") && strings.HasPrefix(base, p[:len(p)-1])) {
			return true
		}
	}
	return false
}

// checkTypePattern checks one pattern of HandlerConfig.Types.
func checkTypePattern(p string) (string, error) {
	p = strings.ToLower(strings.TrimSpace(p))
	if p == "*/*" {
		return p, nil
	}
	typ, sub, ok := strings.Cut(p, "/")
	if !ok || typ == "" || sub == "" || typ == "*" || strings.ContainsAny(p, "; \t") || (strings.Contains(sub, "*") && sub != "*") {
		return "", fmt.Errorf("gcs: type %q is not a media type nor a pattern such as image/* or */*", p)
	}
	return p, nil
}

// origin gives a configured origin in the form browsers send in the Origin header
// (https://html.spec.whatwg.org/multipage/browsers.html#ascii-serialisation-of-an-origin):
// lowercase scheme and host, no default port, no path.
func origin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("gcs: %q is not an origin (scheme://host[:port], as a page's Origin header)", s)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// checkMetadata checks the object's custom metadata: at most 8 KiB in all
// (https://cloud.google.com/storage/quotas#objects), keys that can be header names (a signed
// URL sends them as x-goog-meta-KEY), values without control characters; for a signed URL,
// values of printable ASCII, which is what a header takes.
func checkMetadata(m map[string]string, signed bool) *Error {
	bad := func(why string) *Error {
		return refuse(http.StatusBadRequest, CodeBadMetadata, "the object's metadata "+why)
	}
	total := 0
	for k, v := range m {
		total += len(k) + len(v)
		if k == "" || !isToken(k) {
			return bad(fmt.Sprintf("has the key %q: keys are letters, digits and !#$%%&'*+-.^_`|~", k))
		}
		for _, r := range v {
			if r < 0x20 || r == 0x7f {
				return bad(fmt.Sprintf("of %q holds a control character", k))
			}
		}
		if signed && !isPrintableASCII(v) {
			return bad(fmt.Sprintf("of %q is not ASCII: a signed URL's metadata goes in headers, which take printable ASCII only", k))
		}
	}
	if total > 8<<10 {
		return bad(fmt.Sprintf("is %d bytes, over Cloud Storage's 8 KiB", total))
	}
	return nil
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
