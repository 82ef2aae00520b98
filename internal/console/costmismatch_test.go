package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestCostMismatchEndToEnd: the CPO simulator sends a CDR whose total is
// 10 % above its own tariff. The hub flags it (a signed cdr.cost_mismatch
// webhook reaches the operator's receiver, the console's CDR list shows
// it), and the UPI payment it would settle waits on the attention tab with
// both totals until the operator settles it on the hub's price in the
// console: then the excess is refunded once and a receipt issued.
func TestCostMismatchEndToEnd(t *testing.T) {
	t.Parallel()
	eachPG(t, func(t *testing.T, h *hubtest.Hub, pg *pgsim.Server) {
		b := newPayments(t, h, pg)
		rcv := hubtest.StartWebhookReceiver(t)
		var sub webhook.Subscription
		if resp := h.Admin(t, http.MethodPost, "/ocpi/2.2.1/webhooks", map[string]any{"url": rcv.URL(),
			"events": []string{"cdr.cost_mismatch", "payment.needs_attention"}}, &sub); resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("subscribe: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}

		// T1: 18.50 per kWh, 18 % VAT; 12.5 kWh cost 231.25 + VAT =
		// 272.875 (₹272.88). The CDR carries T1 and says 10 % more.
		t1 := hubtest.Tariff("IN", "ACM", "T1", "2026-01-01T00:00:00Z")
		b.cpo.SetPlan(sim.SessionPlan{KWh: "12.5", CostExclVAT: "254.38", CostInclVAT: "300.16", Tariffs: []map[string]any{t1}})
		p := b.pay(t, "500", pgsim.Captured, func(p *paymentview.PaymentView) bool {
			return p.Status == paymentrow.StatusCharging && p.Session != nil
		})
		hubtest.Eventually(t, b.ctx, "the CPO's copy of the session", func() bool { return b.cpo.Session(p.Session.ID) != nil })
		if err := b.cpo.StopSession(b.ctx, p.Session.ID); err != nil {
			t.Fatal(err)
		}
		p = b.waitPayment(t, p.ID, func(p *paymentview.PaymentView) bool { return p.Attention == upi.AttentionCostMismatch })
		if p.Status != paymentrow.StatusCharging || len(p.Refunds) != 0 || p.Receipt != nil {
			t.Fatalf("a held payment moved on: %+v", p)
		}

		// The webhook: signed with the subscription's secret, both totals.
		var mismatch *webhooksim.Delivery
		hubtest.Eventually(t, b.ctx, "the cdr.cost_mismatch webhook", func() bool {
			for _, d := range rcv.Deliveries() {
				if d.Payload.Event == "cdr.cost_mismatch" {
					mismatch = &d
					return true
				}
			}
			return false
		})
		if err := webhook.Verify(sub.Secret, mismatch.Header, mismatch.Body); err != nil {
			t.Errorf("cdr.cost_mismatch does not verify: %v", err)
		}
		var d struct {
			CDRID string `json:"cdr_id"`
			CDR   struct {
				InclVAT json.Number `json:"incl_vat"`
			} `json:"cdr_total_cost"`
			Hub struct {
				InclVAT json.Number `json:"incl_vat"`
			} `json:"hub_total_cost"`
		}
		if err := json.Unmarshal(mismatch.Payload.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.CDRID != p.CDR.ID || d.CDR.InclVAT != "300.16" || d.Hub.InclVAT != "272.875" {
			t.Errorf("cdr.cost_mismatch data %s", mismatch.Payload.Data)
		}

		c := signedIn(t, h)
		cdrs := c.get("/console/cdrs?price=mismatch")
		if !strings.Contains(cdrs.body, p.CDR.ID) || !strings.Contains(cdrs.body, "price mismatch") {
			t.Errorf("the CDR list lacks the flagged CDR:\n%s", cdrs.body)
		}
		if ok := c.get("/console/cdrs?price=ok"); strings.Contains(ok.body, p.CDR.ID) {
			t.Errorf("price=ok lists the flagged CDR")
		}
		att := c.get("/console/payments/attention")
		if !strings.Contains(att.body, p.ID) || !strings.Contains(att.body, "CDR ₹300.16 · hub ₹272.88") {
			t.Errorf("the attention tab lacks the held payment and its totals:\n%s", att.body)
		}
		page := c.get("/console/payments/" + p.ID)
		for _, want := range []string{`id="cost-hold"`, `id="settle-cdr"`, `id="settle-hub"`, "Settle on the hub's ₹272.88", "Settle on the CDR's ₹300.16"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("the payment page lacks %q", want)
			}
		}
		if strings.Contains(page.body, `id="resolve"`) {
			t.Errorf("a held payment offers a plain resolve")
		}
		res := c.do(http.MethodPost, "/console/payments/"+p.ID+"/resolve", url.Values{"csrf": {csrf(t, page)}, "note": {"T1 is 18.50 per kWh"}, "settle_on": {"hub"}})
		if res.status != http.StatusSeeOther {
			t.Fatalf("settle: HTTP %d %s", res.status, res.body)
		}
		if after := c.get(res.location); !strings.Contains(after.body, "settled on the hub") {
			t.Errorf("after settling:\n%s", after.body)
		}
		p = b.waitPayment(t, p.ID, func(p *paymentview.PaymentView) bool {
			// The view reads the payment and its refunds one after the
			// other: wait for the payment's total to follow its refund.
			return p.Status == paymentrow.StatusSettled && p.Receipt != nil && len(p.Refunds) == 1 && p.Refunds[0].Status == refunds.Processed &&
				p.RefundPending == "0.00"
		})
		if p.Cost != "272.88" || p.Refunded != "227.12" || p.Attention != "" {
			t.Errorf("settled %+v", p)
		}
		if att := c.get("/console/payments/attention"); strings.Contains(att.body, p.ID) {
			t.Errorf("the settled payment is still on the attention tab")
		}
	})
}
