package pgsim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// Form is the shape of the webhooks the simulator sends.
type Form string

// The webhook forms.
const (
	// FormRazorpay: {entity: "event", event, payload: {payment: {entity}},
	// created_at}, X-Razorpay-Signature = hex HMAC-SHA256(secret, body),
	// X-Razorpay-Event-Id. Every step and refund change sends one.
	FormRazorpay Form = "razorpay"
	// FormCashfree: {data: {order, payment}, event_time, type} with amounts
	// in decimal rupees, x-webhook-signature = base64 HMAC-SHA256(secret,
	// x-webhook-timestamp + body), x-idempotency-key. Cashfree has no
	// pending, authorized or refund-created webhooks; those steps send none.
	FormCashfree Form = "cashfree"
	// FormFlat is the seed's {pg_payment_id, order_id, status, amount,
	// payer_vpa, signature} with signature = hex HMAC-SHA256(secret,
	// order_id|pg_payment_id) and amount in decimal rupees. Payment changes
	// only.
	FormFlat Form = "flat"
)

// Webhook is one signed webhook as built by the simulator.
type Webhook struct {
	// ID is the event id the form carries (Razorpay, Cashfree), "" for the
	// flat form.
	ID        string
	Form      Form
	Type      string // payment.captured, PAYMENT_SUCCESS_WEBHOOK, captured, …
	PaymentID string
	OrderID   string
	RefundID  string
	URL       string
	Header    http.Header
	Body      []byte
}

// Delivery is one attempt to deliver a webhook.
type Delivery struct {
	Webhook Webhook
	// Copy numbers the copies of a duplicated webhook from 1.
	Copy   int
	Status int    // the receiver's HTTP status, 0 when it did not answer
	Err    string // why the delivery failed, if it did
	At     time.Time
}

// hookState is the webhook side of the simulator, under its own lock.
type hookState struct {
	mu         sync.Mutex
	url        string
	secret     string
	form       Form
	hold       bool
	held       []Webhook
	copies     int
	concurrent bool
	deliveries []Delivery
	delivered  simwire.Signal
}

func (h *hookState) init(o Options) {
	h.url, h.secret, h.form, h.copies = o.WebhookURL, o.WebhookSecret, o.Form, 1
}

// SetWebhook changes where webhooks go and their form.
func (s *Server) SetWebhook(url string, form Form) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.url, s.hooks.form = url, form
}

// SetWebhookSecret changes the secret that signs webhooks (a rotation).
func (s *Server) SetWebhookSecret(secret string) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.secret = secret
}

// DuplicateWebhooks sends every following webhook n times (n ≥ 1), all at
// once when concurrent, else one after the other. Copies are identical:
// same event id, same body, same signature.
func (s *Server) DuplicateWebhooks(n int, concurrent bool) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.copies, s.hooks.concurrent = max(n, 1), concurrent
}

// HoldWebhooks keeps webhooks instead of sending them (a delay) until
// ReleaseWebhooks.
func (s *Server) HoldWebhooks() {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.hold = true
}

// HeldWebhooks returns the webhooks held so far, in the order they arose.
func (s *Server) HeldWebhooks() []Webhook {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return slices.Clone(s.hooks.held)
}

// ReleaseWebhooks stops holding and sends the held webhooks in the order
// reorder returns (nil: the order they arose; Reverse: newest first, e.g.
// captured before authorized). It returns when all were delivered.
func (s *Server) ReleaseWebhooks(ctx context.Context, reorder func([]Webhook) []Webhook) {
	s.hooks.mu.Lock()
	held := s.hooks.held
	s.hooks.held, s.hooks.hold = nil, false
	s.hooks.mu.Unlock()
	if reorder != nil {
		held = reorder(held)
	}
	for _, w := range held {
		s.deliver(ctx, w)
	}
}

// Reverse is a reorder for ReleaseWebhooks: newest first.
func Reverse(ws []Webhook) []Webhook {
	out := slices.Clone(ws)
	slices.Reverse(out)
	return out
}

// Redeliver sends an already delivered (or held) webhook again, unchanged,
// like a PG retrying.
func (s *Server) Redeliver(ctx context.Context, w Webhook) {
	s.deliver(ctx, w)
}

// Deliveries returns every delivery attempt so far, in order.
func (s *Server) Deliveries() []Delivery {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return slices.Clone(s.hooks.deliveries)
}

