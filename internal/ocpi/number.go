package ocpi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"
)

// Number is an OCPI number: an exact decimal that is written as a JSON number,
// never through float64. On input it accepts a JSON number or, leniently, a
// decimal string ("0.25"), as real partners send both.
//
// The zero value is "absent": Valid reports false and it marshals as null, so a
// required number that a partner left out is caught by validation.
type Number struct {
	d  decimal.Decimal
	ok bool
}

// NewNumber parses a decimal string; it panics on malformed input and is meant
// for constants in code and tests.
func NewNumber(s string) Number {
	n, err := ParseNumber(s)
	if err != nil {
		panic(err)
	}
	return n
}

// ParseNumber parses a decimal string.
func ParseNumber(s string) (Number, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Number{}, fmt.Errorf("%q is not a number", truncate(s, 40))
	}
	return Number{d: d, ok: true}, nil
}

// NumberFromInt returns n as a Number.
func NumberFromInt(n int64) Number { return Number{d: decimal.NewFromInt(n), ok: true} }

// NumberFromDecimal wraps a decimal.
func NumberFromDecimal(d decimal.Decimal) Number { return Number{d: d, ok: true} }

// Valid reports whether the number is present.
func (n Number) Valid() bool { return n.ok }

// Decimal returns the exact value.
func (n Number) Decimal() decimal.Decimal { return n.d }

// String returns the decimal form.
func (n Number) String() string {
	if !n.ok {
		return ""
	}
	return n.d.String()
}

// IsNegative reports whether the number is below zero.
func (n Number) IsNegative() bool { return n.ok && n.d.IsNegative() }

// Cmp compares two numbers.
func (n Number) Cmp(o Number) int { return n.d.Cmp(o.d) }

// Add returns n + o.
func (n Number) Add(o Number) Number { return Number{d: n.d.Add(o.d), ok: true} }

// Sub returns n - o.
func (n Number) Sub(o Number) Number { return Number{d: n.d.Sub(o.d), ok: true} }

// MarshalJSON writes a JSON number.
func (n Number) MarshalJSON() ([]byte, error) {
	if !n.ok {
		return []byte("null"), nil
	}
	return []byte(n.d.String()), nil
}

// UnmarshalJSON reads a JSON number or a decimal string.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*n = Number{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := ParseNumber(s)
		if err != nil {
			return err
		}
		*n = v
		return nil
	}
	if len(b) > 64 {
		return fmt.Errorf("number is too long")
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return fmt.Errorf("%s is not a number", truncate(string(b), 40))
	}
	*n = Number{d: d, ok: true}
	return nil
}

// DisplayText is a text in one language.
type DisplayText struct {
	Language string `json:"language"`
	Text     string `json:"text"`
}

// Price is the 2.2.1 Price: without and, optionally, with VAT.
type Price struct {
	ExclVAT Number  `json:"excl_vat"`
	InclVAT *Number `json:"incl_vat,omitempty"`
}
