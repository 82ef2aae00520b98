package upi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// observation is what the PG says about a payment: a webhook's content or
// the answer to FetchPayment.
type observation struct {
	PGPaymentID      string
	PGOrderID        string
	Status           pg.PaymentStatus
	Amount           pg.Amount
	VPA              string
	ErrorCode        string
	ErrorDescription string
	// Source names where it came from, for the audit trail.
	Source string
}

func observationOf(p *pg.Payment, source string) observation {
	return observation{PGPaymentID: p.ID, PGOrderID: p.OrderID, Status: p.Status, Amount: p.Amount, VPA: p.VPA,
		ErrorCode: p.ErrorCode, ErrorDescription: p.ErrorDescription, Source: source}
}

// applyPayment moves a payment forward with what the PG says, inside tx: the
// payment row is created on first sight (one per pg_payment_id), then a
// state the PG reported before or an older one changes nothing. It returns
// what happened, for the event log.
func (s *Service) applyPayment(ctx context.Context, tx *store.Tx, obs observation) (string, error) {
	if obs.PGPaymentID == "" {
		return "ignored: no payment id", nil
	}
	o, err := orders.ByPG(ctx, tx, obs.PGOrderID)
	if errors.Is(err, store.ErrNoRows) || obs.PGOrderID == "" {
		// Another product's payment on a shared PG account, or a forged
		// order id inside a valid signature: never ours to refund.
		s.logger.WarnContext(ctx, "PG payment for an order ocpihub did not create: ignored", "pg_payment_id", obs.PGPaymentID,
			"pg_order_id", obs.PGOrderID, "status", obs.Status)
		return "ignored: unknown order", nil
	}
	if err != nil {
		return "", err
	}
	if obs.Amount.Currency == "" {
		obs.Amount.Currency = o.Amount.Currency
	}
	now := s.micros()
	_, err = tx.Exec(ctx, `INSERT INTO upi_payments (id, pg_payment_id, order_pk, qr_ref, country_code, party_id, location_id,
		evse_uid, connector_id, amount_paise, currency, status, created_at, last_updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) ON CONFLICT (pg_payment_id) DO NOTHING`,
		newPaymentID(), obs.PGPaymentID, o.PK(), o.QRRef, o.Ref().CountryCode, o.Ref().PartyID, o.Ref().LocationID, o.Ref().EVSEUID,
		o.Ref().ConnectorID, obs.Amount.Paise, obs.Amount.Currency, paymentrow.StatusPending, now)
	if err != nil {
		return "", err
	}
	p, err := paymentrow.Lock(ctx, tx, "pg_payment_id = $1", obs.PGPaymentID)
	if err != nil {
		return "", err
	}
	if p.OrderPK != o.PK() {
		return "ignored: the payment belongs to another order", nil
	}
	if obs.Status.Rank() <= p.PGStatus.Rank() {
		return fmt.Sprintf("no change: the payment is %s at the PG already, %s is not newer", p.PGStatus, obs.Status), nil
	}
	firstSight := p.PGStatus.Rank() == 0
	p.PGStatus = obs.Status
	if obs.VPA != "" {
		p.PayerVPA = paymentrow.Truncate(obs.VPA, 255)
	}
	note := obs.Source
	switch obs.Status {
	case pg.PaymentCreated, pg.PaymentAuthorized:
		if firstSight {
			if _, err := s.jobs.InsertTx(ctx, tx, pollArgs{PaymentID: p.ID},
				&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: s.now().Add(s.pollDelay(0))}); err != nil {
				return "", err
			}
		}
	case pg.PaymentFailed:
		p.ErrorCode, p.ErrorDescription = paymentrow.Truncate(obs.ErrorCode, 100), paymentrow.Truncate(obs.ErrorDescription, 500)
		if p.Status == paymentrow.StatusPending || p.Status == paymentrow.StatusExpired {
			if err := s.transition(ctx, tx, p, paymentrow.StatusFailed, paymentrow.ActorPG, note+": "+obs.ErrorDescription); err != nil {
				return "", err
			}
			if err := s.events.Emit(ctx, tx, event.Event{Name: event.PaymentFailed, Data: s.failedEvent(p)}); err != nil {
				return "", err
			}
		}
	case pg.PaymentCaptured:
		if err := s.capture(ctx, tx, p, o, obs); err != nil {
			return "", err
		}
	case pg.PaymentRefunded:
		if p.Captured == 0 {
			p.Captured, p.CaptureTime = obs.Amount.Paise, now
		}
		if p.Refunded < p.Captured {
			if err := s.flag(ctx, tx, p, paymentrow.AttentionRefundedAtPG, "the PG reports the payment refunded, but ocpihub refunded "+
				fmtPaise(p.Refunded, p.Amount.Currency)+" of "+fmtPaise(p.Captured, p.Amount.Currency)); err != nil {
				return "", err
			}
		}
	default:
		return "ignored: unknown status " + string(obs.Status), nil
	}
	if err := s.save(ctx, tx, p); err != nil {
		return "", err
	}
	return "applied: " + string(obs.Status) + " → " + p.Status, nil
}

