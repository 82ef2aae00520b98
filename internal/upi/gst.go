package upi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// taxSplit is the money of a GST document in paise.
type taxSplit struct {
	taxable, cgst, sgst, igst int64
	rate                      decimal.Decimal
}

func (t taxSplit) total() int64 { return t.taxable + t.cgst + t.sgst + t.igst }

// splitTax divides the tax between CGST and SGST (intra-state, the odd
// paisa in CGST) or IGST (inter-state).
func splitTax(taxable, tax int64, rate decimal.Decimal, inter bool) taxSplit {
	t := taxSplit{taxable: taxable, rate: rate}
	if inter {
		t.igst = tax
	} else {
		t.cgst = (tax + 1) / 2
		t.sgst = tax - t.cgst
	}
	return t
}

// taxOfCDR derives the taxable value, tax and rate of a CDR's cost (see
// GSTConfig): total is the cost settled (incl_vat, else excl_vat).
func taxOfCDR(price *ocpi.Price, total int64, defaultRate decimal.Decimal) (taxable, tax int64, rate decimal.Decimal) {
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

// ist is India Standard Time, the clock of invoice dates and financial
// years.
var ist = time.FixedZone("IST", 5*3600+1800)

// financialYear returns the financial year of an instant (1 April to 31
// March, IST): its label "2026-27" and its code in numbers "2627".
func financialYear(t time.Time) (label, code string) {
	t = t.In(ist)
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

// issueTaxDoc numbers, fills and stores a GST document of a receipt.
func (s *Service) issueTaxDoc(ctx context.Context, tx *store.Tx, receiptID, paymentID string, d *TaxInvoice, m taxSplit) error {
	c := s.cfg.GST
	now := s.now()
	fy, code := financialYear(now)
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
	d.Date, d.FinancialYear = now.In(ist).Format(time.DateOnly), fy
	d.SupplierName, d.SupplierAddress, d.SupplierGSTIN = c.SupplierName, c.SupplierAddress, c.GSTIN
	d.SupplierState = receipt.StateName(c.GSTIN[:2]) + " (" + c.GSTIN[:2] + ")"
	d.SAC, d.Description = c.SAC, "Electric vehicle battery charging service"
	d.TaxableValue, d.CGST, d.SGST, d.IGST, d.Total = pg.FormatRupees(m.taxable), pg.FormatRupees(m.cgst), pg.FormatRupees(m.sgst),
		pg.FormatRupees(m.igst), pg.FormatRupees(m.total())
	d.Rate = m.rate.String()
	if d.InterState {
		d.IGSTRate = d.Rate
	} else {
		half := m.rate.Div(decimal.NewFromInt(2)).String()
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

// taxInvoiceFor builds the tax invoice of a settled payment's CDR (not
// yet numbered).
func (s *Service) taxInvoiceFor(cdr *ocpi.CDR, cost int64) (*TaxInvoice, taxSplit) {
	c := s.cfg.GST
	supplier := c.GSTIN[:2]
	pos := supplier
	if l := cdr.CdrLocation; l != nil {
		if code := receipt.StateCode(l.State); code != "" {
			pos = code
		}
	}
	taxable, tax, rate := taxOfCDR(cdr.TotalCost, cost, decimal.RequireFromString(c.Rate))
	d := &TaxInvoice{Kind: KindTaxInvoice, PlaceOfSupply: receipt.StateName(pos), PlaceOfSupplyCode: pos, InterState: pos != supplier,
		QuantityKWh: formatKWh(cdr.TotalEnergy.String())}
	return d, splitTax(taxable, tax, rate, d.InterState)
}

// creditFor builds a credit note of paise against an invoice, at its rate
// and with its split.
func creditFor(inv *TaxInvoice, paise int64, reason string) (*TaxInvoice, taxSplit) {
	rate := decimal.RequireFromString(inv.Rate)
	hundred := decimal.NewFromInt(100)
	taxable := decimal.NewFromInt(paise).Mul(hundred).Div(hundred.Add(rate)).Round(0).IntPart()
	d := &TaxInvoice{Kind: KindCreditNote, PlaceOfSupply: inv.PlaceOfSupply, PlaceOfSupplyCode: inv.PlaceOfSupplyCode,
		InterState: inv.InterState, OriginalNumber: inv.Number, OriginalDate: inv.Date, Reason: reason}
	return d, splitTax(taxable, paise-taxable, rate, inv.InterState)
}

// creditReceipt corrects the tax invoice of a payment's receipt by paise
// the driver gets back from the cost of the service (an operator's refund
// beyond the excess): a credit note (rule 53) is issued and added to the
// receipt. A receipt without a tax invoice is left as it is.
func (s *Service) creditReceipt(ctx context.Context, tx *store.Tx, paymentID string, paise int64, reason string) error {
	var id string
	var body []byte
	err := tx.QueryRow(ctx, "SELECT id, body FROM upi_receipts WHERE payment_id = $1", paymentID).Scan(&id, &body)
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var r Receipt
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	if r.TaxInvoice == nil || !s.cfg.GST.Enabled() {
		return nil
	}
	credited := int64(0)
	for _, c := range r.CreditNotes {
		credited += c.Paise(c.Total)
	}
	paise = min(paise, r.TaxInvoice.Paise(r.TaxInvoice.Total)-credited)
	if paise <= 0 {
		return nil
	}
	cn, split := creditFor(r.TaxInvoice, paise, truncate(reason, 200))
	if err := s.issueTaxDoc(ctx, tx, r.ID, paymentID, cn, split); err != nil {
		return err
	}
	r.CreditNotes = append(r.CreditNotes, cn)
	if body, err = json.Marshal(&r); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE upi_receipts SET body = $1 WHERE id = $2", string(body), r.ID)
	return err
}
