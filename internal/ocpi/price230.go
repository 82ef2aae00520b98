package ocpi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// Version230 is the OCPI version of the Payments module (payments.md §0).
const Version230 = "2.3.0"

// Price230 is the 2.3.0 Price: the amount before taxes and the taxes on it
// (transport.md §2). It is not wire-compatible with the 2.2.1 Price.
type Price230 struct {
	BeforeTaxes Number      `json:"before_taxes"`
	Taxes       []TaxAmount `json:"taxes,omitempty"`
}

// TaxAmount is one tax of a 2.3.0 Price.
type TaxAmount struct {
	Name          string `json:"name"`
	AccountNumber string `json:"account_number,omitempty"`
	Percentage    Number `json:"percentage,omitzero"`
	Amount        Number `json:"amount"`
}

// TaxNameVAT names the one tax a 2.2.1 Price implies (incl_vat − excl_vat)
// when it is written in the 2.3.0 shape.
const TaxNameVAT = "VAT"

// PriceAny is a Price received in either shape: the 2.2.1 one
// ({excl_vat, incl_vat}) or the 2.3.0 one ({before_taxes, taxes}). The
// Payments module's own examples use the 2.2.1 shape although the module is
// 2.3.0 (gaps.md §4), so both are accepted on input; output is written in
// the shape of the receiving side's version (To221, To230).
type PriceAny struct {
	V221 *Price
	V230 *Price230
}

// UnmarshalJSON reads either shape; a body mixing the two is refused.
func (p *PriceAny) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*p = PriceAny{}
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return fmt.Errorf("a price must be an object")
	}
	_, before := keys["before_taxes"]
	_, taxes := keys["taxes"]
	_, excl := keys["excl_vat"]
	_, incl := keys["incl_vat"]
	switch {
	case (before || taxes) && (excl || incl):
		return fmt.Errorf("a price is either {excl_vat, incl_vat} (2.2.1) or {before_taxes, taxes} (2.3.0), not both")
	case before || taxes:
		var v Price230
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*p = PriceAny{V230: &v}
	default:
		var v Price
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*p = PriceAny{V221: &v}
	}
	return nil
}

// MarshalJSON writes the shape that was received.
func (p PriceAny) MarshalJSON() ([]byte, error) {
	switch {
	case p.V230 != nil:
		return json.Marshal(p.V230)
	case p.V221 != nil:
		return json.Marshal(p.V221)
	}
	return []byte("null"), nil
}

// IsZero reports whether no price was given.
func (p PriceAny) IsZero() bool { return p.V221 == nil && p.V230 == nil }

// Excl returns the amount without taxes.
func (p PriceAny) Excl() Number {
	if p.V230 != nil {
		return p.V230.BeforeTaxes
	}
	if p.V221 != nil {
		return p.V221.ExclVAT
	}
	return Number{}
}

// Incl returns the amount with taxes, when the price says it: incl_vat of
// a 2.2.1 price, before_taxes plus every tax of a 2.3.0 price that lists
// taxes.
func (p PriceAny) Incl() (Number, bool) {
	switch {
	case p.V221 != nil && p.V221.InclVAT != nil:
		return *p.V221.InclVAT, true
	case p.V230 != nil && len(p.V230.Taxes) > 0:
		sum := p.V230.BeforeTaxes
		for _, t := range p.V230.Taxes {
			sum = sum.Add(t.Amount)
		}
		return sum, true
	}
	return Number{}, false
}

// To221 returns the price in the 2.2.1 shape.
func (p PriceAny) To221() Price {
	out := Price{ExclVAT: p.Excl()}
	if v, ok := p.Incl(); ok {
		out.InclVAT = &v
	}
	return out
}

// To230 returns the price in the 2.3.0 shape: a 2.2.1 price's VAT becomes
// one tax named VAT.
func (p PriceAny) To230() Price230 {
	if p.V230 != nil {
		return *p.V230
	}
	out := Price230{BeforeTaxes: p.Excl()}
	if v, ok := p.Incl(); ok {
		out.Taxes = []TaxAmount{{Name: TaxNameVAT, Amount: v.Sub(out.BeforeTaxes)}}
	}
	return out
}

// check validates a price of either shape: amounts present and not
// negative.
func (p PriceAny) check(c *Check, field string, required bool) {
	if p.IsZero() {
		if required {
			c.Fail(field, "is required")
		}
		return
	}
	sub := c.Sub(field)
	if p.V221 != nil {
		if sub.Required("excl_vat", p.V221.ExclVAT.Valid()) && p.V221.ExclVAT.IsNegative() {
			sub.Fail("excl_vat", "must not be negative")
		}
		if p.V221.InclVAT != nil {
			if sub.Required("incl_vat", p.V221.InclVAT.Valid()) && p.V221.InclVAT.IsNegative() {
				sub.Fail("incl_vat", "must not be negative")
			}
		}
	} else {
		if sub.Required("before_taxes", p.V230.BeforeTaxes.Valid()) && p.V230.BeforeTaxes.IsNegative() {
			sub.Fail("before_taxes", "must not be negative")
		}
		for i, t := range p.V230.Taxes {
			ts := sub.Index("taxes", i)
			ts.String("name", t.Name, 0, true)
			ts.String("account_number", t.AccountNumber, 0, false)
			if t.Percentage.IsNegative() {
				ts.Fail("percentage", "must not be negative")
			}
			if ts.Required("amount", t.Amount.Valid()) && t.Amount.IsNegative() {
				ts.Fail("amount", "must not be negative")
			}
			sub.Merge(ts)
		}
	}
	c.Merge(sub)
}

// PricesTo230 rewrites, in a stored document (a Session, a CDR), the Price
// fields named from the 2.2.1 shape to the 2.3.0 one, for a 2.3.0 receiver.
// Fields in another shape, or absent, are left alone.
func PricesTo230(doc Object, fields ...string) {
	for _, f := range fields {
		m, ok := doc[f].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := priceFromObject(m); ok && v.V221 != nil {
			doc[f] = priceObject(v.To230())
		}
	}
}

// PricesTo221 is PricesTo230 the other way.
func PricesTo221(doc Object, fields ...string) {
	for _, f := range fields {
		m, ok := doc[f].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := priceFromObject(m); ok && v.V230 != nil {
			doc[f] = priceObject(v.To221())
		}
	}
}

// SessionPriceFields and CDRPriceFields are the Price fields of a Session
// and of a CDR.
var (
	SessionPriceFields = []string{"total_cost"}
	CDRPriceFields     = []string{"total_cost", "total_fixed_cost", "total_energy_cost", "total_time_cost",
		"total_parking_cost", "total_reservation_cost"}
)

func priceFromObject(m map[string]any) (PriceAny, bool) {
	b, err := MarshalObject(m)
	if err != nil {
		return PriceAny{}, false
	}
	var p PriceAny
	if json.Unmarshal(b, &p) != nil || p.IsZero() || !p.Excl().Valid() {
		return PriceAny{}, false
	}
	return p, true
}

func priceObject(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if core.DecodeNumbers(b, &out) != nil {
		return nil
	}
	return out
}
