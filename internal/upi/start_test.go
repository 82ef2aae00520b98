package upi_test

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// paid scans, orders amount and pays it at the PG (captured).
func (b *bundle) paid(t *testing.T, amount string) string {
	t.Helper()
	b.qr(t)
	orderID := b.order(t, amount)
	if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	return orderID
}

// wantFullRefund checks a payment refunded in full, once, with no session.
func wantFullRefund(t *testing.T, b *bundle, p *paymentview.PaymentView, amount int64) {
	t.Helper()
	if p.Refunded != p.Captured || p.Session != nil || len(p.Refunds) != 1 || p.Refunds[0].Kind != refunds.Full {
		t.Errorf("refunded payment %+v", p)
	}
	refunds := b.pg.Refunds(p.PGPaymentID)
	if len(refunds) != 1 || refunds[0].Amount != amount || refunds[0].Status != "processed" || refunds[0].Key != p.ID+"-FULL" {
		t.Errorf("refunds at the PG: %+v", refunds)
	}
	st, err := b.h.UPI.OrderStatus(b.ctx, mustOrder(t, b, p))
	if err != nil || st.Stage != upi.StageRefunded || !st.Final {
		t.Errorf("status page: %+v %v", st, err)
	}
}

func mustOrder(t *testing.T, b *bundle, p *paymentview.PaymentView) *orders.Order {
	t.Helper()
	var id string
	if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT o.id FROM upi_orders o JOIN upi_payments p ON p.order_pk = o.pk WHERE p.id = $1", p.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	o, err := b.h.UPI.Order(b.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestStartFailures: every way START_SESSION can fail ends in a full refund
// of the capture, once, and no session: the CPO answers REJECTED, its
// result is EVSE_OCCUPIED, it stays silent (the command times out), or it
// accepts but no session follows within the deadline.
func TestStartFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		behavior sim.CommandBehavior
		response string // the payment's command response
		result   string // the payment's command result
		deadline time.Duration
	}{
		{"rejected", sim.CommandBehavior{Response: ocpi.CommandRejected}, ocpi.CommandRejected, "", 0},
		{"occupied", sim.CommandBehavior{Result: "EVSE_OCCUPIED"}, ocpi.CommandAccepted, "EVSE_OCCUPIED", 0},
		// The hub waits 2 s for the CPO's answer, then 2 s + 1 s for the
		// result: the session deadline is longer.
		{"silent", sim.CommandBehavior{Silent: true}, "NO_ANSWER", "TIMEOUT", 0},
		{"no session", sim.CommandBehavior{Manual: true}, ocpi.CommandAccepted, ocpi.CommandAccepted, 1500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, b *bundle) {
				b.cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior { return c.behavior })
				orderID := b.paid(t, "300")
				p := b.waitStatus(t, orderID, paymentrow.StatusRefunded)
				wantFullRefund(t, b, p, 300_00)
				if p.Command == nil || p.Command.Response != c.response || p.Command.Result != c.result {
					t.Errorf("command %+v, want response %s result %s", p.Command, c.response, c.result)
				}
				if n := b.starts(); n != 1 {
					t.Errorf("%d START_SESSION, want 1", n)
				}
			}, func(cfg *app.Config) { cfg.UPISessionDeadline = c.deadline })
		})
	}
}

// TestCrashBeforeStart: the hub stops after the capture was stored and
// before START_SESSION was sent; after the restart the session starts, once.
func TestCrashBeforeStart(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID := b.paid(t, "500")
		b.waitStatus(t, orderID, paymentrow.StatusCaptured)
		b.h.Close()
		if n := b.starts(); n != 0 {
			t.Fatalf("START_SESSION sent before the stop (%d): the test did not stop the hub in time", n)
		}
		b.h.Restart(t)
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Command != nil && p.Command.Response != "" })
		if n := b.starts(); n != 1 {
			t.Errorf("%d START_SESSION after the restart, want 1", n)
		}
		if p.Command == nil || p.Command.Response != ocpi.CommandAccepted {
			t.Errorf("command %+v", p.Command)
		}
	}, func(c *app.Config) { c.UPIStartDelay = 3 * time.Second })
}

// TestSecondPaymentRefunded: on a live hub with the PG simulator, a second
// payment captured on an order whose first payment started the session is
// recorded with its amount and refunded in full, once; the session of the
// first goes on.
func TestSecondPaymentRefunded(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.pg.SetOverpayment(true)
		orderID := b.paid(t, "300")
		first := b.waitStatus(t, orderID, paymentrow.StatusCharging)
		pay, err := b.pg.Attempt(b.ctx, b.pgOrder(t, orderID).ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pg.Capture(b.ctx, pay.ID); err != nil {
			t.Fatal(err)
		}
		var p *paymentview.PaymentView
		eventually(t, "the second payment refunded", func() bool {
			var id string
			if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT id FROM upi_payments WHERE pg_payment_id = $1", pay.ID).Scan(&id); err != nil {
				return false
			}
			p, err = b.h.UPI.Payment(b.ctx, id)
			return err == nil && p.Status == paymentrow.StatusRefunded
		})
		if p.Captured != "300.00" || p.Refunded != "300.00" || p.Session != nil || len(p.Refunds) != 1 || p.Refunds[0].Kind != refunds.Full {
			t.Errorf("second payment %+v", p)
		}
		if refunds := b.pg.Refunds(pay.ID); len(refunds) != 1 || refunds[0].Amount != 300_00 || refunds[0].Key != p.ID+"-FULL" {
			t.Errorf("refunds at the PG: %+v", refunds)
		}
		if n := b.starts(); n != 1 {
			t.Errorf("%d START_SESSION, want 1", n)
		}
		if now := b.payment(t, orderID); now == nil || now.ID != first.ID || now.Status != paymentrow.StatusCharging {
			t.Errorf("the order's payment: %+v", now)
		}
	})
}
