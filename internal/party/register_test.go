package party_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestPartnerRegisters drives the partner-initiated handshake (we are the
// server) for a CPO and an eMSP: token A → callback with token B → token C.
func TestPartnerRegisters(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		for _, tc := range []struct {
			role     party.Role
			start    func() *sim.Platform
			cc, pid  string
			required string // the module the hub needs from this role
		}{
			{party.RoleCPO, func() *sim.Platform { return hubtest.StartSim(t, sim.StartCPO, "Acme Charging", "NL", "ACM").Platform }, "NL", "ACM", "locations"},
			{party.RoleEMSP, func() *sim.Platform { return hubtest.StartSim(t, sim.StartEMSP, "Volt Mobility", "DE", "VMO").Platform }, "DE", "VMO", "tokens"},
		} {
			p := tc.start()
			inv := invite(t, h, p.Name())
			if err := p.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
				t.Fatalf("register %s: %v", tc.role, err)
			}
			tokenB, tokenC := p.TokenIn(), p.Token()
			if tokenC == "" || tokenC == inv.Token || tokenC == tokenB {
				t.Fatalf("token C %q: want a new token", tokenC)
			}

			// Before answering, the hub read the partner's versions and details
			// with token B (credentials.md §3 step 5).
			for _, path := range []string{"/ocpi/versions", "/ocpi/2.2.1"} {
				got := p.Requests(func(r sim.Request) bool { return r.Method == http.MethodGet && r.Path == path })
				if len(got) != 1 || authOf(got[0], true) != tokenB {
					t.Errorf("%s: callbacks to %s = %d, want one with token B", tc.role, path, len(got))
				}
			}

			// The registry holds the platform, its role and its endpoints, and
			// only the hash of token C.
			pl := platformOf(t, h, tc.cc, tc.pid)
			if pl.Status != party.StatusConnected || pl.Connection != party.ClientConnected || pl.Version != "2.2.1" ||
				pl.VersionsURL != p.VersionsURL() || pl.Name != p.Name() || !pl.TokenBase64 || pl.InitiatedByUs {
				t.Errorf("%s platform: %+v", tc.role, pl)
			}
			if len(pl.Roles) != 1 || pl.Roles[0].Role != tc.role || pl.Roles[0].BusinessDetails.Name != p.Name() {
				t.Errorf("%s roles: %+v", tc.role, pl.Roles)
			}
			if _, ok := pl.Endpoint(tc.required, ocpi.InterfaceSender); !ok {
				t.Errorf("%s endpoints lack %s: %+v", tc.role, tc.required, pl.Endpoints)
			}
			sum := sha256.Sum256([]byte(tokenC))
			if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms WHERE id = $1 AND token_in_hash = $2", pl.ID, hex.EncodeToString(sum[:])); n != 1 {
				t.Errorf("%s: token C is not stored as its SHA-256", tc.role)
			}
			auth, err := h.Parties.Auth(pl)
			if err != nil || auth.Token != tokenB || !auth.Base64 {
				t.Errorf("%s: we call the partner with %+v (%v), want token B in Base64", tc.role, auth, err)
			}

			// GET returns our credentials with the token the partner uses.
			var got ocpi.Credentials
			if _, err := p.CallHub(ctx(t), http.MethodGet, "credentials", "", "", nil, &got); err != nil {
				t.Fatalf("credentials GET: %v", err)
			}
			if got.Token != tokenC || got.URL != h.VersionsURL() || len(got.Roles) != 2 ||
				got.Roles[0].Role != "HUB" || got.Roles[1].Role != "EMSP" {
				t.Errorf("credentials GET: %+v", got)
			}

			// Token A died with the registration.
			st, code := call(t, h, http.MethodGet, "/ocpi/versions", inv.Token, true, nil)
			wantStatus(t, "token A after use", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
			if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM invitations WHERE id = $1 AND used_at IS NOT NULL AND platform_id = $2", inv.ID, pl.ID); n != 1 {
				t.Errorf("invitation %d not marked used by platform %d", inv.ID, pl.ID)
			}
		}
	})
}

