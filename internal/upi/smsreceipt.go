package upi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// newSMSSender is the module's SMS sender: its receipts, and its outcomes
// audited on the payment's chain (the payment's state unchanged).
func (s *Service) newSMSSender() *smsreceipt.Sender {
	return smsreceipt.New(smsreceipt.Config{DailyCap: s.cfg.SMSDailyCap, Attempts: s.cfg.SMSAttempts, RetryDelay: s.retryDelay,
		Receipt: s.Receipt,
		Audit: func(ctx context.Context, tx *store.Tx, paymentID, note string) error {
			var pstatus string
			if err := tx.QueryRow(ctx, "SELECT status FROM upi_payments WHERE id = $1", paymentID).Scan(&pstatus); err != nil {
				return err
			}
			return paymentrow.Audit(ctx, tx, s.micros(), paymentID, "", pstatus, pstatus, paymentrow.ActorSystem, note)
		}},
		smsreceipt.Deps{DB: s.db, SMS: s.sms, Box: s.box, Events: s.events, Clock: s.clock, Logger: s.logger})
}

// Deliveries returns the deliveries of a receipt, oldest first.
func (s *Service) Deliveries(ctx context.Context, receiptID string) ([]*smsreceipt.Delivery, error) {
	return s.texts.Deliveries(ctx, receiptID)
}

// ReceiveSMSReports takes a delivery-report callback of the SMS provider
// (smsreceipt.Sender.ReceiveSMSReports); it returns how many deliveries
// changed.
func (s *Service) ReceiveSMSReports(ctx context.Context, header http.Header, query map[string][]string, body []byte) (int, error) {
	return s.texts.ReceiveSMSReports(ctx, header, query, body)
}

// queueSMS records a delivery of a receipt by SMS to a (sealed) number
// and enqueues its job, in the caller's transaction.
func (s *Service) queueSMS(ctx context.Context, tx *store.Tx, receiptID, paymentID, sealed, key, e164 string) (*smsreceipt.Delivery, error) {
	d, err := s.texts.Record(ctx, tx, "dl"+randomID(22), receiptID, paymentID, sealed, key, maskPhone(e164))
	if err != nil {
		return nil, err
	}
	_, err = s.jobs.InsertTx(ctx, tx, smsreceipt.Args{DeliveryID: d.ID}, &river.InsertOpts{Queue: jobs.QueueDefault})
	return d, err
}

// queueReceiptSMS queues the receipt's one automatic SMS when the driver
// gave a number with consent and SMS is configured.
func (s *Service) queueReceiptSMS(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, receiptID string) error {
	if s.sms == nil {
		return nil
	}
	var sealed, key string
	var consent int64
	err := tx.QueryRow(ctx, "SELECT phone, phone_key, phone_consent_at FROM upi_orders WHERE pk = $1", p.OrderPK).Scan(&sealed, &key, &consent)
	if errors.Is(err, store.ErrNoRows) || err == nil && (sealed == "" || consent == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	e164, err := s.box.Open(sealed)
	if err != nil {
		return fmt.Errorf("open the driver's phone number: %w", err)
	}
	_, err = s.queueSMS(ctx, tx, receiptID, p.ID, sealed, key, e164)
	return err
}
