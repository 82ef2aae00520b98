// Package sms sends transactional text messages through a bulk-SMS
// provider and reads its delivery reports (DLR). Two adapters: MSG91, the
// shape of a widely used Indian provider's template ("flow") API with the
// fields India's TRAI DLT rules require (a registered sender header, the DLT
// template id and the principal entity id), and Signed, a JSON POST to any
// URL signed with HMAC-SHA256 like ocpihub's webhooks, for other providers
// behind a small bridge.
//
// Every message is a registered template with variables: the text a
// provider delivers is the template with the variables filled in, so the
// variables are what the hub controls. DLT limits a variable to 30
// characters; a longer one is refused before anything is sent.
package sms

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxVarLen is the longest template variable DLT accepts, in characters;
// MaxLinkLen the longest link (a template's URL variable, whose domain is
// whitelisted with the template).
const (
	MaxVarLen  = 30
	MaxLinkLen = 64
)

// Vars are a receipt message's template variables (amount and energy at
// most MaxVarLen characters, the link at most MaxLinkLen).
type Vars struct {
	// Amount is what was paid ("₹227.12"), Energy the energy ("12.5 kWh"),
	// Link the receipt's short URL.
	Amount string `json:"amount"`
	Energy string `json:"energy"`
	Link   string `json:"link"`
}

// Message is one SMS to send.
type Message struct {
	// To is the number in E.164 ("+919876543210").
	To string
	// Reference is the sender's id of the message, echoed in its delivery
	// reports.
	Reference string
	Vars      Vars
}

// Check validates a message; an error names the offending field.
func (m Message) Check() error {
	if len(m.To) < 8 || len(m.To) > 16 || m.To[0] != '+' || !digits(m.To[1:]) {
		return &Error{Field: "to", Issue: "must be a number in E.164 form (+919876543210)"}
	}
	if m.Reference == "" || len(m.Reference) > 64 {
		return &Error{Field: "reference", Issue: "must have 1 to 64 characters"}
	}
	for _, v := range []struct {
		name, v string
		max     int
	}{{"amount", m.Vars.Amount, MaxVarLen}, {"energy", m.Vars.Energy, MaxVarLen}, {"link", m.Vars.Link, MaxLinkLen}} {
		if v.v == "" {
			return &Error{Field: v.name, Issue: "is required"}
		}
		if n := utf8.RuneCountInString(v.v); n > v.max {
			return &Error{Field: v.name, Issue: fmt.Sprintf("has %d characters; this DLT template variable has at most %d", n, v.max)}
		}
	}
	if !strings.HasPrefix(m.Vars.Link, "https://") && !strings.HasPrefix(m.Vars.Link, "http://") {
		return &Error{Field: "link", Issue: "must be an http(s) URL"}
	}
	return nil
}

// Error is a message or report the hub refuses; Field names what is wrong.
type Error struct {
	Field, Issue string
}

func (e *Error) Error() string { return "sms: " + e.Field + " " + e.Issue }

// Delivery states of a report.
const (
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
)

// Report is a provider's delivery report of one message.
type Report struct {
	// Reference is the sender's id of the message (Message.Reference);
	// ProviderID the provider's, when it names one.
	Reference  string `json:"reference"`
	ProviderID string `json:"provider_id,omitempty"`
	// Status is StatusDelivered or StatusUndelivered; Reason says why a
	// message was not delivered.
	Status string    `json:"status"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// ErrForged is a delivery report whose authentication fails.
var ErrForged = errors.New("sms: the delivery report is not authenticated")

// Gateway sends messages and authenticates their delivery reports.
type Gateway interface {
	// Send submits a message and returns the provider's id of it. An
	// error from Check or a refusal of the message itself is permanent
	// (IsPermanent); others may be retried.
	Send(ctx context.Context, m Message) (providerID string, err error)
	// Reports authenticates a delivery-report callback and reads its
	// reports; ErrForged when it is not the provider's.
	Reports(header http.Header, query map[string][]string, body []byte) ([]Report, error)
}

// PermanentError is a send the provider refused for good (a bad number, a
// template mismatch): retrying cannot help.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// IsPermanent reports whether a send error is permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	var e *Error
	return errors.As(err, &p) || errors.As(err, &e)
}

// Signature headers of the Signed adapter and its reports: id, Unix
// timestamp, and "v1," + base64(HMAC-SHA256(secret, id + "." + timestamp +
// "." + body)).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far a signed report's timestamp may be from the clock.
const Tolerance = 5 * time.Minute

// Sign returns the signature header value of a body.
func Sign(secret, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%s.%d.", id, ts)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SetSignature signs a request body into its headers.
func SetSignature(h http.Header, secret, id string, now time.Time, body []byte) {
	ts := now.Unix()
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, Sign(secret, id, ts, body))
}

// Verify checks a signed body's headers against secret at now.
func Verify(h http.Header, secret string, now time.Time, body []byte) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if secret == "" || id == "" || tsText == "" || sigs == "" {
		return ErrForged
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrForged
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return ErrForged
	}
	want := Sign(secret, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if subtle.ConstantTimeCompare([]byte(s), []byte(want)) == 1 {
			return nil
		}
	}
	return ErrForged
}

// Text is the message a receipt template renders to, as the simulator and
// the log show it; the provider renders its registered copy.
func Text(v Vars) string {
	return "Paid " + v.Amount + " for " + v.Energy + " of EV charging. Your receipt: " + v.Link
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
