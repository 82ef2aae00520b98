// Package event is the contract between the domain packages that cause
// events (a location changed, a session started, a payment was refunded) and
// the outgoing webhooks that deliver them.
//
// An event is emitted inside the transaction of the state change that caused
// it, through an Emitter; the webhook service is the Emitter in a running hub
// and stores the event and enqueues its deliveries in that same transaction,
// so an event exists exactly when its cause committed.
package event

import (
	"context"
	"slices"

	"github.com/ocpihub/ocpihub/internal/store"
)

// Event names. The first three are the seed's; the others are ours (upi.md
// §8 and the module issues). Names are stable: subscribers filter on them.
const (
	LocationUpdated       = "location.updated"
	SessionStarted        = "session.started"
	SessionStopped        = "session.stopped"
	CDRCreated            = "cdr.created"
	CDRMissing            = "cdr.missing"
	CDRCostMismatch       = "cdr.cost_mismatch"
	CommandResult         = "command.result"
	TokenUpdated          = "token.updated"
	PaymentCaptured       = "payment.captured"
	PaymentFailed         = "payment.failed"
	PaymentNeedsAttention = "payment.needs_attention"
	RefundProcessed       = "refund.processed"
	RefundFailed          = "refund.failed"
	ReceiptIssued         = "receipt.issued"
	// ReceiptDelivered and ReceiptDeliveryFailed report a receipt's SMS
	// reaching the driver's phone, or failing for good.
	ReceiptDelivered       = "receipt.delivered"
	ReceiptDeliveryFailed  = "receipt.delivery_failed"
	FinancialAdviceFlagged = "financial_advice.flagged"
	PartyStatusChanged     = "party.status_changed"
	WebhookDisabled        = "webhook.disabled"
	// PartnerDegraded and PartnerRecovered report a partner's receiver
	// failing and answering again (partner health); the operator's only.
	PartnerDegraded  = "partner.degraded"
	PartnerRecovered = "partner.recovered"
)

// Names returns every event name, in the order above: the names a webhook
// subscription may ask for. A name added above must be added here.
func Names() []string {
	return []string{
		LocationUpdated, SessionStarted, SessionStopped, CDRCreated, CDRMissing, CDRCostMismatch, CommandResult, TokenUpdated,
		PaymentCaptured, PaymentFailed, PaymentNeedsAttention, RefundProcessed, RefundFailed, ReceiptIssued, ReceiptDelivered, ReceiptDeliveryFailed,
		FinancialAdviceFlagged, PartyStatusChanged, WebhookDisabled, PartnerDegraded, PartnerRecovered,
	}
}

// Known reports whether name is an event name.
func Known(name string) bool {
	return slices.Contains(Names(), name)
}

// Party names a party an event concerns: country code and party id as
// stored (upper case), and the role it plays.
type Party struct {
	Role        string `json:"role"`
	CountryCode string `json:"country_code"`
	PartyID     string `json:"party_id"`
}

// Event is one thing that happened.
type Event struct {
	// Name is one of the names above.
	Name string
	// Data is the event's payload; it is marshalled to JSON as it is.
	Data any
	// Parties are the parties the event concerns. A subscription owned by a
	// partner platform receives an event only when one of the platform's
	// parties is listed here; Public events (directory changes, which every
	// eMSP may see) go to every subscriber. Subscriptions of the operator
	// receive everything.
	Parties []Party
	Public  bool
}

// Emitter records events inside the transaction of their cause.
type Emitter interface {
	Emit(ctx context.Context, tx *store.Tx, e Event) error
}

// Discard is an Emitter that records nothing: for hubs assembled without
// webhooks (unit tests of a single domain package).
type Discard struct{}

// Emit implements Emitter.
func (Discard) Emit(context.Context, *store.Tx, Event) error { return nil }

// OrDiscard returns e, or Discard when e is nil: what a service given no
// emitter records its events with.
func OrDiscard(e Emitter) Emitter {
	if e == nil {
		return Discard{}
	}
	return e
}
