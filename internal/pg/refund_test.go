package pg_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

func TestRefunds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sim.HoldRefunds(true)
	pay := b.captured(t, 15000)
	req := pg.RefundRequest{PaymentID: pay.ID, Paise: 5000, RefundID: "refund-2024-0001", Notes: map[string]string{"reason": "excess"}}
	r, err := b.client.Refund(b.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "rfnd_") || r.PaymentID != pay.ID || r.Amount != pg.INR(5000) || r.Status != pg.RefundPending ||
		r.RefundID != "refund-2024-0001" || r.Notes["reason"] != "excess" {
		t.Fatalf("refund = %+v", r)
	}
	sims := b.sim.Refunds(pay.ID)
	if len(sims) != 1 || sims[0].Key != "refund-2024-0001" || sims[0].Receipt != "refund-2024-0001" {
		t.Fatalf("the PG holds %+v", sims)
	}

	// The same refund id again: the same refund, nothing new.
	again, err := b.client.Refund(b.ctx, req)
	if err != nil || again.ID != r.ID {
		t.Fatalf("repeat = %+v, %v; want refund %s", again, err, r.ID)
	}
	// The same key with another amount is refused.
	other := req
	other.Paise = 6000
	if _, err := b.client.Refund(b.ctx, other); asError(t, err).Kind != pg.KindRejected {
		t.Errorf("reused key with another amount: %v", err)
	}
	if n := len(b.sim.Refunds(pay.ID)); n != 1 {
		t.Fatalf("%d refunds after repeats, want 1", n)
	}

	// Processing shows in FetchRefund and FetchPayment.
	if err := b.sim.ProcessRefund(b.ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	got, err := b.client.FetchRefund(b.ctx, r.ID)
	if err != nil || got.Status != pg.RefundProcessed || got.ARN == "" || got.RefundID != "refund-2024-0001" {
		t.Errorf("fetched refund = %+v, %v", got, err)
	}
	p, _ := b.client.FetchPayment(b.ctx, pay.ID)
	if p.AmountRefunded != 5000 || p.Status != pg.PaymentCaptured {
		t.Errorf("payment after a partial refund = %+v", p)
	}

	// Below ₹1.00: refused by the PG, nothing refunded.
	_, err = b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 99, RefundID: "refund-2024-0002"})
	if e := asError(t, err); e.Kind != pg.KindRejected || e.Field != "amount" || e.Retryable() {
		t.Errorf("99 paise: %v", err)
	}
	// More than what remains (10000): refused.
	_, err = b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 10001, RefundID: "refund-2024-0003"})
	if e := asError(t, err); e.Kind != pg.KindRejected || e.Field != "amount" {
		t.Errorf("over-refund: %v", err)
	}
	// Exactly what remains: the payment is then refunded in full.
	if _, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 10000, RefundID: "refund-2024-0004"}); err != nil {
		t.Fatal(err)
	}
	p, _ = b.client.FetchPayment(b.ctx, pay.ID)
	if p.AmountRefunded != 15000 || p.Status != pg.PaymentRefunded {
		t.Errorf("payment after the full refund = %+v", p)
	}
	if _, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 100, RefundID: "refund-2024-0005"}); asError(t, err).Kind != pg.KindRejected {
		t.Errorf("refund of a fully refunded payment: %v", err)
	}
	if n := len(b.sim.Refunds(pay.ID)); n != 2 {
		t.Errorf("%d refunds, want 2", n)
	}

	// A failed refund makes its amount refundable again.
	if err := b.sim.FailRefund(b.ctx, b.sim.Refunds(pay.ID)[1].ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.client.FetchRefund(b.ctx, b.sim.Refunds(pay.ID)[1].ID); got.Status != pg.RefundFailed {
		t.Errorf("failed refund = %+v", got)
	}
	if p, _ = b.client.FetchPayment(b.ctx, pay.ID); p.AmountRefunded != 5000 || p.Status != pg.PaymentCaptured {
		t.Errorf("payment after a failed refund = %+v", p)
	}
}

func TestRefundOfUncapturedPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.order(t, 5000)
	p, _ := b.sim.Pay(b.ctx, o.ID, pgsim.Failed)
	_, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: p.ID, Paise: 5000, RefundID: "refund-failed-1"})
	if e := asError(t, err); e.Kind != pg.KindRejected {
		t.Errorf("refund of a failed payment: %v", err)
	}
	for _, req := range []pg.RefundRequest{{PaymentID: p.ID, Paise: 0, RefundID: "refund-zero-01"}, {PaymentID: p.ID, Paise: 100}, {Paise: 100, RefundID: "refund-noid-01"}} {
		if _, err := b.client.Refund(b.ctx, req); asError(t, err).Kind != pg.KindInvalid {
			t.Errorf("Refund(%+v) = %v, want KindInvalid", req, err)
		}
	}
}

