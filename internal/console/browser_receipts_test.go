package console_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// TestReceiptResendInBrowser: the SMS gateway is down when a driver's
// receipt is due; the send is retried, then flagged failed on the
// payment's chain. With the gateway back, the operator opens the payment
// in headless Chromium, types the driver's corrected number and clicks
// Resend receipt: the SMS reaches the gateway and the page shows it
// delivered. SQLite only: the resend itself runs on both engines in
// internal/upi's TestReceiptSMSGatewayDown.
func TestReceiptResendInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	pay := startPayments(t, store.SQLite)
	h, ctx := pay.h, hubtest.Ctx(t, 3*time.Minute)
	gw := devgw.SMS(h.App)
	if gw == nil {
		t.Fatal("the dev-mode hub has no SMS simulator")
	}
	gw.SetDown(true)

	p := pay.payWith(t, url.Values{"amount": {"500"}, "phone": {"98765 43210"}, "phone_consent": {"yes"}}, pgsim.Captured,
		func(p *paymentview.PaymentView) bool {
			return p.Status == paymentrow.StatusCharging && p.Session != nil
		})
	hubtest.Eventually(t, ctx, "the CPO's copy of the session", func() bool { return pay.cpo.Session(p.Session.ID) != nil })
	if err := pay.cpo.StopSession(ctx, p.Session.ID); err != nil {
		t.Fatal(err)
	}
	p = pay.waitPayment(t, p.ID, func(p *paymentview.PaymentView) bool { return p.Receipt != nil })
	hubtest.Eventually(t, ctx, "the receipt SMS flagged failed", func() bool {
		ds, err := h.UPI.Deliveries(ctx, p.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds) == 1 && ds[0].Status == smsreceipt.DeliveryFailed
	})
	gw.SetDown(false)

	base := h.PublicURL() + "/console"
	signIn(b, base+"/payments/"+p.ID, "#receipt-sms")
	if text := b.Text("#chain"); !strings.Contains(text, "Receipt SMS FAILED") {
		t.Errorf("the chain does not show the failed SMS:\n%s", text)
	}
	if text := b.Text("#receipt-sms"); !strings.Contains(text, "+91 98******10") || !strings.Contains(text, "503") {
		t.Errorf("the SMS table: %q", text)
	}
	checkScreenshot(t, b, "console-receipt-sms-failed", "Resend receipt")

	b.Run(chromedp.SetValue(chromedp.CSS("#resend-phone"), "91234 56789"), browsertest.Click("#resend-button"),
		chromedp.WaitVisible(chromedp.CSS(".flash-ok")))
	if msg := b.Text(".flash-ok"); !strings.Contains(msg, "resent by SMS to +91 91******89") {
		t.Errorf("after the resend: %q", msg)
	}
	hubtest.Eventually(t, ctx, "the resent SMS at the gateway", func() bool { return len(gw.Messages()) == 1 })
	if m := gw.Messages()[0]; m.To != "+919123456789" || !strings.Contains(m.Vars.Link, "/r/") {
		t.Errorf("resent message %+v", m)
	}
	hubtest.Eventually(t, ctx, "the resend shown delivered", func() bool {
		b.Run(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#receipt-sms")))
		return strings.Contains(b.Text("#receipt-sms"), "delivered")
	})
	if body := b.Text("body"); strings.Contains(body, "9876543210") || strings.Contains(body, "9123456789") {
		t.Error("the console shows a phone number unmasked")
	}
	checkScreenshot(t, b, "console-receipt-resent", "delivered")
}
