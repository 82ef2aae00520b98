package pgsim

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
)

// createRefund is POST /v1/payments/{id}/refund. Like the PG: a refund is
// created pending; X-Refund-Idempotency returns the first refund for a
// repeated key (and refuses the key with a different request); refunds of
// a payment never exceed what was captured; less than ₹1.00 is refused.
// Unless HoldRefunds is on, the refund is processed right after the
// answer, with a webhook for each step.
func (s *Server) createRefund(r *http.Request) (any, error) {
	var in struct {
		Amount  *int64            `json:"amount"`
		Speed   string            `json:"speed"`
		Notes   map[string]string `json:"notes"`
		Receipt string            `json:"receipt"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	key := r.Header.Get("X-Refund-Idempotency")
	if key != "" && !validKey(key) {
		return nil, badRequest("X-Refund-Idempotency", "The idempotency key must have at least 10 letters, digits, hyphens or underscores")
	}
	if in.Speed != "" && in.Speed != "normal" && in.Speed != "optimum" {
		return nil, badRequest("speed", "The speed must be normal or optimum")
	}
	if err := checkNotes(in.Notes); err != nil {
		return nil, err
	}
	pid := r.PathValue("id")
	request, _ := json.Marshal([]any{pid, in.Amount, in.Speed, in.Notes, in.Receipt})

	s.mu.Lock()
	if prev, ok := s.keys[key]; ok && key != "" {
		defer s.mu.Unlock()
		if prev.request != string(request) {
			return nil, badRequest("X-Refund-Idempotency", "A different request was already made with this idempotency key")
		}
		return prev.json(), nil
	}
	p, ok := s.payments[pid]
	if !ok {
		s.mu.Unlock()
		return nil, notFound()
	}
	if p.Status != "captured" {
		s.mu.Unlock()
		if p.Status == "refunded" {
			return nil, badRequest("amount", "The payment has been fully refunded already")
		}
		return nil, badRequest("id", "Only captured payments can be refunded")
	}
	remaining := p.Amount - p.AmountRefunded
	amount := remaining
	if in.Amount != nil {
		amount = *in.Amount
	}
	if amount < minAmount {
		s.mu.Unlock()
		return nil, badRequest("amount", "The amount must be at least INR 1.00")
	}
	if amount > remaining {
		s.mu.Unlock()
		return nil, badRequest("amount", "The refund amount exceeds the captured amount not yet refunded")
	}
	rf := &refund{ID: newID("rfnd"), PaymentID: pid, Amount: amount, Currency: p.Currency, Status: "pending",
		Receipt: in.Receipt, Notes: in.Notes, Key: key, request: string(request), CreatedAt: s.now(), seq: s.nextSeq()}
	s.refunds[rf.ID] = rf
	if key != "" {
		s.keys[key] = rf
	}
	p.AmountRefunded += amount
	if p.AmountRefunded == p.Amount {
		p.Status = "refunded"
	}
	c := s.changeLocked("refund.created", p, rf)
	hold, out := s.holdRefunds, rf.json()
	s.mu.Unlock()

	s.async(func(ctx context.Context) {
		s.emit(ctx, c)
		if !hold {
			_ = s.settleRefund(ctx, rf.ID, true)
		}
	})
	return out, nil
}

// validKey applies the PG's rule for idempotency keys: at least 10
// letters, digits, hyphens and underscores.
func validKey(k string) bool {
	if len(k) < 10 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// HoldRefunds keeps new refunds pending (true) until ProcessRefund or
// FailRefund, or processes them at once again (false).
func (s *Server) HoldRefunds(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdRefunds = hold
}

// ProcessRefund completes a pending refund and sends its webhook.
func (s *Server) ProcessRefund(ctx context.Context, refundID string) error {
	return s.settleRefund(ctx, refundID, true)
}

// FailRefund fails a pending refund (the bank returned it): the amount is
// refundable again, and the webhook is sent.
func (s *Server) FailRefund(ctx context.Context, refundID string) error {
	return s.settleRefund(ctx, refundID, false)
}

func (s *Server) settleRefund(ctx context.Context, refundID string, ok bool) error {
	s.mu.Lock()
	rf, found := s.refunds[refundID]
	if !found {
		s.mu.Unlock()
		return fmt.Errorf("%w: refund %s", ErrUnknown, refundID)
	}
	if rf.Status != "pending" {
		s.mu.Unlock()
		return fmt.Errorf("pgsim: refund %s is %s already", refundID, rf.Status)
	}
	p := s.payments[rf.PaymentID]
	event := "refund.processed"
	if ok {
		rf.Status, rf.ARN = "processed", digits(12)
	} else {
		event, rf.Status = "refund.failed", "failed"
		p.AmountRefunded -= rf.Amount
		if p.Status == "refunded" {
			p.Status = "captured"
		}
	}
	c := s.changeLocked(event, p, rf)
	s.mu.Unlock()
	s.emit(ctx, c)
	return nil
}

// changeLocked snapshots a change for emit; s.mu must be held.
func (s *Server) changeLocked(event string, p *payment, rf *refund) change {
	c := change{event: event, pay: *p}
	if o, ok := s.orders[p.OrderID]; ok {
		c.ord = *o
	}
	if rf != nil {
		cp := *rf
		c.ref = &cp
	}
	return c
}

// digits returns n random decimal digits (bank reference numbers).
func digits(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}
