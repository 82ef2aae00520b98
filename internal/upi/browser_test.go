package upi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// waitStage waits until the status page shows stage.
func waitStage(b *browsertest.Browser, stage string) {
	b.Run(chromedp.Poll[chromedp.Void](`document.getElementById('stage').dataset.stage === `+jsString(stage),
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDriverPagesInBrowser drives the driver's journey in headless
// Chromium on a phone: the landing page renders with the connector's live
// status and the tariff; a preset is paid; the status page hands over to
// the UPI app and follows the payment and the session as the simulators
// move them (pending payment → charging with energy and cost so far → done);
// the receipt link opens the receipt, whose PDF downloads. On a desktop the
// status page shows the UPI QR code. The pages do not touch the database
// engine beyond what the other tests cover, so this runs on SQLite.
func TestDriverPagesInBrowser(t *testing.T) {
	t.Parallel()
	br := browsertest.New(t)
	b := setup(t, store.SQLite)
	// T1 again, with parking: free for the session's first 2 hours, then
	// ₹100.00 an hour + 18 %.
	t1 := tariffJSON("T1")
	t1["last_updated"] = hubtest.Stamp(10)
	t1["elements"] = []any{
		map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": "18.50", "vat": 18, "step_size": 1}}},
		map[string]any{"price_components": []any{map[string]any{"type": "PARKING_TIME", "price": "100", "vat": 18, "step_size": 60}},
			"restrictions": map[string]any{"min_duration": 7200}}}
	if err := b.cpo.PutTariff(b.ctx, "T1", t1); err != nil {
		t.Fatal(err)
	}
	b.qr(t)
	base := b.h.PublicURL()

	br.Mobile()
	br.Run(chromedp.Navigate(base + "/qr/" + qrRef))
	if got := br.Text("#location-name"); got != "Koramangala Hub" {
		t.Errorf("location name %q", got)
	}
	if got := br.Text("#connector-status"); got != "AVAILABLE" {
		t.Errorf("connector status %q", got)
	}
	if got := br.Text("#tariff"); !strings.Contains(got, "₹18.50 per kWh + 18% tax") {
		t.Errorf("tariff %q", got)
	}
	// What each amount buys, by the hub's cost engine: ₹200.00 / (18.50
	// × 1.18) = 9.16 kWh, shown to 0.1 kWh rounded down; ₹500.00 buys
	// 22.9 kWh.
	if got := br.Text("#estimates"); !strings.Contains(got, "₹200.00 ≈ 9.1 kWh if you start now") || !strings.Contains(got, "₹500.00 ≈ 22.9 kWh") {
		t.Errorf("estimates %q", got)
	}
	if got := br.Text("#parking"); got != "Parking costs ₹118.00 per hour once the session has lasted 2 h." {
		t.Errorf("parking %q", got)
	}
	// The page fits a phone: nothing wider than the viewport.
	if w := browsertest.Get(br, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
		t.Errorf("the landing page is %d px wide on a 390 px phone", w)
	}
	br.Screenshot("upi-landing-phone")

	// Pick ₹200.00 and pay.
	br.Run(chromedp.Click(chromedp.CSS(`input[name=amount][value="200.00"]`), chromedp.NodeReady))
	if got := br.Text("#pay-button"); got != "Pay ₹200.00 with UPI" {
		t.Errorf("pay button %q", got)
	}
	br.Run(chromedp.Click(chromedp.CSS("#pay-button")), chromedp.WaitVisible(chromedp.CSS("#stage")))
	loc := browsertest.Get(br, chromedp.Location())
	orderID := loc[strings.LastIndex(loc, "/")+1:]
	waitStage(br, upi.StagePay)
	intent := browsertest.Get(br, chromedp.Evaluate[string](`document.getElementById('upi-intent').href`))
	if !strings.HasPrefix(intent, "upi://pay?") || !strings.Contains(intent, "am=200.00") {
		t.Errorf("UPI intent %q", intent)
	}
	if vis := browsertest.Get(br, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector('.desktop-only')).display !== 'none'`)); vis {
		t.Error("the desktop QR code shows on a phone")
	}
	br.Screenshot("upi-status-pay-phone")

	// The driver's UPI app: pending first, then the capture.
	po := b.pgOrder(t, orderID)
	pay, err := b.pg.Attempt(b.ctx, po.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pg.NotifyPending(b.ctx, pay.ID); err != nil {
		t.Fatal(err)
	}
	waitStage(br, upi.StagePending)
	if _, err := b.pg.Capture(b.ctx, pay.ID); err != nil {
		t.Fatal(err)
	}
	waitStage(br, upi.StageCharging)
	p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
	now := ocpi.NewDateTime(time.Now())
	// The CPO's own running total says ₹94.40; the page shows the hub's
	// engine at the connector's tariff from the charging periods: 4.2 kWh
	// × 18.50 = 77.70 + 18 % = 91.686, ₹91.69.
	if err := b.cpo.PatchSession(b.ctx, p.Session.ID, map[string]any{"kwh": 4.2, "last_updated": now,
		"charging_periods": []any{map[string]any{"start_date_time": p.Session.Start, "dimensions": []any{map[string]any{"type": "ENERGY", "volume": 4.2}}}},
		"total_cost":       map[string]any{"excl_vat": 80, "incl_vat": 94.4}}); err != nil {
		t.Fatal(err)
	}
	br.Run(chromedp.Poll[chromedp.Void](`document.getElementById('energy').textContent === '4.2 kWh' && !document.getElementById('energy').hidden`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if got := br.Text("#cost"); got != "₹91.69" {
		t.Errorf("cost so far %q, want the engine's ₹91.69", got)
	}
	if got := br.Text("#cost-label"); !strings.Contains(got, "at this charger's tariff") {
		t.Errorf("cost label %q", got)
	}
	br.Screenshot("upi-status-charging-phone")

	b.stop(t, p.Session.ID)
	waitStage(br, upi.StageDone)
	if got := br.Text("#message"); !strings.Contains(got, "You paid ₹200.00") {
		// ₹272.88 costs more than the ₹200.00 paid: a shortfall, nothing back.
		t.Errorf("final message %q", got)
	}
	br.Run(chromedp.WaitVisible(chromedp.CSS("#receipt")))
	br.Screenshot("upi-status-done-phone")
	br.Run(chromedp.Click(chromedp.CSS("#receipt")), chromedp.WaitVisible(chromedp.CSS("#paid")))
	if got := br.Text("#paid"); got != "₹200.00" {
		t.Errorf("receipt paid %q", got)
	}
	if got := br.Text("#energy"); got != "12.5 kWh" {
		t.Errorf("receipt energy %q", got)
	}
	br.Screenshot("upi-receipt-phone")
	head := browsertest.Get(br, chromedp.Evaluate[string](`fetch(document.getElementById('pdf').href).then(r => r.headers.get('content-type') + ' ' +
		r.headers.get('content-disposition').split(';')[0]).catch(e => 'error ' + e)`, chromedp.EvalAwaitPromise))
	magic := browsertest.Get(br, chromedp.Evaluate[string](`fetch(document.getElementById('pdf').href).then(r => r.arrayBuffer())
		.then(b => String.fromCharCode(...new Uint8Array(b).slice(0, 5)))`, chromedp.EvalAwaitPromise))
	if head != "application/pdf attachment" || magic != "%PDF-" {
		t.Errorf("receipt PDF download: %q, starts %q", head, magic)
	}

	// On a desktop the status page of a new order shows the UPI QR code.
	desk := browsertest.New(t)
	next := b.order(t, "150")
	desk.Run(chromedp.Navigate(base+"/pay/"+next), chromedp.WaitVisible(chromedp.CSS("#upi-qr")))
	if w := browsertest.Get(desk, chromedp.Evaluate[int](`document.getElementById('upi-qr').naturalWidth`)); w != 480 {
		t.Errorf("desktop UPI QR is %d px wide", w)
	}
	desk.Screenshot("upi-status-pay-desktop")
	// The PG's own page (the simulator's checkout) takes the payment.
	desk.Run(chromedp.Click(chromedp.CSS("#pg-page")), chromedp.WaitVisible(chromedp.CSS(`button[value="captured"]`)),
		chromedp.Click(chromedp.CSS(`button[value="captured"]`)), chromedp.WaitVisible(chromedp.CSS("#result")))
	b.waitStatus(t, next, paymentrow.StatusCharging)
}