func (s *Service) failedEvent(p *paymentrow.Payment) map[string]any {
	d := s.paymentEvent(p)
	d["error_code"], d["error_description"] = p.ErrorCode, p.ErrorDescription
	return d
}

// capture records a verified capture and decides what it leads to: START
// SESSION for the order's first capture within the payment window, a full
// refund otherwise. The capture is written to the payment row before the
// decision, in the same transaction: the refund's guard reads the captured
// amount from the row, and whatever is decided commits together with the
// capture or not at all.
func (s *Service) capture(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, o *orders.Order, obs observation) error {
	p.Captured, p.CaptureTime = obs.Amount.Paise, s.micros()
	p.ErrorCode, p.ErrorDescription = "", ""
	if err := s.transition(ctx, tx, p, paymentrow.StatusCaptured, paymentrow.ActorPG, obs.Source+": "+obs.Amount.String()+" from "+p.PayerVPA); err != nil {
		return err
	}
	ev := s.paymentEvent(p)
	ev["capture_time"] = ocpi.FromMicros(p.CaptureTime)
	if err := s.events.Emit(ctx, tx, event.Event{Name: event.PaymentCaptured, Data: ev}); err != nil {
		return err
	}
	if err := s.save(ctx, tx, p); err != nil {
		return err
	}
	if obs.Amount.Currency != o.Amount.Currency {
		return s.refundAtOnce(ctx, tx, p, "captured in "+obs.Amount.Currency+", the order is in "+o.Amount.Currency)
	}
	// A capture long after the driver scanned would start a charger nobody
	// stands at.
	if s.now().After(o.ExpiresAt.Add(s.cfg.PaymentWindow)) {
		return s.refundAtOnce(ctx, tx, p, "captured after the payment window of the order closed")
	}
	n, err := tx.Exec(ctx, "UPDATE upi_orders SET payment_id = $1 WHERE pk = $2 AND payment_id = ''", p.ID, o.PK())
	if err != nil {
		return err
	}
	if n == 0 {
		return s.refundAtOnce(ctx, tx, p, "a second payment on an order that already has one")
	}
	if err := s.issueToken(ctx, tx, p); err != nil {
		return err
	}
	opts := &river.InsertOpts{Queue: jobs.QueueMoney}
	if s.cfg.StartDelay > 0 {
		opts.ScheduledAt = s.now().Add(s.cfg.StartDelay)
	}
	_, err = s.jobs.InsertTx(ctx, tx, startArgs{PaymentID: p.ID}, opts)
	return err
}

// refundAtOnce refunds a capture that may not start a session (a second
// payment on the order, a late capture, another currency) through the
// refund queue. Should the refund be refused by our own rules, the capture
// is still recorded and the payment flagged for the operator: a capture
// never rolls back for what it leads to, or the PG's money would be left
// with no record at all.
func (s *Service) refundAtOnce(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, reason string) error {
	err := s.refundFull(ctx, tx, p, reason)
	var oe *ocpi.Error
	if !errors.As(err, &oe) {
		return err
	}
	return s.flag(ctx, tx, p, paymentrow.AttentionNotRefunded, reason+"; the refund could not be queued: "+oe.Error())
}

