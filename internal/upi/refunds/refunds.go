// Package refunds is what a UPI refund is: its states and kinds, the operator's request and its checks, the
// refund as the operator sees it and its row (upi_refunds), and how the PG's refund status maps to its
// states; and the refund machine (Machine): creating a refund on a locked payment, its job that sends it to the
// PG and follows it, and the moves of its states with their consequences on the payment, which it asks the payment
// machine (package upi, through Host) to decide.
package refunds

import (
	"regexp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
)

// MinPaise is the PG's smallest refund, ₹1.00: a smaller excess is
// recorded as not refundable.
const MinPaise = 100

// Refund states (upi.md §5).
const (
	Queued    = "QUEUED"    // not yet accepted by the PG; the job retries
	Pending   = "PENDING"   // accepted by the PG, not yet processed
	Processed = "PROCESSED" // the money went back
	Failed    = "FAILED"    // refused for good: the operator decides
)

// Refund kinds.
const (
	Operator = "operator" // asked through the API or the CLI
	Full     = "full"     // the start failed, or the payment may not start a session
	Excess   = "excess"   // the CDR cost less than the capture
)

// RefundRequest asks for a refund. RefundID is the idempotency key end to
// end.
type RefundRequest struct {
	RefundID  string
	PaymentID string
	Paise     int64
	Reason    string
}

// Refund is a refund as the operator sees it. ID is the PG's id of the
// refund ("" until the PG accepted it); RefundID is ours.
type Refund struct {
	ID          string        `json:"id"`
	RefundID    string        `json:"refund_id"`
	PaymentID   string        `json:"payment_id"`
	Amount      string        `json:"amount"`
	Currency    string        `json:"currency"`
	Status      string        `json:"status"`
	Reason      string        `json:"reason"`
	Kind        string        `json:"kind"`
	Attempts    int           `json:"attempts"`
	LastError   string        `json:"last_error,omitempty"`
	CreatedAt   ocpi.DateTime `json:"created_at"`
	LastUpdated ocpi.DateTime `json:"last_updated"`

	// PK and LU (last_updated, µs) are the keyset cursor of a listing;
	// Paise is the amount.
	PK    int64 `json:"-"`
	LU    int64 `json:"-"`
	Paise int64 `json:"-"`
}

// Columns are the columns of a refund row in Scan's order.
const Columns = `pk, pg_refund_id, refund_id, payment_id, amount_paise, currency, status, reason, kind, attempts, last_error,
	created_at, last_updated`

// Scan reads a refund row (Columns).
func Scan(row interface{ Scan(...any) error }) (*Refund, error) {
	var r Refund
	var created int64
	err := row.Scan(&r.PK, &r.ID, &r.RefundID, &r.PaymentID, &r.Paise, &r.Currency, &r.Status, &r.Reason, &r.Kind, &r.Attempts,
		&r.LastError, &created, &r.LU)
	r.Amount, r.CreatedAt, r.LastUpdated = pg.FormatRupees(r.Paise), ocpi.FromMicros(created), ocpi.FromMicros(r.LU)
	return &r, err
}

var refundIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// Check checks a request (the fields a 2001 names).
func (r *RefundRequest) Check() error {
	c := ocpi.NewCheck("")
	if r.RefundID == "" {
		c.Fail("refund_id", "is required: it is the idempotency key")
	} else if !refundIDRE.MatchString(r.RefundID) {
		c.Fail("refund_id", "must be 1 to 64 letters, digits, dots, colons, hyphens or underscores")
	}
	c.CiString("payment_id", r.PaymentID, 36, true)
	switch {
	case c.Failed():
	case r.Paise <= 0:
		c.Fail("refund_amount", "must be positive")
	case r.Paise < MinPaise:
		c.Fail("refund_amount", "must be at least 1.00: the payment gateway refunds no less")
	}
	c.String("reason", r.Reason, 255, false)
	return c.Err()
}

// Filter selects refunds.
type Filter struct {
	Status    string
	PaymentID string
}

// StatusOf is the refund state of the PG's refund status.
func StatusOf(st pg.RefundStatus) string {
	switch st {
	case pg.RefundProcessed:
		return Processed
	case pg.RefundFailed:
		return Failed
	}
	return Pending
}

// Rank orders refund states: a refund moves only to a higher rank.
func Rank(status string) int {
	switch status {
	case Queued:
		return 1
	case Pending:
		return 2
	case Processed, Failed:
		return 3
	}
	return 0
}
