package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestAdminParties drives /admin/parties… and /admin/invitations: onboarding,
// listing, suspension, rotation and disconnection, with bad input refused.
func TestAdminParties(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		// Invite, bound to a party.
		var inv party.Invitation
		resp := h.Admin(t, http.MethodPost, "/admin/invitations", map[string]any{
			"name": "Acme", "expires": "2h", "parties": []map[string]string{{"role": "CPO", "country_code": "nl", "party_id": "acm"}}}, &inv)
		if resp.HTTPStatus != http.StatusCreated || inv.Token == "" || inv.VersionsURL != h.VersionsURL() ||
			len(inv.Parties) != 1 || inv.Parties[0].CountryCode != "NL" {
			t.Fatalf("invitation: HTTP %d %+v", resp.HTTPStatus, inv)
		}
		if d := time.Until(inv.ExpiresAt.Time); d < time.Hour+55*time.Minute || d > 2*time.Hour {
			t.Errorf("invitation expires in %s, want 2h", d)
		}
		hubtest.WantError(t, "invitation without a name", h.AdminDo(t, http.MethodPost, "/admin/invitations", map[string]any{"expires": "2h"}),
			http.StatusOK, ocpi.StatusInvalidParams, "name")
		hubtest.WantError(t, "invitation with a bad duration", h.AdminDo(t, http.MethodPost, "/admin/invitations", map[string]any{"name": "x", "expires": "soon"}),
			http.StatusOK, ocpi.StatusInvalidParams, "expires")
		hubtest.WantError(t, "invitation with a bad party", h.AdminDo(t, http.MethodPost, "/admin/invitations", map[string]any{"name": "x",
			"parties": []map[string]string{{"role": "CPO", "country_code": "NLD", "party_id": "ACM"}}}), http.StatusOK, ocpi.StatusInvalidParams, "parties[0].country_code")
		hubtest.WantError(t, "invitation that is not JSON", h.AdminDo(t, http.MethodPost, "/admin/invitations", []byte("name=x")),
			http.StatusBadRequest, ocpi.StatusInvalidParams, "")

		cpo := hubtest.StartSim(t, sim.StartCPO, "Acme", "NL", "ACM")
		if err := cpo.Register(ctx, inv.VersionsURL, inv.Token); err != nil {
			t.Fatal(err)
		}

		// List and show; tokens never leave the hub.
		resp = h.AdminDo(t, http.MethodGet, "/admin/parties", nil)
		var list []party.Platform
		if err := json.Unmarshal(resp.Envelope.Data, &list); err != nil || len(list) != 1 || list[0].Name != "Acme" || list[0].Status != party.StatusConnected {
			t.Fatalf("list: %s", resp.Body)
		}
		for _, tok := range []string{cpo.Token(), cpo.TokenIn()} {
			if strings.Contains(string(resp.Body), tok) {
				t.Errorf("the admin API discloses token %q", tok)
			}
		}
		id := list[0].ID
		path := "/admin/parties/" + itoa(id)
		var shown party.Platform
		h.Admin(t, http.MethodGet, path, nil, &shown)
		if shown.ID != id || len(shown.Roles) != 1 || len(shown.Endpoints) == 0 {
			t.Errorf("show: %+v", shown)
		}
		var none []party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties?status=suspended", nil, &none)
		if len(none) != 0 {
			t.Errorf("status filter: %+v", none)
		}
		hubtest.WantError(t, "unknown platform", h.AdminDo(t, http.MethodGet, "/admin/parties/999", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		hubtest.WantError(t, "malformed id", h.AdminDo(t, http.MethodGet, "/admin/parties/acme", nil), http.StatusOK, ocpi.StatusInvalidParams, "id")

		// Suspend, resume.
		var p party.Platform
		h.Admin(t, http.MethodPost, path+"/suspend", nil, &p)
		if p.Status != party.StatusSuspended {
			t.Errorf("after suspend: %s", p.Status)
		}
		if _, err := cpo.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, nil); sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("a suspended partner's call: %v", err)
		}
		hubtest.WantError(t, "suspend twice", h.AdminDo(t, http.MethodPost, path+"/suspend", nil), http.StatusOK, ocpi.StatusInvalidParams, "")
		var suspended []party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties?status=SUSPENDED", nil, &suspended)
		if len(suspended) != 1 {
			t.Errorf("status filter: %+v", suspended)
		}
		h.Admin(t, http.MethodPost, path+"/resume", nil, &p)
		if p.Status != party.StatusConnected {
			t.Errorf("after resume: %s", p.Status)
		}

		// Rotate: both tokens change and the new one works.
		oldC := cpo.Token()
		h.Admin(t, http.MethodPost, path+"/rotate", nil, &p)
		if cpo.Token() == oldC {
			t.Error("rotate changed nothing")
		}
		if _, err := cpo.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, nil); err != nil {
			t.Errorf("after rotate: %v", err)
		}

		// Disconnect.
		h.Admin(t, http.MethodDelete, path, nil, &p)
		if p.Status != party.StatusUnregistered {
			t.Errorf("after disconnect: %s", p.Status)
		}
		if len(cpo.Requests(sim.PathHas(http.MethodDelete, "/credentials"))) != 1 {
			t.Error("the partner was not sent a credentials DELETE")
		}
		hubtest.WantError(t, "disconnect twice", h.AdminDo(t, http.MethodDelete, path, nil), http.StatusOK, ocpi.StatusInvalidParams, "")

		// Connect needs a versions URL and a token.
		hubtest.WantError(t, "connect without a token", h.AdminDo(t, http.MethodPost, "/admin/parties/connect", map[string]string{"versions_url": cpo.VersionsURL()}),
			http.StatusOK, ocpi.StatusInvalidParams, "token")
		hubtest.WantError(t, "connect without a URL", h.AdminDo(t, http.MethodPost, "/admin/parties/connect", map[string]string{"token": "x"}),
			http.StatusOK, ocpi.StatusInvalidParams, "versions_url")
	})
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
