package pg

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// rzpEvent is Razorpay's webhook envelope.
type rzpEvent struct {
	Entity  string `json:"entity"`
	Event   string `json:"event"`
	Payload struct {
		Payment *struct {
			Entity rzpPayment `json:"entity"`
		} `json:"payment"`
		Refund *struct {
			Entity rzpRefund `json:"entity"`
		} `json:"refund"`
		Order *struct {
			Entity rzpOrder `json:"entity"`
		} `json:"order"`
		QRCode *struct {
			Entity rzpQR `json:"entity"`
		} `json:"qr_code"`
	} `json:"payload"`
	CreatedAt int64 `json:"created_at"`
}

// parseRazorpay reads a Razorpay event. Payment events
// (payment.authorized|captured|failed|pending, order.paid,
// qr_code.credited) need the payment entity, refund events
// (refund.created|processed|failed|speed_changed) the refund entity;
// other events are EventOther.
func parseRazorpay(body []byte) (*Event, error) {
	var e rzpEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, err
	}
	if e.Entity != "event" || e.Event == "" {
		return nil, errors.New(`want {"entity": "event", "event": …}`)
	}
	ev := &Event{Form: FormRazorpay, Type: e.Event, Kind: EventOther, At: unixTime(e.CreatedAt), PayloadSigned: true}
	switch e.Event {
	case "payment.authorized", "payment.captured", "payment.failed", "payment.pending", "order.paid", "qr_code.credited":
		ev.Kind = EventPayment
	case "refund.created", "refund.processed", "refund.failed", "refund.speed_changed":
		ev.Kind = EventRefund
	default:
		// Disputes, downtimes, settlements, …: not ours to act on.
		return ev, nil
	}
	if p := e.Payload.Payment; p != nil {
		pay, err := p.Entity.domain()
		if err != nil {
			return nil, err
		}
		ev.PaymentID, ev.OrderID, ev.Status, ev.Amount, ev.PayerVPA = pay.ID, pay.OrderID, pay.Status, pay.Amount, pay.VPA
		ev.Notes, ev.ErrorCode, ev.ErrorDescription = pay.Notes, pay.ErrorCode, pay.ErrorDescription
	} else if ev.Kind == EventPayment {
		return nil, fmt.Errorf("%s without payload.payment.entity", e.Event)
	}
	if ev.OrderID == "" {
		// A payment on a QR code has no order; CreateUPIQR put the order id
		// in the code's notes, which the payment inherits.
		ev.OrderID = ev.Notes["order_id"]
		if ev.OrderID == "" && e.Payload.QRCode != nil {
			ev.OrderID = e.Payload.QRCode.Entity.Notes["order_id"]
		}
	}
	if ev.Kind == EventRefund {
		if e.Payload.Refund == nil {
			return nil, fmt.Errorf("%s without payload.refund.entity", e.Event)
		}
		r, err := e.Payload.Refund.Entity.domain()
		if err != nil {
			return nil, err
		}
		ev.Refund = r
		if ev.PaymentID == "" {
			ev.PaymentID = r.PaymentID
		}
	}
	return ev, nil
}

// cfBody is Cashfree's webhook body (version 2023-08-01 and later).
type cfBody struct {
	Type      string `json:"type"`
	EventTime string `json:"event_time"`
	Data      struct {
		Order *struct {
			OrderID       string `json:"order_id"`
			OrderAmount   rupees `json:"order_amount"`
			OrderCurrency string `json:"order_currency"`
		} `json:"order"`
		Payment *struct {
			CFPaymentID     flexID `json:"cf_payment_id"`
			PaymentStatus   string `json:"payment_status"`
			PaymentAmount   rupees `json:"payment_amount"`
			PaymentCurrency string `json:"payment_currency"`
			PaymentMessage  string `json:"payment_message"`
			PaymentMethod   struct {
				UPI struct {
					UPIID string `json:"upi_id"`
				} `json:"upi"`
			} `json:"payment_method"`
			ErrorDetails cfError `json:"error_details"`
		} `json:"payment"`
		// ErrorDetails explains a failed payment (at data level; some
		// versions nest it in payment).
		ErrorDetails cfError `json:"error_details"`
		Refund       *struct {
			CFRefundID     flexID `json:"cf_refund_id"`
			CFPaymentID    flexID `json:"cf_payment_id"`
			RefundID       string `json:"refund_id"`
			OrderID        string `json:"order_id"`
			RefundAmount   rupees `json:"refund_amount"`
			RefundCurrency string `json:"refund_currency"`
			RefundStatus   string `json:"refund_status"`
			RefundARN      string `json:"refund_arn"`
			CreatedAt      string `json:"created_at"`
		} `json:"refund"`
	} `json:"data"`
}

type cfError struct {
	ErrorCode        string `json:"error_code"`
	ErrorDescription string `json:"error_description"`
}

// cfPaymentStatus maps Cashfree's payment_status.
func cfPaymentStatus(s string) (PaymentStatus, bool) {
	switch s {
	case "SUCCESS":
		return PaymentCaptured, true
	case "FAILED", "USER_DROPPED", "CANCELLED", "VOID":
		return PaymentFailed, true
	case "PENDING", "NOT_ATTEMPTED":
		return PaymentCreated, true
	case "FLAGGED": // held for a risk review: money taken, not yet ours
		return PaymentAuthorized, true
	}
	return "", false
}

// cfRefundStatus maps Cashfree's refund_status.
func cfRefundStatus(s string) (RefundStatus, bool) {
	switch s {
	case "SUCCESS":
		return RefundProcessed, true
	case "PENDING", "ONHOLD":
		return RefundPending, true
	case "CANCELLED", "FAILED":
		return RefundFailed, true
	}
	return "", false
}

