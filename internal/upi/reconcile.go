package upi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// ownPayment locks the payment an OCPI object's authorization_reference
// names, when the object is charged to that payment's token; ours is false
// otherwise (the object is someone else's).
func (s *Service) ownPayment(ctx context.Context, tx *store.Tx, reference string, token *ocpi.CdrToken) (p *paymentrow.Payment, ours bool, err error) {
	ref := ocpi.Key(reference)
	if !strings.HasPrefix(ref, "UPI") || len(ref) > 36 {
		return nil, false, nil
	}
	p, err = paymentrow.Lock(ctx, tx, "id = $1", ref)
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if token == nil || p.TokenUID == "" || !strings.EqualFold(token.UID, p.TokenUID) {
		s.logger.WarnContext(ctx, "an OCPI object names a UPI payment but not its token: ignored", "payment_id", p.ID)
		return nil, false, nil
	}
	return p, true, nil
}

// SessionChanged is told, inside the session service's transaction, of
// every stored version of a session. A session carrying a payment's
// reference and token is linked to the payment (payment_reference on the
// session record), moves it to CHARGING, and keeps the status page's view of
// energy and cost current; its end schedules the CDR deadline.
func (s *Service) SessionChanged(ctx context.Context, tx *store.Tx, sess *ocpi.Session) error {
	p, ours, err := s.ownPayment(ctx, tx, sess.AuthorizationReference, sess.CdrToken)
	if !ours || err != nil {
		return err
	}
	r := paymentrow.SessionRef{CountryCode: ocpi.Key(sess.CountryCode), PartyID: ocpi.Key(sess.PartyID), ID: sess.ID}
	if p.Session.ID != "" && (p.Session.CountryCode != r.CountryCode || p.Session.PartyID != r.PartyID || !strings.EqualFold(p.Session.ID, r.ID)) {
		if p.Attention == paymentrow.AttentionSecondSession {
			return nil
		}
		if err := s.flag(ctx, tx, p, paymentrow.AttentionSecondSession, "session "+sess.ID+" carries the reference of a payment that paid for session "+p.Session.ID); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	first := p.Session.ID == ""
	p.Session = r
	p.SessionStatus, p.SessionKWh = sess.Status, sess.KWh.String()
	p.SessionStart = sess.StartDateTime.Micros()
	if c, err := paiseOf(sess.TotalCost); err == nil {
		p.SessionCost = c
	}
	if first {
		// The session record gains payment_reference = pg_payment_id
		// (upi.md §4; the column is this module's, migration 0540).
		if _, err := tx.Exec(ctx, "UPDATE sessions SET payment_reference = $1 WHERE country_code = $2 AND party_id = $3 AND id = $4",
			p.PGPaymentID, r.CountryCode, r.PartyID, ocpi.Key(sess.ID)); err != nil {
			return err
		}
		switch p.Status {
		case paymentrow.StatusCaptured, paymentrow.StatusSessionRequested:
			if err := s.transition(ctx, tx, p, paymentrow.StatusCharging, paymentrow.ActorCPO, "session "+sess.ID+" "+sess.Status); err != nil {
				return err
			}
			if _, err := s.jobs.InsertTx(ctx, tx, deadlineArgs{PaymentID: p.ID, Check: checkAge},
				&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: s.now().Add(s.cfg.MaxSessionAge)}); err != nil {
				return err
			}
		default:
			if err := s.flag(ctx, tx, p, paymentrow.AttentionSessionLate, "session "+sess.ID+" started for a payment that is "+p.Status); err != nil {
				return err
			}
		}
	}
	if (ocpi.IsFinalSessionStatus(sess.Status) || sess.EndDateTime != nil) && p.SessionEnd == 0 {
		p.SessionEnd = s.micros()
		if sess.EndDateTime != nil {
			p.SessionEnd = sess.EndDateTime.Micros()
		}
		if p.CDRID == "" {
			if _, err := s.jobs.InsertTx(ctx, tx, deadlineArgs{PaymentID: p.ID, Check: checkCDR},
				&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: s.now().Add(s.cfg.CDRDeadline)}); err != nil {
				return err
			}
		}
	}
	return s.save(ctx, tx, p)
}

// CDRStored is told, inside the CDR service's transaction, of every CDR the
// hub stores. The CDR of a payment's session settles the payment: its cost
// (incl. VAT) against the capture; the excess is refunded (below ₹1.00 it
// is not refundable), a shortfall is recorded and alerted, and a receipt is
// issued. It is CDRPriced without the hub's price check.
func (s *Service) CDRStored(ctx context.Context, tx *store.Tx, cdr *ocpi.CDR) error {
	return s.CDRPriced(ctx, tx, cdr, CDRPrice{})
}