// issueToken issues the payment's own token: AD_HOC_USER, or OTHER for
// CPOs configured as rejecting it. Its uid is the payment id.
func (s *Service) issueToken(ctx context.Context, tx *store.Tx, p *paymentrow.Payment) error {
	p.TokenUID, p.TokenType = p.ID, "AD_HOC_USER"
	for _, t := range s.cfg.OtherTokenCPOs {
		if cc, pid, err := qrmap.ParseTenant(t); err == nil && cc == ocpi.Key(p.Ref.CountryCode) && pid == ocpi.Key(p.Ref.PartyID) {
			p.TokenType = "OTHER"
		}
	}
	if s.tokens == nil {
		return nil
	}
	_, err := s.tokens.IssueTx(ctx, tx, s.token(p))
	return err
}

// token is the payment's token as sent in START_SESSION.
func (s *Service) token(p *paymentrow.Payment) ocpi.Token {
	valid := true
	return ocpi.Token{CountryCode: s.cfg.EMSPCountryCode, PartyID: s.cfg.EMSPPartyID, UID: p.TokenUID, Type: p.TokenType,
		ContractID: p.ID, Issuer: s.cfg.EMSPName, Valid: &valid, Whitelist: "NEVER", LastUpdated: ocpi.FromMicros(p.CaptureTime)}
}

// refundFull refunds what remains of a captured payment (the capture less
// every refund not failed) and moves it to REFUNDING; a remainder below the
// PG's minimum is recorded as not refundable and the payment is REFUNDED.
// The refund id is deterministic: a payment gets one full refund at most.
func (s *Service) refundFull(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, reason string) error {
	remaining := p.Captured - p.Reserved
	if remaining >= refunds.MinPaise {
		if err := s.transition(ctx, tx, p, paymentrow.StatusRefunding, paymentrow.ActorSystem, reason); err != nil {
			return err
		}
		return s.refunder.CreateTx(ctx, tx, p, refunds.RefundRequest{RefundID: p.ID + "-FULL", PaymentID: p.ID, Paise: remaining, Reason: reason}, refunds.Full)
	}
	p.NotRefundable += max(remaining, 0)
	return s.transition(ctx, tx, p, paymentrow.StatusRefunded, paymentrow.ActorSystem, reason+" (nothing left to refund)")
}

// pollDelay is the wait before the next poll of a pending payment seen
// age ago: half its age, at least PollInterval and at most a minute, so the
// polls back off geometrically.
func (s *Service) pollDelay(age time.Duration) time.Duration {
	return min(max(age/2, s.cfg.PollInterval), max(time.Minute, s.cfg.PollInterval))
}

// pollArgs is the job asking the PG about a pending payment.
type pollArgs struct {
	PaymentID string `json:"payment_id"`
}

func (pollArgs) Kind() string { return "upi_poll_payment" }

// pollPayment asks the PG about a pending payment until it is final or the
// order's payment window closes (EXPIRED). A webhook that arrived meanwhile
// makes the poll a no-op.
func (s *Service) pollPayment(ctx context.Context, a pollArgs) error {
	p, err := s.readPayment(ctx, s.db.Read(), a.PaymentID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Status != paymentrow.StatusPending || p.PGStatus.Final() {
		return nil
	}
	got, err := s.gw.FetchPayment(ctx, p.PGPaymentID)
	if err != nil && !pg.IsRetryable(err) {
		s.logger.WarnContext(ctx, "polling a pending UPI payment failed", "payment_id", p.ID, "error", err)
	}
	if err == nil && got.Status.Rank() > p.PGStatus.Rank() {
		err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := s.applyPayment(ctx, tx, observationOf(got, "poll"))
			return err
		})
		if err != nil {
			return err
		}
		if got.Status.Final() {
			return nil
		}
	}
	o, oerr := orders.ByPK(ctx, s.db.Read(), p.OrderPK)
	if oerr != nil {
		return oerr
	}
	if !s.now().Before(o.ExpiresAt) {
		return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			p, err := paymentrow.Lock(ctx, tx, "id = $1", p.ID)
			if err != nil || p.Status != paymentrow.StatusPending {
				return err
			}
			if err := s.transition(ctx, tx, p, paymentrow.StatusExpired, paymentrow.ActorSystem, "still pending at the PG when the payment window closed"); err != nil {
				return err
			}
			return s.save(ctx, tx, p)
		})
	}
	return river.JobSnooze(s.pollDelay(s.now().Sub(time.UnixMicro(p.CreatedAt))))
}
