package upi

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// Refunds (package refunds) under the names the hub uses.

// MinRefundPaise is the PG's smallest refund, ₹1.00: a smaller excess is
// recorded as not refundable.
const MinRefundPaise = refunds.MinPaise

// Refund states (upi.md §5) and kinds.
const (
	RefundQueued    = refunds.Queued
	RefundPending   = refunds.Pending
	RefundProcessed = refunds.Processed
	RefundFailed    = refunds.Failed
	RefundOperator  = refunds.Operator
	RefundFull      = refunds.Full
	RefundExcess    = refunds.Excess
)

type (
	// RefundRequest asks for a refund.
	RefundRequest = refunds.RefundRequest
	// Refund is a refund as the operator sees it.
	Refund = refunds.Refund
	// RefundFilter selects refunds.
	RefundFilter = refunds.Filter
)

// CreateRefund refunds part of a payment at the operator's request. The
// refund is stored QUEUED with its job in one transaction and sent to the PG
// by the job. A repeated refund_id with the same payment and amount returns
// the first refund and sends nothing (isNew false); with anything else it is
// a conflict. The sum of refunds never exceeds the capture.
func (s *Service) CreateRefund(ctx context.Context, req RefundRequest) (r *Refund, isNew bool, err error) {
	if err := req.Check(); err != nil {
		return nil, false, err
	}
	req.PaymentID = ocpi.Key(req.PaymentID)
	if req.Reason == "" {
		req.Reason = "refund by the operator"
	}
	err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if prev, err := s.sameRefund(ctx, tx, req); prev || err != nil {
			return err
		}
		p, err := lockPayment(ctx, tx, "id = $1", req.PaymentID)
		if errors.Is(err, store.ErrNoRows) {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Field: "payment_id", Issue: "is unknown", Message: "payment " + req.PaymentID + " not found"}
		}
		if err != nil {
			return err
		}
		isNew = true
		return s.createRefundTx(ctx, tx, p, req, RefundOperator)
	})
	if store.IsUniqueViolation(err) {
		// The same refund_id was created concurrently: answer like a repeat.
		isNew = false
		err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := s.sameRefund(ctx, tx, req)
			return err
		})
	}
	if err != nil {
		return nil, false, err
	}
	r, err = s.Refund(ctx, req.RefundID)
	return r, isNew, err
}

// sameRefund reports whether req repeats a stored refund, and is a conflict
// error when the stored one differs.
func (s *Service) sameRefund(ctx context.Context, q store.Querier, req RefundRequest) (bool, error) {
	var payment string
	var paise int64
	err := q.QueryRow(ctx, "SELECT payment_id, amount_paise FROM upi_refunds WHERE refund_id = $1", req.RefundID).Scan(&payment, &paise)
	if errors.Is(err, store.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if payment != req.PaymentID || paise != req.Paise {
		return true, &ocpi.Error{Code: ocpi.ECONFLICT, Field: "refund_id", Issue: "is already used for another refund",
			Message: fmt.Sprintf("refund_id %s was used for %s of payment %s; a refund_id names one refund", req.RefundID, pg.FormatRupees(paise), payment)}
	}
	return true, nil
}

// createRefundTx reserves the amount on the locked payment p and stores the
// refund QUEUED with its job. The reservation is one conditional UPDATE
// (and a CHECK constraint behind it): concurrent refunds cannot together
// exceed the capture.
func (s *Service) createRefundTx(ctx context.Context, tx *store.Tx, p *payment, req RefundRequest, kind string) error {
	if p.Captured <= 0 {
		return &ocpi.Error{Code: ocpi.EINVALID, Field: "payment_id", Issue: "has no captured amount",
			Message: "payment " + p.ID + " is " + p.Status + ": nothing was captured to refund"}
	}
	n, err := tx.Exec(ctx, `UPDATE upi_payments SET refund_reserved_paise = refund_reserved_paise + $1
		WHERE pk = $2 AND refund_reserved_paise + $1 <= captured_paise`, req.Paise, p.PK)
	if err != nil {
		return err
	}
	if n == 0 {
		left := p.Captured - p.Reserved
		return &ocpi.Error{Code: ocpi.EINVALID, Field: "refund_amount", Issue: "exceeds what remains of the capture",
			Message: fmt.Sprintf("refund of %s exceeds what remains of payment %s: %s of %s captured", pg.FormatRupees(req.Paise), p.ID,
				pg.FormatRupees(left), pg.FormatRupees(p.Captured))}
	}
	if kind == RefundOperator && p.SettledAt != 0 {
		// After the CDR, a refund beyond what the capture still owes the
		// driver is the operator's gift: the cost it no longer covers is
		// recorded as shortfall, so captured = cost + refunded + not
		// refundable − shortfall still holds.
		owed := max(p.Captured-p.Cost-p.NotRefundable+p.Shortfall-p.Reserved, 0)
		if beyond := req.Paise - owed; beyond > 0 {
			if _, err := tx.Exec(ctx, "UPDATE upi_payments SET shortfall_paise = shortfall_paise + $1 WHERE pk = $2", beyond, p.PK); err != nil {
				return err
			}
			p.Shortfall += beyond
			if err := s.creditReceipt(ctx, tx, p.ID, beyond, "refund "+req.RefundID+": "+req.Reason); err != nil {
				return err
			}
			req.Reason += fmt.Sprintf(" (%s beyond the excess over the cost: recorded as shortfall)", pg.FormatRupees(beyond))
		}
	}
	p.Reserved += req.Paise
	now := s.micros()
	if _, err := tx.Exec(ctx, `INSERT INTO upi_refunds (refund_id, payment_id, amount_paise, currency, status, reason, kind,
		created_at, last_updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		req.RefundID, p.ID, req.Paise, p.Amount.Currency, RefundQueued, truncate(req.Reason, 255), kind, now); err != nil {
		return err
	}
	s.metrics.refunds.WithLabelValues(RefundQueued).Inc()
	if err := audit(ctx, tx, now, p.ID, req.RefundID, "", RefundQueued, actorOf(kind),
		fmt.Sprintf("%s refund of %s: %s", kind, pg.FormatRupees(req.Paise), req.Reason)); err != nil {
		return err
	}
	_, err = s.jobs.InsertTx(ctx, tx, refundArgs{RefundID: req.RefundID}, &river.InsertOpts{Queue: jobs.QueueMoney})
	return err
}

func actorOf(kind string) string {
	if kind == RefundOperator {
		return actorOperator
	}
	return actorSystem
}

// Refund returns a refund by our refund_id.
func (s *Service) Refund(ctx context.Context, refundID string) (*Refund, error) {
	r, err := refunds.Scan(s.db.Read().QueryRow(ctx, "SELECT "+refunds.Columns+" FROM upi_refunds WHERE refund_id = $1", refundID))
	if errors.Is(err, store.ErrNoRows) {
		return nil, errNotFound("refund " + refundID)
	}
	return r, err
}

// ListRefunds returns a page of refunds, oldest change first.
func (s *Service) ListRefunds(ctx context.Context, f RefundFilter, p ocpi.PageRequest) ([]*Refund, ocpi.Page, error) {
	l := store.List{Table: "upi_refunds", Columns: refunds.Columns}.WithPage(p)
	if f.Status != "" {
		where(&l, "status = $%d", f.Status)
	}
	if f.PaymentID != "" {
		where(&l, "payment_id = $%d", ocpi.Key(f.PaymentID))
	}
	return listPage(ctx, s.db.Read(), l, refunds.Scan, func(r *Refund) (int64, int64) { return r.LU, r.PK })
}
