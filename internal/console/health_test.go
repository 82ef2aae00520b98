package console_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestFailingReceiverOnOverview: an eMSP that keeps calling us (CONNECTED)
// while its receiver fails is a problem on the overview, counted on a card,
// filtered on the parties page and flagged on its own page; the badges say
// which state is which.
func TestFailingReceiverOnOverview(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 30*time.Second)
		hubtest.Add(t, h, sim.StartEMSP, "Volt Cards", "DE", "VLT")
		p, err := h.Parties.FindByParty(ctx, "", "DE", "VLT")
		if err != nil {
			t.Fatal(err)
		}
		c := signedIn(t, h)
		if body := c.get("/console/").body; !strings.Contains(body, "No problems") || !strings.Contains(body, "stored unencrypted: set --secret-key") {
			t.Fatalf("a fresh hub without a secret key has problems or no warning:\n%s", body)
		}
		for i := 0; i < 3; i++ {
			if err := h.Parties.RecordDelivery(ctx, party.DeliveryOutcome{PlatformID: p.ID, Error: "HTTP 503", Lag: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
		body := c.get("/console/").body
		if strings.Contains(body, "No problems") || !strings.Contains(body, "Volt Cards&#39;s receiver is failing") {
			t.Errorf("overview does not show the failing receiver:\n%s", body)
		}
		if !strings.Contains(body, "Failing receivers") {
			t.Errorf("no Failing receivers card")
		}
		if body := c.get("/console/parties?health=DEGRADED").body; !strings.Contains(body, "Volt Cards") {
			t.Errorf("the DEGRADED filter misses the platform")
		}
		body = c.get("/console/parties/" + strconv.FormatInt(p.ID, 10)).body
		for _, want := range []string{`id="receiver-failing"`, "3 pushes failed in a row", "HTTP 503", "registration", "calls us", "receiver"} {
			if !strings.Contains(body, want) {
				t.Errorf("party page lacks %q", want)
			}
		}
		if body := c.get("/console/invitations").body; !strings.Contains(body, `<code id="our-versions-url">`+h.Parties.VersionsURL()+`</code>`) {
			t.Errorf("the invitations page does not show the versions URL to send")
		}
		if err := h.Parties.RecordDelivery(ctx, party.DeliveryOutcome{PlatformID: p.ID, Answered: true}); err != nil {
			t.Fatal(err)
		}
		if body := c.get("/console/").body; !strings.Contains(body, "No problems") {
			t.Errorf("the recovered receiver is still a problem")
		}
	})
}
