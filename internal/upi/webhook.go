package upi

import (
	"context"
	"errors"
	"net/http"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ReceiveWebhook authenticates a PG webhook (headers and raw body), stores
// it once per event id and enqueues its processing in the same
// transaction; it does no other work, so the PG gets its answer fast. A bad
// or missing signature, or a stale Cashfree timestamp
// (pg.CashfreeTimestampWindow), is EUNAUTHORIZED (HTTP 401) and stores
// nothing; a
// signed body we cannot read is EINVALIDJSON (HTTP 400). A repeated event
// is acknowledged and changes nothing (isNew false).
func (s *Service) ReceiveWebhook(ctx context.Context, h http.Header, body []byte) (isNew bool, err error) {
	if !s.Enabled() {
		return false, ErrPaymentsOff
	}
	ev, err := s.gw.VerifyWebhook(h, body)
	switch {
	case errors.Is(err, pg.ErrStale):
		s.metrics.webhooks.WithLabelValues("stale").Inc()
		s.logger.WarnContext(ctx, "PG webhook refused: stale timestamp (a replay, or the clocks disagree)", "error", err, "remote", remoteOf(ctx))
		return false, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the webhook timestamp is missing, invalid or more than " +
			pg.CashfreeTimestampWindow.String() + " from the hub's clock", Err: err}
	case errors.Is(err, pg.ErrSignature):
		s.metrics.webhooks.WithLabelValues("bad_signature").Inc()
		s.logger.WarnContext(ctx, "PG webhook refused: bad signature", "error", err, "remote", remoteOf(ctx))
		return false, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the webhook signature is missing or invalid", Err: err}
	case errors.Is(err, pg.ErrMalformed):
		s.metrics.webhooks.WithLabelValues("malformed").Inc()
		s.logger.WarnContext(ctx, "PG webhook refused: malformed", "error", err)
		return false, &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the webhook is signed but cannot be read: " + err.Error(), Err: err}
	case err != nil:
		return false, err
	}
	if ev.Kind == pg.EventOther {
		s.metrics.webhooks.WithLabelValues("ignored").Inc()
		s.logger.DebugContext(ctx, "PG webhook ignored", "type", ev.Type, "event_id", ev.ID)
		return false, nil
	}
	var refundPG, refundID, refundStatus string
	var refundPaise int64
	if r := ev.Refund; r != nil {
		refundPG, refundID, refundStatus, refundPaise = r.ID, r.RefundID, string(r.Status), r.Amount.Paise
	}
	err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var pk int64
		err := tx.QueryRow(ctx, `INSERT INTO upi_webhook_events (event_id, form, type, kind, pg_payment_id, pg_order_id, status,
			amount_paise, currency, payer_vpa, error_code, error_description, payload_signed, pg_refund_id, refund_id, refund_status,
			refund_paise, received_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
			ON CONFLICT (event_id) DO NOTHING RETURNING pk`,
			ev.ID, string(ev.Form), ev.Type, string(ev.Kind), ev.PaymentID, ev.OrderID, string(ev.Status), ev.Amount.Paise,
			ev.Amount.Currency, ev.PayerVPA, truncate(ev.ErrorCode, 100), truncate(ev.ErrorDescription, 500), ev.PayloadSigned,
			refundPG, refundID, refundStatus, refundPaise, s.micros(), string(body)).Scan(&pk)
		if errors.Is(err, store.ErrNoRows) {
			return nil // a repeat: the first copy is (being) worked
		}
		if err != nil {
			return err
		}
		isNew = true
		_, err = s.jobs.InsertTx(ctx, tx, webhookArgs{EventPK: pk}, &river.InsertOpts{Queue: jobs.QueueMoney})
		return err
	})
	if err != nil {
		return false, err
	}
	outcome := "duplicate"
	if isNew {
		outcome = "stored"
	}
	s.metrics.webhooks.WithLabelValues(outcome).Inc()
	s.logger.InfoContext(ctx, "PG webhook received", "event_id", ev.ID, "type", ev.Type, "form", ev.Form,
		"pg_payment_id", ev.PaymentID, "new", isNew)
	return isNew, nil
}

type remoteKey struct{}

// WithRemote returns ctx carrying the caller's address, for logs.
func WithRemote(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, remoteKey{}, addr)
}

func remoteOf(ctx context.Context) string { s, _ := ctx.Value(remoteKey{}).(string); return s }

// webhookArgs is the job working one stored webhook.
type webhookArgs struct {
	EventPK int64 `json:"event_pk"`
}

func (webhookArgs) Kind() string { return "upi_webhook" }

type webhookWorker struct {
	river.WorkerDefaults[webhookArgs]
	s *Service
}

// storedEvent is a webhook as stored.
type storedEvent struct {
	pk                   int64
	eventID, kind, typ   string
	obs                  observation
	signed               bool
	pgRefundID, refundID string
	refundStatus         pg.RefundStatus
	refundPaise          int64
	processedAt          int64
}

func (w *webhookWorker) Work(ctx context.Context, job *river.Job[webhookArgs]) error {
	s := w.s
	var e storedEvent
	var status string
	var refundStatus string
	err := s.db.Read().QueryRow(ctx, `SELECT pk, event_id, kind, type, pg_payment_id, pg_order_id, status, amount_paise, currency,
		payer_vpa, error_code, error_description, payload_signed, pg_refund_id, refund_id, refund_status, refund_paise, processed_at
		FROM upi_webhook_events WHERE pk = $1`, job.Args.EventPK).Scan(&e.pk, &e.eventID, &e.kind, &e.typ, &e.obs.PGPaymentID,
		&e.obs.PGOrderID, &status, &e.obs.Amount.Paise, &e.obs.Amount.Currency, &e.obs.VPA, &e.obs.ErrorCode, &e.obs.ErrorDescription,
		&e.signed, &e.pgRefundID, &e.refundID, &refundStatus, &e.refundPaise, &e.processedAt)
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.processedAt != 0 {
		return nil
	}
	e.obs.Status, e.refundStatus = pg.PaymentStatus(status), pg.RefundStatus(refundStatus)
	e.obs.Source = "webhook " + e.typ
	if e.kind == string(pg.EventPayment) && !e.signed {
		// The flat form signs only order_id|pg_payment_id: ask the PG what
		// the payment really is before acting on status or amount.
		p, err := s.gw.FetchPayment(ctx, e.obs.PGPaymentID)
		switch {
		case errors.Is(err, pg.ErrNotFound):
			return s.finishEvent(ctx, e.pk, "ignored: the PG does not know the payment")
		case err != nil:
			return err
		}
		e.obs = observationOf(p, "webhook "+e.typ+" (confirmed)")
	}
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var outcome string
		var err error
		if e.kind == string(pg.EventRefund) {
			outcome, err = s.refunder.ApplyEvent(ctx, tx, e.pgRefundID, e.refundID, e.refundStatus, e.typ)
		} else {
			outcome, err = s.applyPayment(ctx, tx, e.obs)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE upi_webhook_events SET outcome = $1, processed_at = $2 WHERE pk = $3 AND processed_at = 0",
			outcome, s.micros(), e.pk)
		return err
	})
}

func (s *Service) finishEvent(ctx context.Context, pk int64, outcome string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE upi_webhook_events SET outcome = $1, processed_at = $2 WHERE pk = $3 AND processed_at = 0",
			outcome, s.micros(), pk)
		return err
	})
}
