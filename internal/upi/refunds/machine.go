package refunds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// Args is the job that sends a refund to the PG and follows it until it is
// processed or failed.
type Args struct {
	RefundID string `json:"refund_id"`
}

// Kind names the job.
func (Args) Kind() string { return "upi_refund" }

// Host is what the refund machine needs of the payment machine (package
// upi). A refund's consequences on its payment are the payment machine's
// decisions, taken in the refund's transaction; the job queue and the PG are
// the payment module's, asked for at each use (its test harness swaps the
// queue after construction).
type Host interface {
	// Read reads a payment outside a transaction (not found: an
	// ocpi.ENOTFOUND error).
	Read(ctx context.Context, q store.Querier, id string) (*paymentrow.Payment, error)
	// Save writes the mutable columns of p.
	Save(ctx context.Context, tx *store.Tx, p *paymentrow.Payment) error
	// Transition moves p to a new state with an audit record (p is not
	// saved).
	Transition(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, to, actor, note string) error
	// Flag marks p for the operator.
	Flag(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, reason, note string) error
	// CreditReceipt corrects the tax invoice of a payment's receipt by
	// paise.
	CreditReceipt(ctx context.Context, tx *store.Tx, paymentID string, paise int64, reason string) error
	// InsertTx enqueues a job in tx.
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	// Refund and FetchRefund are the PG's.
	Refund(ctx context.Context, req pg.RefundRequest) (*pg.Refund, error)
	FetchRefund(ctx context.Context, refundID string) (*pg.Refund, error)
}

// Machine creates refunds, sends them to the PG and moves them through
// their states, with their consequences on the payment.
type Machine struct {
	DB     *store.DB
	Host   Host
	Events event.Emitter
	Clock  clock.Clock
	Logger *slog.Logger
	// Counter counts refund state changes by the state entered.
	Counter *prometheus.CounterVec
}

func (s *Machine) now() time.Time { return s.Clock.Now() }

func (s *Machine) micros() int64 { return s.Clock.Now().UnixMicro() }

func (s *Machine) inTx(ctx context.Context, fn func(ctx context.Context, tx *store.Tx) error) error {
	return s.DB.InTx(ctx, fn)
}

// get reads a refund by our refund_id (store.ErrNoRows when there is none).
func (s *Machine) get(ctx context.Context, refundID string) (*Refund, error) {
	return Scan(s.DB.Read().QueryRow(ctx, "SELECT "+Columns+" FROM upi_refunds WHERE refund_id = $1", refundID))
}

// CreateRefund refunds part of a payment at the operator's request. The
// refund is stored QUEUED with its job in one transaction and sent to the PG
// by the job. A repeated refund_id with the same payment and amount returns
// the first refund and sends nothing (isNew false); with anything else it is
// a conflict. The sum of refunds never exceeds the capture.
func (s *Machine) Create(ctx context.Context, req RefundRequest) (isNew bool, err error) {
	if err := req.Check(); err != nil {
		return false, err
	}
	req.PaymentID = ocpi.Key(req.PaymentID)
	if req.Reason == "" {
		req.Reason = "refund by the operator"
	}
	err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if prev, err := s.same(ctx, tx, req); prev || err != nil {
			return err
		}
		p, err := paymentrow.Lock(ctx, tx, "id = $1", req.PaymentID)
		if errors.Is(err, store.ErrNoRows) {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Field: "payment_id", Issue: "is unknown", Message: "payment " + req.PaymentID + " not found"}
		}
		if err != nil {
			return err
		}
		isNew = true
		return s.CreateTx(ctx, tx, p, req, Operator)
	})
	if store.IsUniqueViolation(err) {
		// The same refund_id was created concurrently: answer like a repeat.
		isNew = false
		err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := s.same(ctx, tx, req)
			return err
		})
	}
	if err != nil {
		return false, err
	}
	return isNew, nil
}

