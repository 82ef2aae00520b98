// Package paymentview is the read side of UPI payments: a payment as the
// operator sees it (PaymentView and the views of its chain), its audit
// trail, and the console's outcomes by day. It only reads rows; the payment
// module (package upi) assembles the chain from its own tables.
package paymentview

import (
	"context"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// PaymentView is a payment as the operator sees it, with its whole chain:
// order → payment → command → session → CDR → refunds → receipt, and the
// audit trail. Amounts are decimal rupees. The first fields are the seed's
// UpiPayment (§2.15).
type PaymentView struct {
	ID          string         `json:"id"`
	PGPaymentID string         `json:"pg_payment_id"`
	Amount      string         `json:"amount"`
	Status      string         `json:"status"`
	CaptureTime *ocpi.DateTime `json:"capture_time,omitempty"`
	QRRef       string         `json:"qr_ref"`

	Currency         string `json:"currency"`
	PGStatus         string `json:"pg_status"`
	PGOrderID        string `json:"pg_order_id"`
	PayerVPA         string `json:"payer_vpa,omitempty"`
	ErrorCode        string `json:"error_code,omitempty"`
	ErrorDescription string `json:"error_description,omitempty"`
	TenantID         string `json:"tenant_id"`
	LocationID       string `json:"location_id"`
	EVSEUID          string `json:"evse_uid"`
	ConnectorID      string `json:"connector_id"`

	Captured      string `json:"captured"`
	Cost          string `json:"cost"`
	Refunded      string `json:"refunded"`
	RefundPending string `json:"refund_pending"`
	NotRefundable string `json:"not_refundable"`
	Shortfall     string `json:"shortfall"`

	Attention   string         `json:"attention,omitempty"`
	AttentionAt *ocpi.DateTime `json:"attention_at,omitempty"`

	Command *CommandView      `json:"command,omitempty"`
	Session *SessionView      `json:"session,omitempty"`
	CDR     *CDRView          `json:"cdr,omitempty"`
	Refunds []*refunds.Refund `json:"refunds,omitempty"`
	Receipt *ReceiptLink      `json:"receipt,omitempty"`
	// CostHold is the settlement of a payment whose CDR the hub flagged:
	// both totals and the decision.
	CostHold *CostHoldView `json:"cost_hold,omitempty"`
	Audit    []AuditEntry  `json:"audit,omitempty"`

	CreatedAt   ocpi.DateTime `json:"created_at"`
	LastUpdated ocpi.DateTime `json:"last_updated"`

	// PK and LU (last_updated, µs) are the keyset cursor of a listing.
	PK int64 `json:"-"`
	LU int64 `json:"-"`
}

// CommandView is the START_SESSION of a payment.
type CommandView struct {
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type"`
	SentAt   ocpi.DateTime `json:"sent_at"`
	Token    string        `json:"token_uid"`
	TokenTyp string        `json:"token_type"`
	Response string        `json:"response,omitempty"`
	Result   string        `json:"result,omitempty"`
}

// SessionView is the session a payment paid for.
type SessionView struct {
	CountryCode string         `json:"country_code"`
	PartyID     string         `json:"party_id"`
	ID          string         `json:"id"`
	Status      string         `json:"status"`
	KWh         string         `json:"kwh"`
	TotalCost   string         `json:"total_cost"`
	Start       *ocpi.DateTime `json:"start_date_time,omitempty"`
	End         *ocpi.DateTime `json:"end_date_time,omitempty"`
}

// CDRView is the CDR that settled a payment.
type CDRView struct {
	ID        string         `json:"id"`
	TotalKWh  string         `json:"total_energy"`
	TotalCost string         `json:"total_cost"`
	SettledAt *ocpi.DateTime `json:"settled_at,omitempty"`
}

// ReceiptLink names a payment's receipt.
type ReceiptLink struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// AuditEntry is one state change of a payment or one of its refunds.
type AuditEntry struct {
	At       ocpi.DateTime `json:"at"`
	RefundID string        `json:"refund_id,omitempty"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Actor    string        `json:"actor"`
	Note     string        `json:"note,omitempty"`
}

// DateTime is a time in µs as a DateTime, nil for 0.
func DateTime(us int64) *ocpi.DateTime {
	if us == 0 {
		return nil
	}
	d := ocpi.FromMicros(us)
	return &d
}

// CostHoldView is the settlement of a payment whose CDR the hub flagged:
// both totals (decimal rupees) and what was decided.
type CostHoldView struct {
	CDRID    string `json:"cdr_id"`
	CDRTotal string `json:"cdr_total_cost"`
	// HubTotal is absent when the hub's price could not be read.
	HubTotal string        `json:"hub_total_cost,omitempty"`
	HeldAt   ocpi.DateTime `json:"held_at"`
	// SettledOn is "" while the payment waits for the operator, then "cdr"
	// or "hub".
	SettledOn string         `json:"settled_on,omitempty"`
	DecidedBy string         `json:"decided_by,omitempty"`
	DecidedAt *ocpi.DateTime `json:"decided_at,omitempty"`
}

// Of turns a payment row into its summary (without the chain's tables);
// tenant is the CPO's tenant id.
func Of(p *paymentrow.Payment, pgOrderID, tenant string) *PaymentView {
	f := pg.FormatRupees
	v := &PaymentView{
		ID: p.ID, PGPaymentID: p.PGPaymentID, Amount: f(p.Amount.Paise), Status: p.Status, CaptureTime: DateTime(p.CaptureTime),
		QRRef: p.QRRef, Currency: p.Amount.Currency, PGStatus: string(p.PGStatus), PGOrderID: pgOrderID, PayerVPA: p.PayerVPA,
		ErrorCode: p.ErrorCode, ErrorDescription: p.ErrorDescription, TenantID: tenant,
		LocationID: p.Ref.LocationID, EVSEUID: p.Ref.EVSEUID, ConnectorID: p.Ref.ConnectorID,
		Captured: f(p.Captured), Cost: f(p.Cost), Refunded: f(p.Refunded), RefundPending: f(p.Reserved - p.Refunded),
		NotRefundable: f(p.NotRefundable), Shortfall: f(p.Shortfall), Attention: p.Attention, AttentionAt: DateTime(p.AttentionAt),
		CreatedAt: ocpi.FromMicros(p.CreatedAt), LastUpdated: ocpi.FromMicros(p.Updated), PK: p.PK, LU: p.Updated,
	}
	if p.CommandSentAt != 0 {
		v.Command = &CommandView{ID: p.CommandID, Type: ocpi.CommandStartSession, SentAt: ocpi.FromMicros(p.CommandSentAt), Token: p.TokenUID,
			TokenTyp: p.TokenType, Response: p.CommandResponse, Result: p.CommandResult}
	}
	if p.Session.ID != "" {
		v.Session = &SessionView{CountryCode: p.Session.CountryCode, PartyID: p.Session.PartyID, ID: p.Session.ID,
			Status: p.SessionStatus, KWh: p.SessionKWh, TotalCost: f(p.SessionCost), Start: DateTime(p.SessionStart), End: DateTime(p.SessionEnd)}
	}
	if p.CDRID != "" {
		v.CDR = &CDRView{ID: p.CDRID, TotalKWh: p.CDRKWh, TotalCost: f(p.Cost), SettledAt: DateTime(p.SettledAt)}
	}
	return v
}

// Audit returns the audit trail of a payment and its refunds, oldest
// first.
func Audit(ctx context.Context, q store.Querier, paymentID string) ([]AuditEntry, error) {
	return store.QueryAll(ctx, q, func(row store.Row) (AuditEntry, error) {
		var e AuditEntry
		var at int64
		err := row.Scan(&at, &e.RefundID, &e.From, &e.To, &e.Actor, &e.Note)
		e.At = ocpi.FromMicros(at)
		return e, err
	}, "SELECT at, refund_id, from_state, to_state, actor, note FROM upi_audit WHERE payment_id = $1 ORDER BY pk", paymentID)
}

// OutcomeDay counts the payments created on one day by how they ended (or
// stand): the operator console's payment outcomes chart.
type OutcomeDay struct {
	// Day is the day's midnight in the location Outcomes was given.
	Day time.Time
	// Captured: money taken and none of it given back (charging, settled
	// at the full amount, or still on its way).
	Captured int64
	// RefundedFull: refunded in full, or a full refund under way
	// (REFUNDING, REFUNDED).
	RefundedFull int64
	// RefundedPartly: part of the capture went back (the excess over the
	// CDR's cost, an operator's refund).
	RefundedPartly int64
	// Failed: no money was taken (FAILED at the PG, or EXPIRED while
	// pending).
	Failed int64
}

// Outcomes returns one OutcomeDay per day of the days days ending with the
// day of last, in loc (UTC when nil), oldest first; payments still pending
// are not counted. Decision (the spec has no such report): a payment counts
// on the day it was created, in its present outcome, so a day's bars change
// as its payments are refunded.
func Outcomes(ctx context.Context, q store.Querier, last time.Time, days int, loc *time.Location) ([]OutcomeDay, error) {
	if loc == nil {
		loc = time.UTC
	}
	if days <= 0 {
		return nil, nil
	}
	l := last.In(loc)
	end := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 1)
	start := end.AddDate(0, 0, -days)
	out := make([]OutcomeDay, days)
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i)
	}
	rows, err := q.Query(ctx, `SELECT created_at, status, captured_paise, refunded_paise FROM upi_payments
		WHERE created_at >= $1 AND created_at < $2 AND status <> $3`, start.UnixMicro(), end.UnixMicro(), paymentrow.StatusPending)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var created, captured, refunded int64
		var status string
		if err := rows.Scan(&created, &status, &captured, &refunded); err != nil {
			return nil, err
		}
		t := time.UnixMicro(created).In(loc)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		i := 0
		for i < days-1 && !out[i+1].Day.After(day) {
			i++
		}
		d := &out[i]
		switch {
		case status == paymentrow.StatusFailed || status == paymentrow.StatusExpired:
			d.Failed++
		case status == paymentrow.StatusRefunding || status == paymentrow.StatusRefunded || (captured > 0 && refunded >= captured):
			d.RefundedFull++
		case refunded > 0:
			d.RefundedPartly++
		default:
			d.Captured++
		}
	}
	return out, rows.Err()
}
