// Package intake takes the payment gateway's webhooks for UPI charging: it
// verifies each one, stores it once per event id with the job that works it
// (in one transaction, so the PG gets its answer fast), and works the stored
// event in that job, handing what the PG said to the payment machine
// (package upi) or the refund machine through Host.
package intake

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// Host is what the intake needs of the payment module (package upi): the
// machines that act on what the PG says, in the event's transaction, and the
// job queue, asked for at each use (its test harness swaps the queue after
// construction).
type Host interface {
	// ApplyPayment moves a payment forward with what the PG says of it
	// (source names the webhook, for the audit trail) and returns what
	// happened, for the event log.
	ApplyPayment(ctx context.Context, tx *store.Tx, p *pg.Payment, source string) (outcome string, err error)
	// ApplyRefund moves a refund with the PG's refund webhook.
	ApplyRefund(ctx context.Context, tx *store.Tx, pgRefundID, refundID string, status pg.RefundStatus, typ string) (outcome string, err error)
	// InsertTx enqueues a job in tx.
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Intake receives and works the PG's webhooks.
type Intake struct {
	DB      *store.DB
	Gateway pg.Gateway
	Host    Host
	Clock   clock.Clock
	Logger  *slog.Logger
	// Counter counts webhooks by outcome: stored, duplicate,
	// bad_signature, stale, malformed, ignored.
	Counter *prometheus.CounterVec
}

func (in *Intake) micros() int64 { return in.Clock.Now().UnixMicro() }

// Receive authenticates a PG webhook (headers and raw body), stores it once
// per event id and enqueues its processing in the same transaction; it does
// no other work. A bad or missing signature, or a stale Cashfree timestamp
// (pg.CashfreeTimestampWindow), is EUNAUTHORIZED (HTTP 401) and stores
// nothing; a signed body we cannot read is EINVALIDJSON (HTTP 400). A
// repeated event is acknowledged and changes nothing (isNew false).
func (in *Intake) Receive(ctx context.Context, h http.Header, body []byte) (isNew bool, err error) {
	ev, err := in.Gateway.VerifyWebhook(h, body)
	switch {
	case errors.Is(err, pg.ErrStale):
		in.Counter.WithLabelValues("stale").Inc()
		in.Logger.WarnContext(ctx, "PG webhook refused: stale timestamp (a replay, or the clocks disagree)", "error", err, "remote", remoteOf(ctx))
		return false, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the webhook timestamp is missing, invalid or more than " +
			pg.CashfreeTimestampWindow.String() + " from the hub's clock", Err: err}
	case errors.Is(err, pg.ErrSignature):
		in.Counter.WithLabelValues("bad_signature").Inc()
		in.Logger.WarnContext(ctx, "PG webhook refused: bad signature", "error", err, "remote", remoteOf(ctx))
		return false, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the webhook signature is missing or invalid", Err: err}
	case errors.Is(err, pg.ErrMalformed):
		in.Counter.WithLabelValues("malformed").Inc()
		in.Logger.WarnContext(ctx, "PG webhook refused: malformed", "error", err)
		return false, &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the webhook is signed but cannot be read: " + err.Error(), Err: err}
	case err != nil:
		return false, err
	}
	if ev.Kind == pg.EventOther {
		in.Counter.WithLabelValues("ignored").Inc()
		in.Logger.DebugContext(ctx, "PG webhook ignored", "type", ev.Type, "event_id", ev.ID)
		return false, nil
	}
	var refundPG, refundID, refundStatus string
	var refundPaise int64
	if r := ev.Refund; r != nil {
		refundPG, refundID, refundStatus, refundPaise = r.ID, r.RefundID, string(r.Status), r.Amount.Paise
	}
	err = in.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var pk int64
		err := tx.QueryRow(ctx, `INSERT INTO upi_webhook_events (event_id, form, type, kind, pg_payment_id, pg_order_id, status,
			amount_paise, currency, payer_vpa, error_code, error_description, payload_signed, pg_refund_id, refund_id, refund_status,
			refund_paise, received_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
			ON CONFLICT (event_id) DO NOTHING RETURNING pk`,
			ev.ID, string(ev.Form), ev.Type, string(ev.Kind), ev.PaymentID, ev.OrderID, string(ev.Status), ev.Amount.Paise,
			ev.Amount.Currency, ev.PayerVPA, paymentrow.Truncate(ev.ErrorCode, 100), paymentrow.Truncate(ev.ErrorDescription, 500), ev.PayloadSigned,
			refundPG, refundID, refundStatus, refundPaise, in.micros(), string(body)).Scan(&pk)
		if errors.Is(err, store.ErrNoRows) {
			return nil // a repeat: the first copy is (being) worked
		}
		if err != nil {
			return err
		}
		isNew = true
		_, err = in.Host.InsertTx(ctx, tx, Args{EventPK: pk}, &river.InsertOpts{Queue: jobs.QueueMoney})
		return err
	})
	if err != nil {
		return false, err
	}
	outcome := "duplicate"
	if isNew {
		outcome = "stored"
	}
	in.Counter.WithLabelValues(outcome).Inc()
	in.Logger.InfoContext(ctx, "PG webhook received", "event_id", ev.ID, "type", ev.Type, "form", ev.Form,
		"pg_payment_id", ev.PaymentID, "new", isNew)
	return isNew, nil
}

