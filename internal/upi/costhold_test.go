package upi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
)

// tooHigh is a session whose CDR charges 10 % more than the connector's
// tariff T1 (18.50 per kWh, 18 % VAT): 12.5 kWh cost 231.25 + VAT =
// 272.875, which the hub settles as ₹272.88; the CDR says 254.38 / 300.16.
var tooHigh = sim.SessionPlan{KWh: "12.5", CostExclVAT: "254.38", CostInclVAT: "300.16"}

// held pays ₹500, charges as tooHigh and waits until the payment is held.
func (b *bundle) held(t *testing.T) (orderID string, p *paymentview.PaymentView) {
	t.Helper()
	b.cpo.SetPlan(tooHigh)
	orderID, p = b.charging(t, "500")
	b.stop(t, p.Session.ID)
	p = b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Attention == upi.AttentionCostMismatch })
	return orderID, p
}

// TestCostMismatchHold: with the default policy a UPI payment whose CDR the
// hub flagged neither settles nor refunds; the operator sees both totals,
// must pick one, and the payment then settles exactly once however many
// times (and however concurrently) the decision is sent; another decision
// afterwards is refused.
func TestCostMismatchHold(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID, p := b.held(t)
		if h := p.CostHold; h == nil || h.CDRTotal != "300.16" || h.HubTotal != "272.88" || h.SettledOn != "" || h.CDRID != p.CDR.ID {
			t.Fatalf("cost hold %+v", p.CostHold)
		}
		if len(p.Refunds) != 0 || p.Receipt != nil || p.Cost != "0.00" {
			t.Errorf("a held payment settled: %+v", p)
		}
		evs, err := b.events.Wait(b.ctx, event.PaymentNeedsAttention, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := evs[0].Data.(map[string]any); d["reason"] != upi.AttentionCostMismatch || !strings.Contains(d["description"].(string), "300.16") ||
			!strings.Contains(d["description"].(string), "272.88") {
			t.Errorf("payment.needs_attention %v", d)
		}
		st, err := b.h.UPI.OrderStatus(b.ctx, mustOrder(t, b, p))
		if err != nil || st.Stage != upi.StageCharging || !strings.Contains(st.Message, "checking it") {
			t.Errorf("the driver's status page while held: %+v %v", st, err)
		}
		list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?attention=true", nil))
		if len(list) != 1 || list[0].ID != p.ID || list[0].CostHold == nil || list[0].CostHold.HubTotal != "272.88" {
			t.Errorf("attention list %+v", list)
		}

		resolve := upiBase + "/payments/" + p.ID + "/resolve"
		hubtest.WantError(t, "resolve without a decision", b.h.AdminDo(t, http.MethodPost, resolve, map[string]any{"note": "looked at it"}),
			http.StatusOK, ocpi.StatusInvalidParams, "settle_on")
		hubtest.WantError(t, "an unknown decision", b.h.AdminDo(t, http.MethodPost, resolve, map[string]any{"note": "x", "settle_on": "half"}),
			http.StatusOK, ocpi.StatusInvalidParams, "settle_on")
		if p := b.payment(t, orderID); p.Attention != upi.AttentionCostMismatch || p.CostHold.SettledOn != "" {
			t.Fatalf("a refused resolve changed the payment: %+v", p)
		}

		// Four operators settle on the hub's price at once: one settlement,
		// the others answer the settled payment.
		var wg sync.WaitGroup
		codes := make([]int, 4)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := b.h.AdminDo(t, http.MethodPost, resolve, map[string]any{"note": "the CPO's tariff T1 says 18.50", "settle_on": "hub"})
				if resp.Envelope != nil {
					codes[i] = resp.Envelope.StatusCode
				}
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != ocpi.StatusSuccess {
				t.Errorf("resolve %d: status_code %d", i, c)
			}
		}
		p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone, func(p *paymentview.PaymentView) bool { return p.Receipt != nil })
		if p.Cost != "272.88" || p.Refunded != "227.12" || len(p.Refunds) != 1 || p.Attention != "" || p.CostHold.SettledOn != "hub" ||
			p.CostHold.DecidedBy != "operator" {
			t.Errorf("settled %+v %+v", p, p.CostHold)
		}
		settles := 0
		for _, a := range p.Audit {
			if strings.HasPrefix(a.Note, "settle on the hub's price") {
				settles++
			}
		}
		if settles != 1 {
			t.Errorf("%d operator settlements in the audit trail, want 1: %+v", settles, p.Audit)
		}
		if n := b.rows(t, "upi_receipts"); n != 1 {
			t.Errorf("%d receipts", n)
		}
		if evs, err := b.events.Wait(b.ctx, event.ReceiptIssued, 1); err != nil || len(evs) != 1 {
			t.Errorf("%d receipt.issued events (%v)", len(evs), err)
		}

		// The same decision later changes nothing; another one is refused.
		again := data[paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodPost, resolve, map[string]any{"note": "again", "settle_on": "hub"}))
		if again.Refunded != "227.12" || len(again.Refunds) != 1 {
			t.Errorf("repeat %+v", again)
		}
		hubtest.WantError(t, "another decision", b.h.AdminDo(t, http.MethodPost, resolve, map[string]any{"note": "no, the CDR", "settle_on": "cdr"}),
			http.StatusOK, ocpi.StatusInvalidParams, "settle_on")
		if n := b.pg.Calls(pgsim.APIRefund); n != 1 {
			t.Errorf("%d refund calls at the PG, want 1", n)
		}
	})
}

// TestCostMismatchPolicies: the hub can be told to settle flagged CDRs on
// the CDR's total or on its own price without waiting; the decision is
// kept with both totals. A payment that is not held refuses a decision.
func TestCostMismatchPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ policy, cost, refunded string }{
		{upi.MismatchCDR, "300.16", "199.84"},
		{upi.MismatchHub, "272.88", "227.12"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, b *bundle) {
				b.cpo.SetPlan(tooHigh)
				orderID, p := b.charging(t, "500")
				b.stop(t, p.Session.ID)
				p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone, func(p *paymentview.PaymentView) bool { return p.Receipt != nil })
				if p.Cost != tc.cost || p.Refunded != tc.refunded || p.Attention != "" || p.CostHold == nil ||
					p.CostHold.SettledOn != tc.policy || p.CostHold.DecidedBy != "policy" || p.CostHold.CDRTotal != "300.16" {
					t.Errorf("settled %+v %+v", p, p.CostHold)
				}
				hubtest.WantError(t, "a decision on a settled payment", b.h.AdminDo(t, http.MethodPost, upiBase+"/payments/"+p.ID+"/resolve",
					map[string]any{"note": "x", "settle_on": other(tc.policy)}), http.StatusOK, ocpi.StatusInvalidParams, "settle_on")
			}, func(c *app.Config) { c.UPICostMismatch = tc.policy })
		})
	}
	t.Run("not held", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			orderID, p := b.charging(t, "500")
			b.stop(t, p.Session.ID)
			p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone)
			if p.CostHold != nil {
				t.Errorf("a CDR the hub agrees with left a cost hold: %+v", p.CostHold)
			}
			hubtest.WantError(t, "a decision on a payment not held", b.h.AdminDo(t, http.MethodPost, upiBase+"/payments/"+p.ID+"/resolve",
				map[string]any{"note": "x", "settle_on": "cdr"}), http.StatusOK, ocpi.StatusInvalidParams, "settle_on")
		})
	})
}

func other(policy string) string {
	if policy == upi.MismatchCDR {
		return upi.MismatchHub
	}
	return upi.MismatchCDR
}
