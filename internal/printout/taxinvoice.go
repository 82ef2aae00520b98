package printout

import (
	"strings"

	"github.com/ocpihub/ocpihub/internal/pg"
)

// TaxInvoice is the GST part of a receipt that is a tax invoice (CGST
// Rules, rule 46): the supplier, the number and date, the place of supply,
// the service and the tax split. Amounts are int64 paise; within a state
// CGST and SGST are set, across states IGST.
type TaxInvoice struct {
	Number, Date                                 string
	SupplierName, SupplierAddress, SupplierGSTIN string
	SupplierState, PlaceOfSupply                 string
	SAC, Description, QuantityKWh                string
	InterState                                   bool
	CGSTRate, SGSTRate, IGSTRate                 string
	Taxable, CGST, SGST, IGST, Total             int64
	CreditNotes                                  []CreditNote
}

// CreditNote is a correction of a tax invoice (rule 53), printed under it.
type CreditNote struct {
	Number, Date, Reason             string
	Taxable, CGST, SGST, IGST, Total int64
}

func (t *TaxInvoice) validate() error {
	for _, f := range []struct{ name, v string }{
		{"invoice_number", t.Number}, {"invoice_date", t.Date}, {"supplier_name", t.SupplierName},
		{"supplier_gstin", t.SupplierGSTIN}, {"place_of_supply", t.PlaceOfSupply}, {"sac", t.SAC},
	} {
		if strings.TrimSpace(f.v) == "" {
			return invalid(f.name, "required")
		}
	}
	switch {
	case len(t.Number) > 16:
		return invalid("invoice_number", "longer than 16 characters")
	case t.Taxable+t.CGST+t.SGST+t.IGST != t.Total:
		return invalid("total", "is not the taxable value plus the tax")
	case t.InterState && (t.CGST != 0 || t.SGST != 0):
		return invalid("cgst", "an inter-state supply carries IGST only")
	case !t.InterState && t.IGST != 0:
		return invalid("igst", "an intra-state supply carries CGST and SGST only")
	}
	return nil
}

// taxInvoice writes the invoice's rows: the number, date, place of supply
// and service, then the tax split and the credit notes.
func (d *doc) taxInvoice(w float64, t *TaxInvoice) {
	d.row(w, "Invoice no.", t.Number, false)
	d.row(w, "Invoice date", t.Date, false)
	d.row(w, "Supplier GSTIN", t.SupplierGSTIN, false)
	d.row(w, "Place of supply", t.PlaceOfSupply, false)
	d.row(w, "SAC", t.SAC+" "+t.Description, false)
	if t.QuantityKWh != "" {
		d.row(w, "Quantity", t.QuantityKWh+" kWh", false)
	}
	d.row(w, "Reverse charge", "No", false)

	d.section(w, "Tax")
	d.money("Taxable value", t.Taxable, false)
	if t.InterState {
		d.money("IGST @ "+t.IGSTRate+"%", t.IGST, false)
	} else {
		d.money("CGST @ "+t.CGSTRate+"%", t.CGST, false)
		d.money("SGST @ "+t.SGSTRate+"%", t.SGST, false)
	}
	d.money("Invoice total", t.Total, true)
	if len(t.CreditNotes) > 0 {
		d.section(w, "Credit notes against invoice "+t.Number)
	}
	if len(t.CreditNotes) > 1 {
		// Several: one line each (the taxable value is the rest), so the
		// page still holds them.
		for _, c := range t.CreditNotes {
			tax := "CGST " + pg.FormatINR(c.CGST) + " + SGST " + pg.FormatINR(c.SGST)
			if t.InterState {
				tax = "IGST " + pg.FormatINR(c.IGST)
			}
			d.row(w, c.Number, c.Date+": "+pg.FormatINR(c.Total)+" incl. "+tax, false)
		}
		return
	}
	for _, c := range t.CreditNotes {
		d.row(w, "Credit note", c.Number+" of "+c.Date, true)
		if c.Reason != "" {
			d.row(w, "Reason", c.Reason, false)
		}
		d.money("Taxable value credited", c.Taxable, false)
		if t.InterState {
			d.money("IGST credited", c.IGST, false)
		} else {
			d.money("CGST credited", c.CGST, false)
			d.money("SGST credited", c.SGST, false)
		}
		d.money("Total credited", c.Total, false)
	}
}
