package pg

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind classifies a failed call so the caller can decide what to do.
type Kind string

// The kinds of failure. Retryable kinds leave the outcome unknown or
// temporary: retry later with the same idempotency key. The others are the
// PG's definitive answer.
const (
	KindTimeout     Kind = "timeout"      // no answer in time (retryable)
	KindNetwork     Kind = "network"      // connection failed (retryable)
	KindServer      Kind = "server"       // HTTP 5xx (retryable)
	KindRateLimited Kind = "rate_limited" // HTTP 429, see RetryAfter (retryable)
	KindConflict    Kind = "conflict"     // HTTP 409: the same idempotent request is in progress (retryable)
	KindProtocol    Kind = "protocol"     // a 2xx answer we cannot read (retryable)
	KindRejected    Kind = "rejected"     // HTTP 4xx: the PG refuses the request (definitive)
	KindNotFound    Kind = "not_found"    // the id does not exist at the PG (definitive)
	KindAuth        Kind = "auth"         // HTTP 401/403: wrong key id or secret (definitive until reconfigured)
	KindInvalid     Kind = "invalid"      // refused before sending: the request breaks the PG's rules (definitive)
)

// Error is a failed call to the payment gateway. Code, Description, Field
// and Reason come from the PG's error body when it sent one (Razorpay:
// {"error": {"code": "BAD_REQUEST_ERROR", "description": …}}).
type Error struct {
	Op          string // what we asked: "create order", "refund", …
	Kind        Kind
	HTTPStatus  int // 0 when no answer came
	Code        string
	Description string
	Field       string
	Reason      string
	// RetryAfter is how long the PG asked us to wait (HTTP 429).
	RetryAfter time.Duration
	Err        error
}

// Error describes the failure without secrets.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("pg: " + e.Op + ": " + string(e.Kind))
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTPStatus)
	}
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	if e.Field != "" {
		b.WriteString(" [field " + e.Field + "]")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) true for a not-found answer.
func (e *Error) Is(target error) bool { return target == ErrNotFound && e.Kind == KindNotFound }

// Retryable reports whether the call may succeed later: the outcome is
// unknown (timeout, network, unreadable answer) or the PG is temporarily
// unable (5xx, 429, 409). Retry with the same idempotency key.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindTimeout, KindNetwork, KindServer, KindRateLimited, KindConflict, KindProtocol:
		return true
	}
	return false
}

// IsRetryable reports whether err is a retryable *Error (see
// Error.Retryable). Errors that are not *Error are not retryable.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable()
}

// RetryAfter returns how long the PG asked us to wait before the next
// attempt (HTTP 429 Retry-After), or 0.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// ErrNotFound matches (errors.Is) a PG answer that the id does not exist.
var ErrNotFound = errors.New("pg: not found")

// ErrSignature is wrapped by every webhook whose signature is missing or
// does not verify with any accepted secret: answer HTTP 401, change nothing.
var ErrSignature = errors.New("pg: webhook signature missing or invalid")

// ErrStale is wrapped (with ErrSignature: answer HTTP 401 too) by a
// correctly signed Cashfree webhook whose x-webhook-timestamp is not within
// CashfreeTimestampWindow of the hub's clock: a signed webhook captured on
// the way could otherwise be replayed at will.
var ErrStale = fmt.Errorf("%w: stale webhook timestamp", ErrSignature)

// ErrMalformed is wrapped by a webhook whose signature verifies but whose
// body cannot be understood (not JSON, missing ids, bad amounts): answer
// HTTP 400, change nothing.
var ErrMalformed = errors.New("pg: malformed webhook")

// ErrNotConfigured is returned by New when no PG base URL is configured.
var ErrNotConfigured = errors.New("pg: no payment gateway configured (set --pg-base-url, or --dev for the built-in simulator)")

// classify builds the error for an HTTP answer that is not 2xx.
func classify(op string, status int, body errorBody, retryAfter time.Duration) *Error {
	e := &Error{Op: op, HTTPStatus: status, Code: body.Code, Description: body.Description, Field: body.Field, Reason: body.Reason}
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind, e.RetryAfter = KindRateLimited, retryAfter
	case status == http.StatusConflict:
		e.Kind = KindConflict
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
	case status == http.StatusNotFound, status == http.StatusBadRequest && notExists(body):
		// Razorpay answers 400 "… id … does not exist" for an unknown id
		// in the path, other PGs 404.
		e.Kind = KindNotFound
	case status >= 500:
		e.Kind = KindServer
	default:
		e.Kind = KindRejected
	}
	return e
}

// notExists recognises an unknown id in the path: no field, or the id.
func notExists(b errorBody) bool {
	d := strings.ToLower(b.Description)
	return (b.Field == "" || b.Field == "id") && strings.Contains(d, "does not exist")
}

// errorBody is the PG's error object.
type errorBody struct {
	Code        string `json:"code"`
	Description string `json:"description"`
	Source      string `json:"source"`
	Step        string `json:"step"`
	Reason      string `json:"reason"`
	Field       string `json:"field"`
}
