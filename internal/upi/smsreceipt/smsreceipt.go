// Package smsreceipt sends a charging receipt to the driver by SMS and keeps its deliveries: the
// upi_receipt_deliveries rows and the per-number daily cap (sms_daily), the send job with its retries, the
// provider's delivery reports, and the outcome audited on the payment's chain and announced
// (receipt.delivered / receipt.delivery_failed). The payment module records a delivery in its own transaction
// (Record) and enqueues Args; it gives the sender its receipts and its audit at construction.
package smsreceipt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/sms"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// States of a receipt's delivery.
const (
	DeliveryQueued      = "queued"
	DeliverySent        = "sent"
	DeliveryDelivered   = "delivered"
	DeliveryUndelivered = "undelivered"
	DeliveryFailed      = "failed"
)

// ChannelSMS is the channel of a delivery by SMS.
const ChannelSMS = "sms"

// Delivery is one sending of a receipt to the driver: its state, its
// attempts, the provider's id and what went wrong last. The number is
// shown masked.
type Delivery struct {
	ID          string         `json:"id"`
	ReceiptID   string         `json:"receipt_id"`
	PaymentID   string         `json:"payment_id"`
	Channel     string         `json:"channel"`
	Destination string         `json:"destination"`
	Status      string         `json:"status"`
	Attempts    int            `json:"attempts"`
	ProviderID  string         `json:"provider_id,omitempty"`
	LastError   string         `json:"last_error,omitempty"`
	ReportedAt  *ocpi.DateTime `json:"reported_at,omitempty"`
	CreatedAt   ocpi.DateTime  `json:"created_at"`
	UpdatedAt   ocpi.DateTime  `json:"updated_at"`
	phone       string
	phoneKey    string
}

const deliveryColumns = `id, receipt_id, payment_id, channel, destination, status, attempts, provider_id, last_error, reported_at,
	created_at, updated_at, phone, phone_key`

func scanDelivery(row store.Row) (*Delivery, error) {
	var d Delivery
	var reported, created, updated int64
	if err := row.Scan(&d.ID, &d.ReceiptID, &d.PaymentID, &d.Channel, &d.Destination, &d.Status, &d.Attempts, &d.ProviderID,
		&d.LastError, &reported, &created, &updated, &d.phone, &d.phoneKey); err != nil {
		return nil, err
	}
	if reported != 0 {
		t := ocpi.NewDateTime(time.UnixMicro(reported))
		d.ReportedAt = &t
	}
	d.CreatedAt, d.UpdatedAt = ocpi.NewDateTime(time.UnixMicro(created)), ocpi.NewDateTime(time.UnixMicro(updated))
	return &d, nil
}

