package upi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
)

// Mismatch policies: how a payment is settled when the hub flagged its CDR
// (the CDR's total_cost is off the hub's own price by more than the
// tolerance, internal/cdr).
//
// MismatchHold is the default. Settling on the CDR's total charges the
// driver a number the hub just found wrong; settling on the hub's price
// charges one the CPO never agreed to (the hub may be the one that is wrong:
// a tariff changed after the session started, a rule the parties read
// differently). A held payment costs the driver a delay of the refund of
// the excess, not money, and the operator sees both totals and picks one.
const (
	// MismatchHold keeps the capture until the operator settles the payment
	// on one of the two totals (Service.Resolve).
	MismatchHold = "hold"
	// MismatchCDR settles on the CDR's total_cost, as without the check.
	MismatchCDR = "cdr"
	// MismatchHub settles on the hub's price.
	MismatchHub = "hub"
)

// MismatchPolicies lists the mismatch policies.
var MismatchPolicies = []string{MismatchHold, MismatchCDR, MismatchHub}

// AttentionCostMismatch flags a payment whose settlement waits for the
// operator because its CDR's total_cost differs from the hub's price.
const AttentionCostMismatch = "cdr_cost_mismatch"

// Deciders of a cost hold.
const (
	decidedByPolicy   = "policy"
	decidedByOperator = "operator"
)

// CDRPrice is the hub's check of a CDR's total_cost, as the CDR service
// made it before storing the CDR.
type CDRPrice struct {
	// Mismatch is true when the CDR's total_cost is off the hub's price by
	// more than the tolerance.
	Mismatch bool
	// Hub is the hub's price of the CDR (nil when it could not be priced).
	Hub *ocpi.Price
}

// costHold is a row of upi_cost_holds.
type costHold struct {
	CDRID            string
	Currency         string
	CDRCost, HubCost int64 // HubCost −1: unknown
	CDR              ocpi.CDR
	HeldAt           int64
	SettledOn        string
	DecidedBy        string
	DecidedAt        int64
	Note             string
}

func (h *costHold) view() *paymentview.CostHoldView {
	v := &paymentview.CostHoldView{CDRID: h.CDRID, CDRTotal: pg.FormatRupees(h.CDRCost), HeldAt: ocpi.FromMicros(h.HeldAt),
		SettledOn: h.SettledOn, DecidedBy: h.DecidedBy, DecidedAt: paymentview.DateTime(h.DecidedAt)}
	if h.HubCost >= 0 {
		v.HubTotal = pg.FormatRupees(h.HubCost)
	}
	return v
}

// findHold reads the cost hold of a payment; held is false when it has none.
func findHold(ctx context.Context, q store.Querier, paymentID string) (h *costHold, held bool, err error) {
	h = &costHold{}
	var body []byte
	err = q.QueryRow(ctx, `SELECT cdr_id, currency, cdr_cost_paise, hub_cost_paise, cdr_body, held_at, settled_on, decided_by,
		decided_at, note FROM upi_cost_holds WHERE payment_id = $1`, paymentID).
		Scan(&h.CDRID, &h.Currency, &h.CDRCost, &h.HubCost, &body, &h.HeldAt, &h.SettledOn, &h.DecidedBy, &h.DecidedAt, &h.Note)
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(body, &h.CDR); err != nil {
		return nil, false, fmt.Errorf("cost hold of payment %s: %w", paymentID, err)
	}
	return h, true, nil
}

// costMismatch decides the settlement of p on a flagged CDR by the
// configured policy and records it. It returns the cost to settle on, or
// held = true when the payment waits for the operator (then p is flagged
// and nothing is settled, refunded or receipted).
func (s *Service) costMismatch(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, cdr *ocpi.CDR, cdrCost int64, price CDRPrice) (cost int64, held bool, err error) {
	hubCost := int64(-1)
	if c, err := paiseOf(price.Hub); err == nil {
		hubCost = c
	}
	cur := p.Amount.Currency
	totals := fmt.Sprintf("CDR %s total %s, the hub's price %s", cdr.ID, fmtPaise(cdrCost, cur), fmtPaise(hubCost, cur))
	if hubCost < 0 {
		totals = fmt.Sprintf("CDR %s total %s, the hub's price unknown", cdr.ID, fmtPaise(cdrCost, cur))
	}
	policy := s.cfg.CostMismatch
	if policy == MismatchHub && hubCost < 0 {
		policy = MismatchHold
	}
	settledOn, decidedBy, decidedAt := "", "", int64(0)
	switch policy {
	case MismatchCDR:
		settledOn, decidedBy, decidedAt, cost = MismatchCDR, decidedByPolicy, s.micros(), cdrCost
	case MismatchHub:
		settledOn, decidedBy, decidedAt, cost = MismatchHub, decidedByPolicy, s.micros(), hubCost
	}
	body, err := json.Marshal(cdr)
	if err != nil {
		return 0, false, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO upi_cost_holds (payment_id, cdr_id, currency, cdr_cost_paise, hub_cost_paise, cdr_body,
		held_at, settled_on, decided_by, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		p.ID, cdr.ID, cur, cdrCost, hubCost, string(body), s.micros(), settledOn, decidedBy, decidedAt); err != nil {
		return 0, false, err
	}
	if settledOn != "" {
		return cost, false, paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorSystem,
			"cost mismatch: "+totals+"; settled on the "+settledOnName(settledOn)+" by the mismatch policy")
	}
	return 0, true, s.flag(ctx, tx, p, AttentionCostMismatch, totals+": settlement held for the operator (settle on the CDR's total or the hub's price)")
}

