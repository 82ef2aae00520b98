package pgsim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

// TestDuplicates: fifty identical copies arrive at once.
func TestDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormRazorpay)
	b.rc.gate = make(chan struct{})
	b.sim.DuplicateWebhooks(50, true)
	o := b.order(t, 5000)
	done := make(chan error, 1)
	go func() {
		_, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
		done <- err
	}()
	// All fifty are in the receiver at the same time before any answers.
	for i := range 50 {
		select {
		case <-b.rc.arrived:
		case <-b.ctx.Done():
			close(b.rc.gate)
			t.Fatalf("only %d copies arrived while none was answered", i)
		}
	}
	if n := b.rc.inFlight.Load(); n != 50 {
		t.Errorf("%d copies in flight at once", n)
	}
	close(b.rc.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs, errs := b.rc.got()
	if len(evs) != 50 || len(errs) != 0 {
		t.Fatalf("%d events, errors %v", len(evs), errs)
	}
	for _, ev := range evs {
		if ev.ID != evs[0].ID || string(ev.Raw) != string(evs[0].Raw) || ev.Status != pg.PaymentCaptured {
			t.Fatalf("copies differ: %+v vs %+v", ev, evs[0])
		}
	}
	copies := map[int]bool{}
	for _, d := range b.sim.Deliveries() {
		copies[d.Copy] = true
	}
	if len(copies) != 50 {
		t.Errorf("copy numbers %v", copies)
	}

	// Sequential copies, one at a time.
	b.sim.DuplicateWebhooks(3, false)
	b.rc.peak.Store(0)
	o2 := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o2.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	if evs, _ := b.rc.got(); len(evs) != 53 || b.rc.peak.Load() != 1 {
		t.Errorf("%d events, peak concurrency %d", len(evs), b.rc.peak.Load())
	}
}

// TestHoldAndReorder: held webhooks arrive only when released, in the
// order asked for: captured before authorized.
func TestHoldAndReorder(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormRazorpay)
	b.sim.HoldWebhooks()
	o := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o.ID, pgsim.AuthorizedThenCaptured); err != nil {
		t.Fatal(err)
	}
	if n := len(b.sim.Deliveries()); n != 0 {
		t.Fatalf("%d deliveries while held", n)
	}
	held := b.sim.HeldWebhooks()
	if len(held) != 2 || held[0].Type != "payment.authorized" || held[1].Type != "payment.captured" {
		t.Fatalf("held %+v", held)
	}
	b.sim.ReleaseWebhooks(b.ctx, pgsim.Reverse)
	if got := b.rc.types(); strings.Join(got, ",") != "payment.captured,payment.authorized" {
		t.Errorf("received %v", got)
	}
	// Released means no longer held: the next webhook goes out at once.
	o2 := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o2.ID, pgsim.Failed); err != nil {
		t.Fatal(err)
	}
	if got := b.rc.types(); len(got) != 3 || got[2] != "payment.failed" {
		t.Errorf("received %v", got)
	}
	// A PG retry: the same webhook again, byte for byte.
	b.sim.Redeliver(b.ctx, held[1])
	evs, _ := b.rc.got()
	if len(evs) != 4 || evs[3].ID != evs[0].ID || string(evs[3].Raw) != string(evs[0].Raw) {
		t.Errorf("redelivery %+v", evs[3])
	}
}

