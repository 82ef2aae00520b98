package console_test

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestConsoleInBrowser drives the console in headless Chromium as an
// operator would: signs in (a wrong token first), reads the overview, finds a
// partner, suspends it through the confirmation dialog, retries a job that
// failed against a partner that was down, and looks at the map and charts.
// Screenshots of the main pages are checked for content and kept in
// OCPIHUB_SCREENSHOTS when it is set.
//
// The browser runs against SQLite only: the pages' queries run on both
// engines in the HTTP-level tests of this package.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	// The job queue's clock stands still: a failed push waits for its
	// retry until the operator clicks.
	frozen := clock.NewFake(time.Now())
	h := hubtest.Start(t, "sqlite", func(o *hubtest.Options) {
		o.Jobs = func(c *jobs.Config) { c.Time = frozen }
	})
	ctx := hubtest.Ctx(t, 3*time.Minute)

	// A watcher eMSP that is down when a CPO registers: the hub's push of
	// the CPO's status to it fails and waits for a retry.
	watcher := hubtest.Add(t, h, sim.StartEMSP, "Watcher Mobility", "IN", "WAT")
	failed, stopFailed := h.Jobs.Subscribe(river.EventKindJobFailed)
	defer stopFailed()
	watcher.SetDown(true)
	cpo := addAcme(t, h)
	var failedJob *rivertype.JobRow
	for failedJob == nil {
		select {
		case ev := <-failed:
			if ev.Job.Kind == (clientinfo.PushArgs{}).Kind() {
				failedJob = ev.Job
			}
		case <-ctx.Done():
			t.Fatal("the push to the watcher that is down did not fail")
		}
	}
	acme, err := h.Parties.FindByParty(ctx, "", "IN", "ACM")
	if err != nil {
		t.Fatal(err)
	}
	// Acme publishes three locations.
	for _, l := range []struct{ id, name, city, lat, lon, status string }{
		{"BLR01", "Koramangala Hub", "Bengaluru", "12.935242", "77.624480", "AVAILABLE"},
		{"BOM01", "Bandra Kurla Complex", "Mumbai", "19.066245", "72.868393", "CHARGING"},
		{"DEL01", "Aerocity", "New Delhi", "28.548764", "77.121262", "OUTOFORDER"},
	} {
		if err := cpo.PutLocation(ctx, l.id, sim.SampleLocation("IN", "ACM", l.id, l.name, l.city, l.lat, l.lon, time.Now(), l.status, "AVAILABLE")); err != nil {
			t.Fatal(err)
		}
	}

	// Confirmation dialogs are accepted, and their text kept.
	var mu sync.Mutex
	var dialogs []string
	go func() {
		for ev, err := range chromedp.Events(b.Context(), cdppage.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			mu.Lock()
			dialogs = append(dialogs, ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(b.Context(), cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	base := h.PublicURL() + "/console"
	// Signed out, the console sends the browser to the sign-in form.
	b.Run(chromedp.Navigate(base + "/parties"))
	if loc := browsertest.Get(b, chromedp.Location()); !strings.Contains(loc, "/console/login?next=%2Fparties") {
		t.Fatalf("signed out, /console/parties went to %s", loc)
	}
	// A wrong token is refused.
	b.Run(chromedp.SetValue(chromedp.CSS("#token"), "definitely-not-the-token"), browsertest.Click("#sign-in"),
		chromedp.WaitVisible(chromedp.CSS("#login-error")))
	if msg := b.Text("#login-error"); !strings.Contains(msg, "not the admin token") {
		t.Errorf("wrong token: %q", msg)
	}
	// The admin token signs in, and the page asked for opens.
	if err := b.Try(chromedp.SetValue(chromedp.CSS("#token"), hubtest.AdminToken), browsertest.Click("#sign-in"),
		chromedp.WaitVisible(chromedp.CSS("#parties"))); err != nil {
		t.Fatalf("DEBUG %v at %s: %s", err, browsertest.Get(b, chromedp.Location()), b.Text("body"))
	}
	if text := b.Text("#parties"); !strings.Contains(text, "Acme Charging") || !strings.Contains(text, "Watcher Mobility") || !strings.Contains(text, "CPO IN/ACM") {
		t.Errorf("parties table: %q", text)
	}
	checkScreenshot(t, b, "console-parties", "Acme Charging")

	// Overview: the figures say what the data says.
	b.Run(browsertest.Click(`nav.side a[href="/console/"]`), chromedp.WaitVisible(chromedp.CSS(".cards")))
	cards := b.Text(".cards")
	for _, want := range []string{"Connected platforms\n2", "Failed jobs\n1"} {
		if !strings.Contains(cards, want) {
			t.Errorf("overview cards lack %q:\n%s", want, cards)
		}
	}
	if problems := b.Text(".problems"); !strings.Contains(problems, "Party Clientinfo Push job retryable") {
		t.Errorf("recent problems: %q", problems)
	}
	checkScreenshot(t, b, "console-overview", "Connected platforms")

	// The directory: Acme's locations on the map and in the table; one
	// location's EVSEs.
	b.Run(browsertest.Click(`nav.side a[href="/console/directory"]`), chromedp.WaitVisible(chromedp.CSS("#locations")))
	if n := browsertest.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.map-points circle').length`)); n != 3 {
		t.Errorf("directory map points: %d, want 3", n)
	}
	if text := b.Text("#locations"); !strings.Contains(text, "Koramangala Hub") || !strings.Contains(text, "1 of 2 EVSEs available") {
		t.Errorf("directory table: %q", text)
	}
	checkScreenshot(t, b, "console-directory", "Aerocity")
	b.Run(browsertest.Click(`.map-points a[href="/console/directory/IN/ACM/DEL01"]`), chromedp.WaitVisible(chromedp.CSS("#evses")))
	if text := b.Text("#evses"); !strings.Contains(text, "DEL01-E1") || !strings.Contains(text, "OUTOFORDER") || !strings.Contains(text, "120.0 kW") {
		t.Errorf("location EVSEs: %q", text)
	}

	// Suspend Acme from its page, through the confirmation.
	b.Run(browsertest.Click(`nav.side a[href="/console/parties"]`), chromedp.WaitVisible(chromedp.CSS("#parties")),
		browsertest.Click(`#parties a[href="/console/parties/`+strconv.FormatInt(acme.ID, 10)+`"]`),
		chromedp.WaitVisible(chromedp.CSS("#endpoints")),
		browsertest.Click("#suspend"),
		chromedp.WaitVisible(chromedp.CSS(".flash-ok")))
	if msg := b.Text(".flash-ok"); !strings.Contains(msg, "Acme Charging is suspended") {
		t.Errorf("after suspend: %q", msg)
	}
	mu.Lock()
	if len(dialogs) != 1 || !strings.Contains(dialogs[0], "Suspend Acme Charging?") {
		t.Errorf("confirmation dialogs: %q", dialogs)
	}
	mu.Unlock()
	if p, err := h.Parties.Find(ctx, acme.ID); err != nil || p.Status != party.StatusSuspended {
		t.Fatalf("Acme after the click: %v %v", p, err)
	}
	if _, err := cpo.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, nil); sim.HTTPStatus(err) != http.StatusUnauthorized {
		t.Errorf("the suspended CPO still gets through: %v", err)
	}
	if h1 := b.Text("h1"); !strings.Contains(h1, "SUSPENDED") {
		t.Errorf("party heading after suspend: %q", h1)
	}
	checkScreenshot(t, b, "console-party", "SUSPENDED")

	// Retry the failed push now that the watcher is back.
	row := `#jobs tr[data-job="` + strconv.FormatInt(failedJob.ID, 10) + `"]`
	b.Run(browsertest.Click(`nav.side a[href="/console/jobs"]`), chromedp.WaitVisible(chromedp.CSS(row)))
	if text := b.Text(row); !strings.Contains(text, "Party Clientinfo Push") || !strings.Contains(text, "retryable") || !strings.Contains(text, "503") {
		t.Errorf("failed job row: %q", text)
	}
	checkScreenshot(t, b, "console-jobs", "Party Clientinfo Push")
	watcher.SetDown(false)
	done, stopDone := h.Jobs.Subscribe(river.EventKindJobCompleted)
	defer stopDone()
	b.Run(browsertest.Click("#retry-"+strconv.FormatInt(failedJob.ID, 10)), chromedp.WaitVisible(chromedp.CSS(".flash-ok")))
	if msg := b.Text(".flash-ok"); !strings.Contains(msg, "will run again") {
		t.Errorf("after retry: %q", msg)
	}
	for completed := false; !completed; {
		select {
		case ev := <-done:
			completed = ev.Job.ID == failedJob.ID
		case <-ctx.Done():
			t.Fatal("the retried job did not complete")
		}
	}
	if _, err := watcher.WaitFor(ctx, 1, func(r sim.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/IN/ACM")
	}); err != nil {
		t.Errorf("the watcher never received the retried push: %v", err)
	}
	b.Run(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("h1")))
	if h1 := b.Text("h1"); !strings.Contains(h1, "completed") {
		t.Errorf("job heading after the retry: %q", h1)
	}

	// An invitation created in the console, its token shown once.
	b.Run(browsertest.Click(`nav.side a[href="/console/invitations"]`), chromedp.WaitVisible(chromedp.CSS("#invite")),
		chromedp.SetValue(chromedp.CSS("#inv-name"), "Volt Mobility"), chromedp.SetValue(chromedp.CSS("#inv-parties"), "EMSP/IN/VLT"),
		browsertest.Click("#create-invitation"), chromedp.WaitVisible(chromedp.CSS("#token-a")))
	if tok := b.Text("#token-a"); len(tok) < 20 {
		t.Errorf("token A on the page: %q", tok)
	}

	// The component gallery: the map draws every located point with its
	// status colour; the charts draw their bars and lines.
	b.Run(browsertest.Click(`nav.side a[href="/console/components"]`), chromedp.WaitVisible(chromedp.CSS(".map-svg")))
	if n := browsertest.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.map-svg')[0].querySelectorAll('.map-points circle').length`)); n != 9 {
		t.Errorf("map points drawn: %d, want 9 (one sample has no coordinates)", n)
	}
	if n := browsertest.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.chart-bars rect').length`)); n < 14 {
		t.Errorf("chart bars drawn: %d", n)
	}
	shot := checkScreenshot(t, b, "console-components", "Directory map")
	for name, c := range map[string][3]uint8{"green (AVAILABLE)": {0x1a, 0x7f, 0x4b}, "red (OUTOFORDER)": {0xc2, 0x26, 0x2e}, "blue (CHARGING)": {0x1f, 0x5f, 0xd6}} {
		if countColor(shot, c) < 20 {
			t.Errorf("the map screenshot has no %s points", name)
		}
	}

	// On a phone the pages fit the screen.
	b.Mobile()
	b.Run(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
	if w := browsertest.Get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 400 {
		t.Errorf("the overview is %d px wide on a 390 px phone", w)
	}
	checkScreenshot(t, b, "console-overview-phone", "Connected platforms")
}

