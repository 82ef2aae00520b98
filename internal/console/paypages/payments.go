package paypages

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// paymentsPageSize is the rows of a payments or refunds page.
const paymentsPageSize = 50

// outcomeDays is how many days the payment outcomes chart shows.
const outcomeDays = 14

// refundStates are the states of a UPI refund.
var refundStates = []string{refunds.Queued, refunds.Pending, refunds.Processed, refunds.Failed}

type paymentsView struct {
	// Tab is "all" or "attention".
	Tab      string
	Payments []*paymentview.PaymentView
	Pager    ui.Pager
	States   []string
	Outcomes ui.ChartView
	Enabled  bool
}

type refundsView struct {
	Refunds []*refunds.Refund
	Pager   ui.Pager
	States  []string
}

// chainStep is one link of a payment's chain, from the sticker to the
// receipt.
type chainStep struct {
	Name   string
	State  string
	At     time.Time
	Detail string
	Href   string // console path, "" for none
	URL    string // absolute URL outside the console (the receipt)
	Done   bool   // the step happened
}

type paymentView struct {
	*paymentview.PaymentView
	Chain []chainStep
	// Deliveries are the receipt's SMS; SMS tells whether the hub sends
	// any (the resend form offers a number then).
	Deliveries []*smsreceipt.Delivery
	SMS        bool
}

// PageTitle names the page after the payment.
func (v paymentView) PageTitle() string { return "Payment " + v.ID }

func (c *pages) paymentPages() ([]ui.Page, []ui.Action) {
	if c.cfg.UPI == nil {
		return nil, nil
	}
	return []ui.Page{
			{
				Path: "/payments", Title: "UPI payments", Section: "Payments", Nav: "UPI payments", Template: "payments", Refresh: 15,
				Load: func(r *http.Request) (any, error) { return c.loadPayments(r, false) },
			},
			{
				Path: "/payments/attention", Title: "Payments that need attention", Template: "payments", Refresh: 15,
				Load: func(r *http.Request) (any, error) { return c.loadPayments(r, true) },
			},
			{
				Path: "/payments/refunds", Title: "UPI refunds", Section: "Payments", Nav: "Refunds", Template: "refunds", Refresh: 15,
				Load: c.loadRefunds,
			},
			{
				Path: "/payments/{id}", Title: "Payment", Template: "payment",
				Load: func(r *http.Request) (any, error) {
					p, err := c.cfg.UPI.Payment(r.Context(), r.PathValue("id"))
					if err != nil {
						return nil, err
					}
					v := paymentView{PaymentView: p, SMS: c.cfg.UPI.SMSEnabled()}
					if p.Receipt != nil {
						if v.Deliveries, err = c.cfg.UPI.Deliveries(r.Context(), p.Receipt.ID); err != nil {
							return nil, err
						}
					}
					v.Chain = append(c.chain(p), deliverySteps(v.Deliveries)...)
					return v, nil
				},
			},
		}, []ui.Action{{
			Path: "/payments/{id}/resend-receipt",
			Do:   c.resendReceipt,
		}, {
			Path: "/payments/{id}/resolve",
			Do: func(r *http.Request) (ui.Result, error) {
				id := r.PathValue("id")
				back := "/payments/" + id
				res := upi.Resolution{Note: r.PostFormValue("note"), SettleOn: r.PostFormValue("settle_on")}
				if _, err := c.cfg.UPI.Resolve(r.Context(), id, res); err != nil {
					return ui.Result{Redirect: back}, err
				}
				c.logger.InfoContext(r.Context(), "console: payment attention resolved", "payment_id", id, "settle_on", res.SettleOn)
				if res.SettleOn == upi.MismatchHub {
					return ui.Result{Redirect: back, Flash: "Payment " + id + " is settled on the hub's price."}, nil
				}
				if res.SettleOn == upi.MismatchCDR {
					return ui.Result{Redirect: back, Flash: "Payment " + id + " is settled on the CDR's total."}, nil
				}
				return ui.Result{Redirect: back, Flash: "Payment " + id + " no longer needs attention."}, nil
			},
		}}
}

