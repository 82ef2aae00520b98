package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNumberJSON reads JSON numbers and decimal strings exactly and writes
// JSON numbers.
func TestNumberJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // JSON out; "" means rejected
	}{
		{`0`, `0`},
		{`1`, `1`},
		{`-1`, `-1`},
		{`0.1`, `0.1`},
		{`0.25`, `0.25`},
		{`"0.25"`, `0.25`},
		{`"-12.5"`, `-12.5`},
		{`1.50`, `1.5`},
		{`1e3`, `1000`},
		{`1E-4`, `0.0001`},
		{`2.5e-3`, `0.0025`},
		{`-0`, `0`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`"99999999999999999999.9999999999"`, `99999999999999999999.9999999999`},
		{`0.000000000000000000000000000001`, `0.000000000000000000000000000001`},
		{`1.000000000000000000000000000000000000`, `1`},
		{`9007199254740993`, `9007199254740993`}, // 2^53+1: a float64 would lose it

		{`"abc"`, ""},
		{`""`, ""},
		{`"NaN"`, ""},
		{`"Infinity"`, ""},
		{`" 1"`, ""},
		{`"0x10"`, ""},
		{`"1,5"`, ""},
		{`true`, ""},
		{`{}`, ""},
		{`[1]`, ""},
		{`1e9999`, ""},
		{`"1e9999"`, ""},
		{`1e-9999`, ""},
		{`1234567890123456789012345678901`, ""},
		{`0.0000000000000000000000000000001`, ""},
		{`"` + strings.Repeat("1", 65) + `"`, ""},
		{strings.Repeat("1", 65), ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var n Number
			err := json.Unmarshal([]byte(tt.in), &n)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %s, want an error", tt.in, n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if !n.Valid() {
				t.Fatal("a parsed number is not Valid")
			}
			b, err := json.Marshal(n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNumberIsExact does arithmetic a float64 gets wrong.
func TestNumberIsExact(t *testing.T) {
	t.Parallel()
	var in struct {
		A Number `json:"a"`
		B Number `json:"b"`
	}
	if err := json.Unmarshal([]byte(`{"a":0.1,"b":"0.2"}`), &in); err != nil {
		t.Fatal(err)
	}
	sum := in.A.Add(in.B)
	if sum.Cmp(NewNumber("0.3")) != 0 || sum.String() != "0.3" {
		t.Errorf("0.1 + 0.2 = %s", sum)
	}
	big := NewNumber("123456789012345678901234567890")
	if got := big.Add(NumberFromInt(1)).String(); got != "123456789012345678901234567891" {
		t.Errorf("big + 1 = %s", got)
	}
	if got := NewNumber("10.00").Sub(NewNumber("10.005")); got.String() != "-0.005" || !got.IsNegative() {
		t.Errorf("10.00 - 10.005 = %s", got)
	}
	if NumberFromDecimal(NewNumber("7.5").Decimal()).String() != "7.5" {
		t.Error("NumberFromDecimal")
	}
	// Money in paise never passes through a float: 19999999.99 INR.
	p := Price{ExclVAT: NewNumber("19999999.99"), InclVAT: ptr(NewNumber("23599999.9882"))}
	b, _ := json.Marshal(p)
	if diff := cmp.Diff(`{"excl_vat":19999999.99,"incl_vat":23599999.9882}`, string(b)); diff != "" {
		t.Error(diff)
	}
}

// TestNumberAbsent: the zero Number is absent, marshals as null and is not
// Valid, so validation catches a missing required number.
func TestNumberAbsent(t *testing.T) {
	t.Parallel()
	var n Number
	if n.Valid() || n.String() != "" || n.IsNegative() {
		t.Errorf("zero Number: %+v", n)
	}
	if b, _ := json.Marshal(n); string(b) != "null" {
		t.Errorf("zero Number marshals as %s", b)
	}
	n = NewNumber("5")
	if err := json.Unmarshal([]byte("null"), &n); err != nil || n.Valid() {
		t.Errorf("null → %+v, %v", n, err)
	}
	var p Price
	if err := json.Unmarshal([]byte(`{"incl_vat":1}`), &p); err != nil || p.ExclVAT.Valid() {
		t.Errorf("missing excl_vat: %+v, %v", p, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewNumber of garbage does not panic")
		}
	}()
	NewNumber("garbage")
}

func ptr[T any](v T) *T { return &v }

// TestShortNumbersSkipTheCount: a number short enough to skip the digit
// count (no exponent, at most maxNumberDigits characters) is one the count
// accepts, and at one character more the count decides again.
func TestShortNumbersSkipTheCount(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		strings.Repeat("9", maxNumberDigits), "-" + strings.Repeat("9", maxNumberDigits-1),
		"0." + strings.Repeat("0", maxNumberDigits-3) + "1", "." + strings.Repeat("1", maxNumberDigits-1),
		strings.Repeat("1", 15) + "." + strings.Repeat("2", 14), "-0", "000000000000000000000000000001",
	} {
		n, err := ParseNumber(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if err := checkMagnitude(n.Decimal()); err != nil {
			t.Errorf("%s skipped a count that refuses it: %v", s, err)
		}
	}
	for _, s := range []string{strings.Repeat("9", maxNumberDigits+1), "0." + strings.Repeat("0", maxNumberDigits) + "1"} {
		if _, err := ParseNumber(s); err == nil {
			t.Errorf("%s: accepted, want the count to refuse it", s)
		}
	}
}
