package core

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jsonString returns the value of the string field key of the top-level JSON object in b, the
// one thing core needs from a JSON answer (the hashes of the final metadata). A full decoder
// (encoding/json) would cost the wasm hundreds of KB; the browser module parses JSON for the
// caller with the browser's own JSON.
func jsonString(b []byte, key string) (string, bool) {
	v, ok := jsonField(string(b), key)
	if !ok {
		return "", false
	}
	p := jsonScanner{s: v}
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	return p.str()
}

// jsonField returns the text of the value of field key of the top-level JSON object in s.
func jsonField(s, key string) (string, bool) {
	p := jsonScanner{s: s}
	if !p.byte('{') {
		return "", false
	}
	if p.byte('}') {
		return "", false
	}
	for {
		p.space()
		at := p.i
		if !p.skipString() || !p.byte(':') {
			return "", false
		}
		k := jsonScanner{s: s[at:p.i]}
		name, _ := k.str() // a key core looks for is ASCII; another may not decode
		p.space()
		start := p.i
		if !p.skipValue() {
			return "", false
		}
		if name == key {
			return s[start:p.i], true
		}
		if !p.byte(',') {
			return "", false
		}
	}
}

// jsonObject reports whether b is one whole JSON object (white space around it aside): not
// cut off, not something else.
func jsonObject(b []byte) bool {
	p := jsonScanner{s: string(b)}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' || !p.skipValue() {
		return false
	}
	p.space()
	return p.i == len(p.s)
}

// googleError returns the message and reason of Google's JSON error answer, {"error":
// {"code", "message", "errors": [{"domain", "reason", "message"}], "status"}}, or "" for what
// it does not state.
func googleError(b []byte) (message, reason string) {
	e, ok := jsonField(string(b), "error")
	if !ok {
		return "", ""
	}
	message, _ = jsonString([]byte(e), "message")
	if list, ok := jsonField(e, "errors"); ok {
		p := jsonScanner{s: list}
		if p.byte('[') {
			p.space()
			at := p.i
			if p.skipValue() {
				reason, _ = jsonString([]byte(list[at:p.i]), "reason")
			}
		}
	}
	return message, reason
}

type jsonScanner struct {
	s string
	i int
}

func (p *jsonScanner) space() {
	for p.i < len(p.s) && indexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// byte consumes c (after white space) if it comes next.
func (p *jsonScanner) byte(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string, decoding its escapes (a \u one into UTF-8, pairs of them included).
func (p *jsonScanner) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return string(b), true
		case c == '\\' && p.i < len(p.s):
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			case 'b', 'f':
				b = append(b, ' ')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					// The second half of a pair follows as another \u escape (a server's
					// message may hold any character).
					if p.i+2 <= len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
						p.i += 2
						lo, ok := p.hex4()
						if !ok {
							return "", false
						}
						r = utf16.DecodeRune(r, lo)
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				b = append(b, e) // \" \\ \/
			}
		default:
			b = append(b, c)
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (p *jsonScanner) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var n rune
	for _, h := range []byte(p.s[p.i : p.i+4]) {
		if unhex(h) < 0 {
			return 0, false
		}
		n = n<<4 | rune(unhex(h))
	}
	p.i += 4
	return n, true
}

// skipString skips a string without decoding it (any escape, any character).
func (p *jsonScanner) skipString() bool {
	if !p.byte('"') {
		return false
	}
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return true
		}
		p.i++
	}
	return false
}

// skipValue skips one value of any kind.
func (p *jsonScanner) skipValue() bool {
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch p.s[p.i] {
	case '"':
		return p.skipString()
	case '{', '[':
		depth := 0
		for p.i < len(p.s) {
			switch p.s[p.i] {
			case '"':
				if !p.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			p.i++
			if depth == 0 {
				return true
			}
		}
		return false
	}
	start := p.i
	for p.i < len(p.s) && indexByte(",}] \t\r\n", p.s[p.i]) < 0 {
		p.i++
	}
	return p.i > start
}