// TestRegistrationFailuresStoreNothing: 3001, 3002 and 3003 register
// nothing, and token A survives so the partner can fix its side and retry.
func TestRegistrationFailuresStoreNothing(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cases := []struct {
			name     string
			start    func() *sim.Platform
			wantCode int
		}{
			{name: "2.2.1 partner listing only 2.1.1 and 2.0", wantCode: ocpi.StatusUnsupportedVersion,
				start: func() *sim.Platform {
					return hubtest.StartSim(t, sim.StartCPO, "Old CPO", "NL", "OLD", func(o *sim.Options) { o.ListedVersions = []string{"2.1.1", "2.0"} }).Platform
				}},
			{name: "2.2.1 partner listing only 2.3.0", wantCode: ocpi.StatusUnsupportedVersion,
				start: func() *sim.Platform {
					return hubtest.StartSim(t, sim.StartEMSP, "New eMSP", "DE", "NEW", func(o *sim.Options) { o.ListedVersions = []string{"2.3.0"} }).Platform
				}},
			{name: "eMSP without tokens", wantCode: ocpi.StatusNoMatchingEndpoints,
				start: func() *sim.Platform {
					return hubtest.StartSim(t, sim.StartEMSP, "Bare eMSP", "DE", "BAR", func(o *sim.Options) { o.OmitEndpoints = []string{"tokens"} }).Platform
				}},
			{name: "no credentials endpoint", wantCode: ocpi.StatusNoMatchingEndpoints,
				start: func() *sim.Platform {
					return hubtest.StartSim(t, sim.StartEMSP, "Odd eMSP", "DE", "ODD", func(o *sim.Options) { o.OmitEndpoints = []string{"credentials"} }).Platform
				}},
		}
		for _, tc := range cases {
			p := tc.start()
			inv := invite(t, h, p.Name())
			err := p.Register(ctx(t), h.VersionsURL(), inv.Token)
			if err == nil || sim.StatusCode(err) != tc.wantCode || sim.HTTPStatus(err) != http.StatusOK {
				t.Fatalf("%s: register error %v (status_code %d), want %d with HTTP 200", tc.name, err, sim.StatusCode(err), tc.wantCode)
			}
			assertNothingRegistered(t, h)
			if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM invitations WHERE id = $1 AND used_at IS NULL", inv.ID); n != 1 {
				t.Errorf("%s: the failed attempt used token A", tc.name)
			}
		}

		// A versions URL nobody listens on.
		cpo := hubtest.StartSim(t, sim.StartCPO, "Lost CPO", "NL", "LST")
		inv := invite(t, h, "lost")
		tokenB, err := cpo.Begin(ctx(t), h.VersionsURL(), inv.Token)
		if err != nil {
			t.Fatal(err)
		}
		creds := cpo.Credentials(tokenB)
		creds.URL = "http://127.0.0.1:1/ocpi/versions"
		body, _ := json.Marshal(creds)
		st, code := call(t, h, http.MethodPost, "/ocpi/2.2.1/credentials", inv.Token, true, body)
		wantStatus(t, "unreachable versions URL", st, code, http.StatusOK, ocpi.StatusClientAPIError)
		assertNothingRegistered(t, h)

		// A partner whose versions answer 503 gets 3001; once it is back, the
		// same token A registers it.
		down := hubtest.StartSim(t, sim.StartCPO, "Down CPO", "NL", "DWN")
		inv = invite(t, h, down.Name())
		down.SetDown(true)
		err = down.Register(ctx(t), h.VersionsURL(), inv.Token)
		if sim.StatusCode(err) != ocpi.StatusClientAPIError {
			t.Fatalf("register while down: %v, want 3001", err)
		}
		assertNothingRegistered(t, h)
		down.SetDown(false)
		if err := down.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatalf("retry with the same token A: %v", err)
		}
		if pl := platformOf(t, h, "NL", "DWN"); pl.Status != party.StatusConnected {
			t.Errorf("after the retry: %+v", pl)
		}
	})
}

