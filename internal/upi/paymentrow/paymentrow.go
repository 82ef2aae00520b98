// Package paymentrow is a UPI payment's row (upi_payments): its fields, its
// columns and scan, the row lock, and the audit record of its state
// changes. The payment machine (package upi) decides every change; this
// package only reads and writes what it decided, so the machine's
// satellites (refunds, the read side) can share the row without the
// machine.
package paymentrow

import (
	"context"
	"strings"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
)

// Payment states (upi.md §4). Terminal: FAILED, EXPIRED, SETTLED, REFUNDED
// (a FAILED payment still moves to CAPTURED when the PG captures it late).
const (
	StatusPending          = "PENDING"           // paid at the PG but not yet captured; polled
	StatusFailed           = "FAILED"            // the PG says it failed: no session
	StatusExpired          = "EXPIRED"           // still pending when the payment window closed
	StatusCaptured         = "CAPTURED"          // captured and verified; START_SESSION queued
	StatusSessionRequested = "SESSION_REQUESTED" // START_SESSION sent
	StatusCharging         = "CHARGING"          // the CPO's session carries our reference
	StatusSettled          = "SETTLED"           // CDR reconciled against the capture
	StatusRefunding        = "REFUNDING"         // a full refund is under way
	StatusRefunded         = "REFUNDED"          // refunded in full
)

// Statuses lists every payment state.
var Statuses = []string{StatusPending, StatusFailed, StatusExpired, StatusCaptured, StatusSessionRequested, StatusCharging,
	StatusSettled, StatusRefunding, StatusRefunded}

// Actors of audit records.
const (
	ActorPG       = "pg"
	ActorCPO      = "cpo"
	ActorOperator = "operator"
	ActorSystem   = "system"
)

// Attention reasons.
const (
	AttentionCDRMissing     = "cdr_missing"
	AttentionShortfall      = "shortfall"
	AttentionRefundFailed   = "refund_failed"
	AttentionSessionLate    = "session_after_refund"
	AttentionSecondSession  = "second_session"
	AttentionSecondCDR      = "second_cdr"
	AttentionCDRCurrency    = "cdr_currency"
	AttentionCreditCDR      = "credit_cdr"
	AttentionLongSession    = "session_not_completed"
	AttentionRefundedAtPG   = "refunded_outside"
	AttentionStartUndecided = "start_undelivered"
	AttentionNotRefunded    = "capture_not_refunded"
)

// Payment is a payment row.
type Payment struct {
	PK                 int64
	ID                 string
	PGPaymentID        string
	OrderPK            int64
	QRRef              string
	Ref                charger.ConnectorRef
	Amount             pg.Amount
	Status             string
	PGStatus           pg.PaymentStatus
	PayerVPA           string
	ErrorCode          string
	ErrorDescription   string
	Captured           int64
	CaptureTime        int64
	Reserved           int64
	Refunded           int64
	Cost               int64
	NotRefundable      int64
	Shortfall          int64
	TokenUID           string
	TokenType          string
	CommandID          string
	CommandSentAt      int64
	CommandResponse    string
	CommandResult      string
	Session            SessionRef
	SessionStatus      string
	SessionKWh         string
	SessionCost        int64
	SessionStart       int64
	SessionEnd         int64
	CDRID              string
	CDRKWh             string
	SettledAt          int64
	Attention          string
	AttentionAt        int64
	CreatedAt, Updated int64
}

// SettledCost is the part of a payment's capture its CDR's cost took (the
// cost less the shortfall the capture did not cover), 0 before a CDR. A
// payment being refunded in full can still be charged for when the session
// it was refunded for shows up late with a CDR: it is refunded in full once
// everything but that cost went back.
func (p *Payment) SettledCost() int64 {
	if p.SettledAt == 0 {
		return 0
	}
	return p.Cost - p.Shortfall
}

// SessionRef names the session a payment paid for.
type SessionRef struct{ CountryCode, PartyID, ID string }

// Cols are the columns of a payment row in Scan's order.
var Cols = strings.Fields(`pk id pg_payment_id order_pk qr_ref country_code party_id location_id evse_uid connector_id
	amount_paise currency status pg_status payer_vpa error_code error_description captured_paise capture_time
	refund_reserved_paise refunded_paise cost_paise not_refundable_paise shortfall_paise token_uid token_type
	command_id command_sent_at command_response command_result session_country_code session_party_id session_id
	session_status session_kwh session_cost_paise session_start session_end cdr_id cdr_kwh settled_at attention
	attention_at created_at last_updated`)

// Columns is Cols for a SELECT.
var Columns = strings.Join(Cols, ", ")

// Scan reads a payment row selected with Columns.
func Scan(row interface{ Scan(...any) error }) (*Payment, error) {
	var p Payment
	var pgStatus string
	err := row.Scan(&p.PK, &p.ID, &p.PGPaymentID, &p.OrderPK, &p.QRRef, &p.Ref.CountryCode, &p.Ref.PartyID, &p.Ref.LocationID,
		&p.Ref.EVSEUID, &p.Ref.ConnectorID, &p.Amount.Paise, &p.Amount.Currency, &p.Status, &pgStatus, &p.PayerVPA,
		&p.ErrorCode, &p.ErrorDescription, &p.Captured, &p.CaptureTime, &p.Reserved, &p.Refunded, &p.Cost, &p.NotRefundable,
		&p.Shortfall, &p.TokenUID, &p.TokenType, &p.CommandID, &p.CommandSentAt, &p.CommandResponse, &p.CommandResult,
		&p.Session.CountryCode, &p.Session.PartyID, &p.Session.ID, &p.SessionStatus, &p.SessionKWh, &p.SessionCost,
		&p.SessionStart, &p.SessionEnd, &p.CDRID, &p.CDRKWh, &p.SettledAt, &p.Attention, &p.AttentionAt, &p.CreatedAt, &p.Updated)
	p.PGStatus = pg.PaymentStatus(pgStatus)
	return &p, err
}

// Lock locks and reads a payment inside tx (a write to the row first:
// PostgreSQL takes the row lock, SQLite holds the only writer). where is
// "id = $1" or "pg_payment_id = $1".
func Lock(ctx context.Context, tx *store.Tx, where string, arg any) (*Payment, error) {
	found, err := tx.Lock(ctx, "upi_payments", "status", where, arg)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.ErrNoRows
	}
	return Scan(tx.QueryRow(ctx, "SELECT "+Columns+" FROM upi_payments WHERE "+where, arg))
}

// Audit records one state change of a payment (refundID "") or of one of
// its refunds, at at (micros); the note is cut to 1 000 bytes.
func Audit(ctx context.Context, tx *store.Tx, at int64, paymentID, refundID, from, to, actor, note string) error {
	_, err := tx.Exec(ctx, `INSERT INTO upi_audit (payment_id, refund_id, from_state, to_state, actor, note, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, paymentID, refundID, from, to, actor, Truncate(note, 1000), at)
	return err
}

// Truncate cuts s to at most n bytes.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
