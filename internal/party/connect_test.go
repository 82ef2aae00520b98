package party_test

import (
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestHubConnects drives the ocpihub-initiated handshake (we are the client):
// through the service and through the admin API, with a CPO and an eMSP.
func TestHubConnects(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.StartSim(t, sim.StartCPO, "Acme Charging", "NL", "ACM")
		tokenA := cpo.Invite()
		pl, err := h.Parties.Connect(ctx(t), "", cpo.VersionsURL(), tokenA)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		if pl.Status != party.StatusConnected || pl.Name != "Acme Charging" || !pl.InitiatedByUs || pl.Version != "2.2.1" ||
			len(pl.Roles) != 1 || pl.Roles[0].Role != party.RoleCPO || pl.Roles[0].CountryCode != "NL" || pl.Roles[0].PartyID != "ACM" {
			t.Fatalf("connected platform: %+v", pl)
		}
		// We POSTed our credentials with token A; the CPO called our versions
		// back with the token we sent it, and answered with its own.
		posts := cpo.Requests(sim.PathHas(http.MethodPost, "/credentials"))
		if len(posts) != 1 || authOf(posts[0], true) != tokenA {
			t.Fatalf("credentials POSTs to the CPO: %d", len(posts))
		}
		auth, err := h.Parties.Auth(pl)
		if err != nil || auth.Token != cpo.TokenIn() || auth.Token == tokenA {
			t.Errorf("we call the CPO with %q (%v), want its new token %q", auth.Token, err, cpo.TokenIn())
		}
		var creds ocpi.Credentials
		if _, err := cpo.CallHub(ctx(t), http.MethodGet, "credentials", "", "", nil, &creds); err != nil || creds.Token != cpo.Token() {
			t.Errorf("the CPO's credentials GET: %+v, %v", creds, err)
		}
		// Token A was the CPO's to kill: ours no longer works there.
		if _, err := h.Parties.Connect(ctx(t), "", cpo.VersionsURL(), tokenA); ocpi.ErrorCode(err) != ocpi.ECLIENTAPI {
			t.Errorf("connect again with a used token A: %v", err)
		}
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms"); n != 1 {
			t.Errorf("%d platforms after a refused connect, want 1", n)
		}

		// The admin API does the same for an eMSP.
		emsp := hubtest.StartSim(t, sim.StartEMSP, "Volt Mobility", "DE", "VMO")
		var got party.Platform
		resp := h.Admin(t, http.MethodPost, "/admin/parties/connect", map[string]string{
			"versions_url": emsp.VersionsURL(), "token": emsp.Invite(), "name": "Volt"}, &got)
		if resp.HTTPStatus != http.StatusCreated || got.Name != "Volt" || got.Status != party.StatusConnected || len(got.Roles) != 1 || got.Roles[0].Role != party.RoleEMSP {
			t.Errorf("admin connect: HTTP %d %+v", resp.HTTPStatus, got)
		}
		if _, err := emsp.CallHub(ctx(t), http.MethodGet, "hubclientinfo", "", "", nil, nil); err != nil {
			t.Errorf("the eMSP calls the hub: %v", err)
		}
	})
}

// TestHubConnectFailuresLeaveNothing: a connect that fails stores nothing,
// and a partner that had accepted our POST is told to forget it (DELETE).
func TestHubConnectFailuresLeaveNothing(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		bare := hubtest.StartSim(t, sim.StartEMSP, "Bare eMSP", "NL", "BAR", func(o *sim.Options) { o.OmitEndpoints = []string{"tokens"} })
		_, err := h.Parties.Connect(ctx(t), "", bare.VersionsURL(), bare.Invite())
		if ocpi.ErrorCode(err) != ocpi.ENOENDPOINTS {
			t.Fatalf("connect to an eMSP without tokens: %v, want 3003", err)
		}
		assertNothingRegistered(t, h)
		if dels := bare.Requests(sim.PathHas(http.MethodDelete, "/credentials")); len(dels) != 1 || bare.TokenIn() != "" {
			t.Errorf("the CPO was not told to forget the registration: %d DELETEs", len(dels))
		}

		old := hubtest.StartSim(t, sim.StartCPO, "Old CPO", "NL", "OLD", func(o *sim.Options) { o.ListedVersions = []string{"2.1", "3.0"} })
		if _, err := h.Parties.Connect(ctx(t), "", old.VersionsURL(), old.Invite()); ocpi.ErrorCode(err) != ocpi.EUNSUPPORTEDVER {
			t.Errorf("connect to a partner speaking only 2.1 and 3.0: %v, want 3002", err)
		}
		if _, err := h.Parties.Connect(ctx(t), "", "http://127.0.0.1:1/ocpi/versions", "A-token"); ocpi.ErrorCode(err) != ocpi.ECLIENTAPI {
			t.Errorf("connect to nowhere: %v, want 3001", err)
		}
		if _, err := h.Parties.Connect(ctx(t), "", bare.VersionsURL(), "wrong-token"); ocpi.ErrorCode(err) != ocpi.ECLIENTAPI {
			t.Errorf("connect with a wrong token A: %v, want 3001", err)
		}
		// The partner's party is the hub's own.
		fake := hubtest.StartSim(t, sim.StartEMSP, "Fake", "IN", "OHE")
		if _, err := h.Parties.Connect(ctx(t), "", fake.VersionsURL(), fake.Invite()); ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("connect to a partner claiming our party: %v", err)
		}
		assertNothingRegistered(t, h)
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM client_info WHERE party_id IN ('BAR', 'OLD')"); n != 0 {
			t.Errorf("failed connects left %d HubClientInfo rows", n)
		}
	})
}

