package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// upiQRRef is the sticker on connector 1 of Surya Chargers' MAA01-E1.
const upiQRRef = "SUR-MAA01-E1"

// upiStory is a driver without an app or an account: the operator maps a
// QR sticker to a connector; the driver scans it, picks ₹500 and pays in a
// UPI app; the payment gateway (the built-in simulator) captures it and
// tells the hub by webhook; the hub, as its own eMSP, starts the session at
// the CPO; the driver unplugs, the CPO sends the CDR, the hub reconciles it
// with the capture, refunds the excess and issues a receipt.
func upiStory() Story {
	return Story{Name: "UPI QR payment", Needs: []string{"Directory broadcast"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		gw, cpo := devgw.PG(env.Hub), env.CPOs[len(env.CPOs)-1]
		if gw == nil {
			return fmt.Errorf("the hub runs no payment gateway simulator")
		}
		const paid = 500_00

		resp, err := env.Admin(ctx, http.MethodPost, "/ocpi/2.2.1/payments/upi/qr",
			map[string]any{"qr_ref": upiQRRef, "location_id": "MAA01", "evse_uid": "MAA01-E1", "connector_id": "1"})
		if err != nil {
			return err
		}
		if resp.HTTPStatus != http.StatusCreated || resp.Envelope == nil {
			return fmt.Errorf("create the QR mapping: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		var qr qrmap.QRMapping
		if err := json.Unmarshal(resp.Envelope.Data, &qr); err != nil || qr.URL == "" {
			return fmt.Errorf("the QR mapping: %s", resp.Body)
		}
		tl.Step("operator prints a UPI sticker for %s MAA01-E1 connector 1: %s", cpo.Name(), qr.URL)

		page, err := fetch(ctx, qr.URL)
		if err != nil {
			return fmt.Errorf("the landing page: %w", err)
		}
		if !bytes.Contains(page, []byte("T. Nagar")) {
			return fmt.Errorf("the landing page does not name the charger's location")
		}
		orderID, err := placeOrder(ctx, qr.URL, paid)
		if err != nil {
			return err
		}
		status := env.Hub.PublicURL() + "/pay/" + orderID
		tl.Step("a driver scans it, the landing page shows T. Nagar; the driver picks %s: order %s", pg.FormatINR(paid), orderID)
		tl.Link("driver's payment page", status)

		var order pgsim.Order
		for _, o := range gw.Orders() {
			if o.Receipt == orderID {
				order = o
			}
		}
		if order.ID == "" || order.Amount != paid {
			return fmt.Errorf("the payment gateway has no %s order for %s: %+v", pg.FormatINR(paid), orderID, order)
		}
		payment, err := gw.Pay(ctx, order.ID, pgsim.Captured)
		if err != nil {
			return fmt.Errorf("pay at the gateway: %w", err)
		}
		tl.Step("the driver pays in the UPI app (%s); the gateway captures %s and sends a signed webhook to the hub", payment.VPA, payment.ID)

		var st upi.OrderStatus
		if err := until(ctx, "the session to start", func() (bool, error) {
			err := getJSON(ctx, status+"/status", &st)
			return st.Stage == upi.StageCharging, err
		}); err != nil {
			return fmt.Errorf("%w (stage %q: %s)", err, st.Stage, st.Message)
		}
		p, err := env.Hub.UPI.Payment(ctx, st.PaymentID)
		if err != nil {
			return err
		}
		if p.Captured != pg.FormatRupees(paid) || p.Session == nil || p.Command == nil {
			return fmt.Errorf("the charging payment: captured %s, session %v, command %v", p.Captured, p.Session, p.Command)
		}
		tl.Step("the hub verifies the capture, issues token %s (%s) and sends START_SESSION to %s: %s; session %s ACTIVE",
			p.Command.Token, p.Command.TokenTyp, cpo.Name(), orDefault(p.Command.Response, "sent"), p.Session.ID)

		sid := p.Session.ID
		if err := until(ctx, cpo.Name()+"'s copy of session "+sid, func() (bool, error) { return cpo.Session(sid) != nil, nil }); err != nil {
			return err
		}
		if err := cpo.StopSession(ctx, sid); err != nil {
			return fmt.Errorf("%s stops session %s: %w", cpo.Name(), sid, err)
		}
		tl.Step("the driver unplugs: %s completes session %s and sends its CDR", cpo.Name(), sid)

		if err := until(ctx, "the payment to settle", func() (bool, error) {
			var err error
			p, err = env.Hub.UPI.Payment(ctx, st.PaymentID)
			return err == nil && p.Status == paymentrow.StatusSettled && refundsDone(p) && p.Receipt != nil, err
		}); err != nil {
			return fmt.Errorf("%w (status %s)", err, p.Status)
		}
		cost, err := pg.ParseRupees(p.Cost)
		if err != nil {
			return fmt.Errorf("the payment's cost: %w", err)
		}
		refunded, err := pg.ParseRupees(p.Refunded)
		if err != nil {
			return fmt.Errorf("the payment's refunds: %w", err)
		}
		if cost <= 0 || cost >= paid || refunded != paid-cost {
			return fmt.Errorf("settled: cost %s, refunded %s of %s", p.Cost, p.Refunded, pg.FormatINR(paid))
		}
		tl.Step("the CDR costs %s (%s kWh): the hub settles the payment against the %s captured", pg.FormatINR(cost), p.CDR.TotalKWh, pg.FormatINR(paid))
		refunds := gw.Refunds(payment.ID)
		if len(refunds) != 1 || refunds[0].Amount != paid-cost || refunds[0].Status != "processed" {
			return fmt.Errorf("refunds at the gateway: %+v, want one of %s processed", refunds, pg.FormatINR(paid-cost))
		}
		tl.Step("partial refund of the excess %s: %s processed at the gateway", pg.FormatINR(refunds[0].Amount), refunds[0].ID)

		pdf, err := fetch(ctx, p.Receipt.URL+".pdf")
		if err != nil {
			return fmt.Errorf("the receipt: %w", err)
		}
		if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			return fmt.Errorf("the receipt is not a PDF")
		}
		if err := getJSON(ctx, status+"/status", &st); err != nil || st.Stage != upi.StageDone || st.ReceiptURL == "" {
			return fmt.Errorf("the driver's page: stage %q, receipt %q (%v)", st.Stage, st.ReceiptURL, err)
		}
		tl.Step("receipt %s issued (PDF, %d KB); the driver's page says %q", p.Receipt.ID, (len(pdf)+1023)/1024, st.Title)
		if sim := devgw.SMS(env.Hub); sim != nil {
			if err := until(ctx, "the receipt SMS", func() (bool, error) { return len(sim.Messages()) > 0, nil }); err != nil {
				return err
			}
			m := sim.Messages()[0]
			tl.Step("SMS (DLT sender %s, template %s) to the driver's %s…%s: %q", m.DLT.Sender, m.DLT.TemplateID, m.To[:5], m.To[len(m.To)-2:], m.Text)
		}
		tl.Link("receipt", p.Receipt.URL)
		tl.Link("receipt (PDF)", p.Receipt.URL+".pdf")
		tl.Link("START_SESSION", env.ConsoleURL("/commands"))
		return nil
	}}
}

// refundsDone holds when every refund of the payment was processed.
func refundsDone(p *paymentview.PaymentView) bool {
	if p.RefundPending != "0.00" || len(p.Refunds) == 0 {
		return false
	}
	for _, r := range p.Refunds {
		if r.Status != refunds.Processed {
			return false
		}
	}
	return true
}

// placeOrder submits the landing page's form as a driver does and returns
// the order id its redirect names.
func placeOrder(ctx context.Context, landing string, paise int64) (string, error) {
	form := url.Values{"amount": {pg.FormatRupees(paise)}, "email": {"driver@example.in"}, "phone": {"98765 43210"}, "phone_consent": {"yes"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, landing, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/pay/") {
		return "", fmt.Errorf("order: HTTP %d, Location %q", resp.StatusCode, loc)
	}
	return strings.TrimPrefix(loc, "/pay/"), nil
}

// fetch GETs a public page and requires HTTP 200.
func fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	return b, nil
}

// getJSON GETs a public JSON endpoint into out.
func getJSON(ctx context.Context, u string, out any) error {
	b, err := fetch(ctx, u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
