package console_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestPaymentsAndWebhooksInBrowser drives the payments and webhooks pages
// in headless Chromium: the operator reads the payments with their
// outcomes chart and one payment's chain, then opens the webhook
// subscription whose receiver was taken down (it answered 410 Gone, so the
// delivery failed and the subscription was disabled), enables it again now
// that the receiver is back, clicks Replay on the failed delivery, and the
// delivery arrives. Screenshots are checked for content and kept in
// OCPIHUB_SCREENSHOTS when it is set. SQLite only: the pages' queries run on
// both engines in TestPaymentPages and TestWebhookPages.
func TestPaymentsAndWebhooksInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	pay := startPayments(t, store.SQLite)
	h, ctx := pay.h, hubtest.Ctx(t, 3*time.Minute)
	settled, failed, stuck := pay.seed(t)
	rcv, sub, d := failedDelivery(t, h)

	base := h.PublicURL() + "/console"
	signIn(b, base+"/payments", "#payments")
	text := b.Text("#payments")
	for _, want := range []string{settled.ID, failed.ID, stuck.ID, "SETTLED", "FAILED", "REFUNDING", "refund_failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("payments table lacks %q:\n%s", want, text)
		}
	}
	// Today's stacked bar: one of each of three outcomes.
	if n := browsertest.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.chart-bars rect').length`)); n != 3 {
		t.Errorf("outcome bars drawn: %d, want 3", n)
	}
	checkScreenshot(t, b, "console-payments", "Payment outcomes per day")

	// The attention tab, then the settled payment's chain.
	b.Run(browsertest.Click("#tab-attention"), chromedp.WaitVisible(chromedp.CSS(`#payments tr[data-payment="`+stuck.ID+`"]`)))
	if text := b.Text("#payments"); strings.Contains(text, settled.ID) {
		t.Errorf("the attention tab lists the settled payment:\n%s", text)
	}
	b.Run(browsertest.Click("#tab-all"), chromedp.WaitVisible(chromedp.CSS("#payments")),
		browsertest.Click(`#payments a[href="/console/payments/`+settled.ID+`"]`), chromedp.WaitVisible(chromedp.CSS("#chain")))
	chain := b.Text("#chain")
	for _, want := range []string{"KORA-E1", "START_SESSION", settled.Session.ID, settled.CDR.ID, "Reconciliation", settled.ID + "-EXCESS", "Receipt"} {
		if !strings.Contains(chain, want) {
			t.Errorf("chain lacks %q:\n%s", want, chain)
		}
	}
	checkScreenshot(t, b, "console-payment", "Reconciliation")

	// Webhooks: the subscription, its failed delivery; the receiver is back.
	b.Run(browsertest.Click(`nav.side a[href="/console/webhooks"]`), chromedp.WaitVisible(chromedp.CSS("#webhooks")))
	if text := b.Text("#webhooks"); !strings.Contains(text, rcv.URL()) || !strings.Contains(text, "DISABLED") {
		t.Errorf("webhooks table: %q", text)
	}
	checkScreenshot(t, b, "console-webhooks", "cdr.missing")
	row := `#deliveries tr[data-delivery="` + strconv.FormatInt(d.ID, 10) + `"]`
	b.Run(browsertest.Click(`#webhooks a[href="/console/webhooks/`+sub.ID+`"]`), chromedp.WaitVisible(chromedp.CSS(row)))
	if text := b.Text(row); !strings.Contains(text, "FAILED") || !strings.Contains(text, "HTTP 410") {
		t.Errorf("failed delivery row: %q", text)
	}
	rcv.SetStatus(http.StatusNoContent)
	b.Run(browsertest.Click("#enable"), chromedp.WaitVisible(chromedp.CSS(".flash-ok")))
	if msg := b.Text(".flash-ok"); !strings.Contains(msg, "active again") {
		t.Errorf("after enabling: %q", msg)
	}
	// The page before the click still shows the flash of enabling.
	b.Run(browsertest.Click("#replay-" + strconv.FormatInt(d.ID, 10)))
	if msg := b.WaitText(".flash-ok", "is sent again"); !strings.Contains(msg, "is sent again") {
		t.Errorf("after replay: %q", msg)
	}
	got, err := rcv.WaitFor(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Status != http.StatusNoContent || got[1].Header.Get("webhook-id") != d.EventID {
		t.Errorf("the replay at the receiver: HTTP %d, webhook-id %q", got[1].Status, got[1].Header.Get("webhook-id"))
	}
	hubtest.Eventually(t, ctx, "the replay shown delivered", func() bool {
		b.Run(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
		return strings.Contains(b.Text("#deliveries"), "DELIVERED")
	})
	if text := b.Text("#deliveries"); !strings.Contains(text, "replay of #"+strconv.FormatInt(d.ID, 10)) {
		t.Errorf("delivery log after the replay: %q", text)
	}
	if body := b.Text("body"); strings.Contains(body, webhookSecret) {
		t.Error("the page shows the signing secret")
	}
	checkScreenshot(t, b, "console-webhook", "replay of #")
}