// parseCashfree reads a Cashfree webhook: payment webhooks need
// data.payment and data.order, refund webhooks data.refund; amounts are
// decimal rupees converted exactly.
func parseCashfree(body []byte) (*Event, error) {
	var b cfBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	if b.Type == "" {
		return nil, errors.New("no type")
	}
	ev := &Event{Form: FormCashfree, Type: b.Type, Kind: EventOther, PayloadSigned: true}
	if t, err := time.Parse(time.RFC3339, b.EventTime); err == nil {
		ev.At = t.UTC()
	}
	switch b.Type {
	case "PAYMENT_SUCCESS_WEBHOOK", "PAYMENT_FAILED_WEBHOOK", "PAYMENT_USER_DROPPED_WEBHOOK":
		p := b.Data.Payment
		if p == nil {
			return nil, fmt.Errorf("%s without data.payment", b.Type)
		}
		st, ok := cfPaymentStatus(p.PaymentStatus)
		if !ok {
			return nil, fmt.Errorf("unknown payment_status %q", p.PaymentStatus)
		}
		if p.CFPaymentID == "" || b.Data.Order == nil || b.Data.Order.OrderID == "" || !p.PaymentAmount.Set {
			return nil, errors.New("payment webhook without cf_payment_id, order_id or payment_amount")
		}
		cur := p.PaymentCurrency
		if cur == "" {
			cur = b.Data.Order.OrderCurrency
		}
		if !ValidCurrency(cur) {
			return nil, fmt.Errorf("payment_currency %q", cur)
		}
		ev.Kind, ev.PaymentID, ev.OrderID, ev.Status = EventPayment, string(p.CFPaymentID), b.Data.Order.OrderID, st
		ev.Amount, ev.PayerVPA = Amount{p.PaymentAmount.Paise, cur}, p.PaymentMethod.UPI.UPIID
		ed := b.Data.ErrorDetails
		if ed.ErrorCode == "" && ed.ErrorDescription == "" {
			ed = p.ErrorDetails
		}
		ev.ErrorCode, ev.ErrorDescription = ed.ErrorCode, ed.ErrorDescription
		if ev.ErrorDescription == "" && st == PaymentFailed {
			ev.ErrorDescription = p.PaymentMessage
		}
	case "REFUND_STATUS_WEBHOOK", "AUTO_REFUND_STATUS_WEBHOOK":
		r := b.Data.Refund
		if r == nil {
			return nil, fmt.Errorf("%s without data.refund", b.Type)
		}
		st, ok := cfRefundStatus(r.RefundStatus)
		if !ok {
			return nil, fmt.Errorf("unknown refund_status %q", r.RefundStatus)
		}
		if r.CFRefundID == "" || r.CFPaymentID == "" || !r.RefundAmount.Set || !ValidCurrency(r.RefundCurrency) {
			return nil, errors.New("refund webhook without cf_refund_id, cf_payment_id, refund_amount or refund_currency")
		}
		ev.Kind, ev.PaymentID, ev.OrderID = EventRefund, string(r.CFPaymentID), r.OrderID
		ev.Refund = &Refund{
			ID: string(r.CFRefundID), PaymentID: string(r.CFPaymentID), Amount: Amount{r.RefundAmount.Paise, r.RefundCurrency},
			Status: st, RefundID: r.RefundID, ARN: r.RefundARN,
		}
		if t, err := time.Parse(time.RFC3339, r.CreatedAt); err == nil {
			ev.Refund.CreatedAt = t.UTC()
		}
	}
	return ev, nil
}

// flatBody is the seed's flat webhook. amount is decimal rupees, as a JSON
// string ("150.00", the seed's money convention) or number (150.5);
// currency is optional (INR).
type flatBody struct {
	PaymentID string `json:"pg_payment_id"`
	OrderID   string `json:"order_id"`
	Status    string `json:"status"`
	Amount    rupees `json:"amount"`
	Currency  string `json:"currency"`
	PayerVPA  string `json:"payer_vpa"`
	Signature string `json:"signature"`
}

// flatStatus maps the flat form's status, leniently about case and the
// synonyms PGs use.
func flatStatus(s string) (PaymentStatus, bool) {
	switch strings.ToLower(s) {
	case "captured", "success", "paid":
		return PaymentCaptured, true
	case "authorized", "authorised":
		return PaymentAuthorized, true
	case "failed", "failure":
		return PaymentFailed, true
	case "pending", "created":
		return PaymentCreated, true
	case "refunded":
		return PaymentRefunded, true
	}
	return "", false
}

func (f flatBody) event() (*Event, error) {
	if f.PaymentID == "" || f.OrderID == "" {
		return nil, errors.New("pg_payment_id and order_id are required")
	}
	st, ok := flatStatus(f.Status)
	if !ok {
		return nil, fmt.Errorf("unknown status %q", f.Status)
	}
	if !f.Amount.Set {
		return nil, errors.New("amount is required")
	}
	cur := f.Currency
	if cur == "" {
		cur = CurrencyINR
	}
	if !ValidCurrency(cur) {
		return nil, fmt.Errorf("currency %q", cur)
	}
	return &Event{
		ID: "flat:" + f.PaymentID + ":" + string(st), Form: FormFlat, Type: f.Status, Kind: EventPayment,
		PaymentID: f.PaymentID, OrderID: f.OrderID, Status: st, Amount: Amount{f.Amount.Paise, cur}, PayerVPA: f.PayerVPA,
	}, nil
}
