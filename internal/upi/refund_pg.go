package upi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// refundArgs is the job that sends a refund to the PG and follows it until
// it is processed or failed.
type refundArgs struct {
	RefundID string `json:"refund_id"`
}

func (refundArgs) Kind() string { return "upi_refund" }

type refundWorker struct {
	river.WorkerDefaults[refundArgs]
	s *Service
}

// refundCheckDelay is the wait before asking the PG about a pending refund
// again: grows with its age, from 10 s to 10 minutes (the PG's webhook
// usually comes first).
func refundCheckDelay(age time.Duration) time.Duration {
	return min(max(age/2, 10*time.Second), 10*time.Minute)
}

// Work sends a QUEUED refund with its refund_id as the idempotency key (a
// retry repeats the request exactly, so the PG never refunds twice); a
// retryable failure leaves it QUEUED and the job retries with backoff, a
// definitive one marks it FAILED. A PENDING refund is asked about until the
// PG has processed or failed it.
func (w *refundWorker) Work(ctx context.Context, job *river.Job[refundArgs]) error {
	s := w.s
	r, err := s.Refund(ctx, job.Args.RefundID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	switch r.Status {
	case RefundQueued:
		p, err := s.readPayment(ctx, s.db.Read(), r.PaymentID)
		if err != nil {
			return err
		}
		got, err := s.gw.Refund(ctx, pg.RefundRequest{PaymentID: p.PGPaymentID, Paise: r.Paise, RefundID: r.RefundID,
			Notes: map[string]string{"payment_id": p.ID, "reason": truncate(r.Reason, 250)}})
		if err != nil {
			if pg.IsRetryable(err) {
				if uerr := s.noteRefundAttempt(ctx, r.RefundID, err); uerr != nil {
					return uerr
				}
				if wait := pg.RetryAfter(err); wait > 0 {
					// The PG said when to come back (HTTP 429).
					return river.JobSnooze(wait)
				}
				return fmt.Errorf("refund %s stays queued: %w", r.RefundID, err)
			}
			return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return s.setRefundStatus(ctx, tx, r.RefundID, RefundFailed, "", actorPG, "the PG refused the refund: "+err.Error())
			})
		}
		err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return s.setRefundStatus(ctx, tx, r.RefundID, refunds.StatusOf(got.Status), got.ID, actorPG, "accepted by the PG as "+got.ID)
		})
		if err != nil || got.Status != pg.RefundPending {
			return err
		}
		return river.JobSnooze(refundCheckDelay(0))
	case RefundPending:
		got, err := s.gw.FetchRefund(ctx, r.ID)
		if err == nil && got.Status != pg.RefundPending {
			return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return s.setRefundStatus(ctx, tx, r.RefundID, refunds.StatusOf(got.Status), got.ID, actorPG, "reported by the PG")
			})
		}
		if err != nil && !pg.IsRetryable(err) {
			s.logger.WarnContext(ctx, "asking the PG about a refund failed", "refund_id", r.RefundID, "error", err)
		}
		return river.JobSnooze(refundCheckDelay(s.now().Sub(r.CreatedAt.Time)))
	}
	return nil
}

// noteRefundAttempt records a retryable failure on a queued refund.
func (s *Service) noteRefundAttempt(ctx context.Context, refundID string, cause error) error {
	s.logger.WarnContext(ctx, "refund not accepted by the PG yet; it stays queued", "refund_id", refundID, "error", cause)
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE upi_refunds SET attempts = attempts + 1, last_error = $1, last_updated = $2 WHERE refund_id = $3 AND status = $4",
			truncate(cause.Error(), 500), s.micros(), refundID, RefundQueued)
		return err
	})
}

