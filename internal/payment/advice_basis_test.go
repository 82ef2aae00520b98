package payment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestAdviceComparedOnOneBasis: a confirmation whose amount incl. VAT is
// below its amount excl. VAT is refused; one whose incl. VAT is 50 times
// the CDR's cost while the CDR gives no incl_vat is flagged as unverified
// (its excl. VAT matches); a second capture for the same reference is
// flagged as a duplicate.
func TestAdviceComparedOnOneBasis(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp := b.ctx, b.ptp
		pay(t, b, "pay-vat")

		// incl_vat < excl_vat: refused, nothing stored.
		bad, err := ptp.Advice("FAC-LOW", "pay-vat", "")
		if err != nil {
			t.Fatal(err)
		}
		costs := bad["total_costs"].(map[string]any)
		costs["incl_vat"] = json.Number("1.00")
		resp, err := ptp.Confirm(ctx, bad)
		refused(t, resp, err, http.StatusOK, 2001, "total_costs")
		var n int
		if err := b.h.DB.Read().QueryRow(ctx, "SELECT COUNT(*) FROM financial_advice").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d confirmations stored after a refusal (%v)", n, err)
		}

		// The CDR gives no incl_vat (as a CPO may): the confirmation's 50x
		// incl_vat cannot pass on its matching excl_vat alone.
		if err := b.h.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			n, err := tx.Exec(ctx, "UPDATE direct_payments SET cdr_total_incl = '' WHERE authorization_reference = 'PAY-VAT' AND cdr_id <> ''")
			if err == nil && n != 1 {
				err = fmt.Errorf("%d payments updated", n)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		inflated, err := ptp.Advice("FAC-50X", "pay-vat", "")
		if err != nil {
			t.Fatal(err)
		}
		costs = inflated["total_costs"].(map[string]any)
		costs["incl_vat"] = json.Number("13644.00")
		resp, err = ptp.Confirm(ctx, inflated)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		events, err := b.events.Wait(ctx, event.FinancialAdviceFlagged, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := events[0].Data.(map[string]any)
		if d["reason"] != payment.FlagAmountUnverified || !strings.Contains(d["detail"].(string), "13644") {
			t.Errorf("the 50x confirmation: %v", d)
		}

		// A second capture for the same reference.
		again, _ := ptp.Advice("FAC-2ND", "pay-vat", "")
		resp, err = ptp.Confirm(ctx, again)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		events, err = b.events.Wait(ctx, event.FinancialAdviceFlagged, 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := events[1].Data.(map[string]any); d["reason"] != payment.FlagDuplicateCapture || d["id"] != "FAC-2ND" {
			t.Errorf("the second capture: %v", d)
		}
		reasons := map[string]string{}
		for _, a := range flagged(t, b.h) {
			reasons[a.ID] = a.Flag
		}
		if reasons["FAC-50X"] != payment.FlagAmountUnverified || reasons["FAC-2ND"] != payment.FlagDuplicateCapture || len(reasons) != 2 {
			t.Errorf("flagged: %v", reasons)
		}
		if n := counter(t, b.h, "ocpihub_payment_advice_flagged_total", payment.FlagDuplicateCapture); n != 1 {
			t.Errorf("duplicate_capture metric %v", n)
		}
	})
}