// same reports whether req repeats a stored refund, and is a conflict
// error when the stored one differs.
func (s *Machine) same(ctx context.Context, q store.Querier, req RefundRequest) (bool, error) {
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

// CreateTx reserves the amount on the locked payment p and stores the
// refund QUEUED with its job. The reservation is one conditional UPDATE
// (and a CHECK constraint behind it): concurrent refunds cannot together
// exceed the capture.
func (s *Machine) CreateTx(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, req RefundRequest, kind string) error {
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
	if kind == Operator && p.SettledAt != 0 {
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
			if err := s.Host.CreditReceipt(ctx, tx, p.ID, beyond, "refund "+req.RefundID+": "+req.Reason); err != nil {
				return err
			}
			req.Reason += fmt.Sprintf(" (%s beyond the excess over the cost: recorded as shortfall)", pg.FormatRupees(beyond))
		}
	}
	p.Reserved += req.Paise
	now := s.micros()
	if _, err := tx.Exec(ctx, `INSERT INTO upi_refunds (refund_id, payment_id, amount_paise, currency, status, reason, kind,
		created_at, last_updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		req.RefundID, p.ID, req.Paise, p.Amount.Currency, Queued, paymentrow.Truncate(req.Reason, 255), kind, now); err != nil {
		return err
	}
	s.Counter.WithLabelValues(Queued).Inc()
	if err := paymentrow.Audit(ctx, tx, now, p.ID, req.RefundID, "", Queued, actorOf(kind),
		fmt.Sprintf("%s refund of %s: %s", kind, pg.FormatRupees(req.Paise), req.Reason)); err != nil {
		return err
	}
	_, err = s.Host.InsertTx(ctx, tx, Args{RefundID: req.RefundID}, &river.InsertOpts{Queue: jobs.QueueMoney})
	return err
}

func actorOf(kind string) string {
	if kind == Operator {
		return paymentrow.ActorOperator
	}
	return paymentrow.ActorSystem
}

// checkDelay is the wait before asking the PG about a pending refund
// again: grows with its age, from 10 s to 10 minutes (the PG's webhook
// usually comes first).
func checkDelay(age time.Duration) time.Duration {
	return min(max(age/2, 10*time.Second), 10*time.Minute)
}

// Work sends a QUEUED refund with its refund_id as the idempotency key (a
// retry repeats the request exactly, so the PG never refunds twice); a
// retryable failure leaves it QUEUED and the job retries with backoff, a
// definitive one marks it FAILED. A PENDING refund is asked about until the
// PG has processed or failed it.
func (s *Machine) Work(ctx context.Context, refundID string) error {
	r, err := s.get(ctx, refundID)
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	switch r.Status {
	case Queued:
		p, err := s.Host.Read(ctx, s.DB.Read(), r.PaymentID)
		if err != nil {
			return err
		}
		got, err := s.Host.Refund(ctx, pg.RefundRequest{PaymentID: p.PGPaymentID, Paise: r.Paise, RefundID: r.RefundID,
			Notes: map[string]string{"payment_id": p.ID, "reason": paymentrow.Truncate(r.Reason, 250)}})
		if err != nil {
			if pg.IsRetryable(err) {
				if uerr := s.noteAttempt(ctx, r.RefundID, err); uerr != nil {
					return uerr
				}
				if wait := pg.RetryAfter(err); wait > 0 {
					// The PG said when to come back (HTTP 429).
					return river.JobSnooze(wait)
				}
				return fmt.Errorf("refund %s stays queued: %w", r.RefundID, err)
			}
			return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return s.setStatus(ctx, tx, r.RefundID, Failed, "", paymentrow.ActorPG, "the PG refused the refund: "+err.Error())
			})
		}
		err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return s.setStatus(ctx, tx, r.RefundID, StatusOf(got.Status), got.ID, paymentrow.ActorPG, "accepted by the PG as "+got.ID)
		})
		if err != nil || got.Status != pg.RefundPending {
			return err
		}
		return river.JobSnooze(checkDelay(0))
	case Pending:
		got, err := s.Host.FetchRefund(ctx, r.ID)
		if err == nil && got.Status != pg.RefundPending {
			return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				return s.setStatus(ctx, tx, r.RefundID, StatusOf(got.Status), got.ID, paymentrow.ActorPG, "reported by the PG")
			})
		}
		if err != nil && !pg.IsRetryable(err) {
			s.Logger.WarnContext(ctx, "asking the PG about a refund failed", "refund_id", r.RefundID, "error", err)
		}
		return river.JobSnooze(checkDelay(s.now().Sub(r.CreatedAt.Time)))
	}
	return nil
}

// noteAttempt records a retryable failure on a queued refund.
func (s *Machine) noteAttempt(ctx context.Context, refundID string, cause error) error {
	s.Logger.WarnContext(ctx, "refund not accepted by the PG yet; it stays queued", "refund_id", refundID, "error", cause)
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE upi_refunds SET attempts = attempts + 1, last_error = $1, last_updated = $2 WHERE refund_id = $3 AND status = $4",
			paymentrow.Truncate(cause.Error(), 500), s.micros(), refundID, Queued)
		return err
	})
}

// setStatus moves a refund forward (QUEUED → PENDING → PROCESSED |
// FAILED) with an audit record and its consequences on the payment: a
// processed refund counts as refunded (and completes a REFUNDING payment
// once all is refunded), a failed one releases its reservation and flags the
// payment for the operator.
func (s *Machine) setStatus(ctx context.Context, tx *store.Tx, refundID, to, pgRefundID, actor, note string) error {
	if found, err := tx.Lock(ctx, "upi_refunds", "status", "refund_id = $1", refundID); err != nil || !found {
		return err
	}
	r, err := Scan(tx.QueryRow(ctx, "SELECT "+Columns+" FROM upi_refunds WHERE refund_id = $1", refundID))
	if err != nil {
		return err
	}
	if Rank(to) <= Rank(r.Status) {
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
	s.Counter.WithLabelValues(to).Inc()
	s.Logger.InfoContext(ctx, "UPI refund state", "refund_id", refundID, "payment_id", r.PaymentID, "from", r.Status, "to", to, "why", note)
	if err := paymentrow.Audit(ctx, tx, now, r.PaymentID, refundID, r.Status, to, actor, note); err != nil {
		return err
	}
	if to != Processed && to != Failed {
		return nil
	}
	p, err := paymentrow.Lock(ctx, tx, "id = $1", r.PaymentID)
	if err != nil {
		return err
	}
	data := map[string]any{"refund_id": refundID, "id": pgRefundID, "payment_id": p.ID, "pg_payment_id": p.PGPaymentID,
		"amount": r.Amount, "currency": r.Currency, "reason": r.Reason, "kind": r.Kind, "status": to, "timestamp": ocpi.NewDateTime(s.now())}
	if to == Failed {
		if _, err := tx.Exec(ctx, "UPDATE upi_payments SET refund_reserved_paise = refund_reserved_paise - $1 WHERE pk = $2", r.Paise, p.PK); err != nil {
			return err
		}
		p.Reserved -= r.Paise
		if err := s.Events.Emit(ctx, tx, event.Event{Name: event.RefundFailed, Data: data}); err != nil {
			return err
		}
		if err := s.Host.Flag(ctx, tx, p, paymentrow.AttentionRefundFailed, "refund "+refundID+" of "+r.Amount+" failed: "+note); err != nil {
			return err
		}
		return s.Host.Save(ctx, tx, p)
	}
	if _, err := tx.Exec(ctx, "UPDATE upi_payments SET refunded_paise = refunded_paise + $1 WHERE pk = $2", r.Paise, p.PK); err != nil {
		return err
	}
	p.Refunded += r.Paise
	if err := s.Events.Emit(ctx, tx, event.Event{Name: event.RefundProcessed, Data: data}); err != nil {
		return err
	}
	if p.Status == paymentrow.StatusRefunding && p.Refunded+p.NotRefundable+p.SettledCost() >= p.Captured {
		if err := s.Host.Transition(ctx, tx, p, paymentrow.StatusRefunded, paymentrow.ActorPG, "refunded in full"); err != nil {
			return err
		}
	}
	return s.Host.Save(ctx, tx, p)
}

func errorNote(status, note string) string {
	if status == Failed {
		return paymentrow.Truncate(note, 500)
	}
	return ""
}

// applyRefundEvent applies a refund webhook: the refund is found by the
// PG's id or by our refund_id in its notes (when the PG's answer to our
// request was lost).
func (s *Machine) ApplyEvent(ctx context.Context, tx *store.Tx, pgRefundID, ourID string, status pg.RefundStatus, typ string) (string, error) {
	var refundID string
	err := tx.QueryRow(ctx, "SELECT refund_id FROM upi_refunds WHERE pg_refund_id = $1 AND pg_refund_id <> ''", pgRefundID).Scan(&refundID)
	if errors.Is(err, store.ErrNoRows) && ourID != "" {
		err = tx.QueryRow(ctx, "SELECT refund_id FROM upi_refunds WHERE refund_id = $1", ourID).Scan(&refundID)
	}
	if errors.Is(err, store.ErrNoRows) {
		return "ignored: not a refund of ocpihub", nil
	}
	if err != nil {
		return "", err
	}
	to := StatusOf(status)
	if err := s.setStatus(ctx, tx, refundID, to, pgRefundID, paymentrow.ActorPG, "webhook "+typ); err != nil {
		return "", err
	}
	return "applied: refund " + refundID + " " + strings.ToLower(to), nil
}
