package upi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/sim/smssim"
	"github.com/ocpihub/ocpihub/internal/sms"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

const (
	// gstinKA is a Karnataka (29) GSTIN and gstinMH a Maharashtra (27)
	// one, both with correct check characters; the charging location is in
	// Karnataka.
	gstinKA = "29AAGCB7383J1Z4"
	gstinMH = "27AABCO1234F1ZV"
)

func gstConfig(gstin string) receipt.GSTConfig {
	return receipt.GSTConfig{SupplierName: "ocpihub Mobility Services Pvt Ltd", SupplierAddress: "80 Feet Road, Bengaluru 560034", GSTIN: gstin}
}

// smsBundle is a bundle whose hub sends receipts by SMS to sim, in the
// MSG91 shape (the dev-mode simulator) or the signed shape (a simulator of
// the test's).
type smsBundle struct {
	*bundle
	sim *smssim.Server
}

func setupSMS(t *testing.T, engine store.Engine, signed bool, gstin string, tweak ...func(*app.Config)) *smsBundle {
	t.Helper()
	var own *smssim.Server
	if signed {
		var err error
		if own, err = smssim.Start(smssim.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(own.Close)
	}
	b := setup(t, engine, append([]func(*app.Config){func(c *app.Config) {
		c.GST = gstConfig(gstin)
		c.SecretKey = "receipt-sms-test-secret-key-0123456789"
		if own != nil {
			o := own.Options()
			c.SMSProvider, c.SMSURL, c.SMSSecret = app.SMSProviderSigned, own.SignedURL(), o.Secret
			c.SMSSender, c.SMSDLTTemplateID, c.SMSDLTEntityID = o.DLT.Sender, o.DLT.TemplateID, o.DLT.EntityID
		}
	}}, tweak...)...)
	sb := &smsBundle{bundle: b, sim: own}
	if own != nil {
		own.SetReportURL(b.h.PublicURL() + app.SMSReportPath)
	} else {
		sb.sim = devgw.SMS(b.h.App)
	}
	if sb.sim == nil {
		t.Fatal("the hub has no SMS simulator")
	}
	// The charging location is in Karnataka.
	loc := locationJSON(locID, "E1:AVAILABLE", "E2:AVAILABLE")
	loc["state"], loc["last_updated"] = "Karnataka", hubtest.Stamp(1)
	if err := b.cpo.PutLocation(b.ctx, locID, loc); err != nil {
		t.Fatal(err)
	}
	b.qr(t)
	return sb
}

// orderWithPhone submits the landing page with a phone number and consent.
func (b *bundle) orderWithPhone(t *testing.T, amount, phone string) string {
	t.Helper()
	resp, body := b.postForm(t, qrRef, url.Values{"amount": {amount}, "phone": {phone}, "phone_consent": {"yes"}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/pay/") {
		t.Fatalf("order with a phone: HTTP %d %s", resp.StatusCode, body)
	}
	return strings.TrimPrefix(loc, "/pay/")
}

// chargeAndSettle pays an order, charges and stops: the CDR settles it.
func (b *bundle) chargeAndSettle(t *testing.T, orderID string) *paymentview.PaymentView {
	t.Helper()
	if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
	b.stop(t, p.Session.ID)
	return b.waitStatus(t, orderID, paymentrow.StatusSettled, func(p *paymentview.PaymentView) bool { return p.Receipt != nil })
}

// receiptRecord reads a receipt through the receipts API.
func (b *bundle) receiptRecord(t *testing.T, id string) upi.ReceiptRecord {
	t.Helper()
	resp := b.h.AdminDo(t, http.MethodGet, upiBase+"/receipts/"+id, nil)
	if resp.HTTPStatus != http.StatusOK {
		t.Fatalf("GET receipt: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	return data[upi.ReceiptRecord](t, resp)
}

// TestReceiptBySMSEndToEnd: a driver pays by UPI with a phone number,
// charges, and the CDR settles with a partial refund; the SMS gateway
// receives exactly one DLT-conformant message whose link opens the
// receipt, which is a GST tax invoice: CGST + SGST when the operator is
// registered in the charging location's state (MSG91 shape), IGST when it
// is registered in another (signed shape). The delivery report marks the
// delivery delivered, on the receipts API and as receipt.delivered.
func TestReceiptBySMSEndToEnd(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		for _, c := range []struct {
			name   string
			signed bool
			gstin  string
		}{{"intra-state, msg91", false, gstinKA}, {"inter-state, signed", true, gstinMH}} {
			t.Run(string(engine)+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				b := setupSMS(t, engine, c.signed, c.gstin)
				orderID := b.orderWithPhone(t, "500", "098765 43210")
				p := b.chargeAndSettle(t, orderID)

				var rec upi.ReceiptRecord
				// The delivery report may come before the worker has written
				// down its attempt: wait for both.
				eventually(t, "the SMS delivered", func() bool {
					rec = b.receiptRecord(t, p.Receipt.ID)
					return len(rec.Deliveries) == 1 && rec.Deliveries[0].Status == smsreceipt.DeliveryDelivered && rec.Deliveries[0].Attempts > 0
				})
				msgs := b.sim.Messages()
				if len(msgs) != 1 {
					t.Fatalf("the gateway received %d messages, want 1: %+v", len(msgs), msgs)
				}
				m := msgs[0]
				o := b.sim.Options()
				if m.To != "+919876543210" || m.DLT != o.DLT || m.Vars.Amount != "₹272.88" || m.Vars.Energy != "12.5 kWh" ||
					m.Vars.Link != rec.ShortURL || !strings.Contains(m.Vars.Link, "/r/") {
					t.Errorf("message %+v", m)
				}
				for name, v := range map[string]string{"amount": m.Vars.Amount, "energy": m.Vars.Energy, "link": m.Vars.Link} {
					if max := sms.MaxVarLen; len([]rune(v)) > max && name != "link" || len(v) > sms.MaxLinkLen {
						t.Errorf("template variable %s %q is over %d characters", name, v, sms.MaxVarLen)
					}
				}
				d := rec.Deliveries[0]
				if d.Channel != smsreceipt.ChannelSMS || d.Destination != "+91 98******10" || d.Attempts != 1 || d.ProviderID != m.ProviderID ||
					d.ReportedAt == nil {
					t.Errorf("delivery %+v", d)
				}
				if evs, err := b.events.Wait(b.ctx, event.ReceiptDelivered, 1); err != nil || evs[0].Data.(map[string]any)["receipt_id"] != p.Receipt.ID {
					t.Errorf("receipt.delivered: %v %+v", err, evs)
				}

				// The link opens the receipt: a tax invoice.
				resp, body := get(t, m.Vars.Link)
				inv := rec.TaxInvoice
				if inv == nil {
					t.Fatal("the receipt is not a tax invoice")
				}
				want := []string{"Tax invoice", inv.Number, "GSTIN " + c.gstin, "₹272.88"}
				if c.signed {
					want = append(want, `id="igst">₹41.63`, "Karnataka (29)")
				} else {
					want = append(want, `id="cgst">₹20.82`, `id="sgst">₹20.81`)
				}
				wantPage(t, "receipt by the SMS link", resp, string(body), http.StatusOK, want...)
				if inv.Total != "272.88" || inv.TaxableValue != "231.25" || inv.PlaceOfSupplyCode != "29" || inv.InterState != c.signed {
					t.Errorf("tax invoice %+v", inv)
				}
				if c.signed && (inv.IGST != "41.63" || inv.CGST != "0.00") || !c.signed && (inv.CGST != "20.82" || inv.SGST != "20.81" || inv.IGST != "0.00") {
					t.Errorf("tax split %+v", inv)
				}
				if !strings.HasPrefix(inv.Number, "INV/") || len(inv.Number) > 16 {
					t.Errorf("invoice number %q", inv.Number)
				}
				// The PDF is the same tax invoice.
				pdfText := pdfText(t, p.Receipt.URL+".pdf")
				wantPDF := []string{"Tax invoice", "Invoice no." + inv.Number, "Supplier GSTIN" + c.gstin, "Place of supplyKarnataka (29)",
					"SAC998714 Electric vehicle battery charging service", "Taxable value₹231.25", "Invoice total₹272.88"}
				if c.signed {
					wantPDF = append(wantPDF, "IGST @ 18%₹41.63")
				} else {
					wantPDF = append(wantPDF, "CGST @ 9%₹20.82", "SGST @ 9%₹20.81")
				}
				for _, w := range wantPDF {
					if !strings.Contains(pdfText, w) {
						t.Errorf("the PDF lacks %q:\n%s", w, pdfText)
					}
				}
				if strings.Contains(pdfText, "IGST") == !c.signed {
					t.Errorf("the PDF's tax split is the wrong kind:\n%s", pdfText)
				}
				// The payment's receipts through the API.
				resp2 := b.h.AdminDo(t, http.MethodGet, upiBase+"/payments/"+p.ID+"/receipts", nil)
				if rs := data[[]upi.ReceiptRecord](t, resp2); len(rs) != 1 || rs[0].ID != p.Receipt.ID || len(rs[0].Deliveries) != 1 {
					t.Errorf("receipts of the payment: %s", resp2.Body)
				}
				// The number is stored sealed, never in the clear.
				if n := b.count(t, "SELECT COUNT(*) FROM upi_orders WHERE phone LIKE '%9876543210%'"); n != 0 {
					t.Errorf("%d orders store the phone number in the clear", n)
				}
				if n := b.count(t, "SELECT COUNT(*) FROM upi_receipt_deliveries WHERE phone LIKE '%9876543210%'"); n != 0 {
					t.Errorf("%d deliveries store the phone number in the clear", n)
				}
			})
		}
	}
}

// count runs a COUNT query.
func (b *bundle) count(t *testing.T, q string) int {
	t.Helper()
	var n int
	if err := b.h.DB.Read().QueryRow(b.ctx, q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReceiptSMSGatewayDown: the gateway answers 503: the send is retried
// with backoff, then the delivery is flagged failed (receipt API, audit on
// the payment's chain, receipt.delivery_failed); a resend through the admin
// API once the gateway is back delivers it. A number reported undelivered
// is flagged the same way.
func TestReceiptSMSGatewayDown(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		b := setupSMS(t, engine, false, gstinKA)
		b.sim.SetDown(true)
		p := b.chargeAndSettle(t, b.orderWithPhone(t, "500", "+91 98765 43210"))
		var rec upi.ReceiptRecord
		eventually(t, "the SMS failed", func() bool {
			rec = b.receiptRecord(t, p.Receipt.ID)
			return len(rec.Deliveries) == 1 && rec.Deliveries[0].Status == smsreceipt.DeliveryFailed
		})
		d := rec.Deliveries[0]
		if d.Attempts != 6 || !strings.Contains(d.LastError, "503") || b.sim.Calls() != 6 || len(b.sim.Messages()) != 0 {
			t.Errorf("failed delivery %+v after %d calls", d, b.sim.Calls())
		}
		if evs, err := b.events.Wait(b.ctx, event.ReceiptDeliveryFailed, 1); err != nil || evs[0].Data.(map[string]any)["delivery_id"] != d.ID {
			t.Errorf("receipt.delivery_failed: %v %+v", err, evs)
		}
		chain := b.h.AdminDo(t, http.MethodGet, upiBase+"/payments/"+p.ID, nil)
		if !strings.Contains(string(chain.Body), "SMS to +91 98******10 failed") {
			t.Errorf("the payment's chain does not show the failed SMS: %s", chain.Body)
		}

		// Bad resends change nothing.
		for _, bad := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"phone": "+44 7700 900123"}, "phone"},
			{map[string]any{"phone": "12345"}, "phone"},
			{map[string]any{"phone": "98765 4321O"}, "phone"},
			{map[string]any{"email": "not-an-address"}, "email"},
		} {
			resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/receipts/"+p.Receipt.ID+"/resend", bad.body)
			hubtest.WantError(t, "resend "+bad.field, resp, http.StatusOK, 2001, bad.field)
		}
		if rec := b.receiptRecord(t, p.Receipt.ID); len(rec.Deliveries) != 1 {
			t.Errorf("a refused resend queued a delivery: %d", len(rec.Deliveries))
		}

		// Back up: a resend to a corrected number is delivered.
		b.sim.SetDown(false)
		resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/receipts/"+p.Receipt.ID+"/resend", map[string]any{"phone": "9123456789"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("resend: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		eventually(t, "the resent SMS delivered", func() bool {
			rec = b.receiptRecord(t, p.Receipt.ID)
			return len(rec.Deliveries) == 2 && rec.Deliveries[1].Status == smsreceipt.DeliveryDelivered
		})
		if msgs := b.sim.Messages(); len(msgs) != 1 || msgs[0].To != "+919123456789" {
			t.Errorf("messages after the resend: %+v", msgs)
		}

		// An undelivered report flags the delivery.
		b.sim.Undeliver("+919123456789")
		resp = b.h.AdminDo(t, http.MethodPost, upiBase+"/receipts/"+p.Receipt.ID+"/resend", map[string]any{})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("resend to the last number: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		eventually(t, "the SMS reported undelivered", func() bool {
			rec = b.receiptRecord(t, p.Receipt.ID)
			return len(rec.Deliveries) == 3 && rec.Deliveries[2].Status == smsreceipt.DeliveryUndelivered
		})
		if rec.Deliveries[2].Destination != "+91 91******89" {
			t.Errorf("resend without a number went to %s", rec.Deliveries[2].Destination)
		}
	})
}

