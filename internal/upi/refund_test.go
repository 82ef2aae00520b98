package upi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// TestRefundPGFailures: the PG's refund API failing (5xx, 429) leaves the refund
// QUEUED and the job retries with the same key until it is processed,
// exactly once; a lost answer does not refund twice; a definitive refusal
// marks the refund FAILED for the operator and releases its amount.
func TestRefundPGFailures(t *testing.T) {
	t.Parallel()
	reject := func(string, map[string]any) sim.CommandBehavior {
		return sim.CommandBehavior{Response: ocpi.CommandRejected}
	}
	t.Run("down", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			b.cpo.OnCommand(reject)
			b.pg.FailNext(pgsim.APIRefund, 2, pgsim.Unavailable())
			b.pg.FailNext(pgsim.APIRefund, 1, pgsim.RateLimited(time.Second))
			orderID := b.paid(t, "400")
			p := b.waitStatus(t, orderID, paymentrow.StatusRefunded)
			wantFullRefund(t, b, p, 400_00)
			if n := b.pg.Calls(pgsim.APIRefund); n != 4 {
				t.Errorf("%d refund calls, want 4 (3 failed)", n)
			}
			if r := p.Refunds[0]; r.Attempts != 3 || r.Status != refunds.Processed || r.LastError != "" {
				t.Errorf("refund %+v", r)
			}
			// Events are kept once their transaction commits, just after
			// the state the wait above saw: waited for, then counted.
			if evs, err := b.events.Wait(b.ctx, event.RefundProcessed, 1); err != nil || len(evs) != 1 {
				t.Errorf("%d refund.processed events (%v)", len(evs), err)
			}
		})
	})
	t.Run("answer lost", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			b.cpo.OnCommand(reject)
			b.pg.FailNext(pgsim.APIRefund, 1, pgsim.ServerError().Committed())
			orderID := b.paid(t, "400")
			p := b.waitStatus(t, orderID, paymentrow.StatusRefunded)
			wantFullRefund(t, b, p, 400_00)
		})
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			b.cpo.OnCommand(reject)
			b.pg.RefuseRefunds("BAD_REQUEST_ERROR", "The payment is too old to refund")
			orderID := b.paid(t, "400")
			p := b.waitStatus(t, orderID, paymentrow.StatusRefunding, func(p *paymentview.PaymentView) bool { return p.Attention != "" })
			if p.Attention != paymentrow.AttentionRefundFailed || len(p.Refunds) != 1 || p.Refunds[0].Status != refunds.Failed ||
				!strings.Contains(p.Refunds[0].LastError, "too old") || p.RefundPending != "0.00" || p.Refunded != "0.00" {
				t.Errorf("payment after a refused refund %+v", p)
			}
			if _, err := b.events.Wait(b.ctx, event.RefundFailed, 1); err != nil {
				t.Error(err)
			}
			// The operator retries with a new refund id once the PG takes
			// refunds again; the payment completes.
			b.pg.ClearFaults()
			resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/refunds", map[string]any{"refund_id": "op-retry-0001", "payment_id": p.ID,
				"refund_amount": "400.00", "reason": "retry after the PG refused"})
			if resp.HTTPStatus != http.StatusCreated {
				t.Fatalf("operator refund: HTTP %d %s", resp.HTTPStatus, resp.Body)
			}
			p = b.waitStatus(t, orderID, paymentrow.StatusRefunded)
			if p.Refunded != "400.00" {
				t.Errorf("refunded %s", p.Refunded)
			}
			if list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments/attention", nil)); len(list) != 1 {
				t.Errorf("%d payments need attention, want 1", len(list))
			}
			hubtest.WantError(t, "resolve without a note", b.h.AdminDo(t, http.MethodPost, upiBase+"/payments/"+p.ID+"/resolve", map[string]any{}),
				http.StatusOK, ocpi.StatusInvalidParams, "note")
			resolved := data[paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodPost, upiBase+"/payments/"+p.ID+"/resolve",
				map[string]any{"note": "refunded by hand"}))
			if resolved.Attention != "" {
				t.Errorf("resolved %+v", resolved)
			}
			if list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments/attention", nil)); len(list) != 0 {
				t.Errorf("%d payments need attention after resolving", len(list))
			}
		})
	})
}

