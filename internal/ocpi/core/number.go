package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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

// Limits of a Number. OCPI numbers carry "4 decimals unless stated and
// enough integer digits"; these bounds are far beyond any price, energy or
// power, and keep a short input from expanding into a huge one: 1e9999 is six
// bytes in but ten thousand digits out.
const (
	maxNumberInput  = 64 // characters of the input
	maxNumberDigits = 30 // digits before the decimal point, and after it
)

// ParseNumber parses a decimal string: optional sign, digits, optional
// fraction and exponent.
func ParseNumber(s string) (Number, error) {
	if len(s) > maxNumberInput {
		return Number{}, fmt.Errorf("number %q is too long", Truncate(s, 40))
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Number{}, fmt.Errorf("%q is not a number", Truncate(s, 40))
	}
	// Without an exponent, a number of at most maxNumberDigits characters
	// has no more digits than that on either side of its point: the
	// numbers every body carries need not be expanded to be counted.
	if len(s) <= maxNumberDigits && !strings.ContainsAny(s, "eE") {
		return Number{d: d, ok: true}, nil
	}
	if err := checkMagnitude(d); err != nil {
		return Number{}, fmt.Errorf("%s: %w", Truncate(s, 40), err)
	}
	return Number{d: d, ok: true}, nil
}

// checkMagnitude bounds the digits a decimal expands to.
func checkMagnitude(d decimal.Decimal) error {
	if d.IsZero() {
		return nil
	}
	exp := int64(d.Exponent())
	digits := int64(len(d.Coefficient().String()))
	if d.IsNegative() {
		digits-- // the sign
	}
	if digits+exp > maxNumberDigits {
		return fmt.Errorf("more than %d digits before the decimal point", maxNumberDigits)
	}
	if -exp > maxNumberDigits {
		// Trailing zeros of the fraction do not count.
		if d.Truncate(maxNumberDigits).Cmp(d) != 0 {
			return fmt.Errorf("more than %d digits after the decimal point", maxNumberDigits)
		}
	}
	return nil
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
	v, err := ParseNumber(string(b))
	if err != nil {
		return err
	}
	*n = v
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
