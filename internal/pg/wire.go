package pg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The Razorpay wire entities (field names from Razorpay's public API
// reference). Nullable strings decode to "" (encoding/json leaves a string
// untouched on null).

type rzpOrder struct {
	ID         string `json:"id"`
	Entity     string `json:"entity"`
	Amount     int64  `json:"amount"`
	AmountPaid int64  `json:"amount_paid"`
	AmountDue  int64  `json:"amount_due"`
	Currency   string `json:"currency"`
	Receipt    string `json:"receipt"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	Notes      notes  `json:"notes"`
	CreatedAt  int64  `json:"created_at"`
}

type rzpPayment struct {
	ID               string `json:"id"`
	Entity           string `json:"entity"`
	Amount           int64  `json:"amount"`
	Currency         string `json:"currency"`
	Status           string `json:"status"`
	OrderID          string `json:"order_id"`
	Method           string `json:"method"`
	VPA              string `json:"vpa"`
	Captured         bool   `json:"captured"`
	AmountRefunded   int64  `json:"amount_refunded"`
	RefundStatus     string `json:"refund_status"`
	Description      string `json:"description"`
	Notes            notes  `json:"notes"`
	ErrorCode        string `json:"error_code"`
	ErrorDescription string `json:"error_description"`
	ErrorReason      string `json:"error_reason"`
	AcquirerData     struct {
		RRN string `json:"rrn"`
	} `json:"acquirer_data"`
	UPI struct {
		VPA string `json:"vpa"`
	} `json:"upi"`
	CreatedAt int64 `json:"created_at"`
}

type rzpRefund struct {
	ID           string `json:"id"`
	Entity       string `json:"entity"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	PaymentID    string `json:"payment_id"`
	Notes        notes  `json:"notes"`
	Receipt      string `json:"receipt"`
	Status       string `json:"status"`
	AcquirerData struct {
		ARN string `json:"arn"`
	} `json:"acquirer_data"`
	CreatedAt int64 `json:"created_at"`
}

type rzpQR struct {
	ID            string `json:"id"`
	Entity        string `json:"entity"`
	Name          string `json:"name"`
	Usage         string `json:"usage"`
	Type          string `json:"type"`
	ImageURL      string `json:"image_url"`
	ImageContent  string `json:"image_content"`
	PaymentAmount int64  `json:"payment_amount"`
	Status        string `json:"status"`
	Description   string `json:"description"`
	FixedAmount   bool   `json:"fixed_amount"`
	Notes         notes  `json:"notes"`
	CloseBy       int64  `json:"close_by"`
	CreatedAt     int64  `json:"created_at"`
}

type rzpCollection[T any] struct {
	Entity string `json:"entity"`
	Count  int    `json:"count"`
	Items  []T    `json:"items"`
}

// notes is a PG notes object. Razorpay sends an empty array ([]) for no
// notes and may send numbers as values; both are accepted.
type notes map[string]string

// UnmarshalJSON accepts an object of scalars, an empty array or null.
func (n *notes) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(b, &arr); err != nil || len(arr) != 0 {
			return fmt.Errorf("notes: want an object")
		}
		*n = nil
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("notes: %w", err)
	}
	out := make(notes, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
			continue
		}
		v = bytes.TrimSpace(v)
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			return fmt.Errorf("notes.%s: want a string", k)
		}
		out[k] = string(v) // a number or boolean, as written
	}
	*n = out
	return nil
}

