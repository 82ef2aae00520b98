package upi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// testGSTIN is a made-up Maharashtra (27) GSTIN with a correct check
// character.
const testGSTIN = "27AABCO1234F1ZV"

func testGST() receipt.GSTConfig {
	return receipt.GSTConfig{SupplierName: "ocpihub Mobility Services Pvt Ltd", SupplierAddress: "LBS Marg, Kurla West, Mumbai 400070",
		GSTIN: testGSTIN}
}

func TestCheckGSTIN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		gstin string
		ok    bool
	}{
		{"27AAPFU0939F1ZV", true}, // published example
		{"29AAGCB7383J1Z4", true}, // published example
		{testGSTIN, true},
		{"27AABCO1234F1ZW", false}, // wrong check character
		{"27AABCO1234F1Z", false},  // short
		{"28AABCO1234F1ZV", false}, // 28 is no longer a state code
		{"27AAB1O1234F1ZV", false}, // PAN letters
		{"27AABCO1234F0ZV", false}, // entity number 0
		{"27AABCO1234F1YV", false}, // not Z
		{"27aabco1234f1zv", false}, // lower case is not normalised by CheckGSTIN
	} {
		err := receipt.CheckGSTIN(c.gstin)
		if (err == nil) != c.ok {
			t.Errorf("CheckGSTIN(%q) = %v, want ok %v", c.gstin, err, c.ok)
		}
		if err != nil && errField(err) != "gstin" {
			t.Errorf("CheckGSTIN(%q): error names %q, want gstin", c.gstin, errField(err))
		}
	}
}

func TestGSTConfigCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		tweak func(*receipt.GSTConfig)
		field string
	}{
		{"ok", func(*receipt.GSTConfig) {}, ""},
		{"no name", func(c *receipt.GSTConfig) { c.SupplierName = " " }, "gst_supplier_name"},
		{"no address", func(c *receipt.GSTConfig) { c.SupplierAddress = "" }, "gst_supplier_address"},
		{"bad gstin", func(c *receipt.GSTConfig) { c.GSTIN = "27AABCO1234F1ZA" }, "gstin"},
		{"bad sac", func(c *receipt.GSTConfig) { c.SAC = "8504" }, "gst_sac"},
		{"bad rate", func(c *receipt.GSTConfig) { c.Rate = "eighteen" }, "gst_rate"},
		{"long prefix", func(c *receipt.GSTConfig) { c.Prefix = "INVO" }, "gst_invoice_prefix"},
		{"same prefixes", func(c *receipt.GSTConfig) { c.CreditPrefix = "INV" }, "gst_credit_prefix"},
	} {
		g := testGST()
		c.tweak(&g)
		err := g.Check()
		if got := errField(err); got != c.field || (err == nil) != (c.field == "") {
			t.Errorf("%s: Check() = %v, want an error naming %q", c.name, err, c.field)
		}
	}
}

func TestFinancialYear(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		at          time.Time
		label, code string
	}{
		{time.Date(2026, 3, 31, 18, 29, 59, 0, time.UTC), "2025-26", "2526"}, // 23:59:59 IST on 31 March
		{time.Date(2026, 3, 31, 18, 30, 0, 0, time.UTC), "2026-27", "2627"},  // 00:00 IST on 1 April
		{time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC), "2099-00", "9900"},
	} {
		if l, code := receipt.FinancialYear(c.at); l != c.label || code != c.code {
			t.Errorf("financialYear(%v) = %s %s, want %s %s", c.at, l, code, c.label, c.code)
		}
	}
}

func TestTaxOfCDR(t *testing.T) {
	t.Parallel()
	incl := func(excl, incl string) *ocpi.Price {
		n := ocpi.NewNumber(incl)
		return &ocpi.Price{ExclVAT: ocpi.NewNumber(excl), InclVAT: &n}
	}
	for _, c := range []struct {
		name                      string
		price                     *ocpi.Price
		total                     int64
		inter                     bool
		taxable, cgst, sgst, igst int64
		rate                      string
	}{
		{"intra, incl given", incl("84.75", "100.00"), 100_00, false, 84_75, 7_63, 7_62, 0, "18"},
		{"inter, incl given", incl("84.75", "100.00"), 100_00, true, 84_75, 0, 0, 15_25, "18"},
		{"excl only: inclusive at 18%", &ocpi.Price{ExclVAT: ocpi.NewNumber("118")}, 118_00, false, 100_00, 9_00, 9_00, 0, "18"},
		{"5% rate kept", incl("200", "210"), 210_00, true, 200_00, 0, 0, 10_00, "5"},
		{"odd rate printed as is", incl("100", "110"), 110_00, false, 100_00, 5_00, 5_00, 0, "10"},
		{"zero cost", incl("0", "0"), 0, false, 0, 0, 0, 0, "0"},
	} {
		taxable, tax, rate := receipt.TaxOfCDR(c.price, c.total, decimal.NewFromInt(18))
		m := receipt.SplitTax(taxable, tax, rate, c.inter)
		if m.Taxable != c.taxable || m.CGST != c.cgst || m.SGST != c.sgst || m.IGST != c.igst || m.Rate.String() != c.rate {
			t.Errorf("%s: taxable %d cgst %d sgst %d igst %d rate %s; want %d %d %d %d %s", c.name, m.Taxable, m.CGST, m.SGST, m.IGST,
				m.Rate, c.taxable, c.cgst, c.sgst, c.igst, c.rate)
		}
		if m.Total() != c.total {
			t.Errorf("%s: the parts add up to %d, want %d", c.name, m.Total(), c.total)
		}
	}
}

