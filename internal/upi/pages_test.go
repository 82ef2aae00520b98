package upi_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// postForm submits the landing page's form without following redirects.
func (b *bundle) postForm(t *testing.T, ref string, form url.Values) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(b.h.PublicURL()+"/qr/"+ref, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, sb.String()
}

func wantPage(t *testing.T, what string, resp *http.Response, body string, status int, texts ...string) {
	t.Helper()
	if resp.StatusCode != status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("%s: HTTP %d %s", what, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	body = html.UnescapeString(body)
	for _, s := range texts {
		if !strings.Contains(body, s) {
			t.Errorf("%s: the page lacks %q", what, s)
		}
	}
}

// TestDriverPages serves the landing page, refuses bad amounts and busy
// connectors without creating orders, and serves the status page, its JSON
// and the receipt (page and PDF).
func TestDriverPages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.qr(t)
		base := b.h.PublicURL()
		resp, body := get(t, base+"/qr/"+qrRef)
		wantPage(t, "landing", resp, string(body), http.StatusOK, "Koramangala Hub", "80 Feet Road 12", "AVAILABLE", "IN*CPO*EE1 · connector 1",
			"₹18.50 per kWh + 18% tax", `value="100.00"`, "₹500.00", `id="pay-form"`, "22.1 kW",
			// The engine: ₹21.83 per kWh incl. tax, so ₹100 buys 4.58 kWh
			// and ₹500 22.90 (rounded down to 0.1 kWh).
			"₹100.00 ≈ 4.5 kWh if you start now", "₹500.00 ≈ 22.9 kWh if you start now")
		if resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("landing headers %v", resp.Header)
		}
		resp, body = get(t, base+"/qr/NOPE")
		wantPage(t, "unknown sticker", resp, string(body), http.StatusNotFound, "Not found")
		resp, body = get(t, base+"/qr/"+qrRef+"/connector")
		var conn map[string]any
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &conn) != nil || conn["status"] != "AVAILABLE" || conn["available"] != true {
			t.Errorf("connector JSON: HTTP %d %s", resp.StatusCode, body)
		}

		orders := b.rows(t, "upi_orders")
		for _, c := range []struct {
			what string
			form url.Values
			text string
		}{
			{"no amount", url.Values{}, "Choose an amount"},
			{"not a number", url.Values{"custom": {"lots"}}, "Choose an amount"},
			{"three decimals", url.Values{"custom": {"100.005"}}, "Choose an amount"},
			{"below the minimum", url.Values{"custom": {"49.99"}}, "between ₹50.00 and ₹5,000.00"},
			{"above the maximum", url.Values{"amount": {"5000.01"}}, "between ₹50.00 and ₹5,000.00"},
			{"bad e-mail", url.Values{"amount": {"100"}, "email": {"driver at home"}}, "e-mail"},
		} {
			resp, body := b.postForm(t, qrRef, c.form)
			wantPage(t, c.what, resp, body, http.StatusUnprocessableEntity, c.text, `id="pay-form"`)
		}
		if n := b.rows(t, "upi_orders"); n != orders {
			t.Errorf("refused forms created orders: %d, want %d", n, orders)
		}

		// A busy connector takes no money.
		if err := b.cpo.PatchEVSE(b.ctx, locID, "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(60)}); err != nil {
			t.Fatal(err)
		}
		resp, body = get(t, base+"/qr/"+qrRef)
		wantPage(t, "busy landing", resp, string(body), http.StatusOK, "in use right now", `id="pay-form" hidden`)
		rresp, rbody := b.postForm(t, qrRef, url.Values{"amount": {"100"}})
		wantPage(t, "paying a busy connector", rresp, rbody, http.StatusUnprocessableEntity, "in use right now")
		if n := b.rows(t, "upi_orders"); n != orders {
			t.Errorf("a busy connector took an order")
		}
		if err := b.cpo.PatchEVSE(b.ctx, locID, "E1", map[string]any{"status": "AVAILABLE", "last_updated": hubtest.Stamp(120)}); err != nil {
			t.Fatal(err)
		}

		// Order, status page, status JSON, the desktop QR.
		orderID := b.order(t, "500")
		resp, body = get(t, base+"/pay/"+orderID)
		wantPage(t, "status page", resp, string(body), http.StatusOK, "Pay ₹500.00", `href="upi://pay?`, `id="upi-qr"`, "Pay on the payment page")
		resp, body = get(t, base+"/pay/"+orderID+"/status")
		var st upi.OrderStatus
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil || st.Stage != upi.StagePay || st.Final {
			t.Errorf("status JSON: HTTP %d %s", resp.StatusCode, body)
		}
		if resp, body := get(t, base+"/pay/"+orderID+"/qr.png"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "\x89PNG") {
			t.Errorf("desktop QR: HTTP %d", resp.StatusCode)
		}
		if resp, _ := get(t, base+"/pay/nope"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown order: HTTP %d", resp.StatusCode)
		}

		if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Captured); err != nil {
			t.Fatal(err)
		}
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
		b.stop(t, p.Session.ID)
		p = b.waitStatus(t, orderID, paymentrow.StatusSettled)
		resp, body = get(t, base+"/pay/"+orderID+"/status")
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil || st.Stage != upi.StageDone || !st.Final || st.ReceiptURL != p.Receipt.URL {
			t.Errorf("final status JSON %s", body)
		}
		resp, body = get(t, p.Receipt.URL)
		wantPage(t, "receipt", resp, string(body), http.StatusOK, "Charging receipt", "₹272.88", "₹227.12", "12.5 kWh", p.PGPaymentID, p.CDR.ID, ".pdf")
		resp, body = get(t, p.Receipt.URL+".pdf")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(body), "%PDF-") ||
			!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("receipt PDF: HTTP %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body[:min(len(body), 8)])
		}
		for _, bad := range []string{"/receipts/nope", "/receipts/nope.pdf", "/receipts/" + strings.Repeat("a", 32)} {
			if resp, _ := get(t, base+bad); resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: HTTP %d", bad, resp.StatusCode)
			}
		}
	})
}

