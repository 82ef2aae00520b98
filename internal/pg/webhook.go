package pg

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// Form is the shape of an incoming webhook.
type Form string

// The webhook forms of upi.md §3.
const (
	// FormRazorpay: X-Razorpay-Signature = hex HMAC-SHA256(secret, raw
	// body); event id in x-razorpay-event-id.
	FormRazorpay Form = "razorpay"
	// FormCashfree: x-webhook-signature = base64 HMAC-SHA256(secret,
	// x-webhook-timestamp + raw body), the timestamp within
	// CashfreeTimestampWindow of the hub's clock; event id in
	// x-idempotency-key.
	FormCashfree Form = "cashfree"
	// FormFlat is the seed's form: {pg_payment_id, order_id, status, amount,
	// payer_vpa, signature} with signature = hex HMAC-SHA256(secret,
	// order_id + "|" + pg_payment_id).
	FormFlat Form = "flat"
)

// EventKind says what an Event is about.
type EventKind string

// The kinds of event.
const (
	EventPayment EventKind = "payment" // a payment changed state
	EventRefund  EventKind = "refund"  // a refund changed state
	EventOther   EventKind = "other"   // anything else: acknowledge and ignore
)

// Event is a verified webhook, normalised across forms.
type Event struct {
	// ID identifies the delivery for dedupe: the PG's event id header, or,
	// when the form has none, a key derived from the content (flat form:
	// "flat:" + pg_payment_id + ":" + status). Redeliveries of one event
	// carry the same ID.
	ID   string
	Form Form
	// Type is the PG's event name: "payment.captured",
	// "PAYMENT_SUCCESS_WEBHOOK", or the flat form's status.
	Type string
	Kind EventKind
	// PaymentID (pg_payment_id), OrderID, Status, Amount and PayerVPA
	// describe the payment (for refund events, as far as the PG tells).
	PaymentID string
	OrderID   string
	Status    PaymentStatus
	Amount    Amount
	PayerVPA  string
	Notes     map[string]string
	// ErrorCode and ErrorDescription explain a failed payment.
	ErrorCode        string
	ErrorDescription string
	// Refund is set for refund events.
	Refund *Refund
	// At is when the PG says the event happened (zero when it does not).
	At time.Time
	// PayloadSigned is false for the flat form, whose signature covers only
	// order_id and pg_payment_id: confirm the status and amount with
	// FetchPayment before acting on them.
	PayloadSigned bool
	// Raw is the body exactly as received.
	Raw []byte
}

// WebhookConfig holds the secrets that verify webhooks.
type WebhookConfig struct {
	// Secrets: the current one first, then previous ones accepted during a
	// rotation.
	Secrets []string
	// PreviousUntil ends the rotation window (zero: no end).
	PreviousUntil time.Time
}

// Verifier authenticates and parses incoming webhooks. It is safe for
// concurrent use.
type Verifier struct {
	secrets       [][]byte
	previousUntil time.Time
	clock         clock.Clock
}

// NewVerifier returns a verifier for the configured secrets; clk decides
// when the rotation window ends (nil: the real clock).
func NewVerifier(cfg WebhookConfig, clk clock.Clock) *Verifier {
	clk = clock.OrReal(clk)
	v := &Verifier{previousUntil: cfg.PreviousUntil, clock: clk}
	for _, s := range cfg.Secrets {
		if s != "" {
			v.secrets = append(v.secrets, []byte(s))
		}
	}
	return v
}

// Verify recognises the form from the headers (X-Razorpay-Signature,
// x-webhook-signature, else the flat form's signature field), checks the
// signature against every accepted secret in constant time, and returns the
// normalised event. Errors wrap ErrSignature (HTTP 401) or ErrMalformed
// (HTTP 400).
func (v *Verifier) Verify(h http.Header, body []byte) (*Event, error) {
	switch {
	case h.Get("X-Razorpay-Signature") != "":
		return v.VerifyRazorpay(h, body)
	case h.Get("X-Webhook-Signature") != "":
		return v.VerifyCashfree(h, body)
	default:
		return v.VerifyFlat(body)
	}
}

// VerifyRazorpay verifies and parses a Razorpay webhook.
func (v *Verifier) VerifyRazorpay(h http.Header, body []byte) (*Event, error) {
	sig, err := hex.DecodeString(strings.TrimSpace(h.Get("X-Razorpay-Signature")))
	if err != nil || len(sig) != sha256.Size {
		return nil, fmt.Errorf("%w: X-Razorpay-Signature is not a hex SHA-256 HMAC", ErrSignature)
	}
	if !v.matches(sig, body) {
		return nil, fmt.Errorf("%w: X-Razorpay-Signature does not match the body", ErrSignature)
	}
	ev, err := parseRazorpay(body)
	return finished(ev, err, h.Get("X-Razorpay-Event-Id"), body)
}

