package core

import (
	"strconv"
)

// parseRange reads the Range header of a 308 answer (docs/protocol.md section 3) and returns the
// number of bytes the server holds. The documents show both "bytes=0-N" and "0-N": both are
// accepted. An empty header means the server holds nothing. The range must start at 0 and
// N must be a plain decimal: anything else is an error, never a guess.
func parseRange(h string) (int64, error) {
	h = trimSpace(h)
	if h == "" {
		return 0, nil // a 308 with no Range: nothing stored, start at 0
	}
	h = trimPrefix(h, "bytes=")
	first, last, ok := cut(h, "-")
	if !ok || first != "0" {
		return 0, &ProtocolError{Reason: "malformed Range header " + "\"" + h + "\"", Status: 308}
	}
	n, ok := parseDecimal(last)
	if !ok {
		return 0, &ProtocolError{Reason: "malformed Range header " + "\"" + h + "\"", Status: 308}
	}
	return n + 1, nil
}

// parseDecimal parses a non-negative decimal of at most 18 digits (no sign, no spaces), so
// the result and the result plus one never overflow.
func parseDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// contentRange formats the Content-Range of a chunk [start, end) (docs/protocol.md section 3): both
// ends inclusive, the total "*" while unknown (total < 0). An empty chunk is the status query
// form "bytes */T" or "bytes */*" (section 4), which with a known T is also the empty final
// request of an unknown-length upload that ends on a chunk boundary.
func contentRange(start, end, total int64) string {
	t := "*"
	if total >= 0 {
		t = strconv.FormatInt(total, 10)
	}
	if end <= start {
		return "bytes */" + t
	}
	return "bytes " + strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(end-1, 10) + "/" + t
}

// splitURL splits an absolute http(s) URL into its origin (scheme://host[:port], lower-case,
// default port dropped), its path, and the rest (?query#fragment). ok is false for anything
// that is not an absolute http or https URL with a host.
func splitURL(u string) (origin, path, rest string, ok bool) {
	scheme, after, found := cut(u, "://")
	scheme = lower(scheme)
	if !found || (scheme != "http" && scheme != "https") {
		return "", "", "", false
	}
	end := indexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	host := lower(after[:end])
	if host == "" || indexAny(host, " \t\r\n\\") >= 0 {
		return "", "", "", false
	}
	if at := lastIndexByte(host, '@'); at >= 0 {
		return "", "", "", false // credentials in the URL: refused, never sent
	}
	switch {
	case scheme == "http" && hasSuffix(host, ":80"):
		host = trimSuffix(host, ":80")
	case scheme == "https" && hasSuffix(host, ":443"):
		host = trimSuffix(host, ":443")
	}
	after = after[end:]
	q := indexAny(after, "?#")
	if q < 0 {
		q = len(after)
	}
	path, rest = after[:q], after[q:]
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host, path, rest, true
}

// originOf returns the origin of an absolute URL, or "" if it has none.
func originOf(u string) string {
	o, _, _, _ := splitURL(u)
	return o
}

// resolveLocation resolves the Location of a session start (docs/protocol.md section 2) against
// the URL of the request that got it, as RFC 3986 section 5.2 does for the forms a server
// sends: absolute, scheme-relative ("//host/p"), absolute-path ("/p?q"), query-only ("?q") and
// relative-path ("p", "../p").
func resolveLocation(base, loc string) (string, bool) {
	loc = trimSpace(loc)
	if loc == "" || indexAny(loc, " \t\r\n") >= 0 {
		return "", false
	}
	if i := index(loc, "://"); i > 0 && indexAny(loc[:i], "/?#") < 0 {
		o, p, r, ok := splitURL(loc)
		return o + removeDots(p) + r, ok
	}
	bo, bp, brest, ok := splitURL(base)
	if !ok {
		return "", false
	}
	switch {
	case hasPrefix(loc, "//"):
		scheme, _, _ := cut(bo, "://")
		return resolveLocation(base, scheme+":"+loc)
	case hasPrefix(loc, "/"):
		p, r := cutPath(loc)
		return bo + removeDots(p) + r, true
	case hasPrefix(loc, "?"):
		return bo + bp + loc, true
	case hasPrefix(loc, "#"):
		q, _, _ := cut(brest, "#")
		return bo + bp + q + loc, true
	}
	p, r := cutPath(loc)
	dir := bp[:lastIndexByte(bp, '/')+1]
	return bo + removeDots(dir+p) + r, true
}

func cutPath(s string) (path, rest string) {
	i := indexAny(s, "?#")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// removeDots removes "." and ".." segments from an absolute path (RFC 3986 section 5.2.4).
func removeDots(p string) string {
	var out []string
	for len(p) > 0 {
		seg, rest, more := cut(trimPrefix(p, "/"), "/")
		switch seg {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
		if !more {
			if seg == "." || seg == ".." {
				out = append(out, "") // "/a/.." is "/a/": the path keeps its trailing slash
			}
			break
		}
		p = "/" + rest
	}
	r := ""
	for _, seg := range out {
		r += "/" + seg
	}
	if r == "" {
		r = "/"
	}
	return r
}

// withUploadType returns u with its uploadType query parameter set to t (docs/protocol.md section
// 1), replacing one already there and keeping any fragment last.
func withUploadType(u, t string) string {
	u, frag, _ := cut(u, "#")
	if frag != "" {
		frag = "#" + frag
	}
	path, query, _ := cut(u, "?")
	kept := ""
	for query != "" {
		var kv string
		kv, query, _ = cut(query, "&")
		if k, _, _ := cut(kv, "="); k != "uploadType" && kv != "" {
			kept += kv + "&"
		}
	}
	return path + "?" + kept + "uploadType=" + t + frag
}

// trimSpace trims ASCII white space (strings.TrimSpace links Unicode tables into the wasm).
func trimSpace(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r' || s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	return s
}