// TestRefundIdempotencyEndToEnd: a refund id the PG would not take as a key
// still maps to one refund, and a lost answer (the PG refunded, then failed
// or went silent) is retried with the same key without refunding twice.
func TestRefundIdempotencyEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sim.HoldRefunds(true)
	pay := b.captured(t, 40000)

	short := pg.RefundRequest{PaymentID: pay.ID, Paise: 1000, RefundID: "r1"}
	r1, err := b.client.Refund(b.ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	r1b, err := b.client.Refund(b.ctx, short)
	if err != nil || r1b.ID != r1.ID || r1.RefundID != "r1" {
		t.Fatalf("short refund id: %+v then %+v, %v", r1, r1b, err)
	}
	if k := b.sim.Refunds(pay.ID)[0].Key; k != pg.IdempotencyKey("r1") || k == "r1" {
		t.Errorf("the PG got key %q", k)
	}

	for i, f := range []pgsim.Fault{pgsim.ServerError().Committed(), pgsim.Timeout().Committed(), pgsim.RateLimited(time.Second)} {
		req := pg.RefundRequest{PaymentID: pay.ID, Paise: 1000, RefundID: "refund-lost-" + string(rune('a'+i)) + "-0001"}
		b.sim.FailNext(pgsim.APIRefund, 1, f)
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		if f.Hang {
			ctx, cancel = context.WithTimeout(b.ctx, 50*time.Millisecond)
		}
		_, err := b.client.Refund(ctx, req)
		cancel()
		if !pg.IsRetryable(err) {
			t.Fatalf("fault %+v: %v, want retryable", f, err)
		}
		r, err := b.client.Refund(b.ctx, req)
		if err != nil {
			t.Fatalf("retry after %+v: %v", f, err)
		}
		n := 0
		for _, s := range b.sim.Refunds(pay.ID) {
			if s.Key == req.RefundID {
				n++
				if s.ID != r.ID {
					t.Errorf("retry returned %s, the PG holds %s", r.ID, s.ID)
				}
			}
		}
		if n != 1 {
			t.Errorf("fault %+v: %d refunds for one key", f, n)
		}
	}
	if p, _ := b.sim.Payment(pay.ID); p.AmountRefunded != 4000 {
		t.Errorf("refunded %d paise, want 4000", p.AmountRefunded)
	}

	// Definitive refusal: the refund is not made and is not retryable.
	b.sim.RefuseRefunds("BAD_REQUEST_ERROR", "The payment is too old to refund")
	_, err = b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 1000, RefundID: "refund-refused-1"})
	if e := asError(t, err); e.Kind != pg.KindRejected || e.Retryable() || e.Description != "The payment is too old to refund" {
		t.Errorf("refused refund: %v", err)
	}
	b.sim.ClearFaults()
	if n := len(b.sim.Refunds(pay.ID)); n != 4 {
		t.Errorf("%d refunds, want 4", n)
	}
}

// TestConcurrentRefunds: the PG never refunds more than was captured, and
// one key never makes two refunds, however the calls race.
func TestConcurrentRefunds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pay := b.captured(t, 15000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, ids := 0, map[string]bool{}
	for i := range 10 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 2000, RefundID: "refund-race-" + string(rune('a'+i)) + "-000"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else if asError(t, err).Kind != pg.KindRejected {
				t.Errorf("refund %d: %v", i, err)
			}
		}()
		go func() {
			defer wg.Done()
			r, err := b.client.Refund(b.ctx, pg.RefundRequest{PaymentID: pay.ID, Paise: 500, RefundID: "refund-same-key-0001"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ids[r.ID] = true
			}
		}()
	}
	wg.Wait()
	var sum int64
	for _, r := range b.sim.Refunds(pay.ID) {
		sum += r.Amount
	}
	// 500 for the shared key plus as many 2000s as fit in 14500.
	if len(ids) != 1 || ok != 7 || sum != 14500 {
		t.Errorf("%d ids for one key, %d refunds of 2000 accepted, %d paise refunded; want 1, 7, 14500", len(ids), ok, sum)
	}
}