// TestRotation: the partner rotates with a credentials PUT, we rotate with
// party rotate; each time the old token stops working and the new one works.
func TestRotation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, pl := addAcme(t, h)

		// From the partner's side.
		oldC, oldB := cpo.Token(), cpo.TokenIn()
		if _, err := cpo.UpdateCredentials(ctx(t)); err != nil {
			t.Fatalf("credentials PUT: %v", err)
		}
		newC, newB := cpo.Token(), cpo.TokenIn()
		if newC == oldC || newB == oldB {
			t.Fatal("the PUT changed no token")
		}
		st, code := call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", oldC, true, nil)
		wantStatus(t, "old token C", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", newC, true, nil)
		wantStatus(t, "new token C", st, code, http.StatusOK, ocpi.StatusSuccess)
		if p, _ := h.Parties.Find(ctx(t), pl.ID); mustAuth(t, h, p).Token != newB {
			t.Errorf("we still call the CPO with its old token")
		}
		// The PUT re-read the partner's versions and details with the new B.
		if got := cpo.Requests(func(r sim.Request) bool { return r.Path == "/ocpi/2.2.1" && authOf(r, true) == newB }); len(got) != 1 {
			t.Errorf("details read with the new token B %d times, want 1", len(got))
		}

		// A PUT that fails (the partner cannot be called back) changes nothing.
		cpo.SetDown(true)
		if _, err := cpo.UpdateCredentials(ctx(t)); sim.StatusCode(err) != ocpi.StatusClientAPIError {
			t.Errorf("PUT while our callback fails: %v, want 3001", err)
		}
		cpo.SetDown(false)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", newC, true, nil)
		wantStatus(t, "token C after a failed PUT", st, code, http.StatusOK, ocpi.StatusSuccess)
		if p, _ := h.Parties.Find(ctx(t), pl.ID); mustAuth(t, h, p).Token != newB {
			t.Errorf("a failed PUT changed the token we call the CPO with")
		}

		// From our side.
		if _, err := h.Parties.Rotate(ctx(t), pl.ID); err != nil {
			t.Fatalf("rotate: %v", err)
		}
		rotatedC, rotatedB := cpo.Token(), cpo.TokenIn()
		if rotatedC == newC || rotatedB == newB {
			t.Fatal("rotate changed no token")
		}
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", newC, true, nil)
		wantStatus(t, "token C before our rotation", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", rotatedC, true, nil)
		wantStatus(t, "token C from our rotation", st, code, http.StatusOK, ocpi.StatusSuccess)
		if p, _ := h.Parties.Find(ctx(t), pl.ID); mustAuth(t, h, p).Token != rotatedB {
			t.Errorf("we do not call the CPO with the token it answered our PUT with")
		}
		// The PUT to the partner carried our new token, in the partner's encoding.
		puts := cpo.Requests(sim.PathHas(http.MethodPut, "/credentials"))
		if len(puts) != 1 || authOf(puts[0], true) != newB {
			t.Errorf("credentials PUTs to the CPO: %d", len(puts))
		}

		// A rotation the partner refuses keeps the tokens.
		cpo.SetDown(true)
		if _, err := h.Parties.Rotate(ctx(t), pl.ID); ocpi.ErrorCode(err) != ocpi.ECLIENTAPI {
			t.Errorf("rotate with the partner down: %v", err)
		}
		cpo.SetDown(false)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", rotatedC, true, nil)
		wantStatus(t, "token C after a refused rotation", st, code, http.StatusOK, ocpi.StatusSuccess)
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms WHERE token_next_hash IS NOT NULL"); n != 0 {
			t.Errorf("a refused rotation left a pending token")
		}

		// Disconnect: a DELETE to the partner, and the platform is unregistered.
		warning, err := h.Parties.Disconnect(ctx(t), pl.ID)
		if err != nil || warning != "" {
			t.Fatalf("disconnect: %q %v", warning, err)
		}
		if dels := cpo.Requests(sim.PathHas(http.MethodDelete, "/credentials")); len(dels) != 1 || authOf(dels[0], true) != rotatedB {
			t.Errorf("credentials DELETEs to the CPO: %d", len(dels))
		}
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", rotatedC, true, nil)
		wantStatus(t, "token C after disconnect", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		if p, _ := h.Parties.Find(ctx(t), pl.ID); p.Status != party.StatusUnregistered || len(p.Roles) != 0 {
			t.Errorf("after disconnect: %+v", p)
		}
		if _, err := h.Parties.Disconnect(ctx(t), pl.ID); ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("disconnect twice: %v", err)
		}
		if _, err := h.Parties.Rotate(ctx(t), pl.ID); ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("rotate an unregistered platform: %v", err)
		}
	})
}

func mustAuth(t *testing.T, h *hubtest.Hub, p *party.Platform) struct{ Token string } {
	t.Helper()
	if p == nil {
		t.Fatal("no platform")
	}
	a, err := h.Parties.Auth(p)
	if err != nil {
		t.Fatal(err)
	}
	return struct{ Token string }{a.Token}
}