// signIn opens the console page at url signed out, signs in with the admin
// token on the login form it is sent to, and waits for sel on the page.
func signIn(b *browsertest.Browser, url, sel string) {
	b.Run(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SetValue(chromedp.CSS("#token"), hubtest.AdminToken), browsertest.Click("#sign-in"),
		chromedp.WaitVisible(chromedp.CSS(sel)))
}

// checkScreenshot takes a screenshot, checks it is a picture of a page (not
// blank: enough non-background pixels and colours) and that the page shows
// text; it returns the image.
func checkScreenshot(t *testing.T, b *browsertest.Browser, name, text string) image.Image {
	t.Helper()
	// innerText applies text-transform: compare without case.
	if body := b.Text("body"); !strings.Contains(strings.ToLower(body), strings.ToLower(text)) {
		t.Errorf("%s: the page does not say %q", name, text)
	}
	raw := b.Screenshot(name)
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	bounds := img.Bounds()
	if bounds.Dx() < 300 || bounds.Dy() < 300 {
		t.Fatalf("%s: screenshot is %v", name, bounds)
	}
	colours := map[[3]uint8]bool{}
	inked := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			colours[c] = true
			if c[0] < 200 || c[1] < 200 || c[2] < 200 {
				inked++
			}
		}
	}
	total := (bounds.Dx() / 2) * (bounds.Dy() / 2)
	if len(colours) < 30 || inked < total/50 {
		t.Errorf("%s: the screenshot looks blank (%d colours, %d of %d sampled pixels inked)", name, len(colours), inked, total)
	}
	return img
}

// countColor counts the pixels within a small distance of c.
func countColor(img image.Image, c [3]uint8) int {
	n := 0
	bounds := img.Bounds()
	near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d > -12 && d < 12 }
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, c[0]) && near(g, c[1]) && near(bl, c[2]) {
				n++
			}
		}
	}
	return n
}