// TestTokenARules: token A reaches only versions and credentials, dies on
// use and on expiry; credentials methods answer 405 in the wrong state.
func TestTokenARules(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		clk := h.Clock.(*clock.Fake)
		inv := invite(t, h, "acme")

		// Token A: versions, version details and credentials GET work …
		for _, path := range []string{"/ocpi/versions", "/ocpi/2.2.1", "/ocpi/2.2.1/credentials"} {
			st, code := call(t, h, http.MethodGet, path, inv.Token, true, nil)
			wantStatus(t, "token A on "+path, st, code, http.StatusOK, ocpi.StatusSuccess)
		}
		// … raw as well as Base64 …
		st, code := call(t, h, http.MethodGet, "/ocpi/versions", inv.Token, false, nil)
		wantStatus(t, "raw token A on versions", st, code, http.StatusOK, ocpi.StatusSuccess)
		// … nothing else does.
		for _, path := range []string{"/ocpi/2.2.1/hubclientinfo", "/admin/parties"} {
			st, code := call(t, h, http.MethodGet, path, inv.Token, true, nil)
			wantStatus(t, "token A on "+path, st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		}
		// PUT and DELETE need a registration.
		cpo := hubtest.StartSim(t, sim.StartCPO, "Acme", "NL", "ACM")
		body, _ := json.Marshal(cpo.Credentials("B-token"))
		st, code = call(t, h, http.MethodPut, "/ocpi/2.2.1/credentials", inv.Token, true, body)
		wantStatus(t, "PUT with token A", st, code, http.StatusMethodNotAllowed, ocpi.StatusClientError)
		st, code = call(t, h, http.MethodDelete, "/ocpi/2.2.1/credentials", inv.Token, true, nil)
		wantStatus(t, "DELETE with token A", st, code, http.StatusMethodNotAllowed, ocpi.StatusClientError)
		// Unknown tokens get 401 everywhere.
		st, code = call(t, h, http.MethodGet, "/ocpi/versions", "no-such-token", true, nil)
		wantStatus(t, "unknown token", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		st, code = call(t, h, http.MethodGet, "/ocpi/versions", "", true, nil)
		wantStatus(t, "no token", st, code, http.StatusUnauthorized, ocpi.StatusClientError)

		// Register; then POST again is 405, and token A is dead.
		if err := cpo.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatal(err)
		}
		st, code = call(t, h, http.MethodPost, "/ocpi/2.2.1/credentials", cpo.Token(), true, body)
		wantStatus(t, "POST when registered", st, code, http.StatusMethodNotAllowed, ocpi.StatusClientError)
		other := hubtest.StartSim(t, sim.StartCPO, "Copycat", "NL", "CPY")
		err := other.Register(ctx(t), h.VersionsURL(), inv.Token)
		if sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("reuse of token A: %v, want 401", err)
		}
		st, code = call(t, h, http.MethodPost, "/ocpi/2.2.1/credentials", inv.Token, true, body)
		wantStatus(t, "POST with a used token A", st, code, http.StatusUnauthorized, ocpi.StatusClientError)

		// An expired token A is refused, one second after its end.
		short, err := h.Parties.Invite(ctx(t), "late", time.Hour, false)
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Hour - time.Second)
		st, code = call(t, h, http.MethodGet, "/ocpi/versions", short.Token, true, nil)
		wantStatus(t, "token A just before expiry", st, code, http.StatusOK, ocpi.StatusSuccess)
		clk.Add(time.Second)
		late := hubtest.StartSim(t, sim.StartEMSP, "Late eMSP", "DE", "LAT")
		err = late.Register(ctx(t), h.VersionsURL(), short.Token)
		if sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("expired token A: %v, want 401", err)
		}
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms"); n != 1 {
			t.Errorf("%d platforms, want only the CPO", n)
		}
	}, withFakeClock)
}

// TestSuspendAndResume: a suspended platform gets 401 on everything it
// calls, and its parties are announced as SUSPENDED; resume undoes it.
func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, pl := addAcme(t, h)
		if err := h.Parties.Suspend(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/ocpi/versions", "/ocpi/2.2.1", "/ocpi/2.2.1/credentials", "/ocpi/2.2.1/hubclientinfo"} {
			st, code := call(t, h, http.MethodGet, path, cpo.Token(), true, nil)
			wantStatus(t, "suspended on "+path, st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		}
		if _, err := cpo.UpdateCredentials(ctx(t)); sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("credentials PUT while suspended: %v, want 401", err)
		}
		if err := h.Parties.Suspend(ctx(t), pl.ID); ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("suspend twice: %v, want EINVALID", err)
		}
		if err := h.Parties.Resume(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		st, code := call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", cpo.Token(), true, nil)
		wantStatus(t, "resumed", st, code, http.StatusOK, ocpi.StatusSuccess)
		if err := h.Parties.Resume(ctx(t), pl.ID); ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("resume a connected platform: %v, want EINVALID", err)
		}
		if err := h.Parties.Suspend(ctx(t), 999); !ocpi.IsNotFound(err) {
			t.Errorf("suspend an unknown platform: %v, want not found", err)
		}
	})
}