// VerifyCashfree verifies and parses a Cashfree webhook.
func (v *Verifier) VerifyCashfree(h http.Header, body []byte) (*Event, error) {
	ts := h.Get("X-Webhook-Timestamp")
	if ts == "" {
		return nil, fmt.Errorf("%w: x-webhook-timestamp is missing", ErrSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h.Get("X-Webhook-Signature")))
	if err != nil || len(sig) != sha256.Size {
		return nil, fmt.Errorf("%w: x-webhook-signature is not a base64 SHA-256 HMAC", ErrSignature)
	}
	signed := make([]byte, 0, len(ts)+len(body))
	signed = append(append(signed, ts...), body...)
	if !v.matches(sig, signed) {
		return nil, fmt.Errorf("%w: x-webhook-signature does not match the timestamp and body", ErrSignature)
	}
	if err := v.fresh(ts); err != nil {
		return nil, err
	}
	ev, err := parseCashfree(body)
	return finished(ev, err, h.Get("X-Idempotency-Key"), body)
}

// CashfreeTimestampWindow is how far a Cashfree webhook's
// x-webhook-timestamp may be from the hub's clock, in either direction,
// for the webhook to be acted on.
//
// Decided here (upi.md is silent): the timestamp is part of what Cashfree
// signs, so checking it bounds the replay of a captured webhook to five
// minutes; the window also absorbs clock skew between Cashfree and the hub,
// hence both directions. A webhook outside it is refused like a bad
// signature (HTTP 401, nothing stored). A PG retry carrying an old
// timestamp is refused too; the payment is then learnt by the hub's status
// polling and reconciliation, which never depended on webhooks alone.
//
// Razorpay signs the body only and sends no timestamp header; its body's
// created_at is signed but is the event's time, which legitimate retries
// keep for hours, so no window is applied to it: its replays are bounded
// by the event-id dedupe and the forward-only payment state. The flat form
// has neither.
const CashfreeTimestampWindow = 5 * time.Minute

// fresh checks a Cashfree x-webhook-timestamp against the clock: Unix time
// in milliseconds, as Cashfree sends it (a value below 10^11 is read as
// seconds, which no millisecond time since 1973 is).
func (v *Verifier) fresh(ts string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%w: x-webhook-timestamp %q is not a Unix time in milliseconds", ErrStale, truncateHeader(ts))
	}
	at := time.UnixMilli(n)
	if n < 1e11 {
		at = time.Unix(n, 0)
	}
	now := v.clock.Now()
	if d := now.Sub(at); d > CashfreeTimestampWindow || d < -CashfreeTimestampWindow {
		return fmt.Errorf("%w: x-webhook-timestamp %s is %s from the hub's clock %s (at most %s either way)",
			ErrStale, at.UTC().Format(time.RFC3339), d.Round(time.Second), now.UTC().Format(time.RFC3339), CashfreeTimestampWindow)
	}
	return nil
}

// truncateHeader keeps a header value short for an error message.
func truncateHeader(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// VerifyFlat verifies and parses the seed's flat webhook. A body that is
// not a JSON object carrying a signature has no signature: ErrSignature.
func (v *Verifier) VerifyFlat(body []byte) (*Event, error) {
	var f flatBody
	if err := json.Unmarshal(body, &f); err != nil {
		var probe struct {
			Signature string `json:"signature"`
		}
		if json.Unmarshal(body, &probe) != nil || probe.Signature == "" {
			return nil, fmt.Errorf("%w: no signature header and no signature field", ErrSignature)
		}
		// Signed but unreadable (a bad amount): check the signature first
		// so a forger learns nothing about our parser.
		var ids struct {
			PaymentID string `json:"pg_payment_id"`
			OrderID   string `json:"order_id"`
		}
		_ = json.Unmarshal(body, &ids)
		if sig, derr := hex.DecodeString(probe.Signature); derr != nil || !v.matches(sig, []byte(ids.OrderID+"|"+ids.PaymentID)) {
			return nil, fmt.Errorf("%w: the signature does not match order_id|pg_payment_id", ErrSignature)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if f.Signature == "" {
		return nil, fmt.Errorf("%w: no signature header and no signature field", ErrSignature)
	}
	sig, err := hex.DecodeString(strings.TrimSpace(f.Signature))
	if err != nil || len(sig) != sha256.Size {
		return nil, fmt.Errorf("%w: signature is not a hex SHA-256 HMAC", ErrSignature)
	}
	if !v.matches(sig, []byte(f.OrderID+"|"+f.PaymentID)) {
		return nil, fmt.Errorf("%w: the signature does not match order_id|pg_payment_id", ErrSignature)
	}
	ev, err := f.event()
	return finished(ev, err, "", body)
}

// matches reports whether sig is the HMAC-SHA256 of msg under an accepted
// secret. Every accepted secret is tried, each compared in constant time.
func (v *Verifier) matches(sig, msg []byte) bool {
	ok := false
	for i, s := range v.secrets {
		if i > 0 && !v.previousUntil.IsZero() && !v.clock.Now().Before(v.previousUntil) {
			break
		}
		m := hmac.New(sha256.New, s)
		m.Write(msg)
		if hmac.Equal(m.Sum(nil), sig) {
			ok = true
		}
	}
	return ok
}

// finished completes the parse (ev, err) of a verified body: a body that
// did not parse is ErrMalformed; an event gets what every form shares, the
// raw body and an id: id (the PG's, from a header), else the one the form
// derives, else one derived from the content.
func finished(ev *Event, err error, id string, body []byte) (*Event, error) {
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	ev.Raw = body
	if id != "" {
		ev.ID = id
	}
	if ev.ID == "" {
		sum := sha256.Sum256(body)
		ev.ID = "sha256:" + hex.EncodeToString(sum[:])
	}
	return ev, nil
}