func settledOnName(on string) string {
	if on == MismatchHub {
		return "hub's price"
	}
	return "CDR's total"
}

// Resolution is the operator's answer to a payment that needs attention.
type Resolution struct {
	// Note says what was done; it goes to the audit trail.
	Note string `json:"note"`
	// SettleOn settles a payment held on a CDR cost mismatch: "cdr" (the
	// CDR's total_cost) or "hub" (the hub's price). Required for such a
	// payment, refused for any other.
	SettleOn string `json:"settle_on,omitempty"`
}

// Resolve clears a payment's attention flag once an operator has dealt
// with it. A payment held on a CDR cost mismatch is settled on the total
// the operator accepts, in the same transaction: the excess over that cost
// is queued for refund and the receipt issued, exactly once (a repeat of
// the same decision, concurrent or later, changes nothing and answers the
// payment; a different decision after it is refused).
func (s *Service) Resolve(ctx context.Context, id string, r Resolution) (*paymentview.PaymentView, error) {
	if err := checkNote(r.Note); err != nil {
		return nil, err
	}
	if r.SettleOn != "" && r.SettleOn != MismatchCDR && r.SettleOn != MismatchHub {
		return nil, ocpi.Invalid("settle_on", `must be "cdr" (the CDR's total_cost) or "hub" (the hub's price)`)
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		p, err := paymentrow.Lock(ctx, tx, "id = $1", ocpi.Key(id))
		if errors.Is(err, store.ErrNoRows) {
			return errNotFound("payment " + id)
		}
		if err != nil {
			return err
		}
		h, hasHold, err := findHold(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		held := hasHold && h.SettledOn == ""
		switch {
		case r.SettleOn == "" && held:
			return &ocpi.Error{Code: ocpi.EINVALID, Field: "settle_on", Issue: `is required: the settlement is held on a CDR cost mismatch`,
				Message: fmt.Sprintf(`payment %s is held: its CDR's total is %s, the hub's price %s; settle_on "cdr" or "hub"`,
					p.ID, fmtPaise(h.CDRCost, h.Currency), hubName(h))}
		case r.SettleOn == "":
			return s.clearAttention(ctx, tx, p, r.Note)
		case !hasHold:
			return &ocpi.Error{Code: ocpi.EINVALID, Field: "settle_on", Issue: "applies only to a payment held on a CDR cost mismatch",
				Message: "payment " + p.ID + " has no settlement held on a CDR cost mismatch"}
		case !held && h.SettledOn == r.SettleOn:
			return nil // the same decision again: it was carried out once
		case !held:
			return &ocpi.Error{Code: ocpi.EINVALID, Field: "settle_on", Issue: "the payment is already settled on the " + settledOnName(h.SettledOn),
				Message: "payment " + p.ID + " was settled on the " + settledOnName(h.SettledOn) + " already"}
		case r.SettleOn == MismatchHub && h.HubCost < 0:
			return &ocpi.Error{Code: ocpi.EINVALID, Field: "settle_on", Issue: "the hub has no price for this CDR",
				Message: "payment " + p.ID + ": the hub could not price CDR " + h.CDRID + "; settle on the CDR's total"}
		}
		return s.settleHeld(ctx, tx, p, h, r)
	})
	if err != nil {
		return nil, err
	}
	return s.Payment(ctx, id)
}

func hubName(h *costHold) string {
	if h.HubCost < 0 {
		return "unknown"
	}
	return fmtPaise(h.HubCost, h.Currency)
}

// settleHeld settles a held payment on the operator's choice.
func (s *Service) settleHeld(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, h *costHold, r Resolution) error {
	cost := h.CDRCost
	if r.SettleOn == MismatchHub {
		cost = h.HubCost
	}
	now := s.micros()
	n, err := tx.Exec(ctx, `UPDATE upi_cost_holds SET settled_on = $1, decided_by = $2, decided_at = $3, note = $4
		WHERE payment_id = $5 AND settled_on = ''`, r.SettleOn, decidedByOperator, now, paymentrow.Truncate(r.Note, 1000), p.ID)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("payment %s: its cost hold changed under the payment's lock", p.ID)
	}
	if err := paymentrow.Audit(ctx, tx, now, p.ID, "", p.Status, p.Status, paymentrow.ActorOperator,
		"settle on the "+settledOnName(r.SettleOn)+" ("+fmtPaise(cost, h.Currency)+"): "+r.Note); err != nil {
		return err
	}
	if p.Attention == AttentionCostMismatch {
		p.Attention, p.AttentionAt = "", 0
	}
	if err := s.settle(ctx, tx, p, cost); err != nil {
		return err
	}
	if p.Status == paymentrow.StatusSettled {
		if err := s.issueReceipt(ctx, tx, p, &h.CDR); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, p)
}

// clearAttention clears p's attention flag with the operator's note.
func (s *Service) clearAttention(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, note string) error {
	if p.Attention == "" {
		return &ocpi.Error{Code: ocpi.EINVALID, Field: "payment_id", Issue: "needs no attention", Message: "payment " + p.ID + " needs no attention"}
	}
	if err := paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorOperator, "resolved "+p.Attention+": "+note); err != nil {
		return err
	}
	p.Attention, p.AttentionAt = "", 0
	return s.save(ctx, tx, p)
}

func checkNote(note string) error {
	if strings.TrimSpace(note) == "" {
		return ocpi.Invalid("note", "is required: say what was done")
	}
	if len(note) > 1000 {
		return ocpi.Invalid("note", "may have at most 1000 characters")
	}
	return nil
}
