package upi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// taxInvoiceFor builds the tax invoice of a settled payment's CDR (not
// yet numbered).
func (s *Service) taxInvoiceFor(cdr *ocpi.CDR, cost int64) (*receipt.TaxInvoice, receipt.TaxSplit) {
	c := s.cfg.GST
	supplier := c.GSTIN[:2]
	pos := supplier
	if l := cdr.CdrLocation; l != nil {
		if code := receipt.StateCode(l.State); code != "" {
			pos = code
		}
	}
	taxable, tax, rate := receipt.TaxOfCDR(cdr.TotalCost, cost, decimal.RequireFromString(c.Rate))
	d := &receipt.TaxInvoice{Kind: receipt.KindTaxInvoice, PlaceOfSupply: receipt.StateName(pos), PlaceOfSupplyCode: pos, InterState: pos != supplier,
		QuantityKWh: formatKWh(cdr.TotalEnergy.String())}
	return d, receipt.SplitTax(taxable, tax, rate, d.InterState)
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
	var r receipt.Receipt
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
	cn, split := receipt.CreditFor(r.TaxInvoice, paise, paymentrow.Truncate(reason, 200))
	if err := receipt.IssueTaxDoc(ctx, tx, s.cfg.GST, s.now(), r.ID, paymentID, cn, split); err != nil {
		return err
	}
	r.CreditNotes = append(r.CreditNotes, cn)
	if body, err = json.Marshal(&r); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE upi_receipts SET body = $1 WHERE id = $2", string(body), r.ID)
	return err
}

// ist is India Standard Time (receipt.IST), the day of the SMS cap and of
// invoice dates.
var ist = receipt.IST