// setRefundStatus moves a refund forward (QUEUED → PENDING → PROCESSED |
// FAILED) with an audit record and its consequences on the payment: a
// processed refund counts as refunded (and completes a REFUNDING payment
// once all is refunded), a failed one releases its reservation and flags the
// payment for the operator.
func (s *Service) setRefundStatus(ctx context.Context, tx *store.Tx, refundID, to, pgRefundID, actor, note string) error {
	n, err := tx.Exec(ctx, "UPDATE upi_refunds SET status = status WHERE refund_id = $1", refundID)
	if err != nil || n == 0 {
		return err
	}
	r, err := refunds.Scan(tx.QueryRow(ctx, "SELECT "+refunds.Columns+" FROM upi_refunds WHERE refund_id = $1", refundID))
	if err != nil {
		return err
	}
	if refunds.Rank(to) <= refunds.Rank(r.Status) {
		if pgRefundID != "" && r.ID == "" {
			_, err = tx.Exec(ctx, "UPDATE upi_refunds SET pg_refund_id = $1 WHERE pk = $2", pgRefundID, r.PK)
		}
		return err
	}
	if pgRefundID == "" {
		pgRefundID = r.ID
	}
	now := s.micros()
	if _, err := tx.Exec(ctx, "UPDATE upi_refunds SET status = $1, pg_refund_id = $2, last_error = $3, last_updated = $4 WHERE pk = $5",
		to, pgRefundID, errorNote(to, note), now, r.PK); err != nil {
		return err
	}
	s.metrics.refunds.WithLabelValues(to).Inc()
	s.logger.InfoContext(ctx, "UPI refund state", "refund_id", refundID, "payment_id", r.PaymentID, "from", r.Status, "to", to, "why", note)
	if err := audit(ctx, tx, now, r.PaymentID, refundID, r.Status, to, actor, note); err != nil {
		return err
	}
	if to != RefundProcessed && to != RefundFailed {
		return nil
	}
	p, err := lockPayment(ctx, tx, "id = $1", r.PaymentID)
	if err != nil {
		return err
	}
	data := map[string]any{"refund_id": refundID, "id": pgRefundID, "payment_id": p.ID, "pg_payment_id": p.PGPaymentID,
		"amount": r.Amount, "currency": r.Currency, "reason": r.Reason, "kind": r.Kind, "status": to, "timestamp": ocpi.NewDateTime(s.now())}
	if to == RefundFailed {
		if _, err := tx.Exec(ctx, "UPDATE upi_payments SET refund_reserved_paise = refund_reserved_paise - $1 WHERE pk = $2", r.Paise, p.PK); err != nil {
			return err
		}
		p.Reserved -= r.Paise
		if err := s.events.Emit(ctx, tx, event.Event{Name: event.RefundFailed, Data: data}); err != nil {
			return err
		}
		if err := s.flag(ctx, tx, p, AttentionRefundFailed, "refund "+refundID+" of "+r.Amount+" failed: "+note); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	if _, err := tx.Exec(ctx, "UPDATE upi_payments SET refunded_paise = refunded_paise + $1 WHERE pk = $2", r.Paise, p.PK); err != nil {
		return err
	}
	p.Refunded += r.Paise
	if err := s.events.Emit(ctx, tx, event.Event{Name: event.RefundProcessed, Data: data}); err != nil {
		return err
	}
	if p.Status == StatusRefunding && p.Refunded+p.NotRefundable+p.SettledCost() >= p.Captured {
		if err := s.transition(ctx, tx, p, StatusRefunded, actorPG, "refunded in full"); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, p)
}

func errorNote(status, note string) string {
	if status == RefundFailed {
		return truncate(note, 500)
	}
	return ""
}

// applyRefundEvent applies a refund webhook: the refund is found by the
// PG's id or by our refund_id in its notes (when the PG's answer to our
// request was lost).
func (s *Service) applyRefundEvent(ctx context.Context, tx *store.Tx, e storedEvent) (string, error) {
	var refundID string
	err := tx.QueryRow(ctx, "SELECT refund_id FROM upi_refunds WHERE pg_refund_id = $1 AND pg_refund_id <> ''", e.pgRefundID).Scan(&refundID)
	if errors.Is(err, store.ErrNoRows) && e.refundID != "" {
		err = tx.QueryRow(ctx, "SELECT refund_id FROM upi_refunds WHERE refund_id = $1", e.refundID).Scan(&refundID)
	}
	if errors.Is(err, store.ErrNoRows) {
		return "ignored: not a refund of ocpihub", nil
	}
	if err != nil {
		return "", err
	}
	to := refunds.StatusOf(e.refundStatus)
	if err := s.setRefundStatus(ctx, tx, refundID, to, e.pgRefundID, actorPG, "webhook "+e.typ); err != nil {
		return "", err
	}
	return "applied: refund " + refundID + " " + strings.ToLower(to), nil
}