type remoteKey struct{}

// WithRemote returns ctx carrying the caller's address, for logs.
func WithRemote(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, remoteKey{}, addr)
}

func remoteOf(ctx context.Context) string { s, _ := ctx.Value(remoteKey{}).(string); return s }

// Args is the job working one stored webhook.
type Args struct {
	EventPK int64 `json:"event_pk"`
}

// Kind names the job.
func (Args) Kind() string { return "upi_webhook" }

// storedEvent is a webhook as stored.
type storedEvent struct {
	pk                   int64
	eventID, kind, typ   string
	payment              pg.Payment
	source               string
	signed               bool
	pgRefundID, refundID string
	refundStatus         pg.RefundStatus
	refundPaise          int64
	processedAt          int64
}

// Work works the stored webhook eventPK once: a payment event goes to the
// payment machine (an unsigned one only after the PG confirmed what the
// payment is), a refund event to the refund machine, and the event is
// marked processed with their outcome in the same transaction.
func (in *Intake) Work(ctx context.Context, eventPK int64) error {
	var e storedEvent
	var status string
	var refundStatus string
	p := &e.payment
	err := in.DB.Read().QueryRow(ctx, `SELECT pk, event_id, kind, type, pg_payment_id, pg_order_id, status, amount_paise, currency,
		payer_vpa, error_code, error_description, payload_signed, pg_refund_id, refund_id, refund_status, refund_paise, processed_at
		FROM upi_webhook_events WHERE pk = $1`, eventPK).Scan(&e.pk, &e.eventID, &e.kind, &e.typ, &p.ID,
		&p.OrderID, &status, &p.Amount.Paise, &p.Amount.Currency, &p.VPA, &p.ErrorCode, &p.ErrorDescription,
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
	p.Status, e.refundStatus = pg.PaymentStatus(status), pg.RefundStatus(refundStatus)
	e.source = "webhook " + e.typ
	if e.kind == string(pg.EventPayment) && !e.signed {
		// The flat form signs only order_id|pg_payment_id: ask the PG what
		// the payment really is before acting on status or amount.
		got, err := in.Gateway.FetchPayment(ctx, p.ID)
		switch {
		case errors.Is(err, pg.ErrNotFound):
			return in.finish(ctx, e.pk, "ignored: the PG does not know the payment")
		case err != nil:
			return err
		}
		e.payment, e.source = *got, "webhook "+e.typ+" (confirmed)"
	}
	return in.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var outcome string
		var err error
		if e.kind == string(pg.EventRefund) {
			outcome, err = in.Host.ApplyRefund(ctx, tx, e.pgRefundID, e.refundID, e.refundStatus, e.typ)
		} else {
			outcome, err = in.Host.ApplyPayment(ctx, tx, &e.payment, e.source)
		}
		if err != nil {
			return err
		}
		return markProcessed(ctx, tx, e.pk, outcome, in.micros())
	})
}

// finish marks an event processed with outcome without acting on it.
func (in *Intake) finish(ctx context.Context, pk int64, outcome string) error {
	return in.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return markProcessed(ctx, tx, pk, outcome, in.micros())
	})
}

func markProcessed(ctx context.Context, tx *store.Tx, pk int64, outcome string, at int64) error {
	_, err := tx.Exec(ctx, "UPDATE upi_webhook_events SET outcome = $1, processed_at = $2 WHERE pk = $3 AND processed_at = 0",
		outcome, at, pk)
	return err
}
