package upi

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// ReceiptRecord is a receipt as the receipts API shows it: the receipt as
// issued (with its tax invoice and credit notes) and its deliveries.
type ReceiptRecord struct {
	*receipt.Receipt
	Deliveries []*smsreceipt.Delivery `json:"deliveries"`
}

// ReceiptRecord returns a receipt with its deliveries.
func (s *Service) ReceiptRecord(ctx context.Context, id string) (*ReceiptRecord, error) {
	r, err := s.Receipt(ctx, id)
	if err != nil {
		return nil, err
	}
	ds, err := s.Deliveries(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return &ReceiptRecord{Receipt: r, Deliveries: ds}, nil
}

// PaymentReceipts returns the receipts of a payment (none before it is
// settled) with their deliveries; an unknown payment is not found.
func (s *Service) PaymentReceipts(ctx context.Context, paymentID string) ([]*ReceiptRecord, error) {
	paymentID = ocpi.Key(paymentID)
	var n int
	if err := s.db.Read().QueryRow(ctx, "SELECT COUNT(*) FROM upi_payments WHERE id = $1", paymentID).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errNotFound("payment")
	}
	ids, err := store.QueryAll(ctx, s.db.Read(), func(row store.Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, "SELECT id FROM upi_receipts WHERE payment_id = $1 ORDER BY pk", paymentID)
	if err != nil {
		return nil, err
	}
	out := []*ReceiptRecord{}
	for _, id := range ids {
		r, err := s.ReceiptRecord(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ResendRequest is the operator's resend of a receipt: by SMS to Phone
// (empty: the number of its last SMS, else the one the driver gave), or by
// e-mail to Email.
type ResendRequest struct {
	Phone string `json:"phone,omitempty"`
	Email string `json:"email,omitempty"`
}

// ResendResult is what a resend queued: an SMS delivery, or an e-mail.
type ResendResult struct {
	Delivery *smsreceipt.Delivery `json:"delivery,omitempty"`
	Email    string               `json:"email,omitempty"`
}

// Resend sends a receipt again, at the operator's request (typically after
// a delivery failed, or to a corrected number or address the driver gave
// them): a new SMS delivery or e-mail is queued with its job in one
// transaction. The operator's request stands for the driver's consent to
// a number they give. Bad input names its field and changes nothing.
func (s *Service) Resend(ctx context.Context, receiptID string, req ResendRequest) (*ResendResult, error) {
	req.Phone, req.Email = strings.TrimSpace(req.Phone), strings.TrimSpace(req.Email)
	if req.Phone != "" && req.Email != "" {
		return nil, ocpi.Invalid("email", "give a phone number or an e-mail address, not both")
	}
	var e164 string
	if req.Phone != "" {
		var err error
		if e164, err = NormalizePhone(req.Phone); err != nil {
			return nil, err
		}
	}
	if req.Email != "" {
		if a, err := mail.ParseAddress(req.Email); err != nil || a.Address != req.Email || len(req.Email) > 254 {
			return nil, ocpi.Invalid("email", "is not an e-mail address")
		}
	}
	if req.Email == "" && s.sms == nil {
		return nil, ocpi.Invalid("phone", "receipts are not sent by SMS on this hub; give an e-mail address")
	}
	r, err := s.Receipt(ctx, receiptID)
	if err != nil {
		return nil, err
	}
	out := &ResendResult{}
	err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, "SELECT status FROM upi_payments WHERE id = $1", r.PaymentID).Scan(&status); err != nil {
			return err
		}
		if req.Email != "" {
			out.Email = req.Email
			if _, err := s.jobs.InsertTx(ctx, tx, notifyArgs{ReceiptID: r.ID, Email: req.Email}, &river.InsertOpts{Queue: jobs.QueueDefault}); err != nil {
				return err
			}
			return paymentrow.Audit(ctx, tx, s.micros(), r.PaymentID, "", status, status, paymentrow.ActorOperator, "receipt "+r.ID+" resent by e-mail")
		}
		sealed, key := "", ""
		if e164 != "" {
			sealed, key = s.box.Seal(e164), s.phoneKey(e164)
		} else {
			err := tx.QueryRow(ctx, `SELECT phone, phone_key FROM upi_receipt_deliveries WHERE receipt_id = $1 AND phone <> ''
				ORDER BY pk DESC LIMIT 1`, r.ID).Scan(&sealed, &key)
			if errors.Is(err, store.ErrNoRows) {
				err = tx.QueryRow(ctx, `SELECT o.phone, o.phone_key FROM upi_orders o JOIN upi_payments p ON p.order_pk = o.pk
					WHERE p.id = $1`, r.PaymentID).Scan(&sealed, &key)
			}
			if err != nil && !errors.Is(err, store.ErrNoRows) {
				return err
			}
			if sealed == "" {
				return ocpi.Invalid("phone", "the receipt has no phone number to resend to (none given, or erased): give one")
			}
			if e164, err = s.box.Open(sealed); err != nil {
				return err
			}
		}
		d, err := s.queueSMS(ctx, tx, r.ID, r.PaymentID, sealed, key, e164)
		if err != nil {
			return err
		}
		out.Delivery = d
		return paymentrow.Audit(ctx, tx, s.micros(), r.PaymentID, "", status, status, paymentrow.ActorOperator, "receipt "+r.ID+" resent by SMS to "+d.Destination)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