func TestStateCode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Karnataka": "29", " maharashtra ": "27", "29": "29", "NCT of Delhi": "07",
		"Jammu & Kashmir": "01", "Atlantis": "", "": ""} {
		if got := receipt.StateCode(in); got != want {
			t.Errorf("receipt.StateCode(%q) = %q, want %q", in, got, want)
		}
	}
}

// chargingPayments brings n payments of paise each to CHARGING through the
// harness (order, capture, webhook, START_SESSION, session) and returns the
// START_SESSION requests, one per payment.
func (h *harness) chargingPayments(n int, paise int64) []StartRequest {
	h.t.Helper()
	var mu sync.Mutex
	var reqs []StartRequest
	h.cpo.next = func(req StartRequest, _ int) (string, *ocpi.CommandResponse, error) {
		now := h.clk.Now()
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		h.actions = append(h.actions, action{name: "session " + req.PaymentID, fn: func() error {
			return h.sessionChanged(session(req, "ACTIVE", now, h.clk.Now(), ""))
		}})
		return "CMD-" + req.PaymentID, &ocpi.CommandResponse{Result: ocpi.CommandAccepted}, nil
	}
	for range n {
		o := h.order(paise)
		h.pg.move(h.pg.attempt(o.PGOrderID, o.Amount), pg.PaymentCaptured)
	}
	h.settle()
	if len(reqs) != n {
		h.t.Fatalf("%d payments started, want %d (dropped %v)", len(reqs), n, h.dropped)
	}
	return reqs
}

// gstCDR is a CDR of req costing 100.00 incl. GST (84.75 excl.) at a
// location in state.
func gstCDR(req StartRequest, at time.Time, state string) *ocpi.CDR {
	c := cdrOf(req, at.Add(-time.Hour), at, "84.75")
	incl := ocpi.NewNumber("100.00")
	c.TotalCost.InclVAT = &incl
	c.CdrLocation = &ocpi.CdrLocation{ID: "LOC1", Name: "Kora Mall", Address: "1 Main Road", City: "Somewhere", State: state,
		Country: "IND", EVSEUID: "E1", EVSEID: "IN*CPO*E1", ConnectorID: "1"}
	return c
}

// receiptOfPayment reads a payment's receipt.
func (h *harness) receiptOfPayment(paymentID string) *receipt.Receipt {
	h.t.Helper()
	var body []byte
	if err := h.db.Read().QueryRow(h.ctx, "SELECT body FROM upi_receipts WHERE payment_id = $1", paymentID).Scan(&body); err != nil {
		h.t.Fatalf("receipt of %s: %v", paymentID, err)
	}
	var r receipt.Receipt
	if err := json.Unmarshal(body, &r); err != nil {
		h.t.Fatal(err)
	}
	return &r
}

