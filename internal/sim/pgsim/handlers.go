package pgsim

import (
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/pg"
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
	case !pg.ValidCurrency(in.Currency):
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
	return fetch(s, r, s.orders, (*order).json)
}

func (s *Server) orderPayments(r *http.Request) (any, error) {
	return children(s, r, s.orders, s.payments, func(p *payment) (int, string) { return p.seq, p.OrderID }, (*payment).json)
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
	return fetch(s, r, s.qrs, s.qrJSON)
}

func (s *Server) fetchPayment(r *http.Request) (any, error) {
	return fetch(s, r, s.payments, (*payment).json)
}

func (s *Server) paymentRefunds(r *http.Request) (any, error) {
	return children(s, r, s.payments, s.refunds, func(rf *refund) (int, string) { return rf.seq, rf.PaymentID }, (*refund).json)
}

func (s *Server) fetchRefund(r *http.Request) (any, error) {
	return fetch(s, r, s.refunds, (*refund).json)
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

// fetch answers a GET of one of objects by the request's {id}, as show
// renders it; an unknown id is not found.
func fetch[T any](s *Server, r *http.Request, objects map[string]*T, show func(*T) map[string]any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := objects[r.PathValue("id")]
	if !ok {
		return nil, notFound()
	}
	return show(v), nil
}

// children answers a GET of the objects under the parent the request's
// {id} names (an order's payments, a payment's refunds), oldest first:
// of names each object's sequence number and parent id. An unknown parent
// is not found.
func children[P, C any](s *Server, r *http.Request, parents map[string]*P, all map[string]*C, of func(*C) (int, string), show func(*C) map[string]any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	if _, ok := parents[id]; !ok {
		return nil, notFound()
	}
	var items []map[string]any
	for _, c := range sorted(all, func(c *C) int { seq, _ := of(c); return seq }) {
		if _, parent := of(c); parent == id {
			items = append(items, show(c))
		}
	}
	return list(items), nil
}