// TestUnregisterAndRegisterAgain: a partner's DELETE unregisters it (its
// token → 401, its parties released), and a new token A registers it again.
func TestUnregisterAndRegisterAgain(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		emsp := addVolt(t, h)
		first := platformOf(t, h, "DE", "VMO")
		old := emsp.Token()
		if err := emsp.Unregister(ctx(t)); err != nil {
			t.Fatalf("credentials DELETE: %v", err)
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			st, code := call(t, h, m, "/ocpi/2.2.1/credentials", old, true, nil)
			wantStatus(t, m+" with the unregistered token", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		}
		got, err := h.Parties.Find(ctx(t), first.ID)
		if err != nil || got.Status != party.StatusUnregistered || len(got.Roles) != 0 {
			t.Fatalf("after DELETE: %+v, %v", got, err)
		}
		if _, err := h.Parties.Auth(got); err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms WHERE id = $1 AND token_in_hash IS NULL AND token_out = ''", first.ID); n != 1 {
			t.Errorf("the unregistered platform keeps tokens")
		}

		inv := invite(t, h, "volt again")
		if err := emsp.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatalf("register again: %v", err)
		}
		again := platformOf(t, h, "DE", "VMO")
		if again.ID == first.ID || again.Status != party.StatusConnected {
			t.Errorf("registered again as %+v", again)
		}
		st, code := call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", emsp.Token(), true, nil)
		wantStatus(t, "new token", st, code, http.StatusOK, ocpi.StatusSuccess)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/credentials", old, true, nil)
		wantStatus(t, "old token", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
	})
}

// TestPartyConflicts: a party belongs to one platform whatever the role, and
// never to a partner when it is the hub's own; invitations bound to parties
// admit only them.
func TestPartyConflicts(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		addAcme(t, h)

		for _, tc := range []struct {
			name    string
			p       *sim.Platform
			parties []party.PartyRef
		}{
			{"same party, other role", hubtest.StartSim(t, sim.StartEMSP, "Acme eMSP", "nl", "acm").Platform, nil},
			{"the hub's own eMSP party", hubtest.StartSim(t, sim.StartEMSP, "Fake hub", "IN", "OHE").Platform, nil},
			{"not the invited party", hubtest.StartSim(t, sim.StartCPO, "Other", "NL", "OTH").Platform, []party.PartyRef{{Role: party.RoleCPO, CountryCode: "NL", PartyID: "INV"}}},
			{"invited party, other role", hubtest.StartSim(t, sim.StartEMSP, "Other", "NL", "INV").Platform, []party.PartyRef{{Role: party.RoleCPO, CountryCode: "NL", PartyID: "INV"}}},
		} {
			inv := invite(t, h, tc.name, tc.parties...)
			err := tc.p.Register(ctx(t), h.VersionsURL(), inv.Token)
			if sim.StatusCode(err) != ocpi.StatusInvalidParams {
				t.Errorf("%s: %v, want 2001", tc.name, err)
			}
			if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms"); n != 1 {
				t.Errorf("%s: %d platforms stored", tc.name, n)
			}
		}

		// An invitation for a party that is registered is refused.
		_, err := h.Parties.Invite(ctx(t), "dup", 0, false, party.PartyRef{Role: party.RoleEMSP, CountryCode: "NL", PartyID: "ACM"})
		if ocpi.ErrorCode(err) != ocpi.EINVALID {
			t.Errorf("invite a registered party: %v", err)
		}
		_, err = h.Parties.Invite(ctx(t), "bad", 0, false, party.PartyRef{Role: "KING", CountryCode: "NLD", PartyID: "X"})
		var e *ocpi.Error
		if !errorsAs(err, &e) || e.Field != "parties[0].role" {
			t.Errorf("invite with a bad party: %v", err)
		}

		// The invited party registers.
		bound := hubtest.StartSim(t, sim.StartCPO, "Invited", "NL", "INV")
		inv := invite(t, h, "invited", party.PartyRef{Role: party.RoleCPO, CountryCode: "nl", PartyID: "inv"})
		if !slices.Equal(inv.Parties, []party.PartyRef{{Role: party.RoleCPO, CountryCode: "NL", PartyID: "INV"}}) {
			t.Errorf("invitation parties %+v", inv.Parties)
		}
		if err := bound.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatalf("invited party: %v", err)
		}
	})
}
