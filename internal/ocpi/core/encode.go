package core

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// marshalNoEscape writes v as encoding/json does with HTML escaping off
// (keys sorted, no trailing newline). The generic trees this package
// decodes (map[string]any, []any, string, json.Number, bool, nil) are
// written directly, without reflection; any other value is handed to
// encoding/json. The output is byte for byte encoding/json's
// (TestTreeEncodingIsEncodingJSON): a stored body's hash must not change
// with how it was written.
func marshalNoEscape(v any) ([]byte, error) {
	e := treeEncoder{buf: make([]byte, 0, 1024)}
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type treeEncoder struct{ buf []byte }

func (e *treeEncoder) value(v any) error {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case string:
		e.string(x)
	case json.Number:
		s := string(x)
		if s == "" {
			s = "0"
		}
		if !validNumber(s) {
			return e.fallback(v)
		}
		e.buf = append(e.buf, s...)
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, strings.Compare)
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.string(k)
			e.buf = append(e.buf, ':')
			if err := e.value(x[k]); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, it := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(it); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		return e.fallback(v)
	}
	return nil
}

// fallback writes v with encoding/json, HTML escaping off.
func (e *treeEncoder) fallback(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	e.buf = append(e.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	return nil
}

const hexDigits = "0123456789abcdef"

// string writes s quoted as encoding/json does without HTML escaping:
// control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func (e *treeEncoder) string(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch b {
			case '\\', '"':
				e.buf = append(e.buf, '\\', b)
			case '\b':
				e.buf = append(e.buf, '\\', 'b')
			case '\f':
				e.buf = append(e.buf, '\\', 'f')
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}

// validNumber reports whether s is a JSON number (RFC 8259's grammar).
func validNumber[T string | []byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if len(s) == 0 {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if len(s) == 0 {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return len(s) == 0
}
