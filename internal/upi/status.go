package upi

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// Stages of an order as the driver's status page shows them.
const (
	StagePay       = "pay"       // waiting for the driver to pay
	StagePending   = "pending"   // the payment is being confirmed
	StageFailed    = "failed"    // the payment failed: pay again or leave
	StageExpired   = "expired"   // nothing was paid in time
	StageStarting  = "starting"  // paid; the charger is being started
	StageCharging  = "charging"  // charging: energy and cost so far
	StageDone      = "done"      // finished: the receipt
	StageRefunding = "refunding" // the charger did not start: money on its way back
	StageRefunded  = "refunded"  // money back
)

// OrderStatus is what the status page shows and polls (JSON).
type OrderStatus struct {
	Stage string `json:"stage"`
	// Title and Message say it in words.
	Title   string `json:"title"`
	Message string `json:"message"`
	// Final is true when nothing will change any more.
	Final     bool   `json:"final"`
	Amount    string `json:"amount"`
	EnergyKWh string `json:"energy_kwh,omitempty"`
	Cost      string `json:"cost,omitempty"`
	// CostLabel names Cost: "Cost so far" while charging, "Charging cost"
	// once the CDR settled it.
	CostLabel  string `json:"cost_label,omitempty"`
	Refunded   string `json:"refunded,omitempty"`
	ReceiptURL string `json:"receipt_url,omitempty"`
	PaymentID  string `json:"payment_id,omitempty"`
}

// OrderStatus returns where an order stands, from its payments: the one
// that owns the session, else the most recent.
func (s *Service) OrderStatus(ctx context.Context, o *orders.Order) (*OrderStatus, error) {
	q := s.db.Read()
	var p *paymentrow.Payment
	var err error
	if o.PaymentID != "" {
		p, err = s.readPayment(ctx, q, o.PaymentID)
	} else {
		p, err = paymentrow.Scan(q.QueryRow(ctx, "SELECT "+paymentrow.Columns+" FROM upi_payments WHERE order_pk = $1 ORDER BY last_updated DESC, pk DESC LIMIT 1", o.PK()))
	}
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	st := &OrderStatus{Amount: o.Amount.Display()}
	if p == nil || isNotFound(err) {
		if s.now().After(o.ExpiresAt) {
			st.Stage, st.Final, st.Title, st.Message = StageExpired, true, "Payment window closed", "Nothing was paid for this order. Scan the code again to start over."
		} else {
			st.Stage, st.Title, st.Message = StagePay, "Pay "+st.Amount, "Complete the payment in your UPI app. This page updates by itself."
		}
		return st, nil
	}
	st.PaymentID = p.ID
	money := func(paise int64) string { return pg.Amount{Paise: paise, Currency: p.Amount.Currency}.Display() }
	switch p.Status {
	case paymentrow.StatusPending:
		st.Stage, st.Title, st.Message = StagePending, "Confirming your payment", "Your bank is confirming the payment. This can take a minute."
	case paymentrow.StatusFailed:
		st.Stage, st.Title, st.Message = StageFailed, "Payment failed", "The payment did not go through: "+orDefault(p.ErrorDescription, "declined")+". No money was taken. You can try again."
	case paymentrow.StatusExpired:
		st.Stage, st.Final, st.Title, st.Message = StageExpired, true, "Payment not confirmed", "The payment was not confirmed in time. If money was taken, it is returned automatically."
	case paymentrow.StatusCaptured, paymentrow.StatusSessionRequested:
		st.Stage, st.Title, st.Message = StageStarting, "Paid "+money(p.Captured)+": starting the charger", "Plug in your vehicle if you have not yet. Charging starts in a moment."
	case paymentrow.StatusCharging:
		st.Stage, st.Title, st.Message = StageCharging, "Charging", "Energy and cost so far are shown below. Stop charging at the charger or in your vehicle."
		if p.SessionEnd != 0 {
			st.Title, st.Message = "Charging finished", "Waiting for the final bill from the charging operator."
		}
		if p.Attention == AttentionCostMismatch {
			st.Title, st.Message = "Charging finished", "The charging operator's bill does not match this charger's tariff, so we are checking it. "+
				"What you paid beyond the checked cost is returned to your account once it is settled."
		}
		st.EnergyKWh, st.Cost, st.CostLabel = formatKWh(p.SessionKWh), money(p.SessionCost), "Cost so far"
		if paise, ok := s.liveCost(ctx, o, p); ok {
			// The hub's own engine, at the connector's tariff, from the
			// session's charging periods.
			st.Cost, st.CostLabel = money(paise), "Cost so far (at this charger's tariff)"
		}
	case paymentrow.StatusSettled:
		st.Stage, st.Final, st.Title = StageDone, true, "Done: thank you for charging"
		st.EnergyKWh, st.Cost, st.CostLabel = formatKWh(p.CDRKWh), money(p.Cost), "Charging cost"
		st.Message = "You paid " + money(p.Captured-p.Reserved) + " for " + st.EnergyKWh + " kWh."
		if p.Reserved > 0 {
			st.Refunded = money(p.Reserved)
			st.Message += " " + money(p.Reserved) + " is being returned to your account."
		}
		var rid string
		if err := q.QueryRow(ctx, "SELECT id FROM upi_receipts WHERE payment_id = $1", p.ID).Scan(&rid); err == nil {
			st.ReceiptURL = s.ReceiptURL(rid)
		}
	case paymentrow.StatusRefunding:
		st.Stage, st.Title, st.Refunded = StageRefunding, "The charger could not be started", money(p.Reserved)
		st.Message = money(p.Reserved) + " is being refunded to your account. Sorry for the trouble."
	case paymentrow.StatusRefunded:
		st.Stage, st.Final, st.Title, st.Refunded = StageRefunded, true, "Refunded", money(p.Refunded)
		st.Message = money(p.Refunded) + " was refunded to your account. It can take a few days to show."
	}
	return st, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
