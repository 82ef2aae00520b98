package upi

import (
	"context"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
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

	Command *CommandView `json:"command,omitempty"`
	Session *SessionView `json:"session,omitempty"`
	CDR     *CDRView     `json:"cdr,omitempty"`
	Refunds []*Refund    `json:"refunds,omitempty"`
	Receipt *ReceiptLink `json:"receipt,omitempty"`
	// CostHold is the settlement of a payment whose CDR the hub flagged:
	// both totals and the decision.
	CostHold *CostHoldView `json:"cost_hold,omitempty"`
	Audit    []AuditEntry  `json:"audit,omitempty"`

	CreatedAt   ocpi.DateTime `json:"created_at"`
	LastUpdated ocpi.DateTime `json:"last_updated"`

	pk, lu int64
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

func dt(us int64) *ocpi.DateTime {
	if us == 0 {
		return nil
	}
	d := ocpi.FromMicros(us)
	return &d
}

// view turns a payment row into its summary (without the chain's tables).
func (s *Service) view(p *payment, pgOrderID string) *PaymentView {
	f := pg.FormatRupees
	v := &PaymentView{
		ID: p.ID, PGPaymentID: p.PGPaymentID, Amount: f(p.Amount.Paise), Status: p.Status, CaptureTime: dt(p.CaptureTime),
		QRRef: p.QRRef, Currency: p.Amount.Currency, PGStatus: string(p.PGStatus), PGOrderID: pgOrderID, PayerVPA: p.PayerVPA,
		ErrorCode: p.ErrorCode, ErrorDescription: p.ErrorDescription, TenantID: TenantOf(p.Ref.CountryCode, p.Ref.PartyID),
		LocationID: p.Ref.LocationID, EVSEUID: p.Ref.EVSEUID, ConnectorID: p.Ref.ConnectorID,
		Captured: f(p.Captured), Cost: f(p.Cost), Refunded: f(p.Refunded), RefundPending: f(p.Reserved - p.Refunded),
		NotRefundable: f(p.NotRefundable), Shortfall: f(p.Shortfall), Attention: p.Attention, AttentionAt: dt(p.AttentionAt),
		CreatedAt: ocpi.FromMicros(p.CreatedAt), LastUpdated: ocpi.FromMicros(p.Updated), pk: p.PK, lu: p.Updated,
	}
	if p.CommandSentAt != 0 {
		v.Command = &CommandView{ID: p.CommandID, Type: ocpi.CommandStartSession, SentAt: ocpi.FromMicros(p.CommandSentAt), Token: p.TokenUID,
			TokenTyp: p.TokenType, Response: p.CommandResponse, Result: p.CommandResult}
	}
	if p.Session.ID != "" {
		v.Session = &SessionView{CountryCode: p.Session.CountryCode, PartyID: p.Session.PartyID, ID: p.Session.ID,
			Status: p.SessionStatus, KWh: p.SessionKWh, TotalCost: f(p.SessionCost), Start: dt(p.SessionStart), End: dt(p.SessionEnd)}
	}
	if p.CDRID != "" {
		v.CDR = &CDRView{ID: p.CDRID, TotalKWh: p.CDRKWh, TotalCost: f(p.Cost), SettledAt: dt(p.SettledAt)}
	}
	return v
}

// Payment returns a payment with its whole chain.
func (s *Service) Payment(ctx context.Context, id string) (*PaymentView, error) {
	q := s.db.Read()
	p, err := s.readPayment(ctx, q, id)
	if err != nil {
		return nil, err
	}
	o, err := orderByPK(ctx, q, p.OrderPK)
	if err != nil {
		return nil, err
	}
	v := s.view(p, o.PGOrderID)
	if v.Refunds, _, err = s.ListRefunds(ctx, RefundFilter{PaymentID: p.ID}, ocpi.PageRequest{Limit: 100}); err != nil {
		return nil, err
	}
	var rid string
	if err := q.QueryRow(ctx, "SELECT id FROM upi_receipts WHERE payment_id = $1", p.ID).Scan(&rid); err == nil {
		v.Receipt = &ReceiptLink{ID: rid, URL: s.ReceiptURL(rid)}
	} else if !isNotFound(err) {
		return nil, err
	}
	if h, held, err := findHold(ctx, q, p.ID); err != nil {
		return nil, err
	} else if held {
		v.CostHold = h.view()
	}
	rows, err := q.Query(ctx, "SELECT at, refund_id, from_state, to_state, actor, note FROM upi_audit WHERE payment_id = $1 ORDER BY pk", p.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e AuditEntry
		var at int64
		if err := rows.Scan(&at, &e.RefundID, &e.From, &e.To, &e.Actor, &e.Note); err != nil {
			return nil, err
		}
		e.At = ocpi.FromMicros(at)
		v.Audit = append(v.Audit, e)
	}
	return v, rows.Err()
}

// PaymentFilter selects payments.
type PaymentFilter struct {
	// Status is one of Statuses ("" for all).
	Status string
	// Attention keeps only the payments that need the operator.
	Attention bool
	QRRef     string
}

// ListPayments returns a page of payments (summaries), oldest change
// first.
func (s *Service) ListPayments(ctx context.Context, f PaymentFilter, pr ocpi.PageRequest) ([]*PaymentView, ocpi.Page, error) {
	l := store.List{Table: "upi_payments p JOIN upi_orders o ON o.pk = p.order_pk", Prefix: "p",
		Columns: "p." + strings.Join(paymentCols, ", p.") + ", o.pg_order_id"}.WithPage(pr)
	if f.Status != "" {
		where(&l, "p.status = $%d", f.Status)
	}
	if f.Attention {
		l.Where = append(l.Where, "p.attention <> ''")
	}
	if f.QRRef != "" {
		where(&l, "p.qr_ref = $%d", f.QRRef)
	}
	scan := func(row interface{ Scan(...any) error }) (*PaymentView, error) {
		var pgOrder string
		p, err := scanPayment(scanTail{row, &pgOrder})
		if err != nil {
			return nil, err
		}
		return s.view(p, pgOrder), nil
	}
	items, page, err := listPage(ctx, s.db.Read(), l, scan, func(v *PaymentView) (int64, int64) { return v.lu, v.pk })
	if err != nil {
		return nil, page, err
	}
	// A payment held on a cost mismatch shows both totals in the list.
	for _, v := range items {
		if v.Attention != AttentionCostMismatch {
			continue
		}
		h, held, err := findHold(ctx, s.db.Read(), v.ID)
		if err != nil {
			return nil, page, err
		}
		if held {
			v.CostHold = h.view()
		}
	}
	return items, page, nil
}

// scanTail scans a row whose last columns follow a payment's.
type scanTail struct {
	row  interface{ Scan(...any) error }
	tail *string
}

func (t scanTail) Scan(dest ...any) error { return t.row.Scan(append(dest, t.tail)...) }