// WaitDeliveries waits until at least n delivery attempts were made, or ctx
// ends.
func (s *Server) WaitDeliveries(ctx context.Context, n int) ([]Delivery, error) {
	var got []Delivery
	if err := s.hooks.delivered.Wait(ctx, func() bool { got = s.Deliveries(); return len(got) >= n }); err != nil {
		return got, fmt.Errorf("pgsim: %d webhook deliveries, want %d: %w", len(got), n, err)
	}
	return got, nil
}

// change is a state change that may cause a webhook: a Razorpay event name
// and snapshots of the entities, taken under the simulator's lock.
type change struct {
	event string // payment.pending|authorized|captured|failed, refund.created|processed|failed
	pay   payment
	ord   order
	ref   *refund
}

// emit builds the webhook for a change in the configured form and sends it
// (or holds it). Call it without holding s.mu: the receiver may call back.
func (s *Server) emit(ctx context.Context, c change) {
	s.hooks.mu.Lock()
	url, secret, form, hold := s.hooks.url, s.hooks.secret, s.hooks.form, s.hooks.hold
	s.hooks.mu.Unlock()
	w, ok, err := s.build(c, form, secret)
	if err != nil {
		s.logger.Error("pgsim: build webhook", "error", err)
		return
	}
	if !ok {
		return
	}
	w.URL = url
	if hold {
		s.hooks.mu.Lock()
		s.hooks.held = append(s.hooks.held, w)
		s.hooks.mu.Unlock()
		return
	}
	s.deliver(ctx, w)
}

// deliver sends the configured number of copies and records each attempt.
func (s *Server) deliver(ctx context.Context, w Webhook) {
	s.hooks.mu.Lock()
	n, concurrent := s.hooks.copies, s.hooks.concurrent
	s.hooks.mu.Unlock()
	if !concurrent {
		for i := 1; i <= n; i++ {
			s.send(ctx, w, i)
		}
		return
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s.send(ctx, w, i)
		}()
	}
	close(start)
	wg.Wait()
}

func (s *Server) send(ctx context.Context, w Webhook, copyNo int) {
	d := Delivery{Webhook: w, Copy: copyNo, At: s.clock.Now()}
	if w.URL == "" {
		d.Err = "no webhook URL configured"
	} else if req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(w.Body)); err != nil {
		d.Err = err.Error()
	} else {
		req.Header = w.Header.Clone()
		resp, err := s.client.Do(req)
		if err != nil {
			d.Err = err.Error()
		} else {
			d.Status = resp.StatusCode
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				d.Err = "HTTP " + strconv.Itoa(resp.StatusCode)
			}
		}
	}
	s.hooks.mu.Lock()
	s.hooks.deliveries = append(s.hooks.deliveries, d)
	s.hooks.mu.Unlock()
	s.hooks.delivered.Notify()
}

// build renders a change in a form and signs it; ok is false when the form
// has no webhook for the change.
func (s *Server) build(c change, form Form, secret string) (w Webhook, ok bool, err error) {
	w = Webhook{Form: form, PaymentID: c.pay.ID, OrderID: c.pay.OrderID, Header: http.Header{}}
	if c.ref != nil {
		w.RefundID = c.ref.ID
	}
	w.Header.Set("Content-Type", "application/json")
	switch form {
	case FormRazorpay:
		w.ID, w.Type = newID("evt"), c.event
		contains := []string{"payment"}
		payload := map[string]any{"payment": map[string]any{"entity": c.pay.json()}}
		if c.ref != nil {
			contains = []string{"refund", "payment"}
			payload["refund"] = map[string]any{"entity": c.ref.json()}
		}
		w.Body, err = json.Marshal(map[string]any{
			"entity": "event", "account_id": "acc_pgsim", "event": c.event, "contains": contains,
			"payload": payload, "created_at": s.now(),
		})
		w.Header.Set("X-Razorpay-Signature", hexMAC(secret, w.Body))
		w.Header.Set("X-Razorpay-Event-Id", w.ID)
		w.Header.Set("User-Agent", "Razorpay-Webhook/v1")
	case FormCashfree:
		w.Type, w.Body, ok, err = s.cashfreeBody(c)
		if !ok || err != nil {
			return w, false, err
		}
		ts := strconv.FormatInt(s.clock.Now().UnixMilli(), 10)
		w.ID = base64.StdEncoding.EncodeToString(sha256Sum([]byte(newID("idem"))))
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts))
		m.Write(w.Body)
		w.Header.Set("X-Webhook-Signature", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		w.Header.Set("X-Webhook-Timestamp", ts)
		w.Header.Set("X-Idempotency-Key", w.ID)
		w.Header.Set("X-Webhook-Version", "2023-08-01")
		w.Header.Set("X-Webhook-Attempt", "1")
	case FormFlat:
		status := map[string]string{"payment.pending": "pending", "payment.authorized": "authorized", "payment.captured": "captured", "payment.failed": "failed"}[c.event]
		if status == "" {
			return w, false, nil
		}
		w.Type = status
		w.Body, err = json.Marshal(map[string]any{
			"pg_payment_id": c.pay.ID, "order_id": c.pay.OrderID, "status": status, "amount": rupees(c.pay.Amount),
			"currency": c.pay.Currency, "payer_vpa": c.pay.VPA, "signature": hexMAC(secret, []byte(c.pay.OrderID+"|"+c.pay.ID)),
		})
	default:
		return w, false, errors.New("unknown webhook form " + string(form))
	}
	return w, err == nil, err
}

