package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/health"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestReceiverKilledDuringBroadcast is the end-to-end story of observation
// 1: a CPO broadcasts locations; half-way the eMSP's server is killed (its
// connections refused) while it stays CONNECTED. Within 60 s the admin API
// and the console, in Chromium, show its receiver failing and the operator's
// webhook gets partner.degraded. The eMSP's server comes back: its receiver
// recovers (partner.recovered) and it catches up with every location. The
// hub runs with the product's push settings, on both engines.
func TestReceiverKilledDuringBroadcast(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := browsertest.New(t)
		ctx := hubtest.Ctx(t, 4*time.Minute)
		rcv := hubtest.StartWebhookReceiver(t)
		var sub webhook.Subscription
		if resp := h.Admin(t, http.MethodPost, "/ocpi/2.2.1/webhooks", map[string]any{"url": rcv.URL(),
			"events": []string{event.PartnerDegraded, event.PartnerRecovered}}, &sub); resp.HTTPStatus != http.StatusCreated {
			t.Fatalf("subscribe: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		cpo := addAcme(t, h)
		emsp := hubtest.Add(t, h, sim.StartEMSP, "Volt Cards", "DE", "VLT")
		p, err := h.Parties.FindByParty(ctx, party.RoleEMSP, "DE", "VLT")
		if err != nil {
			t.Fatal(err)
		}

		base := h.PublicURL() + "/console"
		signIn(b, base+"/", ".cards")

		const n = 12
		put := func(i int) {
			t.Helper()
			id := fmt.Sprintf("LOC%02d", i)
			if err := cpo.PutLocation(ctx, id, sim.SampleLocation("IN", "ACM", id, "Station "+id, "Bengaluru", "12.935242", "77.624480", time.Now(), "AVAILABLE")); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n / 2 {
			put(i)
		}
		emsp.Kill()
		killed := time.Now()
		for i := n / 2; i < n; i++ {
			put(i)
		}

		// The admin API shows it failing, the console too, and the webhook
		// fired: all within 60 s of the kill.
		health := func() *health.Health {
			var got party.Platform
			h.Admin(t, http.MethodGet, fmt.Sprintf("/admin/parties/%d", p.ID), nil, &got)
			if got.Status != party.StatusConnected {
				t.Fatalf("the eMSP is %s, want CONNECTED (it still calls us)", got.Status)
			}
			return got.Health
		}
		hubtest.Eventually(t, ctx, "the admin API to show the receiver DEGRADED", func() bool {
			hl := health()
			return hl != nil && hl.State == party.HealthDegraded
		})
		webhookGot := func(name string) bool {
			for _, d := range rcv.Deliveries() {
				if d.Payload.Event == name {
					return true
				}
			}
			return false
		}
		hubtest.Eventually(t, ctx, "the partner.degraded webhook", func() bool { return webhookGot(event.PartnerDegraded) })
		b.Run(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".problems")))
		if problems := b.Text(".problems"); !strings.Contains(problems, "Volt Cards's receiver is failing") {
			t.Errorf("the console's overview does not show the failing receiver: %q", problems)
		}
		b.Run(chromedp.Navigate(fmt.Sprintf("%s/parties/%d", base, p.ID)), chromedp.WaitVisible(chromedp.CSS("#receiver-health")))
		if badge := b.Text("#receiver-health"); badge != party.HealthDegraded {
			t.Errorf("the party page's receiver badge says %q", badge)
		}
		took := time.Since(killed)
		if took > 60*time.Second {
			t.Errorf("the failing receiver was shown %v after the kill, want within 60 s", took)
		}
		t.Logf("shown failing %v after the kill", took.Round(10*time.Millisecond))
		revived := time.Now()

		// The eMSP's server comes back: it recovers and catches up.
		if err := emsp.Revive(); err != nil {
			t.Fatal(err)
		}
		hubtest.Eventually(t, ctx, "the eMSP to catch up", func() bool { return emsp.LocationCount() == n })
		hubtest.Eventually(t, ctx, "the partner.recovered webhook", func() bool { return webhookGot(event.PartnerRecovered) })
		t.Logf("caught up and recovered %v after the restart", time.Since(revived).Round(10*time.Millisecond))
		if hl := health(); hl == nil || hl.State != party.HealthOK {
			t.Errorf("after the restart the health is %+v, want OK", hl)
		}
		b.Run(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
		if body := b.Text("body"); strings.Contains(body, "receiver is failing") {
			t.Error("the console still shows the receiver failing after it recovered")
		}
	})
}
