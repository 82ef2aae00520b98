package tariff

import "github.com/shopspring/decimal"

// acc sums decimals exactly with fewer allocations than repeated
// decimal.Add (which allocates a big integer per call): while the sum and
// its terms have at most 17 digits, it is an int64 coefficient and an
// exponent; beyond that it carries on as a decimal. Volumes of charging
// periods ("3.5", "0.25") are summed here, once per priced part.
type acc struct {
	m     int64
	exp   int32
	dec   decimal.Decimal
	isDec bool
}

// accLimit bounds the int64 coefficient (17 digits): a sum of two stays far
// from overflow, and one more ×10 while aligning exponents too.
const accLimit = 100_000_000_000_000_000

func (a *acc) add(v decimal.Decimal) {
	if !a.isDec {
		if a.addSmall(v) {
			return
		}
		a.dec, a.isDec = a.value(), true
	}
	a.dec = a.dec.Add(v)
}

// addSmall adds v to the int64 sum when the result stays within accLimit.
func (a *acc) addSmall(v decimal.Decimal) bool {
	if v.IsZero() {
		return true
	}
	if v.NumDigits() > 17 {
		return false
	}
	m, e := v.CoefficientInt64(), v.Exponent()
	am, ae := a.m, a.exp
	if am == 0 {
		ae = e
	}
	for ; ae > e; ae-- {
		if am *= 10; am <= -accLimit || am >= accLimit {
			return false
		}
	}
	for ; e > ae; e-- {
		if m *= 10; m <= -accLimit || m >= accLimit {
			return false
		}
	}
	r := am + m
	if r <= -accLimit || r >= accLimit {
		return false
	}
	a.m, a.exp = r, ae
	return true
}

// value is the sum.
func (a *acc) value() decimal.Decimal {
	if a.isDec {
		return a.dec
	}
	return decimal.New(a.m, a.exp)
}
