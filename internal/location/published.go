package location

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/tidwall/gjson"

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
	if !bytes.Contains(body, []byte(`"address"`)) && !bytes.Contains(body, []byte(`"state"`)) {
		return body
	}
	if fitsPublished(body) {
		return body
	}
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

// fitsPublished reports, without decoding body, that its top-level address
// and state are within the published lengths: the common case, and a
// directory page holds a hundred locations (decoding each to learn it was a
// third of a page's CPU). A key that appears twice, or a string that is too
// long, is left to the decoding path, which has the last word.
func fitsPublished(body []byte) bool {
	for _, f := range publishedFields {
		// Most locations have no state: counting its quoted key spares
		// the scan of the whole document that looking it up would be.
		switch bytes.Count(body, f.quoted) {
		case 0:
		case 1:
			if r := gjson.GetBytes(body, f.key); r.Type == gjson.String && utf8.RuneCountInString(r.Str) > f.max {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// publishedFields are the fields fitsPublished checks: key, key in quotes,
// published length.
var publishedFields = [...]struct {
	key    string
	quoted []byte
	max    int
}{{"address", []byte(`"address"`), PublishedAddressMax}, {"state", []byte(`"state"`), PublishedStateMax}}

// adaptPublished is the hub adapter that gives receivers of 2.2 and later
// the published lengths (the legacy dialect makes its own cut).
func adaptPublished(version, method, path string, body []byte) []byte {
	if v211.IsLegacy(version) {
		return body
	}
	return FitPublished(body)
}