// TestRefundWebhooks: a refund sends created then processed (Razorpay),
// or one status webhook with the amount in rupees (Cashfree), naming our
// refund id.
func TestRefundWebhooks(t *testing.T) {
	t.Parallel()
	for form, want := range map[pgsim.Form][]string{
		pgsim.FormRazorpay: {"payment.captured", "refund.created", "refund.processed"},
		pgsim.FormCashfree: {"PAYMENT_SUCCESS_WEBHOOK", "REFUND_STATUS_WEBHOOK"},
		pgsim.FormFlat:     {"captured"},
	} {
		t.Run(string(form), func(t *testing.T) {
			t.Parallel()
			b := setup(t, form)
			o := b.order(t, 20000)
			p, _ := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
			r, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: p.ID, Paise: 7550, RefundID: "refund-hook-0001"})
			if err != nil {
				t.Fatal(err)
			}
			// Refunds are processed in the background after the answer.
			if _, err := b.sim.WaitDeliveries(b.ctx, len(want)); err != nil {
				t.Fatal(err)
			}
			if got := b.rc.types(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("received %v, want %v", got, want)
			}
			evs, _ := b.rc.got()
			last := evs[len(evs)-1]
			if form == pgsim.FormFlat {
				return
			}
			if last.Kind != pg.EventRefund || last.Refund == nil || last.Refund.ID != r.ID || last.Refund.Amount != pg.INR(7550) ||
				last.Refund.Status != pg.RefundProcessed || last.Refund.RefundID != "refund-hook-0001" || last.PaymentID != p.ID {
				t.Errorf("refund event %+v / %+v", last, last.Refund)
			}
		})
	}
}

// TestRefundFailureWebhook: a refund the bank returns ends failed.
func TestRefundFailureWebhook(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormRazorpay)
	b.sim.HoldRefunds(true)
	o := b.order(t, 20000)
	p, _ := b.sim.Pay(b.ctx, o.ID, pgsim.Captured)
	r, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: p.ID, Paise: 20000, RefundID: "refund-fail-0001"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.sim.WaitDeliveries(b.ctx, 2); err != nil { // captured, refund.created
		t.Fatal(err)
	}
	if err := b.sim.FailRefund(b.ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.sim.ProcessRefund(b.ctx, r.ID); err == nil {
		t.Error("processed a failed refund")
	}
	evs, _ := b.rc.got()
	last := evs[len(evs)-1]
	if len(evs) != 3 || last.Type != "refund.failed" || last.Refund.Status != pg.RefundFailed || last.Status != pg.PaymentCaptured {
		t.Errorf("events %v, last %+v", b.rc.types(), last)
	}
}

// TestRotationAndRejection: after the simulator rotates its secret, a
// receiver that still knows only the old one answers 401; one that
// accepts both during the rotation verifies. Failed deliveries are
// recorded.
func TestRotationAndRejection(t *testing.T) {
	t.Parallel()
	b := setup(t, pgsim.FormCashfree)
	b.sim.SetWebhookSecret("whsec-next")
	o := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	d := b.sim.Deliveries()
	if len(d) != 1 || d[0].Status != http.StatusUnauthorized || d[0].Err == "" {
		t.Fatalf("deliveries %+v", d)
	}
	both := newReceiver(t, "whsec-next", "whsec-test")
	b.sim.SetWebhook(both.srv.URL, pgsim.FormCashfree)
	b.sim.Redeliver(b.ctx, d[0].Webhook)
	// Redeliver resends to the webhook's original URL: refused again.
	if evs, errs := both.got(); len(evs) != 0 || len(errs) != 0 {
		t.Fatalf("the new receiver got %v %v", evs, errs)
	}
	if _, errs := b.rc.got(); len(errs) != 2 {
		t.Fatalf("the old receiver refused %d deliveries, want 2", len(errs))
	}
	o2 := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o2.ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	if evs, errs := both.got(); len(evs) != 1 || len(errs) != 0 || evs[0].OrderID != o2.ID {
		t.Fatalf("rotated receiver got %v %v", evs, errs)
	}
	// A receiver answering 500 is recorded as such.
	both.status.Store(http.StatusInternalServerError)
	o3 := b.order(t, 5000)
	if _, err := b.sim.Pay(b.ctx, o3.ID, pgsim.Failed); err != nil {
		t.Fatal(err)
	}
	d = b.sim.Deliveries()
	if last := d[len(d)-1]; last.Status != 500 || last.Err != "HTTP 500" {
		t.Errorf("last delivery %+v", last)
	}
}
