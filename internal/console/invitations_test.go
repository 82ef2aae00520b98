package console_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
)

// TestRevokeInvitation: the operator revokes an open invitation (CSRF
// token required); it is listed as expired, without the button, and the
// party it planned leaves the hub's client info.
func TestRevokeInvitation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		inv, err := h.Parties.Invite(ctx, "Volt", time.Hour, false, party.PartyRef{Role: party.RoleEMSP, CountryCode: "IN", PartyID: "VLT"})
		if err != nil {
			t.Fatal(err)
		}
		planned := func() bool { return h.InClientInfo(t, ctx, "IN", "VLT") }
		if !planned() {
			t.Fatal("the invited party is not listed")
		}
		c := signedIn(t, h)
		id := strconv.FormatInt(inv.ID, 10)
		list := c.get("/console/invitations")
		if !strings.Contains(list.body, `id="revoke-`+id+`"`) {
			t.Fatalf("no revoke button on an open invitation:\n%s", list.body)
		}
		path := "/console/invitations/" + id + "/revoke"
		if p := c.do(http.MethodPost, path, url.Values{}); p.status != http.StatusForbidden {
			t.Errorf("revoke without CSRF: HTTP %d", p.status)
		}
		p := c.do(http.MethodPost, path, url.Values{"csrf": {csrf(t, list)}})
		if p.status != http.StatusSeeOther || p.location != "/console/invitations" {
			t.Fatalf("revoke: HTTP %d → %q", p.status, p.location)
		}
		after := c.get(p.location)
		// A revoked invitation says so (observation 8: it showed "EXPIRED ·
		// expires 1 min ago").
		if !strings.Contains(after.body, "is revoked") || strings.Contains(after.body, `id="revoke-`+id+`"`) ||
			!strings.Contains(after.body, ">REVOKED</span>") || strings.Contains(after.body, ">EXPIRED</span>") || !strings.Contains(after.body, "revoked <") {
			t.Errorf("after revoking:\n%s", after.body)
		}
		if planned() {
			t.Error("the revoked invitation's party is still in the client info")
		}
		again := c.do(http.MethodPost, path, url.Values{"csrf": {csrf(t, after)}})
		if again.status != http.StatusSeeOther || !strings.Contains(c.get(again.location).body, "no open invitation") {
			t.Errorf("revoking twice: HTTP %d", again.status)
		}
	})
}
