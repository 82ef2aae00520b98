package location

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// Location address and state lengths: what the hub accepts and what it
// emits (gaps.md §6).
//
// The 2026 errata allow address up to 255 characters and state up to 45;
// the published 2.2.1 text says 45 and 20, and strict 2.2.1 receivers reject
// a longer one — and with it the whole location. The hub accepts the long
// form (a CPO following the errata is right), keeps it whole in its own
// copy (the CPO's GET, driver search) and emits the published lengths to
// every partner of 2.2 and later: pushes and the eMSP directory cut address
// to 45 and state to 20 characters, on character boundaries. Which receivers
// validate strictly cannot be known, and a shortened street line beats a
// location that never arrives. Legacy receivers get their own cut from the
// 2.1.1 dialect.
const (
	PublishedAddressMax = 45
	PublishedStateMax   = 20
)

// FitPublished returns a Location body (or a PATCH of one) with address
// and state cut to the published lengths. It returns body itself when
// nothing is too long (or it is not a JSON object).
func FitPublished(body []byte) []byte {
	if fitsPublished(body) {
		return body
	}
	return cutPublished(body)
}

// cutPublished is FitPublished by decoding: the top-level address and
// state (the last of each, as encoding/json reads a key written twice),
// cut when too long, the rest kept as written.
func cutPublished(body []byte) []byte {
	var fields struct {
		Address *string `json:"address"`
		State   *string `json:"state"`
	}
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	long := func(p *string, n int) bool { return p != nil && utf8.RuneCountInString(*p) > n }
	if !long(fields.Address, PublishedAddressMax) && !long(fields.State, PublishedStateMax) {
		return body
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	cut := func(key string, p *string, n int) {
		if long(p, n) {
			r := []rune(*p)
			b, _ := json.Marshal(string(r[:n]))
			m[key] = b
		}
	}
	cut("address", fields.Address, PublishedAddressMax)
	cut("state", fields.State, PublishedStateMax)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// fitsPublished reports, without decoding body, that its address and state
// are within the published lengths: the common case, and a directory page
// holds a hundred locations (decoding each to learn it was a third of a
// page's CPU). It finds every "address" and "state" key in the body, at the
// top level or not, and checks the string each holds; one too long, nested
// or not, or a body with a \u escape (which could spell a key), is left to
// cutPublished, which has the last word. Searching the raw bytes does not
// depend on where the keys stand: PostgreSQL stores documents as jsonb,
// whose keys come shortest first, and looking the top-level key up had to
// skip the EVSEs there (0.7 µs a location, against 0.4 in SQLite's order).
func fitsPublished(body []byte) bool {
	if bytes.Contains(body, []byte(`\u`)) {
		return false
	}
	for _, f := range publishedFields {
		for rest := body; ; {
			i := bytes.Index(rest, f.quoted)
			if i < 0 {
				break
			}
			rest = rest[i+len(f.quoted):]
			v := skipSpace(rest)
			if len(v) == 0 || v[0] != ':' {
				continue // a value, not a key
			}
			if v = skipSpace(v[1:]); len(v) == 0 || v[0] != '"' {
				continue // not a string: nothing to cut
			}
			end := stringEnd(v)
			if end < 0 {
				return false
			}
			// Each character is at least one byte: only a string longer
			// in bytes can be longer in characters.
			if end-2 > f.max {
				var s string
				if json.Unmarshal(v[:end], &s) != nil || utf8.RuneCountInString(s) > f.max {
					return false
				}
			}
		}
	}
	return true
}

// publishedFields are the fields fitsPublished checks: key in quotes,
// published length.
var publishedFields = [...]struct {
	quoted []byte
	max    int
}{{[]byte(`"address"`), PublishedAddressMax}, {[]byte(`"state"`), PublishedStateMax}}

// skipSpace returns b from its first byte that is not JSON's white space.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// stringEnd returns the length of the JSON string b begins with, quotes
// included; -1 when it does not end.
func stringEnd(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// adaptPublished is the hub adapter that gives receivers of 2.2 and later
// the published lengths (the legacy dialect makes its own cut).
func adaptPublished(version, method, path string, body []byte) []byte {
	if v211.IsLegacy(version) {
		return body
	}
	return FitPublished(body)
}
