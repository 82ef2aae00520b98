package receipt

import (
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// TestReceiptMailShowsTaxInvoice: the e-mail of a receipt that is a tax
// invoice carries the invoice's numbers, the same as the PDF and the page.
func TestReceiptMailShowsTaxInvoice(t *testing.T) {
	t.Parallel()
	r := &Receipt{ID: "abcdefgh12345678", Amount: "272.88", Currency: "INR", EnergyKWh: "12.5", Cost: "272.88", Captured: "500.00",
		Refunded: "227.12", URL: "https://hub.example/receipts/abcdefgh12345678", IssuedAt: ocpi.NewDateTime(time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC)),
		TaxInvoice: &TaxInvoice{Number: "INV/2526/0000042", Date: "2026-03-12", SupplierName: "Operator Pvt Ltd", SupplierAddress: "Bengaluru",
			SupplierGSTIN: "29AAGCB7383J1Z4", SupplierState: "Karnataka (29)", PlaceOfSupply: "Karnataka", PlaceOfSupplyCode: "29", SAC: DefaultSAC,
			Description: "Electric vehicle battery charging service", TaxableValue: "231.25", Rate: "18", CGSTRate: "9", SGSTRate: "9",
			CGST: "20.82", SGST: "20.81", IGST: "0.00", Total: "272.88"}}
	msg, err := receiptMail("receipts@hub.example", ReceiptNotice{Receipt: r, Email: "driver@example.in"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tax invoice INV/2526/0000042 of 2026-03-12", "GSTIN:     29AAGCB7383J1Z4", "Place of supply: Karnataka (29)",
		"SAC:       998714", "Taxable value: ₹231.25", "CGST @ 9%: ₹20.82", "SGST @ 9%: ₹20.81", "Invoice total: ₹272.88"} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("the e-mail lacks %q", want)
		}
	}
	if strings.Contains(string(msg), "IGST") {
		t.Error("an intra-state invoice's e-mail shows IGST")
	}
}
