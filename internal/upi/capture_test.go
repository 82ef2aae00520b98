package upi

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// acceptAll makes the CPO accept every START_SESSION and start its session.
func (h *harness) acceptAll() {
	h.cpo.next = func(req StartRequest, _ int) (string, *ocpi.CommandResponse, error) {
		now := h.clk.Now()
		h.actions = append(h.actions, action{name: "session " + req.PaymentID, fn: func() error {
			return h.sessionChanged(session(req, "ACTIVE", now, h.clk.Now(), ""))
		}})
		return "CMD-" + req.PaymentID, &ocpi.CommandResponse{Result: ocpi.CommandAccepted}, nil
	}
}

// order creates an order of amount paise on the sticker.
func (h *harness) order(paise int64) *orders.Order {
	h.t.Helper()
	o, err := h.s.CreateOrder(h.ctx, orders.Request{QRRef: hQRRef, Paise: paise, Phone: h.phone, PhoneConsent: h.phone != ""})
	if err != nil {
		h.t.Fatal(err)
	}
	return o
}

// wantRefundedInFull checks that the PG payment was recorded with its
// capture and refunded in full, once, through the refund queue, with no
// session.
func (h *harness) wantRefundedInFull(what, pgPaymentID string, amount pg.Amount) {
	h.t.Helper()
	p := h.paymentByPG(pgPaymentID)
	if p == nil {
		h.t.Fatalf("%s: no payment row for the captured PG payment %s (dropped jobs: %v)", what, pgPaymentID, h.dropped)
	}
	if p.Status != paymentrow.StatusRefunded || p.Captured != amount.Paise || p.Refunded != amount.Paise || p.Amount.Currency != amount.Currency ||
		p.Session.ID != "" || p.CommandSentAt != 0 {
		h.t.Errorf("%s: payment %s: status %s captured %d refunded %d %s, session %q", what, p.ID, p.Status, p.Captured, p.Refunded,
			p.Amount.Currency, p.Session.ID)
	}
	rs := h.refundsOf(p.ID)
	if len(rs) != 1 || rs[0].RefundID != p.ID+"-FULL" || rs[0].Kind != refunds.Full || rs[0].Status != refunds.Processed {
		h.t.Errorf("%s: refunds %+v", what, rs)
	}
	var atPG int64
	for _, r := range h.pg.refunds {
		if r.PaymentID == pgPaymentID {
			atPG += r.Amount.Paise
		}
	}
	if atPG != amount.Paise {
		h.t.Errorf("%s: the PG refunded %d of %d", what, atPG, amount.Paise)
	}
	if h.cpo.starts[p.ID] != 0 {
		h.t.Errorf("%s: %d START_SESSION for a payment that must not start", what, h.cpo.starts[p.ID])
	}
	if len(h.dropped) > 0 {
		h.t.Errorf("%s: jobs gave up: %v", what, h.dropped)
	}
}

// TestCaptureRefundedAtOnce: a capture that may not start a session — a
// second payment on an order, a capture after the payment window, a capture
// in another currency — is recorded with its amount and refunded in full
// through the refund queue, whether the webhook or the order check finds it.
func TestCaptureRefundedAtOnce(t *testing.T) {
	t.Parallel()
	const paise = 300_00
	// payUSD pays the order 4.00 in US dollars, captured.
	payUSD := func(h *harness, o *orders.Order) (string, pg.Amount) {
		usd := pg.Amount{Paise: 4_00, Currency: "USD"}
		id := h.pg.attempt(o.PGOrderID, usd)
		h.pg.move(id, pg.PaymentCaptured)
		return id, usd
	}
	cases := []struct {
		name string
		// pay makes the payments at the PG and returns the one that must be
		// refunded, with its amount.
		pay func(h *harness, o *orders.Order) (string, pg.Amount)
		// webhooks false: every webhook is lost, the order check finds
		// the payment.
		webhooks bool
	}{
		{"second payment", func(h *harness, o *orders.Order) (string, pg.Amount) {
			first := h.pg.attempt(o.PGOrderID, o.Amount)
			h.pg.move(first, pg.PaymentCaptured)
			h.settle()
			if p := h.paymentByPG(first); p == nil || p.Status != paymentrow.StatusCharging {
				h.t.Fatalf("the first payment: %+v", p)
			}
			second := h.pg.attempt(o.PGOrderID, o.Amount)
			h.pg.move(second, pg.PaymentCaptured)
			return second, o.Amount
		}, true},
		{"late capture", func(h *harness, o *orders.Order) (string, pg.Amount) {
			id := h.pg.attempt(o.PGOrderID, o.Amount)
			h.clk.Add(2*h.s.cfg.PaymentWindow + time.Second)
			h.pg.move(id, pg.PaymentCaptured)
			return id, o.Amount
		}, true},
		{"late capture, pending first", func(h *harness, o *orders.Order) (string, pg.Amount) {
			id := h.pg.attempt(o.PGOrderID, o.Amount)
			h.pg.move(id, pg.PaymentCreated)
			h.settle() // polled until the window closes: EXPIRED
			if p := h.paymentByPG(id); p == nil || p.Status != paymentrow.StatusExpired {
				h.t.Fatalf("the pending payment: %+v", p)
			}
			h.clk.Add(h.s.cfg.PaymentWindow)
			h.pg.move(id, pg.PaymentCaptured)
			return id, o.Amount
		}, true},
		{"other currency", payUSD, true},
		{"other currency, found by the order check", payUSD, false},
		{"late capture, found by the order check", func(h *harness, o *orders.Order) (string, pg.Amount) {
			// Paid (and captured at once) just before the order check's
			// last look, which comes after the window and its grace.
			h.clk.Add(2*h.s.cfg.PaymentWindow - 10*time.Second)
			h.drain()
			id := h.pg.attempt(o.PGOrderID, o.Amount)
			h.pg.move(id, pg.PaymentCaptured)
			return id, o.Amount
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
				h := newHarness(t, engine)
				h.acceptAll()
				h.holdWebhooks = !c.webhooks
				o := h.order(paise)
				id, amount := c.pay(h, o)
				h.settle()
				if !c.webhooks {
					// The refund's webhook may come now: the payment is
					// decided and its refund under way without it.
					h.holdWebhooks = false
					h.settle()
				}
				h.wantRefundedInFull(c.name, id, amount)
			})
		})
	}
}
