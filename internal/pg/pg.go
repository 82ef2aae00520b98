// Package pg is ocpihub's seam to the payment gateway (PG) that collects UPI
// payments for QR-code charging and issues refunds.
//
// Gateway is the one interface the UPI module uses. Client implements it for
// any Razorpay-compatible HTTP API (orders, UPI QR codes, payments, refunds
// with X-Refund-Idempotency); the simulator in internal/sim/pgsim speaks the
// same API on loopback, so tests and the demo run the real client.
//
// Webhooks from the PG arrive in one of three forms (Razorpay, Cashfree, and
// the seed's flat form); Verifier authenticates each with HMAC-SHA256 in
// constant time, accepts previous secrets during a rotation, and returns a
// normalised Event. A bad or missing signature is ErrSignature (HTTP 401).
//
// Money is int64 paise plus a currency (Amount); FormatINR and FormatRupees
// render it for receipts and APIs. Errors are *Error values whose Kind tells
// the caller whether to retry (timeouts, 5xx, 429, 409) or give up (other
// 4xx): a refund stays QUEUED on the first and becomes FAILED on the second.
package pg

import (
	"context"
	"net/http"
	"time"
)

// Gateway is the payment gateway as ocpihub uses it. Every call that goes
// over the network takes a context, makes one attempt and never retries:
// retrying is the job queue's business, with the same idempotency key.
type Gateway interface {
	// CreateOrder creates an order for a fixed amount; the payer pays
	// against it. Notes carry our references (qr_ref).
	CreateOrder(ctx context.Context, req OrderRequest) (*Order, error)
	// FetchOrder returns an order with its paid and due amounts.
	FetchOrder(ctx context.Context, orderID string) (*Order, error)
	// CreateUPIQR creates a single-use, fixed-amount UPI QR code for an
	// order: an image for desktops and a upi:// intent link for phones.
	CreateUPIQR(ctx context.Context, req QRRequest) (*QR, error)
	// FetchPayment returns one payment as the PG sees it now.
	FetchPayment(ctx context.Context, paymentID string) (*Payment, error)
	// OrderPayments returns every payment attempt made against an order.
	OrderPayments(ctx context.Context, orderID string) ([]Payment, error)
	// Refund refunds part or all of a captured payment. RefundID is the
	// idempotency key: the same key returns the same refund and never
	// refunds twice.
	Refund(ctx context.Context, req RefundRequest) (*Refund, error)
	// FetchRefund returns a refund by the PG's refund id.
	FetchRefund(ctx context.Context, refundID string) (*Refund, error)
	// VerifyWebhook authenticates an incoming webhook (headers and the raw
	// body, unparsed) and normalises it. ErrSignature: answer HTTP 401.
	VerifyWebhook(h http.Header, body []byte) (*Event, error)
}

// OrderRequest asks for a new order.
type OrderRequest struct {
	Amount Amount
	// Receipt is our reference for the order (at most 40 characters).
	Receipt string
	// Notes are up to 15 key-value pairs kept on the order (values at most
	// 256 characters), such as qr_ref.
	Notes map[string]string
}

// OrderStatus is the PG's state of an order.
type OrderStatus string

// The states of an order.
const (
	OrderCreated   OrderStatus = "created"   // no payment attempt yet
	OrderAttempted OrderStatus = "attempted" // at least one attempt, not paid
	OrderPaid      OrderStatus = "paid"      // a payment was captured
)

// Order is a PG order.
type Order struct {
	ID         string
	Amount     Amount
	AmountPaid int64 // paise
	AmountDue  int64 // paise
	Receipt    string
	Status     OrderStatus
	Attempts   int
	Notes      map[string]string
	CreatedAt  time.Time
}

// QRRequest asks for a UPI QR code for an order.
type QRRequest struct {
	// OrderID is sent as the note order_id: the PG's QR codes are not tied to
	// orders, so payments made on the code are matched through it.
	OrderID     string
	Amount      Amount
	Name        string // label of the code, e.g. the location name
	Description string
	// CloseBy is when the code stops accepting payments (zero: the PG's
	// default).
	CloseBy time.Time
	Notes   map[string]string
}

