package pg

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CurrencyINR is the Indian rupee, the currency of UPI.
const CurrencyINR = "INR"

// Amount is an exact sum of money: Paise minor units (hundredths) of
// Currency, an ISO 4217 code. Money is never a float anywhere in ocpihub.
// Every currency the payment gateway handles for us has two decimals, so the
// minor unit is always a hundredth and the field keeps the UPI name.
type Amount struct {
	Paise    int64
	Currency string
}

// INR returns an amount of paise in Indian rupees.
func INR(paise int64) Amount { return Amount{Paise: paise, Currency: CurrencyINR} }

// ParseAmount reads a decimal amount in major units ("150", "150.5",
// "150.50") of currency, exactly.
func ParseAmount(decimal, currency string) (Amount, error) {
	if !ValidCurrency(currency) {
		return Amount{}, fmt.Errorf("currency %q: want a three-letter ISO 4217 code", currency)
	}
	p, err := ParseRupees(decimal)
	if err != nil {
		return Amount{}, err
	}
	return Amount{Paise: p, Currency: currency}, nil
}

// Rupees returns the amount in major units with two decimals ("1234.50"),
// the decimal-string form of money in our APIs.
func (a Amount) Rupees() string { return FormatRupees(a.Paise) }

// String returns the amount with its currency code ("1234.50 INR").
func (a Amount) String() string { return FormatRupees(a.Paise) + " " + a.Currency }

// Display returns the amount as people read it: rupees with the ₹ sign and
// Indian digit grouping ("₹1,23,456.00"), other currencies with their code
// and groups of three ("USD 1,234.00").
func (a Amount) Display() string {
	if a.Currency == CurrencyINR {
		return FormatINR(a.Paise)
	}
	sign, whole, frac := split(a.Paise)
	return sign + a.Currency + " " + groupThousands(whole) + "." + frac
}

// IsZero reports whether the amount is zero.
func (a Amount) IsZero() bool { return a.Paise == 0 }

// ErrAmount is wrapped by every error about a malformed decimal amount.
var ErrAmount = errors.New("invalid amount")

// maxWhole is the largest number of rupees whose paise fit an int64.
const maxWhole = math.MaxInt64 / 100

// ParseRupees converts a decimal string of rupees to paise, exactly: an
// optional minus sign, digits, and optionally a point followed by one or two
// digits ("12", "12.5", "12.50", "-0.01"). Exponents, a plus sign, spaces,
// thousands separators, a bare point and a third decimal are errors: an
// amount that cannot be represented in paise is refused, never rounded.
func ParseRupees(s string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrAmount, s, why)
	}
	neg := false
	rest := s
	if strings.HasPrefix(rest, "-") {
		neg, rest = true, rest[1:]
	}
	whole, frac, hasPoint := strings.Cut(rest, ".")
	if whole == "" || !allDigits(whole) {
		return bad("want digits with at most two decimals")
	}
	if hasPoint {
		if frac == "" || !allDigits(frac) {
			return bad("want digits after the decimal point")
		}
		if len(frac) > 2 {
			return bad("more than two decimals")
		}
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxWhole {
		return bad("too large")
	}
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	p := w*100 + f
	if p < 0 { // overflow past maxWhole's remainder
		return bad("too large")
	}
	if neg {
		p = -p
	}
	return p, nil
}

// FormatRupees writes paise as a decimal string of rupees with exactly two
// decimals and no grouping ("1234.50", "-0.05"). ParseRupees reads it back
// to the same value.
func FormatRupees(paise int64) string {
	sign, whole, frac := split(paise)
	return sign + whole + "." + frac
}

// FormatINR writes paise for display: the ₹ sign, Indian digit grouping
// (thousands, then lakhs and crores in pairs) and two decimals, as on a
// receipt ("₹1,23,456.00", "₹0.50", "-₹1,000.00").
func FormatINR(paise int64) string {
	sign, whole, frac := split(paise)
	return sign + "₹" + groupIndian(whole) + "." + frac
}

// split returns the sign ("" or "-"), the whole units and the two-digit
// fraction of paise, handling math.MinInt64.
func split(paise int64) (sign, whole, frac string) {
	u := uint64(paise)
	if paise < 0 {
		sign, u = "-", uint64(-(paise+1))+1
	}
	return sign, strconv.FormatUint(u/100, 10), fmt.Sprintf("%02d", u%100)
}

// groupIndian groups digits the Indian way: the last three, then pairs.
func groupIndian(d string) string {
	if len(d) <= 3 {
		return d
	}
	head, tail := d[:len(d)-3], d[len(d)-3:]
	var parts []string
	for len(head) > 2 {
		parts = append([]string{head[len(head)-2:]}, parts...)
		head = head[:len(head)-2]
	}
	parts = append([]string{head}, parts...)
	return strings.Join(parts, ",") + "," + tail
}

// groupThousands groups digits in threes.
func groupThousands(d string) string {
	var b strings.Builder
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ValidCurrency reports whether c looks like an ISO 4217 code: three
// upper-case letters.
func ValidCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}
