package ocpi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// Check validates an OCPI object field by field and keeps the first failure,
// named by its JSON path (e.g. "evses[2].connectors[0].max_voltage"). Domain
// validators are written as a sequence of calls followed by c.Err().
//
//	c := ocpi.NewCheck("")
//	c.CiString("id", loc.ID, 36, true)
//	c.Enum("parking_type", loc.ParkingType, ParkingTypes, false)
//	return c.Err()
type Check struct {
	prefix string
	err    *Error
}

// NewCheck returns a Check whose paths start with prefix.
func NewCheck(prefix string) *Check { return &Check{prefix: prefix} }

// Err returns the first failure, or nil.
func (c *Check) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Failed reports whether a check has failed already.
func (c *Check) Failed() bool { return c.err != nil }

// Path joins the prefix and a field name.
func (c *Check) Path(field string) string {
	switch {
	case c.prefix == "":
		return field
	case field == "" || strings.HasPrefix(field, "["):
		return c.prefix + field
	}
	return c.prefix + "." + field
}

// Sub returns a Check for a nested object; its failure is recorded here.
func (c *Check) Sub(field string) *Check { return &Check{prefix: c.Path(field), err: c.err} }

// Index returns a Check for element i of the list field.
func (c *Check) Index(field string, i int) *Check {
	return &Check{prefix: c.Path(field) + "[" + strconv.Itoa(i) + "]", err: c.err}
}

// Merge takes over the failure of a sub-check.
func (c *Check) Merge(sub *Check) {
	if c.err == nil && sub.err != nil {
		c.err = sub.err
	}
}

// Fail records a failure of field unless an earlier one exists.
func (c *Check) Fail(field, format string, args ...any) {
	if c.err != nil {
		return
	}
	c.err = Invalid(c.Path(field), fmt.Sprintf(format, args...))
}

// Required fails when a required value is missing.
func (c *Check) Required(field string, present bool) bool {
	if !present {
		c.Fail(field, "is required")
		return false
	}
	return true
}

// given reports whether v is set; an empty v fails field when it is
// required. Every check of a string value starts with it.
func (c *Check) given(field, v string, required bool) bool {
	if v == "" && required {
		c.Fail(field, "is required")
	}
	return v != ""
}

// code checks a code of exactly n characters that all pass ok; want says
// what it must be.
func (c *Check) code(field, v string, required bool, n int, ok func(string) bool, want string) {
	if c.given(field, v, required) && (len(v) != n || !ok(v)) {
		c.Fail(field, "must be %s", want)
	}
}

// String checks an OCPI string(n): printable UTF-8, no control characters
// (C0, DEL and C1, so no CR, LF or TAB), at most n characters (n = 0: no
// limit).
func (c *Check) String(field, v string, n int, required bool) {
	if !c.given(field, v, required) {
		return
	}
	if !utf8.ValidString(v) {
		c.Fail(field, "is not valid UTF-8")
		return
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			c.Fail(field, "contains a control character")
			return
		}
	}
	if n > 0 && utf8.RuneCountInString(v) > n {
		c.Fail(field, "is longer than %d characters", n)
	}
}

// CiString checks an OCPI CiString(n): printable ASCII, at most n characters.
func (c *Check) CiString(field, v string, n int, required bool) {
	if !c.given(field, v, required) {
		return
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			c.Fail(field, "must be printable ASCII")
			return
		}
	}
	if n > 0 && len(v) > n {
		c.Fail(field, "is longer than %d characters", n)
	}
}

// Enum checks that v is one of the allowed values.
func (c *Check) Enum(field, v string, allowed []string, required bool) {
	if !c.given(field, v, required) {
		return
	}
	if !slices.Contains(allowed, v) {
		c.Fail(field, "%q is not one of %s", core.Truncate(v, 40), strings.Join(allowed, ", "))
	}
}

// DateTime checks a required or optional DateTime.
func (c *Check) DateTime(field string, v DateTime, required bool) {
	if v.IsZero() && required {
		c.Fail(field, "is required")
	}
}

// CountryCode checks an ISO 3166-1 alpha-2 code as OCPI uses it: CiString(2),
// two letters.
func (c *Check) CountryCode(field, v string, required bool) {
	c.code(field, v, required, 2, isLetters, "a two-letter ISO 3166-1 alpha-2 code")
}

// PartyID checks an OCPI party_id: CiString(3), three letters or digits.
func (c *Check) PartyID(field, v string, required bool) {
	c.code(field, v, required, 3, isAlnum, "three letters or digits")
}

// Language checks an ISO 639-1 language code.
func (c *Check) Language(field, v string, required bool) {
	c.code(field, v, required, 2, isLetters, "a two-letter ISO 639-1 language code")
}

// Currency checks an ISO 4217 currency code.
func (c *Check) Currency(field, v string, required bool) {
	c.code(field, v, required, 3, isLetters, "a three-letter ISO 4217 currency code")
}

// URL checks an OCPI URL: string(255), absolute http(s).
func (c *Check) URL(field, v string, required bool) {
	if !c.given(field, v, required) {
		return
	}
	c.String(field, v, 255, required)
	if c.err == nil && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
		c.Fail(field, "must be an absolute http or https URL")
	}
}

// DisplayTexts checks a list of DisplayText.
func (c *Check) DisplayTexts(field string, v []DisplayText) {
	for i, t := range v {
		sub := c.Index(field, i)
		sub.Language("language", t.Language, true)
		sub.String("text", t.Text, 512, true)
		c.Merge(sub)
	}
}

// Price checks a 2.2.1 Price.
func (c *Check) Price(field string, p *Price, required bool) {
	if p == nil {
		if required {
			c.Fail(field, "is required")
		}
		return
	}
	sub := c.Sub(field)
	sub.Required("excl_vat", p.ExclVAT.Valid())
	if p.InclVAT != nil {
		sub.Required("incl_vat", p.InclVAT.Valid())
	}
	c.Merge(sub)
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i] | 0x20
		if ch < 'a' || ch > 'z' {
			return false
		}
	}
	return true
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= '0' && ch <= '9') && !isLetters(string(ch)) {
			return false
		}
	}
	return true
}