// loadPayments lists payments, the most recently changed first, with the
// outcomes chart; attention keeps those the operator must act on.
func (c *pages) loadPayments(r *http.Request, attention bool) (any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	f := upi.PaymentFilter{Status: q.Get("state"), Attention: attention, QRRef: q.Get("qr_ref")}
	if f.Status != "" && !slices.Contains(paymentrow.Statuses, f.Status) {
		return nil, ocpi.Invalid("state", "must be one of "+strings.Join(paymentrow.Statuses, ", "))
	}
	list, pager, err := newestFirst(r, paymentsPageSize, func(pr ocpi.PageRequest) ([]*paymentview.PaymentView, ocpi.Page, error) {
		return c.cfg.UPI.ListPayments(ctx, f, pr)
	})
	if err != nil {
		return nil, err
	}
	v := paymentsView{Tab: "all", Payments: list, Pager: pager, States: paymentrow.Statuses, Enabled: c.cfg.UPI.Enabled()}
	if attention {
		v.Tab = "attention"
	}
	days, err := c.cfg.UPI.Outcomes(ctx, c.clock.Now(), outcomeDays, time.UTC)
	if err != nil {
		return nil, err
	}
	v.Outcomes = outcomesChart(days, c.clock.Now()).View()
	return v, nil
}

// outcomesChart is the payment outcomes per day, stacked. Days are UTC
// days, as on every console chart.
func outcomesChart(days []paymentview.OutcomeDay, now time.Time) ui.Chart {
	ch := ui.Chart{Title: "Payment outcomes per day", Kind: "stacked", Labels: ui.DailyLabels(now, len(days), time.UTC), Width: 960, Height: 200,
		Series: []ui.Series{{Name: "Captured"}, {Name: "Refunded in full"}, {Name: "Partly refunded"}, {Name: "Failed"}}}
	var total int64
	for _, d := range days {
		ch.Series[0].Values = append(ch.Series[0].Values, d.Captured)
		ch.Series[1].Values = append(ch.Series[1].Values, d.RefundedFull)
		ch.Series[2].Values = append(ch.Series[2].Values, d.RefundedPartly)
		ch.Series[3].Values = append(ch.Series[3].Values, d.Failed)
		total += d.Captured + d.RefundedFull + d.RefundedPartly + d.Failed
	}
	if total == 0 {
		ch.Labels = nil // "No data yet."
	}
	return ch
}

func (c *pages) loadRefunds(r *http.Request) (any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	f := refunds.Filter{Status: q.Get("state"), PaymentID: q.Get("payment_id")}
	if f.Status != "" && !slices.Contains(refundStates, f.Status) {
		return nil, ocpi.Invalid("state", "must be one of "+strings.Join(refundStates, ", "))
	}
	list, pager, err := newestFirst(r, paymentsPageSize, func(pr ocpi.PageRequest) ([]*refunds.Refund, ocpi.Page, error) {
		return c.cfg.UPI.ListRefunds(ctx, f, pr)
	})
	if err != nil {
		return nil, err
	}
	return refundsView{Refunds: list, Pager: pager, States: refundStates}, nil
}

// newestFirst pages a list that the store returns oldest change first (the
// OCPI order of the admin API) so that page 1 shows the newest: it counts,
// then fetches the page's slice from the end and reverses it.
func newestFirst[T any](r *http.Request, size int, list func(ocpi.PageRequest) ([]T, ocpi.Page, error)) ([]T, ui.Pager, error) {
	var total int
	items, pager, err := ui.CountedPage(r, size, func() (int, error) {
		_, page, err := list(ocpi.PageRequest{Limit: 0})
		total = int(page.Total)
		return total, err
	}, func(offset, limit int) ([]T, error) {
		items, _, err := list(ocpi.PageRequest{Offset: total - offset - limit, Limit: limit})
		return items, err
	})
	slices.Reverse(items)
	return items, pager, err
}

