package console_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/hubtest"
)

// TestChargingPagesInBrowser opens the EVSE statuses, sessions and CDRs
// pages in headless Chromium: they render with their tables and charts,
// and screenshots of them are checked for content (kept in
// OCPIHUB_SCREENSHOTS when it is set). SQLite only: the queries run on
// both engines in the HTTP-level tests.
func TestChargingPagesInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	h := hubtest.Start(t, "sqlite")
	ctx := hubtest.Ctx(t, 3*time.Minute)
	cpo := startCPO(t, h, "Acme Charging", "ACM")
	addVolt(t, h)
	putBLR01(t, ctx, cpo, "Koramangala Hub", time.Now(), "AVAILABLE", "CHARGING", "OUTOFORDER", "AVAILABLE")
	// A week of sessions, one a day, the last one still charging; the
	// others completed with their CDRs.
	for i := 6; i >= 0; i-- {
		start := time.Now().Add(-time.Duration(i) * 24 * time.Hour)
		s := map[string]any{"country_code": "IN", "party_id": "ACM", "id": "S-" + start.Format("0102"), "start_date_time": start.UTC().Format(time.RFC3339),
			"kwh": strings.Repeat("1", 1+i%2) + ".5", "auth_method": "WHITELIST", "location_id": "BLR01", "evse_uid": "BLR01-E2", "connector_id": "1",
			"cdr_token": map[string]any{"country_code": "IN", "party_id": "VLT", "uid": "TOK1", "type": "RFID", "contract_id": "C-TOK1"},
			"currency":  "INR", "status": "ACTIVE", "last_updated": start.UTC().Format(time.RFC3339)}
		if err := cpo.PutSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if err := cpo.StopSession(ctx, s["id"].(string)); err != nil {
				t.Fatal(err)
			}
		}
	}
	link, err := h.Console.LoginLink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(link)
	base := h.PublicURL() + "/console"
	b.Run(chromedp.Navigate(h.PublicURL()+u.RequestURI()), chromedp.WaitVisible(chromedp.CSS(".cards")))

	b.Run(chromedp.Navigate(base+"/evses"), chromedp.WaitVisible(chromedp.CSS("#evses")))
	if got := b.Text("#evse-counts"); !strings.Contains(got, "AVAILABLE 2") || !strings.Contains(got, "OUTOFORDER 1") {
		t.Errorf("EVSE counts: %q", got)
	}
	checkScreenshot(t, b, "console-evses", "BLR01-E3")

	b.Run(chromedp.Navigate(base+"/sessions"), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	bars := browsertest.Get(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#sessions-per-day rect')).map(r => r.getAttribute('height'))`))
	nonZero := 0
	for _, h := range bars {
		if h != "0" {
			nonZero++
		}
	}
	if nonZero != 7 {
		t.Errorf("sessions chart: %d bars of %d show a session, want 7", nonZero, len(bars))
	}
	checkScreenshot(t, b, "console-sessions", "Energy per day")

	b.Run(browsertest.Click("#sessions tbody a"), chromedp.WaitVisible(chromedp.CSS(".facts")))
	checkScreenshot(t, b, "console-session", "Charging periods")

	b.Run(chromedp.Navigate(base+"/cdrs"), chromedp.WaitVisible(chromedp.CSS("#cdrs")))
	checkScreenshot(t, b, "console-cdrs", "CDR-S-")
	b.Run(browsertest.Click("#cdrs tbody a"), chromedp.WaitVisible(chromedp.CSS("#costs")))
	checkScreenshot(t, b, "console-cdr", "231.25 INR")
}
