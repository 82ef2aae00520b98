package upi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// ReceiptURL is the public URL of a receipt.
func (s *Service) ReceiptURL(id string) string { return s.cfg.PublicURL + "/receipts/" + id }

// issueReceipt builds, stores and announces the receipt of a settled
// payment, and enqueues its delivery to the driver.
func (s *Service) issueReceipt(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, cdr *ocpi.CDR) error {
	cur := p.Amount.Currency
	r := &receipt.Receipt{
		ID: newReceiptID(), CDRID: cdr.ID, PaymentID: p.ID, Amount: pg.FormatRupees(p.Captured - p.Reserved), Currency: cur,
		EnergyKWh: formatKWh(cdr.TotalEnergy.String()), Timestamp: cdr.EndDateTime, PGPaymentID: p.PGPaymentID,
		PayerVPA: maskVPA(p.PayerVPA), Captured: pg.FormatRupees(p.Captured), Cost: pg.FormatRupees(p.Cost),
		Refunded: pg.FormatRupees(p.Reserved), NotRefundable: pg.FormatRupees(p.NotRefundable),
		Shortfall: pg.FormatRupees(p.Shortfall), SessionStart: cdr.StartDateTime, SessionEnd: cdr.EndDateTime,
		ConnectorID: p.Ref.ConnectorID, Operator: qrmap.TenantOf(p.Ref.CountryCode, p.Ref.PartyID), IssuedAt: ocpi.NewDateTime(s.now()),
	}
	if l := cdr.CdrLocation; l != nil {
		r.LocationName, r.Address, r.EVSEID, r.ConnectorID = l.Name, joinAddress(l.Address, l.City), l.EVSEID, l.ConnectorID
	}
	r.URL = s.ReceiptURL(r.ID)
	short := newShortCode()
	r.ShortURL = s.cfg.PublicURL + "/r/" + short
	if s.cfg.GST.Enabled() {
		inv, split := s.taxInvoiceFor(cdr, p.Cost)
		if err := receipt.IssueTaxDoc(ctx, tx, s.cfg.GST, s.now(), r.ID, p.ID, inv, split); err != nil {
			return err
		}
		r.TaxInvoice = inv
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO upi_receipts (id, payment_id, cdr_id, amount_paise, currency, energy_kwh, ended_at, body, created_at, short_code)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, r.ID, p.ID, r.CDRID, p.Captured-p.Reserved, cur, r.EnergyKWh,
		r.Timestamp.Micros(), string(body), s.micros(), short)
	if err != nil {
		return err
	}
	if err := paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorSystem, "receipt "+r.ID+" issued"); err != nil {
		return err
	}
	if err := s.events.Emit(ctx, tx, event.Event{Name: event.ReceiptIssued, Data: map[string]any{
		"receipt_id": r.ID, "payment_id": p.ID, "cdr_id": r.CDRID, "amount": r.Amount, "currency": cur,
		"energy_kwh": r.EnergyKWh, "url": r.URL, "timestamp": r.Timestamp}}); err != nil {
		return err
	}
	if _, err = s.jobs.InsertTx(ctx, tx, notifyArgs{ReceiptID: r.ID}, &river.InsertOpts{Queue: jobs.QueueDefault}); err != nil {
		return err
	}
	return s.queueReceiptSMS(ctx, tx, p, r.ID)
}

// maskVPA hides most of a payer's UPI address: "dr****@okpgsim".
func maskVPA(v string) string {
	user, host, ok := strings.Cut(v, "@")
	if !ok || user == "" {
		return ""
	}
	keep := min(2, len(user))
	return user[:keep] + strings.Repeat("*", max(len(user)-keep, 2)) + "@" + host
}

// Receipt returns a stored receipt by its id.
func (s *Service) Receipt(ctx context.Context, id string) (*receipt.Receipt, error) {
	if len(id) != 32 {
		return nil, errNotFound("receipt")
	}
	var body []byte
	err := s.db.Read().QueryRow(ctx, "SELECT body FROM upi_receipts WHERE id = $1", id).Scan(&body)
	if errors.Is(err, store.ErrNoRows) {
		return nil, errNotFound("receipt")
	}
	if err != nil {
		return nil, err
	}
	var r receipt.Receipt
	return &r, json.Unmarshal(body, &r)
}

// ReceiptByShortCode returns the id of the receipt a short link names.
func (s *Service) ReceiptByShortCode(ctx context.Context, code string) (string, error) {
	if len(code) != 16 {
		return "", errNotFound("receipt")
	}
	var id string
	err := s.db.Read().QueryRow(ctx, "SELECT id FROM upi_receipts WHERE short_code = $1", code).Scan(&id)
	if errors.Is(err, store.ErrNoRows) {
		return "", errNotFound("receipt")
	}
	return id, err
}

// ReceiptPDF renders a stored receipt as a PDF.
func (s *Service) ReceiptPDF(ctx context.Context, id string) ([]byte, error) {
	r, err := s.Receipt(ctx, id)
	if err != nil {
		return nil, err
	}
	b, err := s.render.ReceiptPDF(ctx, r)
	if errors.Is(err, printer.ErrNoRenderer) {
		return nil, &ocpi.Error{Code: ocpi.EUNAVAILABLE, Message: "receipts cannot be rendered as PDF: no renderer is configured", Err: err}
	}
	return b, err
}

// notifyArgs is the job that sends a receipt to the driver.
type notifyArgs struct {
	ReceiptID string `json:"receipt_id"`
	// Email, when set, is the operator's resend to this address.
	Email string `json:"email,omitempty"`
}

func (notifyArgs) Kind() string { return "upi_receipt_notify" }

type notifyWorker struct {
	river.WorkerDefaults[notifyArgs]
	s *Service
}

// Work sends a receipt through the notifier, once: to the e-mail address
// the driver gave on the landing page, if any.
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[notifyArgs]) error {
	s := w.s
	var email string
	var notified int64
	err := s.db.Read().QueryRow(ctx, `SELECT o.email, r.notified_at FROM upi_receipts r
		JOIN upi_payments p ON p.id = r.payment_id JOIN upi_orders o ON o.pk = p.order_pk WHERE r.id = $1`, job.Args.ReceiptID).Scan(&email, &notified)
	resend := job.Args.Email != ""
	if errors.Is(err, store.ErrNoRows) || err == nil && notified != 0 && !resend {
		return nil
	}
	if err != nil {
		return err
	}
	if resend {
		email = job.Args.Email
	}
	r, err := s.Receipt(ctx, job.Args.ReceiptID)
	if err != nil {
		return err
	}
	n := receipt.ReceiptNotice{Receipt: r, Email: email}
	if email != "" {
		// The PDF travels as an attachment when it can be drawn; the link
		// always does.
		if pdf, err := s.render.ReceiptPDF(ctx, r); err == nil {
			n.PDF = pdf
		}
	}
	if err := s.notifier.SendReceipt(ctx, n); err != nil {
		return err
	}
	if resend {
		return nil
	}
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE upi_receipts SET notified_at = $1 WHERE id = $2", s.micros(), r.ID)
		return err
	})
}
