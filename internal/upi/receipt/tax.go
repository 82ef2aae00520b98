package receipt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
)

// The money of GST documents and their numbering (CGST rules 46 and 53):
// the package upi issues them in its transactions.

// TaxSplit is the money of a GST document in paise.
type TaxSplit struct {
	Taxable, CGST, SGST, IGST int64
	Rate                      decimal.Decimal
}

// Total is the document's total.
func (t TaxSplit) Total() int64 { return t.Taxable + t.CGST + t.SGST + t.IGST }

// SplitTax divides the tax between CGST and SGST (intra-state, the odd
// paisa in CGST) or IGST (inter-state).
func SplitTax(taxable, tax int64, rate decimal.Decimal, inter bool) TaxSplit {
	t := TaxSplit{Taxable: taxable, Rate: rate}
	if inter {
		t.IGST = tax
	} else {
		t.CGST = (tax + 1) / 2
		t.SGST = tax - t.CGST
	}
	return t
}

// TaxOfCDR derives the taxable value, tax and rate of a CDR's cost (see
// GSTConfig): total is the cost settled (incl_vat, else excl_vat).
func TaxOfCDR(price *ocpi.Price, total int64, defaultRate decimal.Decimal) (taxable, tax int64, rate decimal.Decimal) {
	if price != nil && price.InclVAT != nil && price.InclVAT.Valid() && price.ExclVAT.Valid() {
		taxable = price.ExclVAT.Decimal().Shift(2).Round(0).IntPart()
		if taxable >= 0 && taxable <= total {
			tax = total - taxable
			rate = decimal.Zero
			if taxable > 0 {
				rate = decimal.NewFromInt(tax).Mul(decimal.NewFromInt(100)).Div(decimal.NewFromInt(taxable))
			}
			return taxable, tax, standardRate(rate)
		}
	}
	// Tax-inclusive at the configured rate: taxable = total × 100 / (100 + rate).
	hundred := decimal.NewFromInt(100)
	taxable = decimal.NewFromInt(total).Mul(hundred).Div(hundred.Add(defaultRate)).Round(0).IntPart()
	return taxable, total - taxable, defaultRate
}

// gstSlabs are the GST rates a derived rate snaps to.
var gstSlabs = []string{"0", "0.25", "3", "5", "12", "18", "28", "40"}

func standardRate(r decimal.Decimal) decimal.Decimal {
	for _, s := range gstSlabs {
		d := decimal.RequireFromString(s)
		if r.Sub(d).Abs().LessThan(decimal.RequireFromString("0.1")) {
			return d
		}
	}
	return r.Round(2)
}

// IST is India Standard Time, the clock of invoice dates and financial
// years.
var IST = time.FixedZone("IST", 5*3600+1800)

// FinancialYear returns the financial year of an instant (1 April to 31
// March, IST): its label "2026-27" and its code in numbers "2627".
func FinancialYear(t time.Time) (label, code string) {
	t = t.In(IST)
	start := t.Year()
	if t.Month() < time.April {
		start--
	}
	return fmt.Sprintf("%d-%02d", start, (start+1)%100), fmt.Sprintf("%02d%02d", start%100, (start+1)%100)
}

// nextNumber allocates the next serial number of a series in a financial
// year, in the caller's transaction: the counter row's update holds its
// lock until the commit, so concurrent documents queue on it and a
// rollback returns the number.
func nextNumber(ctx context.Context, tx *store.Tx, series, fy string) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, `INSERT INTO gst_counters (series, fy, seq) VALUES ($1, $2, 1)
		ON CONFLICT (series, fy) DO UPDATE SET seq = gst_counters.seq + 1 RETURNING seq`, series, fy).Scan(&seq)
	return seq, err
}

// IssueTaxDoc numbers, fills and stores a GST document of a receipt, in
// the caller's transaction, dated now.
func IssueTaxDoc(ctx context.Context, tx *store.Tx, c GSTConfig, now time.Time, receiptID, paymentID string, d *TaxInvoice, m TaxSplit) error {
	fy, code := FinancialYear(now)
	prefix := c.Prefix
	if d.Kind == KindCreditNote {
		prefix = c.CreditPrefix
	}
	seq, err := nextNumber(ctx, tx, prefix, fy)
	if err != nil {
		return err
	}
	d.Number = fmt.Sprintf("%s/%s/%07d", prefix, code, seq)
	if len(d.Number) > 16 {
		return fmt.Errorf("GST document number %s exceeds 16 characters: series %s is full for %s", d.Number, prefix, fy)
	}
	d.Date, d.FinancialYear = now.In(IST).Format(time.DateOnly), fy
	d.SupplierName, d.SupplierAddress, d.SupplierGSTIN = c.SupplierName, c.SupplierAddress, c.GSTIN
	d.SupplierState = StateName(c.GSTIN[:2]) + " (" + c.GSTIN[:2] + ")"
	d.SAC, d.Description = c.SAC, "Electric vehicle battery charging service"
	d.TaxableValue, d.CGST, d.SGST, d.IGST, d.Total = pg.FormatRupees(m.Taxable), pg.FormatRupees(m.CGST), pg.FormatRupees(m.SGST),
		pg.FormatRupees(m.IGST), pg.FormatRupees(m.Total())
	d.Rate = m.Rate.String()
	if d.InterState {
		d.IGSTRate = d.Rate
	} else {
		half := m.Rate.Div(decimal.NewFromInt(2)).String()
		d.CGSTRate, d.SGSTRate = half, half
	}
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO upi_invoices (number, kind, series, fy, seq, receipt_id, payment_id, issued_at, body)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, d.Number, d.Kind, prefix, fy, seq, receiptID, paymentID, now.UnixMicro(), string(body))
	return err
}

// CreditFor builds a credit note of paise against an invoice, at its rate
// and with its split.
func CreditFor(inv *TaxInvoice, paise int64, reason string) (*TaxInvoice, TaxSplit) {
	rate := decimal.RequireFromString(inv.Rate)
	hundred := decimal.NewFromInt(100)
	taxable := decimal.NewFromInt(paise).Mul(hundred).Div(hundred.Add(rate)).Round(0).IntPart()
	d := &TaxInvoice{Kind: KindCreditNote, PlaceOfSupply: inv.PlaceOfSupply, PlaceOfSupplyCode: inv.PlaceOfSupplyCode,
		InterState: inv.InterState, OriginalNumber: inv.Number, OriginalDate: inv.Date, Reason: reason}
	return d, SplitTax(taxable, paise-taxable, rate, inv.InterState)
}
