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
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestAdminRevokeInvitation: the operator lists invitations and revokes an
// open one through the admin API. Its token A is refused afterwards on
// versions and credentials, the party it planned is withdrawn (pushed
// SUSPENDED, gone from the client info), a partner token cannot revoke,
// and an invitation that is unknown, revoked or used answers 404.
func TestAdminRevokeInvitation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		call := func(token, method, url string) *ocpiclient.Response {
			t.Helper()
			resp, err := h.Client.Do(ctx, ocpiclient.Request{Method: method, URL: url, Token: token, Base64: true, MaxAttempts: 1})
			if err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
			return resp
		}
		watcher := hubtest.Add(t, h, sim.StartEMSP, "Watcher", "DE", "WAT")

		var inv party.Invitation
		h.Admin(t, http.MethodPost, "/admin/invitations", map[string]any{
			"name": "Revoked", "parties": []map[string]string{{"role": "EMSP", "country_code": "BE", "party_id": "REV"}}}, &inv)
		pushed := func(status string) {
			t.Helper()
			if _, err := watcher.WaitFor(ctx, 1, func(r sim.Request) bool {
				return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/BE/REV") && strings.Contains(string(r.Body), `"`+status+`"`)
			}); err != nil {
				t.Fatalf("no %s push of BE/REV: %v", status, err)
			}
		}
		listed := func() bool { return h.InClientInfo(t, ctx, "BE", "REV") }
		pushed(clientinfo.Planned)
		if !listed() {
			t.Fatal("the invited party is not in the client info")
		}
		credentialsURL := h.PublicURL() + "/ocpi/2.2.1/credentials"
		if r := call(inv.Token, http.MethodGet, inv.VersionsURL); r.HTTPStatus != http.StatusOK {
			t.Fatalf("token A before revocation: HTTP %d %s", r.HTTPStatus, r.Body)
		}

		// The list shows it OPEN, without its token; the state filter works.
		var open []party.InvitationInfo
		resp := h.Admin(t, http.MethodGet, "/admin/invitations?state=open", nil, &open)
		if len(open) != 1 || open[0].ID != inv.ID || open[0].State != party.InvitationOpen || open[0].Name != "Revoked" || len(open[0].Parties) != 1 {
			t.Fatalf("open invitations: %s", resp.Body)
		}
		if strings.Contains(string(resp.Body), inv.Token) {
			t.Error("the invitation list discloses token A")
		}
		hubtest.WantError(t, "unknown state", h.AdminDo(t, http.MethodGet, "/admin/invitations?state=lost", nil), http.StatusOK, ocpi.StatusInvalidParams, "state")

		// A partner token is not the admin's.
		path := "/admin/invitations/" + itoa(inv.ID) + "/revoke"
		if r := call(watcher.Token(), http.MethodPost, h.PublicURL()+path); r.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("a partner revoking: HTTP %d %s", r.HTTPStatus, r.Body)
		}
		if r := call(inv.Token, http.MethodPost, h.PublicURL()+path); r.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("token A revoking itself: HTTP %d %s", r.HTTPStatus, r.Body)
		}

		// Revoke.
		var revoked party.InvitationInfo
		h.Admin(t, http.MethodPost, path, nil, &revoked)
		if revoked.ID != inv.ID || revoked.State != party.InvitationRevoked || revoked.RevokedAt == nil || revoked.UsedAt != nil {
			t.Errorf("revoked: %+v", revoked)
		}
		for _, u := range []string{inv.VersionsURL, credentialsURL} {
			if r := call(inv.Token, http.MethodGet, u); r.HTTPStatus != http.StatusUnauthorized {
				t.Errorf("revoked token A on %s: HTTP %d %s", u, r.HTTPStatus, r.Body)
			}
		}
		rev := hubtest.StartSim(t, sim.StartEMSP, "Rev", "BE", "REV")
		if err := rev.Register(ctx, inv.VersionsURL, inv.Token); sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("registering with a revoked token A: %v", err)
		}
		pushed(clientinfo.Suspended)
		if listed() {
			t.Error("the revoked invitation's party is still in the client info")
		}
		var expired []party.InvitationInfo
		h.Admin(t, http.MethodGet, "/admin/invitations?state=REVOKED&state=used", nil, &expired)
		if len(expired) != 2 || expired[0].ID != inv.ID || expired[1].State != party.InvitationUsed {
			t.Errorf("revoked and used invitations, newest first: %+v", expired)
		}

		// Only an open invitation can be revoked.
		hubtest.WantError(t, "revoking twice", h.AdminDo(t, http.MethodPost, path, nil), http.StatusNotFound, ocpi.StatusClientError, "")
		hubtest.WantError(t, "unknown invitation", h.AdminDo(t, http.MethodPost, "/admin/invitations/99999/revoke", nil), http.StatusNotFound, ocpi.StatusClientError, "")
		hubtest.WantError(t, "malformed id", h.AdminDo(t, http.MethodPost, "/admin/invitations/x/revoke", nil), http.StatusOK, ocpi.StatusInvalidParams, "id")
		var all []party.InvitationInfo
		h.Admin(t, http.MethodGet, "/admin/invitations?state=USED", nil, &all)
		if len(all) != 1 {
			t.Fatalf("used invitations (the watcher's): %+v", all)
		}
		used := h.AdminDo(t, http.MethodPost, "/admin/invitations/"+itoa(all[0].ID)+"/revoke", nil)
		hubtest.WantError(t, "revoking a used invitation", used, http.StatusNotFound, ocpi.StatusClientError, "")
		var e struct {
			StatusMessage string `json:"status_message"`
		}
		if err := json.Unmarshal(used.Body, &e); err != nil || !strings.Contains(e.StatusMessage, "no open invitation") {
			t.Errorf("revoking a used invitation says %q", e.StatusMessage)
		}
		if _, err := watcher.CallHub(context.Background(), http.MethodGet, "credentials", "", "", nil, nil); err != nil {
			t.Errorf("the watcher registered by the used invitation: %v", err)
		}
	})
}
