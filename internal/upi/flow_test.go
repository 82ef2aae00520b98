package upi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

const qrRef = "KORA-E1"

// qr maps connector 1 of EVSE E1 to qrRef.
func (b *bundle) qr(t *testing.T) {
	t.Helper()
	resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{"qr_ref": qrRef, "location_id": locID, "evse_uid": "E1", "connector_id": "1"})
	if resp.HTTPStatus != http.StatusCreated {
		t.Fatalf("create QR mapping: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
}

// order submits the landing page's form as a driver does and returns the
// order id its redirect names.
func (b *bundle) order(t *testing.T, amount string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(b.h.PublicURL()+"/qr/"+qrRef, url.Values{"amount": {amount}, "email": {"driver@example.in"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/pay/") {
		t.Fatalf("order: HTTP %d, Location %q", resp.StatusCode, loc)
	}
	return strings.TrimPrefix(loc, "/pay/")
}

// pgOrder returns the PG's order of one of our orders (its receipt is our
// id).
func (b *bundle) pgOrder(t *testing.T, orderID string) pgsim.Order {
	t.Helper()
	for _, o := range b.pg.Orders() {
		if o.Receipt == orderID {
			return o
		}
	}
	t.Fatalf("the PG has no order for %s", orderID)
	return pgsim.Order{}
}

// pending has the driver's UPI app attempt the order's payment, which the
// PG reports pending.
func (b *bundle) pending(t *testing.T, orderID string) pgsim.Payment {
	t.Helper()
	pay, err := b.pg.Attempt(b.ctx, b.pgOrder(t, orderID).ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pg.NotifyPending(b.ctx, pay.ID); err != nil {
		t.Fatal(err)
	}
	return pay
}

// eventually is hubtest.Eventually bounded by a minute: a loaded CI machine
// is slow, a broken flow never arrives.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	hubtest.Eventually(t, hubtest.Ctx(t, time.Minute), what, cond)
}

// payment returns the payment of an order (the one that owns its session,
// else the latest), nil while there is none.
func (b *bundle) payment(t *testing.T, orderID string) *paymentview.PaymentView {
	t.Helper()
	o, err := b.h.UPI.Order(b.ctx, orderID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.h.UPI.OrderStatus(b.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.PaymentID == "" {
		return nil
	}
	p, err := b.h.UPI.Payment(b.ctx, st.PaymentID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitStatus waits until the order's payment is in state (and cond, when
// given, holds) and returns it.
func (b *bundle) waitStatus(t *testing.T, orderID, state string, cond ...func(*paymentview.PaymentView) bool) *paymentview.PaymentView {
	t.Helper()
	var p *paymentview.PaymentView
	eventually(t, "payment "+state, func() bool {
		p = b.payment(t, orderID)
		if p == nil || p.Status != state {
			return false
		}
		for _, c := range cond {
			if !c(p) {
				return false
			}
		}
		return true
	})
	return p
}

// starts counts the START_SESSION commands the CPO received.
func (b *bundle) starts() int {
	n := 0
	for _, c := range b.cpo.Commands() {
		if c.Command == ocpi.CommandStartSession {
			n++
		}
	}
	return n
}

// refundsDone holds when every refund of the payment was processed (the
// payment row and its refunds are read one after the other: both must say
// so).
func refundsDone(p *paymentview.PaymentView) bool {
	if p.RefundPending != "0.00" {
		return false
	}
	for _, r := range p.Refunds {
		if r.Status != refunds.Processed {
			return false
		}
	}
	return len(p.Refunds) > 0
}

// TestHappyPath: a driver pays ₹500, the session starts, the driver
// charges for ₹272.88 (incl. VAT), the excess ₹227.12 is refunded once and
// a receipt is issued.
func TestHappyPath(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.qr(t)
		orderID := b.order(t, "500")
		po := b.pgOrder(t, orderID)
		if po.Amount != 500_00 || po.Notes["qr_ref"] != qrRef {
			t.Errorf("PG order %+v", po)
		}
		if _, err := b.pg.Pay(b.ctx, po.ID, pgsim.Captured); err != nil {
			t.Fatal(err)
		}
		// The session may come before the CPO's answer is recorded: wait for
		// both.
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Command != nil && p.Command.Response != "" })
		if p.Captured != "500.00" || p.Session == nil || p.Command.Response != "ACCEPTED" {
			t.Fatalf("charging payment %+v", p)
		}
		// START_SESSION as our eMSP: the payment's AD_HOC_USER token,
		// authorization_reference = the payment id, the connector of the
		// sticker.
		cmds := b.cpo.Commands()
		if len(cmds) != 1 {
			t.Fatalf("%d commands at the CPO", len(cmds))
		}
		body := cmds[0].Body
		tok, _ := body["token"].(map[string]any)
		if body["authorization_reference"] != p.ID || body["location_id"] != locID || body["evse_uid"] != "E1" || body["connector_id"] != "1" ||
			tok["type"] != "AD_HOC_USER" || tok["uid"] != p.ID || tok["party_id"] != "OHE" {
			t.Errorf("START_SESSION %v", body)
		}
		var typ string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT type FROM tokens WHERE uid = $1", p.ID).Scan(&typ); err != nil || typ != "AD_HOC_USER" {
			t.Errorf("the payment's token: type %q (%v)", typ, err)
		}
		var ref string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT payment_reference FROM sessions WHERE id = $1", p.Session.ID).Scan(&ref); err != nil || ref != p.PGPaymentID {
			t.Errorf("session payment_reference %q (%v), want %s", ref, err, p.PGPaymentID)
		}

		b.stop(t, p.Session.ID)
		p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone)
		if p.Cost != "272.88" || p.Refunded != "227.12" || p.NotRefundable != "0.00" || p.Shortfall != "0.00" || p.CDR == nil || p.Receipt == nil {
			t.Errorf("settled payment %+v", p)
		}
		atPG := b.pg.Refunds(p.PGPaymentID)
		if len(atPG) != 1 || atPG[0].Amount != 227_12 || atPG[0].Key != p.ID+"-EXCESS" {
			t.Errorf("refunds at the PG: %+v", atPG)
		}
		if n := b.starts(); n != 1 {
			t.Errorf("%d START_SESSION, want 1", n)
		}
		for _, name := range []string{event.PaymentCaptured, event.RefundProcessed, event.ReceiptIssued, event.SessionStarted, event.SessionStopped} {
			if _, err := b.events.Wait(b.ctx, name, 1); err != nil {
				t.Errorf("event %s: %v", name, err)
			}
		}
		if got := b.events.Events(event.PaymentNeedsAttention); len(got) != 0 {
			t.Errorf("attention events on a clean payment: %v", got)
		}
		var audit []string
		for _, a := range p.Audit {
			audit = append(audit, a.To)
		}
		for _, want := range []string{paymentrow.StatusCaptured, paymentrow.StatusSessionRequested, paymentrow.StatusCharging, paymentrow.StatusSettled, refunds.Queued, refunds.Pending, refunds.Processed} {
			if !slices.Contains(audit, want) {
				t.Errorf("audit trail lacks %s: %v", want, audit)
			}
		}
		if errs := b.cpo.Errors(); len(errs) > 0 {
			t.Errorf("CPO simulator errors: %v", errs)
		}
	})
}

// stop ends a session at the CPO as a driver unplugging does: a PATCH to
// COMPLETED and the CDR (with the CPO simulator's plan). The hub may store
// the session before the simulator keeps its own copy: wait for it.
func (b *bundle) stop(t *testing.T, sessionID string) {
	t.Helper()
	eventually(t, "the CPO's copy of session "+sessionID, func() bool { return b.cpo.Session(sessionID) != nil })
	if err := b.cpo.StopSession(b.ctx, sessionID); err != nil {
		t.Fatal(err)
	}
}
