package upi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
)

// charging pays amount and waits for the session.
func (b *bundle) charging(t *testing.T, amount string) (string, *paymentview.PaymentView) {
	t.Helper()
	orderID := b.paid(t, amount)
	return orderID, b.waitStatus(t, orderID, paymentrow.StatusCharging)
}

// TestReconciliation settles sessions against their CDRs: an excess below
// ₹1.00 is not refundable (and the receipt is e-mailed), a cost above the
// capture is a shortfall for the operator, and a CDR that does not come
// raises cdr.missing until it comes late.
func TestReconciliation(t *testing.T) {
	t.Parallel()
	t.Run("excess below one rupee", func(t *testing.T) {
		t.Parallel()
		srv := startSMTP(t)
		each(t, func(t *testing.T, b *bundle) {
			b.cpo.SetPlan(sim.SessionPlan{KWh: "22.75", CostExclVAT: "423.31", CostInclVAT: "499.505"})
			orderID, p := b.charging(t, "500")
			b.stop(t, p.Session.ID)
			p = b.waitStatus(t, orderID, paymentrow.StatusSettled)
			// 499.505 rounds half away from zero to 499.51.
			if p.Cost != "499.51" || p.NotRefundable != "0.49" || p.Refunded != "0.00" || len(p.Refunds) != 0 || p.Attention != "" {
				t.Errorf("settled %+v", p)
			}
			rc, err := b.h.UPI.Receipt(b.ctx, p.Receipt.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rc.Amount != "500.00" || rc.EnergyKWh != "22.75" || rc.CDRID != p.CDR.ID || rc.PaymentID != p.ID || rc.NotRefundable != "0.49" ||
				rc.Timestamp.IsZero() || rc.PayerVPA != "dr****@okpgsim" || rc.LocationName != "Koramangala Hub" {
				t.Errorf("receipt %+v", rc)
			}
			// Both engines' hubs mail to this server: find this one's.
			eventually(t, "the receipt mail", func() bool {
				for _, m := range srv.wait(b.ctx, 1) {
					if m.To == "driver@example.in" && strings.Contains(m.Data, rc.URL) {
						return true
					}
				}
				return false
			})
		}, func(c *app.Config) { c.SMTPAddr, c.SMTPFrom, c.SMTPTLS = srv.Addr(), "receipts@ocpihub.test", "none" })
	})
	t.Run("shortfall", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			b.cpo.SetPlan(sim.SessionPlan{KWh: "27.3", CostExclVAT: "508.47", CostInclVAT: "600.00"})
			orderID, p := b.charging(t, "500")
			b.stop(t, p.Session.ID)
			p = b.waitStatus(t, orderID, paymentrow.StatusSettled)
			if p.Shortfall != "100.00" || p.Attention != paymentrow.AttentionShortfall || len(p.Refunds) != 0 {
				t.Errorf("settled %+v", p)
			}
			evs, err := b.events.Wait(b.ctx, event.PaymentNeedsAttention, 1)
			if err != nil || evs[0].Data.(map[string]any)["reason"] != paymentrow.AttentionShortfall {
				t.Errorf("attention events %v %v", evs, err)
			}
			if list := data[[]paymentview.PaymentView](t, b.h.AdminDo(t, http.MethodGet, upiBase+"/payments?attention=true", nil)); len(list) != 1 || list[0].ID != p.ID {
				t.Errorf("attention list %v", list)
			}
		})
	})
	t.Run("cdr missing, then late", func(t *testing.T) {
		t.Parallel()
		each(t, func(t *testing.T, b *bundle) {
			orderID, p := b.charging(t, "500")
			now := ocpi.NewDateTime(time.Now())
			if err := b.cpo.PatchSession(b.ctx, p.Session.ID, map[string]any{"status": "COMPLETED", "end_date_time": now, "kwh": 12.5,
				"last_updated": now}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.events.Wait(b.ctx, event.CDRMissing, 1); err != nil {
				t.Fatal(err)
			}
			p = b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Attention == paymentrow.AttentionCDRMissing })
			st, err := b.h.UPI.OrderStatus(b.ctx, mustOrder(t, b, p))
			if err != nil || st.Stage != upi.StageCharging || !strings.Contains(st.Title, "finished") {
				t.Errorf("status page while the CDR is missing: %+v %v", st, err)
			}
			b.stop(t, p.Session.ID)
			p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone)
			if p.Attention != "" || p.Refunded != "227.12" {
				t.Errorf("settled late %+v", p)
			}
		}, func(c *app.Config) { c.UPICDRDeadline = time.Second })
	})
}