// CDRPriced is CDRStored with the hub's check of the CDR's total_cost: a
// CDR the hub flagged settles its payment as Config.CostMismatch says — by
// default not at all until the operator decides (Resolve).
func (s *Service) CDRPriced(ctx context.Context, tx *store.Tx, cdr *ocpi.CDR, price CDRPrice) error {
	p, ours, err := s.ownPayment(ctx, tx, cdr.AuthorizationReference, cdr.CdrToken)
	if !ours || err != nil {
		return err
	}
	if p.CDRID != "" {
		if strings.EqualFold(p.CDRID, cdr.ID) || p.Attention == paymentrow.AttentionSecondCDR {
			return nil
		}
		if err := s.flag(ctx, tx, p, paymentrow.AttentionSecondCDR, "CDR "+cdr.ID+" carries the reference of a payment settled by CDR "+p.CDRID); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	if cdr.IsCredit() {
		if err := s.flag(ctx, tx, p, paymentrow.AttentionCreditCDR, "credit CDR "+cdr.ID+" for the payment's session; not applied automatically"); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	p.CDRID, p.CDRKWh = cdr.ID, cdr.TotalEnergy.String()
	if p.Session.ID == "" && cdr.SessionID != "" {
		p.Session = paymentrow.SessionRef{CountryCode: ocpi.Key(cdr.CountryCode), PartyID: ocpi.Key(cdr.PartyID), ID: cdr.SessionID}
	}
	if p.SessionStart == 0 {
		p.SessionStart = cdr.StartDateTime.Micros()
	}
	if p.SessionEnd == 0 {
		p.SessionEnd = cdr.EndDateTime.Micros()
	}
	if p.Attention == paymentrow.AttentionCDRMissing {
		if err := paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorCPO, "resolved cdr_missing: CDR "+cdr.ID+" arrived"); err != nil {
			return err
		}
		p.Attention, p.AttentionAt = "", 0
	}
	if cdr.Currency != p.Amount.Currency {
		if err := s.flag(ctx, tx, p, paymentrow.AttentionCDRCurrency, "CDR "+cdr.ID+" is in "+cdr.Currency+", the payment in "+p.Amount.Currency); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	cost, err := paiseOf(cdr.TotalCost)
	if err != nil {
		if err := s.flag(ctx, tx, p, paymentrow.AttentionCDRCurrency, "CDR "+cdr.ID+": "+err.Error()); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	}
	if price.Mismatch {
		c, held, err := s.costMismatch(ctx, tx, p, cdr, cost, price)
		if err != nil {
			return err
		}
		if held {
			return s.save(ctx, tx, p)
		}
		cost = c
	}
	if err := s.settle(ctx, tx, p, cost); err != nil {
		return err
	}
	if p.Status == paymentrow.StatusSettled {
		if err := s.issueReceipt(ctx, tx, p, cdr); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, p)
}

// settle reconciles the cost against the capture. What the capture covers
// beyond the cost and the refunds made so far is refunded, or recorded as
// not refundable below ₹1.00; a cost beyond the capture is a shortfall for
// the operator. A payment being refunded keeps its state.
func (s *Service) settle(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, cost int64) error {
	p.Cost, p.SettledAt = cost, s.micros()
	excess := p.Captured - cost - p.Reserved
	cur := p.Amount.Currency
	note := fmt.Sprintf("CDR %s: cost %s, captured %s", p.CDRID, fmtPaise(cost, cur), fmtPaise(p.Captured, cur))
	switch {
	case excess >= refunds.MinPaise:
		if err := s.refunder.CreateTx(ctx, tx, p, refunds.RefundRequest{RefundID: p.ID + "-EXCESS", PaymentID: p.ID, Paise: excess,
			Reason: "excess over the charging cost (" + note + ")"}, refunds.Excess); err != nil {
			return err
		}
	case excess > 0:
		p.NotRefundable += excess
		note += fmt.Sprintf("; excess %s below the minimum refund, not refundable", fmtPaise(excess, cur))
	case excess < 0:
		p.Shortfall = -excess
		if err := s.flag(ctx, tx, p, paymentrow.AttentionShortfall, fmt.Sprintf("%s; shortfall %s", note, fmtPaise(-excess, cur))); err != nil {
			return err
		}
	}
	switch p.Status {
	case paymentrow.StatusCaptured, paymentrow.StatusSessionRequested, paymentrow.StatusCharging:
		return s.transition(ctx, tx, p, paymentrow.StatusSettled, paymentrow.ActorCPO, note)
	case paymentrow.StatusRefunding:
		// Its late session's cost may have taken what the full refund (failed
		// or still under way) was to send back: with nothing owed and nothing
		// in flight, the payment is done.
		if p.Reserved == p.Refunded && p.Refunded+p.NotRefundable+p.SettledCost() >= p.Captured {
			return s.transition(ctx, tx, p, paymentrow.StatusRefunded, paymentrow.ActorCPO, note+"; nothing left to refund")
		}
	}
	return paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorCPO, note)
}

// paiseOf converts an OCPI price to paise: incl_vat when given (what the
// driver pays), else excl_vat, rounded to the paisa half away from zero. A
// negative or absent price is an error.
func paiseOf(p *ocpi.Price) (int64, error) {
	if p == nil {
		return 0, errors.New("the CDR has no total_cost")
	}
	n := p.ExclVAT
	if p.InclVAT != nil && p.InclVAT.Valid() {
		n = *p.InclVAT
	}
	if !n.Valid() {
		return 0, errors.New("the total_cost has no amount")
	}
	d := n.Decimal().Shift(2).Round(0)
	if d.IsNegative() {
		return 0, fmt.Errorf("the total_cost %s is negative", n.String())
	}
	if d.GreaterThan(decimal.NewFromInt(math.MaxInt64 / 2)) {
		return 0, fmt.Errorf("the total_cost %s is too large", n.String())
	}
	return d.IntPart(), nil
}

// formatKWh writes an energy for people, with up to three decimals.
func formatKWh(s string) string {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return s
	}
	return d.Round(3).String()
}