// QR is a UPI QR code created at the PG.
type QR struct {
	ID string
	// ImageURL is the PG's hosted image (or, with the simulator, its
	// checkout page) of the code.
	ImageURL string
	// Intent is the upi://pay link the code encodes, when the PG returns it
	// (Razorpay's image_content): on a phone it opens the UPI app.
	Intent    string
	Amount    Amount
	Status    string // active or closed
	CloseBy   time.Time
	Notes     map[string]string
	CreatedAt time.Time
}

// PaymentStatus is the state of a payment, mapped from the PG's own names.
type PaymentStatus string

// The states of a payment. Pending UPI payments (the payer has not entered
// the PIN yet) are PaymentCreated.
const (
	PaymentCreated    PaymentStatus = "created"
	PaymentAuthorized PaymentStatus = "authorized"
	PaymentCaptured   PaymentStatus = "captured"
	PaymentFailed     PaymentStatus = "failed"
	PaymentRefunded   PaymentStatus = "refunded"
)

// Rank orders payment states along the only direction a payment moves, so
// a state machine can ignore a repeated or older event: created (1), failed
// (2: a UPI payment can still be authorised late after failing), authorized
// (3), captured (4), refunded (5). Unknown states rank 0.
func (s PaymentStatus) Rank() int {
	switch s {
	case PaymentCreated:
		return 1
	case PaymentFailed:
		return 2
	case PaymentAuthorized:
		return 3
	case PaymentCaptured:
		return 4
	case PaymentRefunded:
		return 5
	}
	return 0
}

// Final reports whether polling can stop: captured, refunded or failed.
// A failed UPI payment is final for polling even though a late capture is
// still possible; the PG then sends a webhook.
func (s PaymentStatus) Final() bool {
	return s == PaymentCaptured || s == PaymentRefunded || s == PaymentFailed
}

// Payment is one payment attempt at the PG.
type Payment struct {
	ID      string
	OrderID string
	Amount  Amount
	Status  PaymentStatus
	Method  string // upi, card, …
	// VPA is the payer's UPI address, when the PG tells it.
	VPA      string
	Captured bool
	// AmountRefunded is the sum of refunds in paise.
	AmountRefunded int64
	Notes          map[string]string
	// ErrorCode, ErrorDescription and ErrorReason explain a failed payment.
	ErrorCode        string
	ErrorDescription string
	ErrorReason      string
	// RRN is the UPI retrieval reference number from the bank.
	RRN       string
	CreatedAt time.Time
}

// RefundRequest asks for a refund.
type RefundRequest struct {
	PaymentID string
	// Paise is the amount to refund, in the payment's currency. The PG
	// refuses less than 100 paise (₹1.00) and more than what remains.
	Paise int64
	// RefundID is our refund id, the idempotency key end to end. The PG
	// wants at least 10 letters, digits, hyphens and underscores; any other
	// id is mapped deterministically to such a key (IdempotencyKey). It is
	// also sent in the refund's notes (refund_id) and, when it fits, as its
	// receipt, so refund webhooks name it.
	RefundID string
	// Notes travel with the refund. A retry must repeat the request
	// exactly (amount and notes): the PG refuses a reused key with a
	// different body.
	Notes map[string]string
}

// RefundStatus is the state of a refund at the PG.
type RefundStatus string

// The states of a refund.
const (
	RefundPending   RefundStatus = "pending"
	RefundProcessed RefundStatus = "processed"
	RefundFailed    RefundStatus = "failed"
)

// Refund is a refund at the PG.
type Refund struct {
	ID        string
	PaymentID string
	Amount    Amount
	Status    RefundStatus
	// RefundID is our refund id as sent (RefundRequest.RefundID), read
	// back from the notes or the receipt.
	RefundID string
	Notes    map[string]string
	// ARN is the acquirer reference number, once the bank has it.
	ARN       string
	CreatedAt time.Time
}