// TestOperatorRefunds: the refunds API validates, is idempotent on
// refund_id, and keeps the sum of refunds within the capture under
// concurrency; the CDR then finds the capture short and records the
// shortfall for the operator.
func TestOperatorRefunds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID := b.paid(t, "500")
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
		post := func(body any) *ocpiclient.Response { return b.h.AdminDo(t, http.MethodPost, upiBase+"/refunds", body) }

		resp := post(map[string]any{"refund_id": "op-first-refund", "payment_id": strings.ToLower(p.ID), "refund_amount": "100.00", "reason": "goodwill"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("refund: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		r := data[refunds.Refund](t, resp)
		// The answer reads the refund back after the commit: the refund
		// worker may already have sent it.
		if r.RefundID != "op-first-refund" || r.Amount != "100.00" || !slices.Contains([]string{refunds.Queued, refunds.Pending, refunds.Processed}, r.Status) ||
			r.Kind != refunds.Operator {
			t.Errorf("refund %+v", r)
		}
		eventually(t, "refund processed", func() bool {
			got, _ := b.h.UPI.Refund(b.ctx, "op-first-refund")
			return got != nil && got.Status == refunds.Processed
		})
		calls := b.pg.Calls(pgsim.APIRefund)
		again := post(map[string]any{"refund_id": "op-first-refund", "payment_id": p.ID, "refund_amount": 100, "reason": "goodwill"})
		if again.HTTPStatus != http.StatusOK || data[refunds.Refund](t, again).Status != refunds.Processed || b.pg.Calls(pgsim.APIRefund) != calls {
			t.Errorf("repeated refund: HTTP %d %s, %d PG calls (was %d)", again.HTTPStatus, again.Body, b.pg.Calls(pgsim.APIRefund), calls)
		}

		before := b.rows(t, "upi_refunds")
		bad := []badRequest{
			{"same id, other amount", map[string]any{"refund_id": "op-first-refund", "payment_id": p.ID, "refund_amount": "50.00"},
				http.StatusConflict, ocpi.StatusInvalidParams, "refund_id"},
			{"no refund_id", map[string]any{"payment_id": p.ID, "refund_amount": "5.00"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_id"},
			{"bad refund_id", map[string]any{"refund_id": "a b", "payment_id": p.ID, "refund_amount": "5.00"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_id"},
			{"no payment_id", map[string]any{"refund_id": "op-x1", "refund_amount": "5.00"}, http.StatusOK, ocpi.StatusInvalidParams, "payment_id"},
			{"unknown payment", map[string]any{"refund_id": "op-x2", "payment_id": "UPINOPE", "refund_amount": "5.00"}, http.StatusNotFound, ocpi.StatusClientError, "payment_id"},
			{"no amount", map[string]any{"refund_id": "op-x3", "payment_id": p.ID}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"three decimals", map[string]any{"refund_id": "op-x4", "payment_id": p.ID, "refund_amount": "1.005"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"float exponent", map[string]any{"refund_id": "op-x5", "payment_id": p.ID, "refund_amount": json.RawMessage("1e2")}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"below ₹1.00", map[string]any{"refund_id": "op-x6", "payment_id": p.ID, "refund_amount": "0.99"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"negative", map[string]any{"refund_id": "op-x7", "payment_id": p.ID, "refund_amount": "-5.00"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"more than remains", map[string]any{"refund_id": "op-x8", "payment_id": p.ID, "refund_amount": "400.01"}, http.StatusOK, ocpi.StatusInvalidParams, "refund_amount"},
			{"long reason", map[string]any{"refund_id": "op-x9", "payment_id": p.ID, "refund_amount": "5.00", "reason": strings.Repeat("r", 256)},
				http.StatusOK, ocpi.StatusInvalidParams, "reason"},
			{"not JSON", []byte("refund_id=x"), http.StatusBadRequest, ocpi.StatusInvalidParams, ""},
		}
		for _, c := range bad {
			hubtest.WantError(t, c.what, post(c.body), c.http, c.code, c.field)
		}
		if n := b.rows(t, "upi_refunds"); n != before {
			t.Errorf("refused refunds stored: %d rows, want %d", n, before)
		}

		// 20 refunds of ₹30.00 at once on the ₹400.00 that remain: 13 fit.
		var wg sync.WaitGroup
		var mu sync.Mutex
		created := 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/refunds", map[string]any{"refund_id": fmt.Sprintf("op-burst-%02d", i),
					"payment_id": p.ID, "refund_amount": "30.00"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case resp.HTTPStatus == http.StatusCreated:
					created++
				case resp.Envelope == nil || resp.Envelope.StatusCode != ocpi.StatusInvalidParams:
					t.Errorf("burst refund: HTTP %d %s", resp.HTTPStatus, resp.Body)
				}
			}()
		}
		wg.Wait()
		if created != 13 {
			t.Errorf("%d concurrent refunds accepted, want 13", created)
		}
		p = b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Refunded == "490.00" })
		if len(b.pg.Refunds(p.PGPaymentID)) != 14 {
			t.Errorf("%d refunds at the PG, want 14", len(b.pg.Refunds(p.PGPaymentID)))
		}

		// The session costs ₹272.88, the capture keeps ₹10.00: a shortfall.
		b.stop(t, p.Session.ID)
		p = b.waitStatus(t, orderID, paymentrow.StatusSettled)
		if p.Shortfall != "262.88" || p.Attention != paymentrow.AttentionShortfall || p.Cost != "272.88" || p.Refunded != "490.00" {
			t.Errorf("settled with a shortfall: %+v", p)
		}
		if _, err := b.events.Wait(b.ctx, event.PaymentNeedsAttention, 1); err != nil {
			t.Error(err)
		}
		captured, _ := pg.ParseRupees(p.Captured)
		cost, _ := pg.ParseRupees(p.Cost)
		refunded, _ := pg.ParseRupees(p.Refunded)
		short, _ := pg.ParseRupees(p.Shortfall)
		if captured != cost+refunded-short {
			t.Errorf("captured %d ≠ cost %d + refunded %d − shortfall %d", captured, cost, refunded, short)
		}
		// Filters of the payments list.
		if list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?status=SETTLED", nil)); len(list) != 1 {
			t.Errorf("%d settled payments", len(list))
		}
		if list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?status=FAILED", nil)); len(list) != 0 {
			t.Errorf("%d failed payments", len(list))
		}
		hubtest.WantError(t, "list by a bad status", b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?status=GONE", nil), http.StatusOK, ocpi.StatusInvalidParams, "status")
		hubtest.WantError(t, "list by a bad flag", b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?attention=maybe", nil), http.StatusOK, ocpi.StatusInvalidParams, "attention")
		hubtest.WantError(t, "unknown payment", b.h.AdminDo(t, http.MethodGet, upiBase+"/payments/UPINOPE", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		hubtest.WantError(t, "refunds by a bad status", b.h.AdminDo(t, http.MethodGet, upiBase+"/refunds?status=DONE", nil), http.StatusOK, ocpi.StatusInvalidParams, "status")
		hubtest.WantError(t, "refunds with a bad limit", b.h.AdminDo(t, http.MethodGet, upiBase+"/refunds?limit=zero", nil), http.StatusOK, ocpi.StatusInvalidParams, "limit")
		hubtest.WantError(t, "unknown refund", b.h.AdminDo(t, http.MethodGet, upiBase+"/refunds/nope", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		if list := data[[]refunds.Refund](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/refunds?payment_id="+p.ID+"&status=processed", nil)); len(list) != 14 {
			t.Errorf("%d processed refunds of the payment", len(list))
		}
	})
}
