package traffic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// scanned is what one pass over a JSON body found (scanBody).
type scanned struct {
	// maySecret: the body may hold something the walk would redact or
	// mask; false is certain.
	maySecret bool
	// statusCode is the top-level status_code; ids the top-level object's
	// ids and dataIDs those of the object under its last "data" key (views
	// of the body, by factKeys).
	statusCode   int
	ids, dataIDs [len(factKeys)]string
	// clean remembers keys found to hold no fragment of sensitive.
	clean cleanKeys
	// whole makes the scan check every byte of the body, as gjson.ValidBytes
	// does, however little of it is stored (the reference the tests hold the
	// skipping scan to).
	whole bool
}

// scanBody reads a body once and tells whether it is valid JSON (RFC 8259
// as gjson.ValidBytes tells it, and encoding/json below its nesting limit
// of 10 000: any byte from 0x20 in a string, white space around the
// value); whether it may hold a secret; and
// the facts (sc.facts). It replaced three passes (validity, keys, facts): on
// a directory page of 120 KB they were three quarters of recording the
// exchange, and the facts' pass skipped the page's data array the way the
// validity check had just read it.
//
// The walk redacts and masks by key (secretKey, personalKey) and masks
// values with an '@' (looksLikeEmail), so a body may hold a secret when it
// has a key with a fragment of sensitive (keyMaySecret, case-insensitive),
// an '@' anywhere, or a backslash anywhere (an escape could spell either).
// Only keys whose colon stands in the first keep bytes are looked at, when
// no more of the body is stored: a key beyond them is cut off with its
// value, and one cut in two leaves its value out. An '@' is looked for in
// the whole body: a value cut before its '@' would otherwise be stored
// unmasked.
//
// Beyond the first keep bytes of a body that holds no backslash, no '@'
// and no suspect key in them, nothing the scan reads is stored, and only
// the facts are still read: the rest of the value that is open there is
// skipped by its brackets (skipNested), not checked token by token, and the
// scan goes on where the facts are (the envelope's status_code after a
// page's data, the members of an object under "data"). On a directory page
// of 120 KB, of which 64 KB are stored, that is half the scan. A body broken
// only in what is skipped is then taken as valid: its first keep bytes are
// stored as they are, where a whole scan would have stored them too or, had
// a fragment of a sensitive key stood anywhere in it, noted the body as
// unparseable. The bytes stored are checked the same either way.
//
// It does not recurse: a container's kind is pushed on a stack, so a body
// nested a hundred thousand deep costs what its length does.
func scanBody(b []byte, keep int, sc *scanned) bool {
	sc.maySecret = bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, '@') >= 0
	skipFrom := keep
	if sc.whole {
		skipFrom = len(b) + 1
	}
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' for every open container
	var topKey, dataKey []byte
	topStart, dataStart := 0, 0
	inData := false // the current top-level member is under "data"
	const (
		atValue = iota
		atKey
		afterValue
	)
	n := len(b)
	i := skipSpace(b, 0)
	for st := atValue; ; {
		if i >= skipFrom && st != afterValue && !sc.maySecret {
			// Where the facts are read: the members of the top-level
			// object, and those of the object under its data.
			resume := 1
			if inData && len(stack) >= 2 && stack[1] == '{' {
				resume = 2
			}
			if len(stack) > resume {
				j, ok := skipNested(b, i, len(stack), resume)
				if !ok {
					return false
				}
				stack, i, st = stack[:resume], j, afterValue
				continue
			}
		}
		switch st {
		case atValue:
			if i >= n {
				return false
			}
			switch c := b[i]; c {
			case '{', '[':
				stack = append(stack, c)
				i = skipSpace(b, i+1)
				if i < n && b[i] == c+2 { // '}' and ']' follow their openers by two
					stack = stack[:len(stack)-1]
					i++
					st = afterValue
				} else if c == '{' {
					st = atKey
				}
				continue
			case '"':
				j, ok := scanString(b, i+1)
				if !ok {
					return false
				}
				i = j
			case 't':
				if !bytes.HasPrefix(b[i:], litTrue) {
					return false
				}
				i += len(litTrue)
			case 'f':
				if !bytes.HasPrefix(b[i:], litFalse) {
					return false
				}
				i += len(litFalse)
			case 'n':
				if !bytes.HasPrefix(b[i:], litNull) {
					return false
				}
				i += len(litNull)
			default:
				j, ok := scanNumber(b, i)
				if !ok {
					return false
				}
				i = j
			}
			st = afterValue
		case atKey:
			if i >= n || b[i] != '"' {
				return false
			}
			j, ok := scanString(b, i+1)
			if !ok {
				return false
			}
			key := b[i:j]
			i = skipSpace(b, j)
			if i >= n || b[i] != ':' {
				return false
			}
			if !sc.maySecret && i < keep && !sc.clean.check(key) {
				sc.maySecret = true
			}
			i = skipSpace(b, i+1)
			switch {
			case len(stack) == 1:
				topKey, topStart = key, i
				inData = lowerKey(key) == "data"
				if inData {
					clear(sc.dataIDs[:])
				}
			case len(stack) == 2 && inData && stack[1] == '{':
				dataKey, dataStart = key, i
			}
			st = atValue
		case afterValue:
			switch {
			case len(stack) == 0:
				return skipSpace(b, i) == n
			case len(stack) == 1 && stack[0] == '{':
				sc.member(&sc.ids, topKey, b[topStart:i], true)
			case len(stack) == 2 && stack[0] == '{' && inData && stack[1] == '{':
				sc.member(&sc.dataIDs, dataKey, b[dataStart:i], false)
			}
			i = skipSpace(b, i)
			if i >= n {
				return false
			}
			open := stack[len(stack)-1]
			switch c := b[i]; {
			case c == ',':
				i = skipSpace(b, i+1)
				st = atValue
				if open == '{' {
					st = atKey
				}
			case c == open+2:
				stack = stack[:len(stack)-1]
				i++
			default:
				return false
			}
		}
	}
}