// TestReceiptSMSBadInput: malformed and foreign numbers, a number without
// consent, and forged delivery reports are refused with an error naming
// the problem, and change nothing.
func TestReceiptSMSBadInput(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		b := setupSMS(t, engine, false, gstinKA)
		resp, body := get(t, b.h.PublicURL()+"/qr/"+qrRef)
		wantPage(t, "landing page", resp, string(body), http.StatusOK, `id="phone"`, `name="phone_consent"`, "erased after 90 days")
		orders := b.rows(t, "upi_orders")
		for _, c := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"amount": {"500"}, "phone": {"+44 7700 900123"}, "phone_consent": {"yes"}}, "must be an Indian mobile number (+91)"},
			{url.Values{"amount": {"500"}, "phone": {"12345"}, "phone_consent": {"yes"}}, "ten digits starting with 6, 7, 8 or 9"},
			{url.Values{"amount": {"500"}, "phone": {"5876543210"}, "phone_consent": {"yes"}}, "ten digits starting with 6, 7, 8 or 9"},
			{url.Values{"amount": {"500"}, "phone": {"98765-abc-10"}, "phone_consent": {"yes"}}, "is not a phone number"},
			{url.Values{"amount": {"500"}, "phone": {strings.Repeat("9", 40)}, "phone_consent": {"yes"}}, "too long"},
			{url.Values{"amount": {"500"}, "phone": {"9876543210"}}, "phone_consent"},
		} {
			resp, body := b.postForm(t, qrRef, c.form)
			wantPage(t, "phone "+c.form.Get("phone"), resp, body, http.StatusUnprocessableEntity, c.want)
		}
		if n := b.rows(t, "upi_orders"); n != orders {
			t.Errorf("refused orders were stored: %d, want %d", n, orders)
		}

		p := b.chargeAndSettle(t, b.orderWithPhone(t, "500", "9876543210"))
		var rec upi.ReceiptRecord
		eventually(t, "the SMS delivered", func() bool {
			rec = b.receiptRecord(t, p.Receipt.ID)
			return len(rec.Deliveries) == 1 && rec.Deliveries[0].Status == smsreceipt.DeliveryDelivered
		})
		// A forged report: the right message, the wrong token or none.
		forged := []byte(`[{"requestId":"` + rec.Deliveries[0].ProviderID + `","number":"919876543210","status":"2","desc":"FAILED"}]`)
		for _, path := range []string{app.SMSReportPath, app.SMSReportPath + "?token=guess", app.SMSReportPath + "?token="} {
			resp, err := http.Post(b.h.PublicURL()+path, "application/json", bytes.NewReader(forged))
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				StatusCode int    `json:"status_code"`
				Message    string `json:"status_message"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("forged report at %s: HTTP %d %+v", path, resp.StatusCode, env)
			}
		}
		if got := b.receiptRecord(t, p.Receipt.ID).Deliveries[0]; got.Status != smsreceipt.DeliveryDelivered || got.LastError != "" {
			t.Errorf("a forged report changed the delivery: %+v", got)
		}
		if evs := b.events.Events(event.ReceiptDeliveryFailed); len(evs) != 0 {
			t.Errorf("a forged report raised %d receipt.delivery_failed", len(evs))
		}
	})
}

// pdfText fetches a PDF and returns its first page's text. The parser
// reads the ₹ glyph through fpdf's identity ToUnicode map as ¹ (see
// internal/printout's pageText); it is put back.
func pdfText(t *testing.T, u string) string {
	t.Helper()
	resp, body := get(t, u)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("GET %s: HTTP %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := r.Page(1).GetTextByRow()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, row := range rows {
		for _, w := range row.Content {
			b.WriteString(w.S)
		}
	}
	return strings.ReplaceAll(b.String(), "¹", "₹")
}