// TestOrdersPerQRCodeLimited: a script posting to one sticker's landing
// page gets ten orders a minute, then a page saying when to try again and
// no order (and no call to the payment gateway); the next minute it may
// order again, and another sticker was never limited.
func TestOrdersPerQRCodeLimited(t *testing.T) {
	t.Parallel()
	eachOnTheHour(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		b.qr(t)
		resp := b.h.AdminDo(t, http.MethodPost, upiBase+"/qr", map[string]any{"qr_ref": "OTHERQR1", "location_id": locID, "evse_uid": "E2", "connector_id": "1"})
		if resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("second QR mapping: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		for i := 0; i < 10; i++ {
			b.order(t, "100")
		}
		orders, pgOrders := b.rows(t, "upi_orders"), len(b.pg.Orders())
		r, body := b.postForm(t, qrRef, url.Values{"amount": {"100"}, "email": {"driver@example.in"}})
		wantPage(t, "the eleventh order in a minute", r, body, http.StatusTooManyRequests, "Too many payments", "try again in 60 seconds",
			`value="driver@example.in"`)
		if r.Header.Get("Retry-After") != "60" {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		if n := b.rows(t, "upi_orders"); n != orders || len(b.pg.Orders()) != pgOrders {
			t.Errorf("a refused order was stored or sent to the PG: %d orders (want %d), %d at the PG (want %d)", n, orders, len(b.pg.Orders()), pgOrders)
		}
		// Another sticker is not limited.
		r, _ = b.postForm(t, "OTHERQR1", url.Values{"amount": {"100"}})
		if r.StatusCode != http.StatusSeeOther {
			t.Errorf("another QR code: HTTP %d", r.StatusCode)
		}
		clk.Add(time.Minute)
		b.order(t, "100")
	})
}
