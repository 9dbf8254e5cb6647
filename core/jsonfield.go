package core

import "strings"

// jsonString returns the value of the string field key of the top-level JSON object in b, the
// one thing core needs from a JSON answer (the hashes of the final metadata). A full decoder
// (encoding/json) would cost the wasm hundreds of KB; the browser module parses JSON for the
// caller with the browser's own JSON.
func jsonString(b []byte, key string) (string, bool) {
	p := jsonScanner{s: string(b)}
	if !p.byte('{') {
		return "", false
	}
	if p.byte('}') {
		return "", false
	}
	for {
		k, ok := p.str()
		if !ok || !p.byte(':') {
			return "", false
		}
		p.space()
		if k == key && p.i < len(p.s) && p.s[p.i] == '"' {
			return p.str()
		}
		if !p.skipValue() {
			return "", false
		}
		if !p.byte(',') {
			return "", false
		}
	}
}

type jsonScanner struct {
	s string
	i int
}

func (p *jsonScanner) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
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

// str reads a string, decoding the escapes a hash or a key can hold; a \u escape beyond ASCII
// ends the scan, as no hash or key core asks for holds one.
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
				if p.i+4 > len(p.s) {
					return "", false
				}
				n := 0
				for _, h := range []byte(p.s[p.i : p.i+4]) {
					if unhex(h) < 0 {
						return "", false
					}
					n = n<<4 | unhex(h)
				}
				p.i += 4
				if n >= 0x80 {
					return "", false // never part of a hash or a key core asks for
				}
				b = append(b, byte(n))
			default:
				b = append(b, e) // \" \\ \/
			}
		default:
			b = append(b, c)
		}
	}
	return "", false
}

// skipValue skips one value of any kind.
func (p *jsonScanner) skipValue() bool {
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch p.s[p.i] {
	case '"':
		_, ok := p.str()
		return ok
	case '{', '[':
		depth := 0
		for p.i < len(p.s) {
			switch p.s[p.i] {
			case '"':
				if _, ok := p.str(); !ok {
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
	for p.i < len(p.s) && strings.IndexByte(",}] \t\r\n", p.s[p.i]) < 0 {
		p.i++
	}
	return p.i > start
}
