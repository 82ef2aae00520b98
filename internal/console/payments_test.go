package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// payments is a hub taking UPI payments through the PG simulator, with a
// CPO whose connector BLR01-E1/1 carries the sticker KORA-E1.
type payments struct {
	h   *hubtest.Hub
	pg  *pgsim.Server
	cpo *sim.CPO
	ctx context.Context
}

// withPG configures a hub to take payments through pg.
func withPG(pg *pgsim.Server) func(*hubtest.Options) {
	return func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			c.PGBaseURL, c.PGKeyID, c.PGKeySecret, c.PGWebhookSecret = pg.URL(), pg.KeyID(), pg.KeySecret(), pgsim.DefaultWebhookSecret
			c.SyncInterval = 0
			c.UPIPollInterval = 50 * time.Millisecond
			c.UPIRetryBase = 20 * time.Millisecond
			c.CommandTimeout = 2 * time.Second
			c.CommandTimeoutMargin = time.Second
		}
	}
}

func startPG(t testing.TB) *pgsim.Server {
	t.Helper()
	pg, err := pgsim.Start(pgsim.Options{Logger: hubtest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return pg
}

// startPayments starts a PG simulator and a hub on engine taking payments
// through it, readied by newPayments.
func startPayments(t testing.TB, engine store.Engine) *payments {
	t.Helper()
	pg := startPG(t)
	return newPayments(t, hubtest.Start(t, engine, withPG(pg)), pg)
}

// newPayments readies h (started withPG(pg)) for payments at the sticker.
func newPayments(t testing.TB, h *hubtest.Hub, pg *pgsim.Server) *payments {
	t.Helper()
	b := &payments{h: h, pg: pg, ctx: hubtest.Ctx(t, 2*time.Minute)}
	pg.SetWebhook(h.PublicURL()+app.UPIWebhookPath, pgsim.FormRazorpay)
	b.cpo = addAcme(t, h)
	putBLR01(t, b.ctx, b.cpo, "Koramangala Hub", time.Now(), "AVAILABLE")
	if resp := h.Admin(t, http.MethodPost, "/ocpi/2.2.1/payments/upi/qr", map[string]any{"qr_ref": "KORA-E1", "location_id": "BLR01", "evse_uid": "BLR01-E1", "connector_id": "1"}, nil); resp.HTTPStatus != http.StatusCreated {
		t.Fatalf("QR mapping: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	return b
}

// pay orders amount at the sticker as a driver does, plays sc at the PG and
// waits until the payment satisfies done.
func (b *payments) pay(t testing.TB, amount string, sc pgsim.Scenario, done func(*paymentview.PaymentView) bool) *paymentview.PaymentView {
	t.Helper()
	return b.payWith(t, url.Values{"amount": {amount}}, sc, done)
}

// payWith is pay with the landing page's whole form.
func (b *payments) payWith(t testing.TB, form url.Values, sc pgsim.Scenario, done func(*paymentview.PaymentView) bool) *paymentview.PaymentView {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(b.h.PublicURL()+"/qr/KORA-E1", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	orderID, ok := strings.CutPrefix(resp.Header.Get("Location"), "/pay/")
	if resp.StatusCode != http.StatusSeeOther || !ok {
		t.Fatalf("order: HTTP %d", resp.StatusCode)
	}
	var pgOrder string
	for _, o := range b.pg.Orders() {
		if o.Receipt == orderID {
			pgOrder = o.ID
		}
	}
	if _, err := b.pg.Pay(b.ctx, pgOrder, sc); err != nil {
		t.Fatal(err)
	}
	var p *paymentview.PaymentView
	hubtest.Eventually(t, b.ctx, "payment of order "+orderID, func() bool {
		list, _, err := b.h.UPI.ListPayments(b.ctx, upi.PaymentFilter{}, ocpi.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range list {
			if v.PGOrderID == pgOrder {
				if p, err = b.h.UPI.Payment(b.ctx, v.ID); err != nil {
					t.Fatal(err)
				}
				return done(p)
			}
		}
		return false
	})
	return p
}

// seed drives three payments through the flow: one charged and settled
// with the excess refunded, one failed at the PG, and one whose start the
// CPO rejected and whose full refund the PG refused (it needs attention).
func (b *payments) seed(t testing.TB) (settled, failed, stuck *paymentview.PaymentView) {
	t.Helper()
	p := b.pay(t, "500", pgsim.Captured, func(p *paymentview.PaymentView) bool {
		return p.Status == paymentrow.StatusCharging && p.Session != nil
	})
	hubtest.Eventually(t, b.ctx, "the CPO's copy of the session", func() bool { return b.cpo.Session(p.Session.ID) != nil })
	if err := b.cpo.StopSession(b.ctx, p.Session.ID); err != nil {
		t.Fatal(err)
	}
	settled = b.waitPayment(t, p.ID, func(p *paymentview.PaymentView) bool {
		return p.Status == paymentrow.StatusSettled && p.Receipt != nil && len(p.Refunds) == 1 && p.Refunds[0].Status == refunds.Processed
	})
	failed = b.pay(t, "300", pgsim.Failed, func(p *paymentview.PaymentView) bool { return p.Status == paymentrow.StatusFailed })
	b.cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior {
		return sim.CommandBehavior{Response: ocpi.CommandRejected}
	})
	b.pg.RefuseRefunds("BAD_REQUEST_ERROR", "The payment is too old to refund")
	stuck = b.pay(t, "400", pgsim.Captured, func(p *paymentview.PaymentView) bool { return p.Attention == paymentrow.AttentionRefundFailed })
	return settled, failed, stuck
}

func (b *payments) waitPayment(t testing.TB, id string, done func(*paymentview.PaymentView) bool) *paymentview.PaymentView {
	t.Helper()
	var p *paymentview.PaymentView
	hubtest.Eventually(t, b.ctx, "payment "+id, func() bool {
		var err error
		if p, err = b.h.UPI.Payment(b.ctx, id); err != nil {
			t.Fatal(err)
		}
		return done(p)
	})
	return p
}

// TestPaymentPages: payments driven through the UPI flow appear in the
// list with their states and the outcomes chart, filter by state, the
// stuck one is on the attention tab, refunds list and filter, and a
// payment's page shows its whole chain; resolving needs the CSRF token.
func TestPaymentPages(t *testing.T) {
	t.Parallel()
	eachPG(t, func(t *testing.T, h *hubtest.Hub, pg *pgsim.Server) {
		b := newPayments(t, h, pg)
		settled, failed, stuck := b.seed(t)
		c := signedIn(t, h)

		list := c.get("/console/payments")
		if list.status != http.StatusOK {
			t.Fatalf("payments: HTTP %d\n%s", list.status, list.body)
		}
		for _, want := range []string{`href="/console/payments"`, "UPI payments", settled.ID, failed.ID, stuck.ID, "SETTLED", "FAILED", "REFUNDING",
			"refund_failed", "KORA-E1", "Payment outcomes per day", `class="chart-svg"`, "Partly refunded"} {
			if !strings.Contains(list.body, want) {
				t.Errorf("payments page lacks %q", want)
			}
		}
		// The chart's data: today one captured-and-partly-refunded, one
		// failed, one refunded in full (its refund under way).
		day := h.Clock.Now().UTC().Format("Jan 2") // the chart's days end with the hub's
		for _, want := range []string{"<th>" + day + "</th>"} {
			if !strings.Contains(list.body, want) {
				t.Errorf("outcomes chart lacks %q", want)
			}
		}
		if got := rowOf(list.body, "Partly refunded"); !strings.HasSuffix(got, "<td>1</td>") {
			t.Errorf("partly refunded row %q", got)
		}
		if got := rowOf(list.body, "Failed"); !strings.HasSuffix(got, "<td>1</td>") {
			t.Errorf("failed row %q", got)
		}

		onlyFailed := c.get("/console/payments?state=FAILED")
		if !strings.Contains(onlyFailed.body, failed.ID) || strings.Contains(onlyFailed.body, settled.ID) || strings.Contains(onlyFailed.body, stuck.ID) {
			t.Errorf("state=FAILED shows the wrong payments")
		}
		if p := c.get("/console/payments?state=NOPE"); p.status != http.StatusBadRequest {
			t.Errorf("state=NOPE: HTTP %d", p.status)
		}

		att := c.get("/console/payments/attention")
		if !strings.Contains(att.body, stuck.ID) || strings.Contains(att.body, settled.ID) || strings.Contains(att.body, failed.ID) {
			t.Errorf("attention tab:\n%s", att.body)
		}

		refunds := c.get("/console/payments/refunds")
		if n := strings.Count(refunds.body, `aria-current="page"`); n != 1 || !strings.Contains(refunds.body, `aria-current="page">Refunds<`) {
			t.Errorf("refunds page: %d navigation items highlighted, want Refunds alone", n)
		}
		if n := strings.Count(att.body, `aria-current="page"`); n != 1 || !strings.Contains(att.body, `aria-current="page">UPI payments<`) {
			t.Errorf("attention tab: %d navigation items highlighted, want UPI payments alone", n)
		}
		if got := attentionCard(t, c); got != "1/1 UPI/0 Direct Payment" {
			t.Errorf("overview card before resolving: %q", got)
		}
		for _, want := range []string{settled.ID + "-EXCESS", stuck.ID + "-FULL", "PROCESSED", "too old to refund", "227.12"} {
			if !strings.Contains(refunds.body, want) {
				t.Errorf("refunds page lacks %q", want)
			}
		}
		if r := c.get("/console/payments/refunds?state=FAILED"); !strings.Contains(r.body, stuck.ID+"-FULL") || strings.Contains(r.body, settled.ID+"-EXCESS") {
			t.Errorf("refunds state=FAILED shows the wrong refunds")
		}

		detail := c.get("/console/payments/" + settled.ID)
		if detail.status != http.StatusOK {
			t.Fatalf("payment page: HTTP %d", detail.status)
		}
		for _, want := range []string{"KORA-E1", settled.PGOrderID, settled.PGPaymentID, "START_SESSION", "ACCEPTED", settled.Session.ID,
			settled.CDR.ID, "Reconciliation", "captured 500.00 = cost 272.88 &#43; refunded 227.12", settled.ID + "-EXCESS", settled.Receipt.URL,
			`href="/console/directory/IN/ACM/BLR01"`, `href="/console/commands/` + settled.Command.ID + `"`} {
			if !strings.Contains(detail.body, want) {
				t.Errorf("payment page lacks %q", want)
			}
		}
		if p := c.get("/console/payments/NOSUCHPAYMENT"); p.status != http.StatusNotFound {
			t.Errorf("unknown payment: HTTP %d", p.status)
		}

		// Resolve the stuck one: refused without the CSRF token, done with it.
		page := c.get("/console/payments/" + stuck.ID)
		if !strings.Contains(page.body, `id="resolve"`) || !strings.Contains(page.body, "too old to refund") {
			t.Fatalf("stuck payment page lacks the resolve form")
		}
		if p := c.do(http.MethodPost, "/console/payments/"+stuck.ID+"/resolve", url.Values{"note": {"refunded by hand"}}); p.status != http.StatusForbidden {
			t.Errorf("resolve without CSRF: HTTP %d", p.status)
		}
		if p, _ := h.UPI.Payment(b.ctx, stuck.ID); p.Attention == "" {
			t.Fatal("a forged POST resolved the payment")
		}
		p := c.do(http.MethodPost, "/console/payments/"+stuck.ID+"/resolve", url.Values{"csrf": {csrf(t, page)}, "note": {"refunded by hand"}})
		if p.status != http.StatusSeeOther || p.location != "/console/payments/"+stuck.ID {
			t.Fatalf("resolve: HTTP %d → %q", p.status, p.location)
		}
		if after := c.get(p.location); !strings.Contains(after.body, "no longer needs attention") || !strings.Contains(after.body, "refunded by hand") {
			t.Errorf("after resolving:\n%s", after.body)
		}
		if p, _ := h.UPI.Payment(b.ctx, stuck.ID); p.Attention != "" {
			t.Errorf("still flagged: %+v", p)
		}
		if att := c.get("/console/payments/attention"); strings.Contains(att.body, stuck.ID) {
			t.Errorf("the resolved payment is still on the attention tab")
		}
		if got := attentionCard(t, c); got != "0/0 UPI/0 Direct Payment" {
			t.Errorf("overview card after resolving: %q", got)
		}
	})
}

// eachPG runs fn on both engines as parallel subtests, each with its own
// PG simulator and hub taking payments through it.
func eachPG(t *testing.T, fn func(t *testing.T, h *hubtest.Hub, pg *pgsim.Server)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		pg := startPG(t)
		fn(t, hubtest.Start(t, engine, withPG(pg)), pg)
	})
}

// rowOf returns the chart data table's row of a series, from its name to
// the end of the row.
func rowOf(body, series string) string {
	i := strings.Index(body, "<td>"+series+"</td>")
	if i < 0 {
		return ""
	}
	row := body[i:]
	return row[:strings.Index(row, "</tr>")]
}

var attentionCardRE = regexp.MustCompile(`<div class="card tone-edge-\w+">\s*<span class="card-label">Payments needing attention</span><span class="card-value">(\d+)</span>` +
	`<span class="card-note"><a href="/console/payments/attention">(\d+ UPI)</a> · <a href="/console/direct-payments">(\d+ Direct Payment)</a></span></div>`)

// attentionCard reads the overview's "Payments needing attention" card as
// "total/UPI link/Direct Payment link".
func attentionCard(t *testing.T, c *client) string {
	t.Helper()
	o := c.get("/console/")
	m := attentionCardRE.FindStringSubmatch(o.body)
	if m == nil {
		t.Fatalf("the overview has no payments attention card:\n%s", o.body)
	}
	return strings.Join(m[1:], "/")
}