// Record records a delivery of a receipt by SMS to a (sealed) number, in
// the caller's transaction; the caller enqueues its job (Args). destination
// is the number as shown (masked).
func (s *Sender) Record(ctx context.Context, tx *store.Tx, id, receiptID, paymentID, sealed, key, destination string) (*Delivery, error) {
	now := s.micros()
	d := &Delivery{ID: id, ReceiptID: receiptID, PaymentID: paymentID, Channel: ChannelSMS,
		Destination: destination, Status: DeliveryQueued, CreatedAt: ocpi.NewDateTime(time.UnixMicro(now))}
	d.UpdatedAt = d.CreatedAt
	if _, err := tx.Exec(ctx, `INSERT INTO upi_receipt_deliveries (id, receipt_id, payment_id, channel, phone, phone_key, destination,
		status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		d.ID, receiptID, paymentID, ChannelSMS, sealed, key, d.Destination, DeliveryQueued, now); err != nil {
		return nil, err
	}
	return d, nil
}

// Args is the job that sends one receipt SMS.
type Args struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return "upi_receipt_sms" }

type worker struct {
	river.WorkerDefaults[Args]
	s *Sender
}

// Worker is the job's worker, to register with the job client.
func (s *Sender) Worker() river.Worker[Args] { return &worker{s: s} }

// NextRetry retries a send with the module's backoff.
func (w *worker) NextRetry(job *river.Job[Args]) time.Time {
	return w.s.now().Add(w.s.cfg.RetryDelay(job.Attempt))
}

// Work sends a queued SMS: the per-number daily cap is counted at the
// first attempt, the provider is called, and the delivery is marked sent;
// a failure is retried with backoff up to Config.Attempts and then, or
// at once when the provider refuses the message for good, marked failed,
// audited on the payment's chain and announced (receipt.delivery_failed).
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	s := w.s
	d, err := s.delivery(ctx, s.db.Read(), job.Args.DeliveryID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != DeliveryQueued || s.sms == nil {
		return nil
	}
	if d.phone == "" {
		return s.failDelivery(ctx, d, "the phone number was erased before the SMS could be sent")
	}
	if d.Attempts == 0 {
		capped := false
		err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			day := s.now().In(ist).Format(time.DateOnly)
			var sent int
			err := tx.QueryRow(ctx, `INSERT INTO sms_daily (phone_key, day, sent) VALUES ($1, $2, 1)
				ON CONFLICT (phone_key, day) DO UPDATE SET sent = sms_daily.sent + 1 RETURNING sent`, d.phoneKey, day).Scan(&sent)
			if err != nil {
				return err
			}
			if capped = sent > s.cfg.DailyCap; capped {
				return errCapped
			}
			return nil
		})
		if errors.Is(err, errCapped) {
			return s.failDelivery(ctx, d, fmt.Sprintf("the number has had its %d receipt SMS today", s.cfg.DailyCap))
		}
		if err != nil {
			return err
		}
	}
	r, err := s.cfg.Receipt(ctx, d.ReceiptID)
	if err != nil {
		return err
	}
	to, err := s.box.Open(d.phone)
	if err != nil {
		return err
	}
	providerID, sendErr := s.sms.Send(ctx, sms.Message{To: to, Reference: d.ID, Vars: smsVars(r)})
	d.Attempts++
	if sendErr == nil {
		return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			// Its delivery report may have come first: the state it set
			// stays.
			_, err := tx.Exec(ctx, `UPDATE upi_receipt_deliveries SET status = CASE WHEN status = $6 THEN $1 ELSE status END,
				attempts = $2, provider_id = $3, updated_at = $4 WHERE id = $5`, DeliverySent, d.Attempts, providerID, s.micros(), d.ID, DeliveryQueued)
			return err
		})
	}
	s.logger.WarnContext(ctx, "receipt SMS not sent", "delivery_id", d.ID, "receipt_id", d.ReceiptID, "attempt", d.Attempts, "error", sendErr)
	if sms.IsPermanent(sendErr) || d.Attempts >= s.cfg.Attempts {
		return s.failDelivery(ctx, d, fmt.Sprintf("after %d attempts: %v", d.Attempts, sendErr))
	}
	if err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE upi_receipt_deliveries SET attempts = $1, last_error = $2, updated_at = $3 WHERE id = $4",
			d.Attempts, truncate(sendErr.Error(), 300), s.micros(), d.ID)
		return err
	}); err != nil {
		return err
	}
	return sendErr
}

var errCapped = errors.New("daily SMS cap reached")

// smsVars are a receipt's template variables: the amount paid, the energy,
// and the receipt's link.
func smsVars(r *receipt.Receipt) sms.Vars {
	link := r.ShortURL
	if link == "" {
		link = r.URL
	}
	return sms.Vars{Amount: pg.Amount{Paise: paiseOfRupees(r.Amount), Currency: r.Currency}.Display(), Energy: r.EnergyKWh + " kWh",
		Link: link}
}

func paiseOfRupees(s string) int64 {
	p, _ := pg.ParseRupees(s)
	return p
}

// failDelivery marks a delivery failed for good, audits it on the
// payment's chain and announces it.
func (s *Sender) failDelivery(ctx context.Context, d *Delivery, why string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, `UPDATE upi_receipt_deliveries SET status = $1, attempts = $2, last_error = $3, updated_at = $4
			WHERE id = $5 AND status IN ($6, $7)`, DeliveryFailed, d.Attempts, truncate(why, 300), s.micros(), d.ID, DeliveryQueued, DeliverySent)
		if n == 0 || err != nil {
			return err
		}
		return s.deliveryOutcome(ctx, tx, d, DeliveryFailed, why)
	})
}

// deliveryOutcome audits a delivery's final state on its payment's chain
// and emits receipt.delivered or receipt.delivery_failed.
func (s *Sender) deliveryOutcome(ctx context.Context, tx *store.Tx, d *Delivery, status, why string) error {
	name, note := event.ReceiptDelivered, "receipt "+d.ReceiptID+" SMS delivered to "+d.Destination
	if status != DeliveryDelivered {
		name, note = event.ReceiptDeliveryFailed, "receipt "+d.ReceiptID+" SMS to "+d.Destination+" "+status+": "+why
	}
	if err := s.cfg.Audit(ctx, tx, d.PaymentID, note); err != nil {
		return err
	}
	data := map[string]any{"receipt_id": d.ReceiptID, "payment_id": d.PaymentID, "delivery_id": d.ID, "channel": d.Channel,
		"destination": d.Destination, "status": status}
	if why != "" {
		data["reason"] = why
	}
	return s.events.Emit(ctx, tx, event.Event{Name: name, Data: data})
}

// delivery reads one delivery.
func (s *Sender) delivery(ctx context.Context, q store.Querier, id string) (*Delivery, error) {
	d, err := scanDelivery(q.QueryRow(ctx, "SELECT "+deliveryColumns+" FROM upi_receipt_deliveries WHERE id = $1", id))
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "delivery not found"}
	}
	return d, err
}

// Deliveries returns the deliveries of a receipt, oldest first.
func (s *Sender) Deliveries(ctx context.Context, receiptID string) ([]*Delivery, error) {
	out, err := store.QueryAll(ctx, s.db.Read(), scanDelivery, "SELECT "+deliveryColumns+" FROM upi_receipt_deliveries WHERE receipt_id = $1 ORDER BY pk", receiptID)
	if out == nil && err == nil {
		out = []*Delivery{}
	}
	return out, err
}

// ErrForgedReport answers a delivery report that fails authentication.
var ErrForgedReport = &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "the delivery report is not authenticated"}

// ReceiveSMSReports takes a delivery-report callback of the SMS provider:
// authenticated by the adapter (a forged one is refused and changes
// nothing), each report moves its delivery from sent (or queued, when the
// report overtakes the answer) to delivered or undelivered, once; the
// outcome is audited and announced. Reports of unknown messages are
// skipped; a callback that names none it knows is answered not found, so
// the provider retries it (it may have overtaken the answer to the send).
// It returns how many deliveries changed.
func (s *Sender) ReceiveSMSReports(ctx context.Context, header http.Header, query map[string][]string, body []byte) (int, error) {
	if s.sms == nil {
		return 0, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "SMS is not configured"}
	}
	reports, err := s.sms.Reports(header, query, body)
	if errors.Is(err, sms.ErrForged) {
		s.logger.WarnContext(ctx, "forged or unauthenticated SMS delivery report refused")
		return 0, ErrForgedReport
	}
	var bad *sms.Error
	if errors.As(err, &bad) {
		return 0, ocpi.Invalid(bad.Field, bad.Issue)
	}
	if err != nil {
		return 0, err
	}
	changed, known := 0, 0
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		changed, known = 0, 0
		for _, r := range reports {
			var d *Delivery
			var err error
			if r.Reference != "" {
				d, err = s.delivery(ctx, tx, r.Reference)
			} else {
				d, err = scanDelivery(tx.QueryRow(ctx, "SELECT "+deliveryColumns+" FROM upi_receipt_deliveries WHERE provider_id = $1 AND channel = $2",
					r.ProviderID, ChannelSMS))
			}
			if isNotFound(err) {
				s.logger.InfoContext(ctx, "SMS delivery report of an unknown message ignored", "provider_id", r.ProviderID)
				continue
			}
			if err != nil {
				return err
			}
			known++
			status := DeliveryDelivered
			if r.Status != sms.StatusDelivered {
				status = DeliveryUndelivered
			}
			n, err := tx.Exec(ctx, `UPDATE upi_receipt_deliveries SET status = $1, last_error = $2, reported_at = $3, updated_at = $3
				WHERE id = $4 AND status IN ($5, $6)`, status, truncate(r.Reason, 300), s.micros(), d.ID, DeliverySent, DeliveryQueued)
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			changed++
			if err := s.deliveryOutcome(ctx, tx, d, status, strings.TrimSpace(r.Reason)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && known == 0 && len(reports) > 0 {
		// A report may overtake the provider's answer to the send (its id
		// is not stored yet): not found, so the provider tries again.
		return 0, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no message of this delivery report is known (yet)"}
	}
	return changed, err
}

// Config is what the sender needs from the payment module.
type Config struct {
	// DailyCap is how many receipt SMS one number gets a day (IST).
	DailyCap int
	// Attempts bounds the sends of one delivery.
	Attempts int
	// RetryDelay is the backoff between attempts.
	RetryDelay func(attempt int) time.Duration
	// Receipt reads the receipt a delivery sends.
	Receipt func(ctx context.Context, id string) (*receipt.Receipt, error)
	// Audit records a delivery's outcome on its payment's chain, in tx.
	Audit func(ctx context.Context, tx *store.Tx, paymentID, note string) error
}

// Deps are the sender's services.
type Deps struct {
	DB *store.DB
	// SMS is the provider (nil: SMS is not configured).
	SMS    sms.Gateway
	Box    *sealbox.Box
	Events event.Emitter
	Clock  clock.Clock
	Logger *slog.Logger
}

// Sender sends receipts by SMS and tracks their deliveries.
type Sender struct {
	cfg    Config
	db     *store.DB
	sms    sms.Gateway
	box    *sealbox.Box
	events event.Emitter
	clock  clock.Clock
	logger *slog.Logger
}

// New returns a Sender.
func New(cfg Config, d Deps) *Sender {
	return &Sender{cfg: cfg, db: d.DB, sms: d.SMS, box: d.Box, events: d.Events, clock: d.Clock, logger: d.Logger}
}

func (s *Sender) now() time.Time { return s.clock.Now() }

func (s *Sender) micros() int64 { return s.clock.Now().UnixMicro() }

// ist is India Standard Time, the day of the daily cap.
var ist = time.FixedZone("IST", 5*3600+1800)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNoRows) || ocpi.IsNotFound(err) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