// TestInvoiceNumbersConcurrent: 200 CDRs settle their payments at once;
// the tax invoices are numbered 1 to 200 in the financial year's series,
// with no gap and no duplicate, every number on exactly one receipt; the
// intra-state ones carry CGST + SGST and the inter-state ones IGST. Then
// an operator's refund beyond the excess corrects one receipt with a credit
// note of its own series.
func TestInvoiceNumbersConcurrent(t *testing.T) {
	t.Parallel()
	const n = 200
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		h := newHarness(t, engine)
		h.s.cfg.GST = testGST().WithDefaults()
		reqs := h.chargingPayments(n, 300_00)
		at := h.clk.Now()
		fy, code := receipt.FinancialYear(at)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i, req := range reqs {
			state := "Maharashtra"
			if i%2 == 1 {
				state = "Karnataka"
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.cdrStored(gstCDR(req, at, state)); err != nil {
					errs <- fmt.Errorf("CDR of %s: %w", req.PaymentID, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		var seqs []int
		for i, req := range reqs {
			r := h.receiptOfPayment(req.PaymentID)
			inv := r.TaxInvoice
			if inv == nil {
				t.Fatalf("receipt %s has no tax invoice", r.ID)
			}
			var seq int
			if _, err := fmt.Sscanf(inv.Number, "INV/"+code+"/%07d", &seq); err != nil || len(inv.Number) > 16 {
				t.Fatalf("invoice number %q is not INV/%s/NNNNNNN of at most 16 characters", inv.Number, code)
			}
			seqs = append(seqs, seq)
			if inv.FinancialYear != fy || inv.SupplierGSTIN != testGSTIN || inv.SAC != receipt.DefaultSAC || inv.Total != "100.00" ||
				inv.TaxableValue != "84.75" || inv.Rate != "18" || inv.QuantityKWh != "10" {
				t.Errorf("invoice %s: %+v", inv.Number, inv)
			}
			inter := i%2 == 1
			switch {
			case inter && (!inv.InterState || inv.IGST != "15.25" || inv.CGST != "0.00" || inv.SGST != "0.00" || inv.IGSTRate != "18" ||
				inv.PlaceOfSupply != "Karnataka" || inv.PlaceOfSupplyCode != "29"):
				t.Errorf("inter-state invoice %s: %+v", inv.Number, inv)
			case !inter && (inv.InterState || inv.CGST != "7.63" || inv.SGST != "7.62" || inv.IGST != "0.00" || inv.CGSTRate != "9" ||
				inv.SGSTRate != "9" || inv.PlaceOfSupply != "Maharashtra"):
				t.Errorf("intra-state invoice %s: %+v", inv.Number, inv)
			}
		}
		sort.Ints(seqs)
		for i, s := range seqs {
			if s != i+1 {
				t.Fatalf("invoice numbers are not 1..%d without gaps or duplicates: sorted %v", n, seqs)
			}
		}
		var rows, maxSeq int
		if err := h.db.Read().QueryRow(h.ctx, "SELECT COUNT(*), MAX(seq) FROM upi_invoices WHERE kind = $1", receipt.KindTaxInvoice).Scan(&rows, &maxSeq); err != nil {
			t.Fatal(err)
		}
		if rows != n || maxSeq != n {
			t.Errorf("%d invoice rows up to %d, want %d", rows, maxSeq, n)
		}

		// The CDR again changes nothing: no second number.
		if err := h.cdrStored(gstCDR(reqs[0], at, "Maharashtra")); err != nil {
			t.Fatal(err)
		}
		// An operator refund of 250.00 on a 300.00 payment that cost
		// 100.00: 200.00 is the excess, 50.00 comes off the service.
		h.settle()
		p := reqs[1].PaymentID
		if _, _, err := h.s.CreateRefund(h.ctx, refunds.RefundRequest{RefundID: "op-" + p, PaymentID: p, Paise: 50_00, Reason: "goodwill"}); err != nil {
			t.Fatal(err)
		}
		r := h.receiptOfPayment(p)
		if len(r.CreditNotes) != 1 {
			t.Fatalf("receipt after a refund beyond the excess: %d credit notes", len(r.CreditNotes))
		}
		cn := r.CreditNotes[0]
		if cn.Number != "CRN/"+code+"/0000001" || cn.Kind != receipt.KindCreditNote || cn.OriginalNumber != r.TaxInvoice.Number ||
			cn.Total != "50.00" || cn.TaxableValue != "42.37" || cn.IGST != "7.63" || !cn.InterState {
			t.Errorf("credit note: %+v", cn)
		}
		if err := h.db.Read().QueryRow(h.ctx, "SELECT COUNT(*), MAX(seq) FROM upi_invoices").Scan(&rows, &maxSeq); err != nil {
			t.Fatal(err)
		}
		if rows != n+1 {
			t.Errorf("%d GST documents, want %d", rows, n+1)
		}
	})
}

// TestInvoiceNumberRollback: a settlement that fails after taking its
// number gives the number back.
func TestInvoiceNumberRollback(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		h := newHarness(t, engine)
		h.s.cfg.GST = testGST().WithDefaults()
		reqs := h.chargingPayments(2, 300_00)
		at := h.clk.Now()
		boom := fmt.Errorf("boom")
		err := h.db.InTx(h.ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := h.s.CDRStored(ctx, tx, gstCDR(reqs[0], at, "")); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("the failing transaction: %v", err)
		}
		if err := h.cdrStored(gstCDR(reqs[1], at, "")); err != nil {
			t.Fatal(err)
		}
		_, code := receipt.FinancialYear(at)
		if inv := h.receiptOfPayment(reqs[1].PaymentID).TaxInvoice; inv == nil || inv.Number != "INV/"+code+"/0000001" || inv.InterState {
			t.Errorf("after a rolled-back settlement the next invoice is %+v, want number 1, intra-state", inv)
		}
	})
}

// errField is the field an error names ("" for none).
func errField(err error) string {
	var e *ocpi.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
