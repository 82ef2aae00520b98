package pgsim

import (
	"net/http"
	"net/url"
)

// minAmount is the PG's smallest order and refund: ₹1.00.
const minAmount = 100

func (s *Server) createOrder(r *http.Request) (any, error) {
	var in struct {
		Amount         *int64            `json:"amount"`
		Currency       string            `json:"currency"`
		Receipt        string            `json:"receipt"`
		Notes          map[string]string `json:"notes"`
		PartialPayment bool              `json:"partial_payment"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	switch {
	case in.Amount == nil:
		return nil, badRequest("amount", "The amount field is required")
	case *in.Amount < minAmount:
		return nil, badRequest("amount", "The amount must be at least INR 1.00")
	case !validCurrency(in.Currency):
		return nil, badRequest("currency", "The currency must be a three-letter code")
	case len(in.Receipt) > 40:
		return nil, badRequest("receipt", "The receipt may have at most 40 characters")
	}
	if err := checkNotes(in.Notes); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &order{ID: newID("order"), Amount: *in.Amount, Currency: in.Currency, Receipt: in.Receipt, Status: "created",
		Notes: in.Notes, CreatedAt: s.now(), seq: s.nextSeq()}
	s.orders[o.ID] = o
	return o.json(), nil
}

func (s *Server) fetchOrder(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[r.PathValue("id")]
	if !ok {
		return nil, notFound()
	}
	return o.json(), nil
}

func (s *Server) orderPayments(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	if _, ok := s.orders[id]; !ok {
		return nil, notFound()
	}
	var items []map[string]any
	for _, p := range sorted(s.payments, func(p *payment) int { return p.seq }) {
		if p.OrderID == id {
			items = append(items, p.json())
		}
	}
	return list(items), nil
}

func (s *Server) createQR(r *http.Request) (any, error) {
	var in struct {
		Type          string            `json:"type"`
		Name          string            `json:"name"`
		Usage         string            `json:"usage"`
		FixedAmount   bool              `json:"fixed_amount"`
		PaymentAmount int64             `json:"payment_amount"`
		Description   string            `json:"description"`
		CustomerID    string            `json:"customer_id"`
		CloseBy       int64             `json:"close_by"`
		Notes         map[string]string `json:"notes"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	switch {
	case in.Type != "upi_qr":
		return nil, badRequest("type", "The type must be upi_qr")
	case in.Usage != "single_use" && in.Usage != "multiple_use":
		return nil, badRequest("usage", "The usage must be single_use or multiple_use")
	case !in.FixedAmount:
		// Our QR codes always carry the order's amount.
		return nil, badRequest("fixed_amount", "The simulated gateway only makes fixed-amount codes")
	case in.PaymentAmount < minAmount:
		return nil, badRequest("payment_amount", "The payment amount must be at least INR 1.00")
	case in.CloseBy != 0 && in.CloseBy < s.now()+120:
		return nil, badRequest("close_by", "close_by must be at least 2 minutes in the future")
	}
	if err := checkNotes(in.Notes); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &qrCode{ID: newID("qr"), Name: in.Name, Description: in.Description, Amount: in.PaymentAmount, Status: "active",
		Notes: in.Notes, CloseBy: in.CloseBy, CreatedAt: s.now()}
	// The PG's codes know no orders; the simulator links a code to the
	// order named in its notes, so payments on the code belong to it.
	if oid := in.Notes["order_id"]; oid != "" {
		o, ok := s.orders[oid]
		if !ok {
			return nil, badRequest("notes.order_id", "The order in the notes does not exist")
		}
		if o.Amount != in.PaymentAmount {
			return nil, badRequest("payment_amount", "The payment amount differs from the order's amount")
		}
		q.OrderID = oid
	}
	s.qrs[q.ID] = q
	return s.qrJSON(q), nil
}

func (s *Server) fetchQR(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.qrs[r.PathValue("id")]
	if !ok {
		return nil, notFound()
	}
	return s.qrJSON(q), nil
}

func (s *Server) fetchPayment(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[r.PathValue("id")]
	if !ok {
		return nil, notFound()
	}
	return p.json(), nil
}

func (s *Server) paymentRefunds(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	if _, ok := s.payments[id]; !ok {
		return nil, notFound()
	}
	var items []map[string]any
	for _, rf := range sorted(s.refunds, func(r *refund) int { return r.seq }) {
		if rf.PaymentID == id {
			items = append(items, rf.json())
		}
	}
	return list(items), nil
}

func (s *Server) fetchRefund(r *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rf, ok := s.refunds[r.PathValue("id")]
	if !ok {
		return nil, notFound()
	}
	return rf.json(), nil
}

// intent is the upi://pay link a code encodes (NPCI's parameters: payee
// address and name, transaction reference, amount, currency, note).
func (s *Server) intent(q *qrCode) string {
	v := url.Values{}
	v.Set("pa", s.opts.VPA)
	v.Set("pn", "ocpihub")
	v.Set("tr", q.ID)
	v.Set("am", rupees(q.Amount))
	v.Set("cu", "INR")
	if q.Description != "" {
		v.Set("tn", q.Description)
	}
	return "upi://pay?" + v.Encode()
}
