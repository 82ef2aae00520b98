package core

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parseTree decodes a JSON document into the generic tree encoding/json
// decodes with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil; a repeated key keeps its last value), without reflection and without
// copying the input into a decoder's buffer. It accepts only what is valid
// JSON and reports !ok for anything else, or for anything it does not decode
// exactly as encoding/json would, so the caller can let encoding/json decide
// (FuzzTreeDecoding holds it to that).
func parseTree(b []byte) (v any, ok bool) {
	p := treeParser{b: b}
	p.space()
	v, ok = p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.b)
}

// maxTreeDepth is how deep parseTree nests before it hands over to
// encoding/json (which has its own limit).
const maxTreeDepth = 1000

type treeParser struct {
	b []byte
	i int
}

func (p *treeParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) || depth > maxTreeDepth {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *treeParser) literal(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *treeParser) object(depth int) (any, bool) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k] = v
		if done, ok := p.after('}'); !ok || done {
			return m, ok
		}
	}
}

func (p *treeParser) array(depth int) (any, bool) {
	p.i++ // [
	l := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return l, true
	}
	for {
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		if done, ok := p.after(']'); !ok || done {
			return l, ok
		}
	}
}

// after reads what follows a member of an object or list: a comma (another
// member comes) or the closing bracket (done); anything else is not JSON.
func (p *treeParser) after(closing byte) (done, ok bool) {
	p.space()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, true
	case closing:
		p.i++
		return true, true
	}
	return false, false
}

func (p *treeParser) number() (any, bool) {
	start := p.i
	if !p.numberSpan() {
		return nil, false
	}
	return json.Number(string(p.b[start:p.i])), true
}

// numberSpan moves past the number at p.i and reports whether it is one,
// without making its string.
func (p *treeParser) numberSpan() bool {
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case '0' <= c && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			p.i++
			continue
		}
		break
	}
	return validNumber(p.b[start:p.i])
}

// string reads a quoted string as encoding/json unquotes it: escapes
// decoded, a surrogate pair joined, a lone surrogate and every byte that is
// not UTF-8 replaced by U+FFFD. A control character is invalid JSON.
func (p *treeParser) string() (string, bool) {
	p.i++ // "
	start := p.i
	// The common case: no escapes, all ASCII or valid UTF-8.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	out := make([]byte, 0, p.i-start+16)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			switch e := p.b[p.i+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				out = append(out, unescaped[e])
				p.i += 2
			case 'u':
				r, ok := p.hex4(p.i + 2)
				if !ok {
					return "", false
				}
				p.i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := p.escapedRune(p.i); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							p.i += 6
							out = utf8.AppendRune(out, d)
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, p.b[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", false
}

// unescaped are the characters JSON's one-letter escapes stand for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escapedRune reads a \uXXXX escape at i.
func (p *treeParser) escapedRune(i int) (rune, bool) {
	if i+1 >= len(p.b) || p.b[i] != '\\' || p.b[i+1] != 'u' {
		return 0, false
	}
	return p.hex4(i + 2)
}

func (p *treeParser) hex4(i int) (rune, bool) {
	if i+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[i:i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}