// cashfreeBody renders a payment or refund change as Cashfree does, amounts
// as JSON numbers with two decimals.
func (s *Server) cashfreeBody(c change) (typ string, body []byte, ok bool, err error) {
	ist := time.FixedZone("IST", 5*3600+1800)
	now := s.clock.Now().In(ist).Format(time.RFC3339)
	switch c.event {
	case "payment.captured", "payment.failed":
		typ, status, msg := "PAYMENT_SUCCESS_WEBHOOK", "SUCCESS", "00::Transaction success"
		data := map[string]any{}
		if c.event == "payment.failed" {
			typ, status, msg = "PAYMENT_FAILED_WEBHOOK", "FAILED", c.pay.ErrorDesc
			data["error_details"] = map[string]any{"error_code": c.pay.ErrorCode, "error_description": c.pay.ErrorDesc, "error_reason": c.pay.ErrorReason, "error_source": "customer"}
		}
		data["order"] = map[string]any{"order_id": c.ord.ID, "order_amount": json.RawMessage(rupees(c.ord.Amount)), "order_currency": c.ord.Currency, "order_tags": nil}
		data["payment"] = map[string]any{
			"cf_payment_id": c.pay.ID, "payment_status": status, "payment_amount": json.RawMessage(rupees(c.pay.Amount)),
			"payment_currency": c.pay.Currency, "payment_message": msg, "payment_time": now, "bank_reference": nullable(c.pay.RRN),
			"auth_id": nil, "payment_method": map[string]any{"upi": map[string]any{"channel": "link", "upi_id": c.pay.VPA}}, "payment_group": "upi",
		}
		data["customer_details"] = map[string]any{"customer_name": nil, "customer_id": "driver", "customer_email": nil, "customer_phone": "9000000000"}
		body, err = json.Marshal(map[string]any{"data": data, "event_time": now, "type": typ})
		return typ, body, true, err
	case "refund.processed", "refund.failed":
		status := "SUCCESS"
		if c.event == "refund.failed" {
			status = "CANCELLED"
		}
		r := c.ref
		body, err = json.Marshal(map[string]any{"data": map[string]any{"refund": map[string]any{
			"cf_refund_id": r.ID, "cf_payment_id": r.PaymentID, "refund_id": r.Notes["refund_id"], "order_id": c.pay.OrderID,
			"refund_amount": json.RawMessage(rupees(r.Amount)), "refund_currency": r.Currency, "entity": "Refund",
			"refund_type": "MERCHANT_INITIATED", "refund_arn": nullable(r.ARN), "refund_status": status,
			"created_at": time.Unix(r.CreatedAt, 0).In(ist).Format(time.RFC3339), "processed_at": now, "refund_note": nullable(r.Notes["reason"]),
		}}, "event_time": now, "type": "REFUND_STATUS_WEBHOOK"})
		return "REFUND_STATUS_WEBHOOK", body, true, err
	}
	return "", nil, false, nil
}

func hexMAC(secret string, msg []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