// chain lays a payment out as the links from the sticker to the receipt,
// each with its state and time.
func (c *pages) chain(p *paymentview.PaymentView) []chainStep {
	t := func(d *ocpi.DateTime) time.Time {
		if d == nil {
			return time.Time{}
		}
		return d.Time
	}
	var out []chainStep
	qr := chainStep{Name: "QR sticker", State: p.QRRef, Done: true,
		Detail: p.TenantID + " · " + p.LocationID + " / " + p.EVSEUID + " / " + p.ConnectorID}
	if c.cfg.LinkDirectory {
		if cc, pid, err := qrmap.ParseTenant(p.TenantID); err == nil {
			qr.Href = "/directory/" + cc + "/" + pid + "/" + p.LocationID
		}
	}
	out = append(out, qr)
	out = append(out, chainStep{Name: "Order", State: "CREATED", At: p.CreatedAt.Time, Detail: "PG order " + p.PGOrderID + " · " + p.Amount + " " + p.Currency, Done: true})
	capture := chainStep{Name: "Payment", State: p.PGStatus, At: t(p.CaptureTime), Detail: "PG payment " + p.PGPaymentID, Done: p.CaptureTime != nil}
	if p.CaptureTime != nil {
		capture.Detail += " · captured " + p.Captured + " " + p.Currency
	}
	if p.PayerVPA != "" {
		capture.Detail += " · from " + p.PayerVPA
	}
	if p.ErrorDescription != "" {
		capture.Detail += " · " + p.ErrorCode + " " + p.ErrorDescription
	}
	out = append(out, capture)
	start := chainStep{Name: "START_SESSION"}
	if cmd := p.Command; cmd != nil {
		start.Done, start.At, start.State = true, cmd.SentAt.Time, "SENT"
		if cmd.Response != "" {
			start.State = cmd.Response
		}
		if cmd.Result != "" {
			start.State = cmd.Result
		}
		start.Detail = "token " + cmd.TokenTyp + " " + cmd.Token
		if cmd.Response != "" {
			start.Detail += " · response " + cmd.Response
		}
		if cmd.Result != "" {
			start.Detail += " · result " + cmd.Result
		}
		if cmd.ID != "" && c.cfg.LinkCommands {
			start.Href = "/commands/" + cmd.ID
		}
	}
	out = append(out, start)
	sess := chainStep{Name: "Session"}
	if s := p.Session; s != nil {
		sess.Done, sess.State, sess.At = true, s.Status, t(s.Start)
		sess.Detail = s.CountryCode + "/" + s.PartyID + " " + s.ID + " · " + s.KWh + " kWh · " + s.TotalCost + " " + p.Currency
		if s.End != nil {
			sess.Detail += " · ended " + ui.AbsTime(s.End.Time)
		}
	}
	out = append(out, sess)
	cdr := chainStep{Name: "CDR"}
	if d := p.CDR; d != nil {
		cdr.Done, cdr.State, cdr.At = true, "RECEIVED", t(d.SettledAt)
		cdr.Detail = d.ID + " · " + d.TotalKWh + " kWh · " + d.TotalCost + " " + p.Currency
	}
	out = append(out, cdr)
	rec := chainStep{Name: "Reconciliation"}
	if p.CDR != nil && p.CDR.SettledAt != nil {
		rec.Done, rec.State, rec.At = true, paymentrow.StatusSettled, p.CDR.SettledAt.Time
		rec.Detail = "captured " + p.Captured + " = cost " + p.Cost + " + refunded " + p.Refunded + " + not refundable " + p.NotRefundable + " − shortfall " + p.Shortfall
	}
	out = append(out, rec)
	if len(p.Refunds) == 0 {
		out = append(out, chainStep{Name: "Refund", Detail: "none"})
	}
	for _, r := range p.Refunds {
		d := r.Amount + " " + r.Currency + " · " + r.Kind + " · " + r.Reason
		if r.LastError != "" {
			d += " · " + r.LastError
		}
		out = append(out, chainStep{Name: "Refund " + r.RefundID, State: r.Status, At: r.LastUpdated.Time, Detail: d, Done: true})
	}
	receipt := chainStep{Name: "Receipt"}
	if rc := p.Receipt; rc != nil {
		receipt.Done, receipt.State, receipt.Detail, receipt.URL = true, "ISSUED", rc.ID, rc.URL
	}
	out = append(out, receipt)
	return out
}

// deliverySteps are the chain's links of a receipt's SMS: each sending
// with its state, destination (masked), attempts and what went wrong.
func deliverySteps(ds []*smsreceipt.Delivery) []chainStep {
	var out []chainStep
	for _, d := range ds {
		detail := "to " + d.Destination + " · " + strconv.Itoa(d.Attempts) + " attempt(s)"
		if d.LastError != "" {
			detail += " · " + d.LastError
		}
		out = append(out, chainStep{Name: "Receipt SMS", State: strings.ToUpper(d.Status), At: d.UpdatedAt.Time, Detail: detail, Done: true})
	}
	return out
}

// resendReceipt sends a payment's receipt again, by SMS (to the number
// typed, else the last one) or by e-mail, at the operator's request.
func (c *pages) resendReceipt(r *http.Request) (ui.Result, error) {
	id := r.PathValue("id")
	back := ui.Result{Redirect: "/payments/" + id}
	p, err := c.cfg.UPI.Payment(r.Context(), id)
	if err != nil {
		return back, err
	}
	if p.Receipt == nil {
		return back, ocpi.Invalid("payment", "has no receipt yet")
	}
	req := upi.ResendRequest{Phone: r.PostFormValue("phone"), Email: r.PostFormValue("email")}
	out, err := c.cfg.UPI.Resend(r.Context(), p.Receipt.ID, req)
	if err != nil {
		return back, err
	}
	c.logger.InfoContext(r.Context(), "console: receipt resent", "payment_id", id, "receipt_id", p.Receipt.ID)
	back.Flash = "Receipt resent by e-mail."
	if out.Delivery != nil {
		back.Flash = "Receipt resent by SMS to " + out.Delivery.Destination + "."
	}
	return back, nil
}
