package upi

import (
	"context"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// view turns a payment row into its summary (without the chain's tables).
func (s *Service) view(p *paymentrow.Payment, pgOrderID string) *paymentview.PaymentView {
	return paymentview.Of(p, pgOrderID, qrmap.TenantOf(p.Ref.CountryCode, p.Ref.PartyID))
}

// Outcomes returns the payments created on each of the days days ending
// with the day of last, by how they ended (paymentview.Outcomes).
func (s *Service) Outcomes(ctx context.Context, last time.Time, days int, loc *time.Location) ([]paymentview.OutcomeDay, error) {
	return paymentview.Outcomes(ctx, s.db.Read(), last, days, loc)
}

// Payment returns a payment with its whole chain.
func (s *Service) Payment(ctx context.Context, id string) (*paymentview.PaymentView, error) {
	q := s.db.Read()
	p, err := s.readPayment(ctx, q, id)
	if err != nil {
		return nil, err
	}
	o, err := orders.ByPK(ctx, q, p.OrderPK)
	if err != nil {
		return nil, err
	}
	v := s.view(p, o.PGOrderID)
	if v.Refunds, _, err = s.ListRefunds(ctx, refunds.Filter{PaymentID: p.ID}, ocpi.PageRequest{Limit: 100}); err != nil {
		return nil, err
	}
	var rid string
	if err := q.QueryRow(ctx, "SELECT id FROM upi_receipts WHERE payment_id = $1", p.ID).Scan(&rid); err == nil {
		v.Receipt = &paymentview.ReceiptLink{ID: rid, URL: s.ReceiptURL(rid)}
	} else if !isNotFound(err) {
		return nil, err
	}
	if h, held, err := findHold(ctx, q, p.ID); err != nil {
		return nil, err
	} else if held {
		v.CostHold = h.view()
	}
	if v.Audit, err = paymentview.Audit(ctx, q, p.ID); err != nil {
		return nil, err
	}
	return v, nil
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
func (s *Service) ListPayments(ctx context.Context, f PaymentFilter, pr ocpi.PageRequest) ([]*paymentview.PaymentView, ocpi.Page, error) {
	l := store.List{Table: "upi_payments p JOIN upi_orders o ON o.pk = p.order_pk", Prefix: "p",
		Columns: "p." + strings.Join(paymentrow.Cols, ", p.") + ", o.pg_order_id"}.WithPage(pr)
	if f.Status != "" {
		where(&l, "p.status = $%d", f.Status)
	}
	if f.Attention {
		l.Where = append(l.Where, "p.attention <> ''")
	}
	if f.QRRef != "" {
		where(&l, "p.qr_ref = $%d", f.QRRef)
	}
	scan := func(row interface{ Scan(...any) error }) (*paymentview.PaymentView, error) {
		var pgOrder string
		p, err := paymentrow.Scan(scanTail{row, &pgOrder})
		if err != nil {
			return nil, err
		}
		return s.view(p, pgOrder), nil
	}
	items, page, err := listPage(ctx, s.db.Read(), l, scan, func(v *paymentview.PaymentView) (int64, int64) { return v.LU, v.PK })
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
