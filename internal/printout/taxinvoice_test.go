package printout

import (
	"testing"
)

func sampleTax(inter bool) *TaxInvoice {
	t := &TaxInvoice{Number: "INV/2526/0000451", Date: "2026-03-12", SupplierName: "ocpihub Mobility Services Pvt Ltd",
		SupplierAddress: "LBS Marg, Kurla West, Mumbai 400070", SupplierGSTIN: "27AABCO1234F1ZV", SupplierState: "Maharashtra (27)",
		PlaceOfSupply: "Maharashtra (27)", SAC: "998714", Description: "Electric vehicle battery charging service", QuantityKWh: "41.237",
		CGSTRate: "9", SGSTRate: "9", Taxable: 10377161, CGST: 933945, SGST: 933944, Total: 12245050}
	if inter {
		t.InterState, t.PlaceOfSupply, t.CGSTRate, t.SGSTRate, t.IGSTRate = true, "Karnataka (29)", "", "", "18"
		t.CGST, t.SGST, t.IGST = 0, 0, 1867889
	}
	return t
}

// TestTaxInvoicePDF: a receipt with a tax invoice is titled so, headed by
// the supplier and its GSTIN, and shows the number, date, place of supply,
// SAC and the split: CGST + SGST within a state, IGST across states; the
// receipt's own rows follow.
func TestTaxInvoicePDF(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		inter bool
		rows  map[string]string
		not   []string
	}{
		{"intra-state", false, map[string]string{"Place of supply": "Maharashtra (27)", "CGST @ 9%": "₹9,339.45",
			"SGST @ 9%": "₹9,339.44"}, []string{"IGST @ 18%"}},
		{"inter-state", true, map[string]string{"Place of supply": "Karnataka (29)", "IGST @ 18%": "₹18,678.89"},
			[]string{"CGST @ 9%", "SGST @ 9%"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := sampleReceipt()
			r.Tax = sampleTax(c.inter)
			p := renderPage(t, ReceiptPDF, r)
			rows := map[string]string{
				"Invoice no.": "INV/2526/0000451", "Invoice date": "2026-03-12", "Supplier GSTIN": "27AABCO1234F1ZV",
				"SAC": "998714 Electric vehicle battery charging service", "Quantity": "41.237 kWh", "Reverse charge": "No",
				"Taxable value": "₹1,03,771.61", "Invoice total": "₹1,22,450.50", "Receipt no.": "RCPT-20260312-000451",
				"Cost of the session": "₹1,22,450.50",
			}
			for k, v := range c.rows {
				rows[k] = v
			}
			for label, want := range rows {
				if got := p.after(label); got != want {
					t.Errorf("%s: %q, want %q", label, got, want)
				}
			}
			for _, line := range []string{"Tax invoice", "ocpihub Mobility Services Pvt Ltd", "LBS Marg, Kurla West, Mumbai 400070"} {
				if !p.has(line) {
					t.Errorf("tax invoice lacks the line %q", line)
				}
			}
			for _, line := range c.not {
				if p.has(line) || p.after(line) != "" {
					t.Errorf("%s invoice shows %q", c.name, line)
				}
			}
			if p.has("Charging receipt") {
				t.Error("a tax invoice is titled a charging receipt")
			}
			p.assertGlyphs(t)
		})
	}
}

func TestTaxInvoiceCreditNotePDF(t *testing.T) {
	t.Parallel()
	r := sampleReceipt()
	r.Tax = sampleTax(true)
	r.Tax.CreditNotes = []CreditNote{{Number: "CRN/2526/0000007", Date: "2026-03-14", Reason: "goodwill", Taxable: 4237, IGST: 763, Total: 5000}}
	p := renderPage(t, ReceiptPDF, r)
	for label, want := range map[string]string{"Credit note": "CRN/2526/0000007 of 2026-03-14", "Reason": "goodwill",
		"Taxable value credited": "₹42.37", "IGST credited": "₹7.63", "Total credited": "₹50.00"} {
		if got := p.after(label); got != want {
			t.Errorf("%s: %q, want %q", label, got, want)
		}
	}
	if !p.has("Credit notes against invoice INV/2526/0000451") {
		t.Error("the credit notes have no heading naming the invoice")
	}
}

func TestTaxInvoiceInvalid(t *testing.T) {
	t.Parallel()
	// The receipt a tax invoice is printed on.
	render := func(tax TaxInvoice) ([]byte, error) {
		r := sampleReceipt()
		r.Tax = &tax
		return ReceiptPDF(r)
	}
	wantInvalid(t, func() TaxInvoice { return *sampleTax(false) }, render, []invalidCase[TaxInvoice]{
		{"no number", func(t *TaxInvoice) { t.Number = "" }},
		{"number too long", func(t *TaxInvoice) { t.Number = "INVOICE/2526/00451" }},
		{"no GSTIN", func(t *TaxInvoice) { t.SupplierGSTIN = "" }},
		{"total off", func(t *TaxInvoice) { t.Total++ }},
		{"IGST within a state", func(t *TaxInvoice) { t.IGST, t.CGST = t.CGST, 0 }},
	})
}

// TestTaxInvoiceManyCreditNotes: several credit notes (four here, with a
// two-line tariff) are listed one line
// each and the invoice still fits its page.
func TestTaxInvoiceManyCreditNotes(t *testing.T) {
	t.Parallel()
	r := sampleReceipt()
	r.Tax = sampleTax(false)
	for i := range 4 {
		r.Tax.CreditNotes = append(r.Tax.CreditNotes, CreditNote{Number: "CRN/2526/000000" + string(rune('1'+i)), Date: "2026-03-14",
			Taxable: 4237, CGST: 382, SGST: 381, Total: 5000})
	}
	p := renderPage(t, ReceiptPDF, r)
	if got := p.after("CRN/2526/0000004"); got != "2026-03-14: ₹50.00 incl. CGST ₹3.82 + SGST ₹3.81" {
		t.Errorf("fourth credit note: %q", got)
	}
}