func unixTime(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

func copyNotes(n map[string]string) map[string]string {
	if len(n) == 0 {
		return nil
	}
	out := make(map[string]string, len(n))
	for k, v := range n {
		out[k] = v
	}
	return out
}

func (o rzpOrder) domain() (*Order, error) {
	if o.ID == "" || o.Amount <= 0 || !ValidCurrency(o.Currency) {
		return nil, fmt.Errorf("order without id, amount or currency")
	}
	return &Order{
		ID: o.ID, Amount: Amount{o.Amount, o.Currency}, AmountPaid: o.AmountPaid, AmountDue: o.AmountDue,
		Receipt: o.Receipt, Status: OrderStatus(o.Status), Attempts: o.Attempts, Notes: copyNotes(o.Notes),
		CreatedAt: unixTime(o.CreatedAt),
	}, nil
}

// paymentStatus maps Razorpay's payment status; "pending" (Razorpay uses it
// for cash on delivery) is a payment not yet made.
func paymentStatus(s string) (PaymentStatus, bool) {
	switch s {
	case "created", "pending":
		return PaymentCreated, true
	case "authorized":
		return PaymentAuthorized, true
	case "captured":
		return PaymentCaptured, true
	case "failed":
		return PaymentFailed, true
	case "refunded":
		return PaymentRefunded, true
	}
	return "", false
}

func (p rzpPayment) domain() (*Payment, error) {
	st, ok := paymentStatus(p.Status)
	if p.ID == "" || !ok || p.Amount < 0 || !ValidCurrency(p.Currency) {
		return nil, fmt.Errorf("payment %q: missing id, amount or currency, or unknown status %q", p.ID, p.Status)
	}
	vpa := p.VPA
	if vpa == "" {
		vpa = p.UPI.VPA
	}
	return &Payment{
		ID: p.ID, OrderID: p.OrderID, Amount: Amount{p.Amount, p.Currency}, Status: st, Method: p.Method,
		VPA: vpa, Captured: p.Captured, AmountRefunded: p.AmountRefunded, Notes: copyNotes(p.Notes),
		ErrorCode: p.ErrorCode, ErrorDescription: p.ErrorDescription, ErrorReason: p.ErrorReason,
		RRN: p.AcquirerData.RRN, CreatedAt: unixTime(p.CreatedAt),
	}, nil
}

func refundStatus(s string) (RefundStatus, bool) {
	switch s {
	case "pending", "created":
		return RefundPending, true
	case "processed":
		return RefundProcessed, true
	case "failed":
		return RefundFailed, true
	}
	return "", false
}

func (r rzpRefund) domain() (*Refund, error) {
	st, ok := refundStatus(r.Status)
	if r.ID == "" || !ok || r.Amount <= 0 || !ValidCurrency(r.Currency) {
		return nil, fmt.Errorf("refund %q: missing id, amount or currency, or unknown status %q", r.ID, r.Status)
	}
	rid := r.Notes["refund_id"]
	if rid == "" {
		rid = r.Receipt
	}
	return &Refund{
		ID: r.ID, PaymentID: r.PaymentID, Amount: Amount{r.Amount, r.Currency}, Status: st, RefundID: rid,
		Notes: copyNotes(r.Notes), ARN: r.AcquirerData.ARN, CreatedAt: unixTime(r.CreatedAt),
	}, nil
}

func (q rzpQR) domain(currency string) (*QR, error) {
	if q.ID == "" {
		return nil, fmt.Errorf("QR code without id")
	}
	return &QR{
		ID: q.ID, ImageURL: q.ImageURL, Intent: q.ImageContent, Amount: Amount{q.PaymentAmount, currency},
		Status: q.Status, CloseBy: unixTime(q.CloseBy), Notes: copyNotes(q.Notes), CreatedAt: unixTime(q.CreatedAt),
	}, nil
}

// flexID is an id the PG sends as a JSON string or number (Cashfree's
// cf_payment_id has been both); numbers are kept as written.
type flexID string

// UnmarshalJSON accepts a string, an integer or null.
func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexID(s)
		return nil
	}
	if _, err := strconv.ParseUint(string(b), 10, 64); err != nil {
		return fmt.Errorf("id %s: want a string or an integer", b)
	}
	*f = flexID(b)
	return nil
}

// rupees is a decimal amount of rupees sent as a JSON number (Cashfree:
// 170.00) or string ("170.00"), converted exactly to paise. More than two
// decimals, exponents and negative amounts are refused. Set is false when
// the field was absent or null.
type rupees struct {
	Paise int64
	Set   bool
}

// UnmarshalJSON reads the number's text, never a float.
func (r *rupees) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	p, err := ParseRupees(s)
	if err != nil {
		return err
	}
	if p < 0 {
		return fmt.Errorf("%w %q: negative", ErrAmount, s)
	}
	r.Paise, r.Set = p, true
	return nil
}
