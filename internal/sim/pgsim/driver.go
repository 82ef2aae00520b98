package pgsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
)

// Scenario is what the simulated payer's UPI app does with an order.
type Scenario string

// The scenarios of Pay. Each step changes the payment and sends its webhook
// (when the form has one) before the next step starts.
const (
	// Captured: the payment is made and captured.
	Captured Scenario = "captured"
	// Failed: the payment fails (wrong UPI PIN).
	Failed Scenario = "failed"
	// FailedThenCaptured: the payment fails, then the same payment is
	// captured (a PIN retry or a late authorisation).
	FailedThenCaptured Scenario = "failed_then_captured"
	// PendingThenCaptured: a pending notification, then the capture.
	PendingThenCaptured Scenario = "pending_then_captured"
	// AuthorizedThenCaptured: authorised first, captured after.
	AuthorizedThenCaptured Scenario = "authorized_then_captured"
)

// DefaultPayerVPA is the payer's UPI address when none is given.
const DefaultPayerVPA = "driver@okpgsim"

// Pay plays a scenario on an order as the payer's UPI app would and
// returns the payment as it ends. Webhooks are delivered (or held) before
// it returns. For finer control use the steps: Attempt, NotifyPending,
// Authorize, Capture, Fail.
func (s *Server) Pay(ctx context.Context, orderID string, sc Scenario) (Payment, error) {
	p, err := s.Attempt(ctx, orderID, "")
	if err != nil {
		return Payment{}, err
	}
	var steps []func() (Payment, error)
	capture := func() (Payment, error) { return s.Capture(ctx, p.ID) }
	fail := func() (Payment, error) { return s.Fail(ctx, p.ID, "", "") }
	switch sc {
	case Captured:
		steps = append(steps, capture)
	case Failed:
		steps = append(steps, fail)
	case FailedThenCaptured:
		steps = append(steps, fail, capture)
	case PendingThenCaptured:
		steps = append(steps, func() (Payment, error) { return s.NotifyPending(ctx, p.ID) }, capture)
	case AuthorizedThenCaptured:
		steps = append(steps, func() (Payment, error) { return s.Authorize(ctx, p.ID) }, capture)
	default:
		return Payment{}, fmt.Errorf("pgsim: unknown scenario %q", sc)
	}
	for _, step := range steps {
		if p, err = step(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// PayQR plays a scenario on the order a QR code was made for.
func (s *Server) PayQR(ctx context.Context, qrID string, sc Scenario) (Payment, error) {
	s.mu.Lock()
	q, ok := s.qrs[qrID]
	s.mu.Unlock()
	if !ok || q.OrderID == "" {
		return Payment{}, fmt.Errorf("%w: QR code %s (or it names no order)", ErrUnknown, qrID)
	}
	return s.Pay(ctx, q.OrderID, sc)
}

// Attempt starts a payment on an order (the payer opened the UPI app): a
// new payment in state created, no webhook.
func (s *Server) Attempt(ctx context.Context, orderID, payerVPA string) (Payment, error) {
	if payerVPA == "" {
		payerVPA = DefaultPayerVPA
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[orderID]
	if !ok {
		return Payment{}, fmt.Errorf("%w: order %s", ErrUnknown, orderID)
	}
	if o.Status == "paid" && !s.overpay {
		return Payment{}, fmt.Errorf("pgsim: order %s is paid already", orderID)
	}
	p := &payment{ID: newID("pay"), OrderID: o.ID, Amount: o.Amount, Currency: o.Currency, Status: "created",
		VPA: payerVPA, Notes: cloneNotes(o.Notes), CreatedAt: s.now(), seq: s.nextSeq()}
	s.payments[p.ID] = p
	o.Attempts++
	o.Status = "attempted"
	return p.snapshot(), nil
}

// SetOverpayment lets a paid order take (and capture) further payments, as
// a PG does when a payer pays one order twice from two apps before either
// payment completed: the merchant receives both.
func (s *Server) SetOverpayment(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overpay = on
}

// NotifyPending sends the pending webhook for a payment not yet made.
func (s *Server) NotifyPending(ctx context.Context, paymentID string) (Payment, error) {
	return s.step(ctx, paymentID, "payment.pending", func(p *payment, _ *order) error {
		if p.Status != "created" {
			return fmt.Errorf("payment is %s, not pending", p.Status)
		}
		return nil
	})
}

// Authorize authorises a payment (money blocked, not yet captured).
func (s *Server) Authorize(ctx context.Context, paymentID string) (Payment, error) {
	return s.step(ctx, paymentID, "payment.authorized", func(p *payment, _ *order) error {
		if p.Status != "created" && p.Status != "failed" {
			return fmt.Errorf("cannot authorise a %s payment", p.Status)
		}
		p.Status, p.ErrorCode, p.ErrorDesc, p.ErrorReason = "authorized", "", "", ""
		return nil
	})
}

// Capture captures a payment (from created, authorized, or failed: a late
// authorisation) and marks its order paid.
func (s *Server) Capture(ctx context.Context, paymentID string) (Payment, error) {
	return s.step(ctx, paymentID, "payment.captured", func(p *payment, o *order) error {
		if p.Status != "created" && p.Status != "authorized" && p.Status != "failed" {
			return fmt.Errorf("cannot capture a %s payment", p.Status)
		}
		if o.Status == "paid" && !s.overpay {
			return fmt.Errorf("order %s is paid already", o.ID)
		}
		p.Status, p.Captured, p.RRN = "captured", true, digits(12)
		p.ErrorCode, p.ErrorDesc, p.ErrorReason = "", "", ""
		o.AmountPaid, o.Status = p.Amount, "paid"
		for _, q := range s.qrs {
			if q.OrderID == o.ID {
				q.Received, q.Count, q.Status = q.Received+p.Amount, q.Count+1, "closed"
			}
		}
		return nil
	})
}

// Fail fails a payment not yet captured, with the PG's error code and
// description (defaults: a wrong UPI PIN).
func (s *Server) Fail(ctx context.Context, paymentID, code, description string) (Payment, error) {
	if code == "" {
		code, description = "BAD_REQUEST_ERROR", "Payment failed because the payer entered a wrong UPI PIN"
	}
	return s.step(ctx, paymentID, "payment.failed", func(p *payment, _ *order) error {
		if p.Status != "created" && p.Status != "authorized" {
			return fmt.Errorf("cannot fail a %s payment", p.Status)
		}
		p.Status, p.ErrorCode, p.ErrorDesc, p.ErrorReason = "failed", code, description, "incorrect_pin"
		return nil
	})
}

// step applies a change to a payment under the lock, then emits its
// webhook outside it.
func (s *Server) step(ctx context.Context, paymentID, event string, apply func(*payment, *order) error) (Payment, error) {
	s.mu.Lock()
	p, ok := s.payments[paymentID]
	if !ok {
		s.mu.Unlock()
		return Payment{}, fmt.Errorf("%w: payment %s", ErrUnknown, paymentID)
	}
	if err := apply(p, s.orders[p.OrderID]); err != nil {
		snap := p.snapshot()
		s.mu.Unlock()
		return snap, fmt.Errorf("pgsim: payment %s: %w", paymentID, err)
	}
	c, snap := s.changeLocked(event, p, nil), p.snapshot()
	s.mu.Unlock()
	s.emit(ctx, c)
	return snap, nil
}

// driverPay is POST /sim/orders/{id}/pay {"scenario": …}: another process
// (the demo, the CLI) paying an order.
func (s *Server) driverPay(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Scenario Scenario `json:"scenario"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Scenario == "" {
		in.Scenario = Captured
	}
	p, err := s.Pay(r.Context(), r.PathValue("id"), in.Scenario)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, ErrUnknown) {
			status = http.StatusNotFound
		}
		writeError(w, status, "BAD_REQUEST_ERROR", err.Error(), "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": p.ID, "order_id": p.OrderID, "status": p.Status, "amount": p.Amount, "currency": p.Currency})
}

var checkoutTmpl = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Simulated UPI payment</title></head>
<body style="font-family: sans-serif; max-width: 28rem; margin: 2rem auto">
<h1>Simulated UPI app</h1>
<p>Pay <strong>₹{{.Amount}}</strong> for order <code>{{.OrderID}}</code>.</p>
{{if .Result}}<p id="result">Payment {{.Result}}.</p>{{end}}
{{if not .Paid}}<form method="post">
<button name="scenario" value="captured">Pay</button>
<button name="scenario" value="failed">Fail (wrong PIN)</button>
<button name="scenario" value="failed_then_captured">Fail, then pay</button>
<button name="scenario" value="pending_then_captured">Pending, then pay</button>
</form>{{end}}
</body></html>`))

// checkoutPage is the simulator's stand-in for the payer's UPI app: the
// page a QR code's image_url leads to, naming a QR code or an order.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	s.renderCheckout(w, r.PathValue("id"), "")
}

// checkoutPay pays from the checkout page.
func (s *Server) checkoutPay(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	orderID, ok := s.checkoutOrder(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	result := ""
	if p, err := s.Pay(r.Context(), orderID, Scenario(r.FormValue("scenario"))); err != nil {
		result = "refused: " + err.Error()
	} else {
		result = p.Status
	}
	s.renderCheckout(w, id, result)
}

func (s *Server) renderCheckout(w http.ResponseWriter, id, result string) {
	orderID, ok := s.checkoutOrder(id)
	if !ok {
		http.Error(w, "unknown QR code or order", http.StatusNotFound)
		return
	}
	o, _ := s.Order(orderID)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = checkoutTmpl.Execute(w, map[string]any{"Amount": rupees(o.Amount), "OrderID": o.ID, "Paid": o.Status == "paid", "Result": result})
}

func (s *Server) checkoutOrder(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.qrs[id]; ok && q.OrderID != "" {
		return q.OrderID, true
	}
	_, ok := s.orders[id]
	return id, ok
}