// cleanKeys remembers, for one scan, the last keys keyMaySecret found
// clean, one a slot by length and end bytes: a directory page writes some
// thirty keys thousands of times, and comparing a key with the one its slot
// holds costs less than looking for the fragments in it (the page's scan
// went from 160 to 121 µs). Only a key equal byte for byte to one found
// clean is taken as clean.
type cleanKeys [64][]byte

// check reports whether key (quotes included) holds no fragment of
// sensitive: from what it remembers, or keyMaySecret's answer, remembered
// when clean.
func (c *cleanKeys) check(key []byte) bool {
	slot := &c[(len(key)*7+int(key[1])*3+int(key[len(key)-2]))&63]
	if bytes.Equal(*slot, key) {
		return true
	}
	if keyMaySecret(key[1 : len(key)-1]) {
		return false
	}
	*slot = key
	return true
}

var litTrue, litFalse, litNull = []byte("true"), []byte("false"), []byte("null")

// skipNested returns the index after the bracket that closes containers
// down to depth to, from i at depth, in a body with no backslash: a string
// then ends at its next quote, and the bytes between strings are read only
// for brackets. Nothing else is checked.
func skipNested(b []byte, i, depth, to int) (int, bool) {
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == to {
				return i + 1, true
			}
		}
	}
	return i, false
}

// skipSpace returns the index of the first byte from i that is not JSON's
// white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// inString marks the bytes a string holds as they are: not a quote, not a
// backslash, not a control character.
var inString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString reads a string's contents from i (after its opening quote)
// and returns the index after its closing quote.
func scanString(b []byte, i int) (int, bool) {
	for {
		for i < len(b) && inString[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

// scanNumber reads a number from i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b) || b[i] < '0' || b[i] > '9':
		return i, false
	case b[i] == '0':
		i++
	default:
		i = digits(i)
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// lowerKey is a key (quotes included) decoded and lower-cased, as
// encoding/json matches keys to fields.
func lowerKey(k []byte) string {
	return strings.ToLower(stringValue(k))
}

// stringValue decodes a string as written, quotes included; the body's
// bytes are read through a view where there is nothing to decode.
func stringValue(raw []byte) string {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return bodyView(s)
	}
	var v string
	json.Unmarshal(raw, &v) // valid: scanBody read it
	return v
}

// member reads the facts of one member of the top-level object (top) or of
// the object under its data, as encoding/json matches keys to fields
// (lower-cased, the last of a repeated key wins): an id when the key is
// one of factKeys and the value a string, the status_code when a whole
// number.
func (sc *scanned) member(ids *[len(factKeys)]string, key, value []byte, top bool) {
	k := lowerKey(key)
	if i := factKey(k); i >= 0 {
		ids[i] = ""
		if value[0] == '"' {
			ids[i] = stringValue(value)
		}
		return
	}
	if top && k == "status_code" {
		sc.statusCode = 0
		if c := value[0]; c == '-' || '0' <= c && c <= '9' {
			if n, err := strconv.ParseInt(bodyView(value), 10, 64); err == nil {
				sc.statusCode = int(n)
			}
		}
	}
}

// facts are the facts a scan read: the top-level object's ids, then its
// data's, and its status_code.
func (sc *scanned) facts() facts {
	f := facts{statusCode: sc.statusCode}
	for _, ids := range [][]string{sc.ids[:], sc.dataIDs[:]} {
		for _, s := range ids {
			if s != "" && len(s) <= 64 {
				f.objectIDs = append(f.objectIDs, strings.Clone(s)) // not a view of the body
			}
		}
	}
	return f
}

// factKey is the index of key in factKeys, or -1.
func factKey(key string) int {
	for i, fk := range factKeys {
		if key == fk {
			return i
		}
	}
	return -1
}
