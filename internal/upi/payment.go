package upi

import (
	"context"
	"errors"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
)

// readPayment reads a payment outside a transaction.
func (s *Service) readPayment(ctx context.Context, q store.Querier, id string) (*paymentrow.Payment, error) {
	p, err := paymentrow.Scan(q.QueryRow(ctx, "SELECT "+paymentrow.Columns+" FROM upi_payments WHERE id = $1", ocpi.Key(id)))
	if errors.Is(err, store.ErrNoRows) {
		return nil, errNotFound("payment " + id)
	}
	return p, err
}

// save writes the mutable columns of p.
func (s *Service) save(ctx context.Context, tx *store.Tx, p *paymentrow.Payment) error {
	p.Updated = s.micros()
	_, err := tx.Exec(ctx, `UPDATE upi_payments SET status = $1, pg_status = $2, payer_vpa = $3, error_code = $4,
		error_description = $5, captured_paise = $6, capture_time = $7, cost_paise = $8, not_refundable_paise = $9,
		shortfall_paise = $10, token_uid = $11, token_type = $12, command_sent_at = $13, command_response = $14,
		command_result = $15, session_country_code = $16, session_party_id = $17, session_id = $18, session_status = $19,
		session_kwh = $20, session_cost_paise = $21, session_start = $22, session_end = $23, cdr_id = $24, cdr_kwh = $25,
		settled_at = $26, attention = $27, attention_at = $28, last_updated = $29, command_id = $31 WHERE pk = $30`,
		p.Status, string(p.PGStatus), p.PayerVPA, p.ErrorCode, p.ErrorDescription, p.Captured, p.CaptureTime, p.Cost,
		p.NotRefundable, p.Shortfall, p.TokenUID, p.TokenType, p.CommandSentAt, p.CommandResponse, p.CommandResult,
		p.Session.CountryCode, p.Session.PartyID, p.Session.ID, p.SessionStatus, p.SessionKWh, p.SessionCost, p.SessionStart,
		p.SessionEnd, p.CDRID, p.CDRKWh, p.SettledAt, p.Attention, p.AttentionAt, p.Updated, p.PK, p.CommandID)
	return err
}

// transition moves p to a new state with an audit record. It does not save
// p: the caller saves once after all its changes.
func (s *Service) transition(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, to, actor, note string) error {
	if p.Status == to {
		return nil
	}
	from := p.Status
	p.Status = to
	s.metrics.transitions.WithLabelValues(to).Inc()
	s.logger.InfoContext(ctx, "UPI payment state", "payment_id", p.ID, "pg_payment_id", p.PGPaymentID, "from", from, "to", to, "why", note)
	return paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", from, to, actor, note)
}

// flag marks p for the operator: the reason, an audit record, the alert
// metric and the payment.needs_attention event (cdr.missing too for a
// missing CDR).
func (s *Service) flag(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, reason, note string) error {
	p.Attention, p.AttentionAt = reason, s.micros()
	s.metrics.alerts.WithLabelValues(reason).Inc()
	s.logger.WarnContext(ctx, "UPI payment needs attention", "payment_id", p.ID, "reason", reason, "why", note)
	if err := paymentrow.Audit(ctx, tx, p.AttentionAt, p.ID, "", p.Status, p.Status, paymentrow.ActorSystem, "attention "+reason+": "+note); err != nil {
		return err
	}
	data := map[string]any{"payment_id": p.ID, "pg_payment_id": p.PGPaymentID, "reason": reason, "description": note,
		"status": p.Status, "location_id": p.Ref.LocationID, "evse_uid": p.Ref.EVSEUID, "connector_id": p.Ref.ConnectorID}
	if err := s.events.Emit(ctx, tx, event.Event{Name: event.PaymentNeedsAttention, Data: data}); err != nil {
		return err
	}
	if reason == paymentrow.AttentionCDRMissing {
		cpo := event.Party{Role: "CPO", CountryCode: p.Ref.CountryCode, PartyID: p.Ref.PartyID}
		return s.events.Emit(ctx, tx, event.Event{Name: event.CDRMissing, Parties: []event.Party{cpo}, Data: map[string]any{
			"payment_id": p.ID, "authorization_reference": p.ID, "session_id": p.Session.ID,
			"location_id": p.Ref.LocationID, "evse_uid": p.Ref.EVSEUID, "timestamp": ocpi.NewDateTime(s.now())}})
	}
	return nil
}

// ResolveAttention clears a payment's attention flag once an operator has
// dealt with it; the note goes to the audit trail. A payment held on a CDR
// cost mismatch needs a decision: Resolve.
func (s *Service) ResolveAttention(ctx context.Context, id, note string) (*paymentview.PaymentView, error) {
	return s.Resolve(ctx, id, Resolution{Note: note})
}

// paymentEvent is the data of payment events.
func (s *Service) paymentEvent(p *paymentrow.Payment) map[string]any {
	return map[string]any{
		"payment_id": p.ID, "pg_payment_id": p.PGPaymentID, "qr_ref": p.QRRef, "status": p.Status,
		"amount": pg.FormatRupees(p.Amount.Paise), "currency": p.Amount.Currency,
		"location_id": p.Ref.LocationID, "evse_uid": p.Ref.EVSEUID, "connector_id": p.Ref.ConnectorID,
		"timestamp": ocpi.NewDateTime(s.now()),
	}
}

func fmtPaise(p int64, currency string) string {
	return fmt.Sprintf("%s %s", pg.FormatRupees(p), currency)
}
