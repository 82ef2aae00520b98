package legacy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestNegotiation: partners register in the highest version both sides
// speak; a version the hub does not speak is 3002; a legacy partner finds the
// endpoints of its role (and is told how when the hub cannot know it); the
// version in use shows in the admin API and changes with a credentials PUT
// on another version's endpoint, what the hub sends following it.
func TestNegotiation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.StartSim(t, sim.StartCPO, "CPO", "IN", "CPO")
		h.Register(t, cpo.Platform)

		// Both sides speak 2.2.1 and 2.1.1: 2.2.1.
		both := hubtest.StartSim(t, sim.StartEMSP, "Both", "DE", "BTH", versions("2.1.1", "2.2.1"))
		h.Register(t, both.Platform)
		p := platformOf(t, h, "DE", "BTH")
		if p.Version != "2.2.1" || !p.TokenBase64 {
			t.Errorf("registered in %s (token_base64 %v), want 2.2.1", p.Version, p.TokenBase64)
		}
		var shown party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties/"+itoa(p.ID), nil, &shown)
		if shown.Version != "2.2.1" {
			t.Errorf("admin API version %q", shown.Version)
		}

		// A version the hub does not speak.
		inv, err := h.Parties.Invite(ctx(t), "Old", 0, false)
		mustOK(t, "invite", err)
		for _, v := range []string{"2.1", "2.2.2", "3.0"} {
			resp := h.Do(t, http.MethodPost, "/ocpi/"+v+"/credentials", inv.Token, []byte(`{}`), nil)
			env, err := ocpi.DecodeEnvelope(resp.Body)
			if err != nil || env.StatusCode != ocpi.StatusUnsupportedVersion || !strings.Contains(env.StatusMessage, "2.2.1, 2.2, 2.1.1, 2.0") {
				t.Errorf("POST /ocpi/%s/credentials: HTTP %d %s", v, resp.HTTPStatus, resp.Body)
			}
		}

		// A 2.1.1 CPO with a token A not bound to a party, at the generic
		// versions URL: the hub cannot tell which endpoints are its, and
		// says where to go.
		legacyCPO := hubtest.StartSim(t, sim.StartCPO, "Legacy CPO", "IN", "LEG", versions("2.1.1"))
		err = legacyCPO.Register(ctx(t), h.VersionsURL(), inv.Token)
		if err == nil || !strings.Contains(err.Error(), "/ocpi/cpo/versions") {
			t.Fatalf("registration without a known role: %v", err)
		}
		// A token A bound to its party: the generic URL leads to its
		// endpoints.
		bound, err := h.Parties.Invite(ctx(t), "Legacy CPO", 0, false, party.PartyRef{Role: party.RoleCPO, CountryCode: "IN", PartyID: "LEG"})
		mustOK(t, "invite", err)
		mustOK(t, "bound registration", legacyCPO.Register(ctx(t), h.VersionsURL(), bound.Token))
		lp := platformOf(t, h, "IN", "LEG")
		if lp.Version != "2.1.1" || lp.TokenBase64 || lp.Roles[0].Role != party.RoleCPO {
			t.Errorf("legacy CPO: %s base64 %v roles %v", lp.Version, lp.TokenBase64, lp.Roles)
		}
		if _, ok := lp.Endpoint("locations", ocpi.InterfaceSender); !ok {
			t.Errorf("the legacy CPO's locations endpoint is not stored as its SENDER: %v", lp.Endpoints)
		}
		if _, ok := lp.Endpoint("credentials", ""); !ok {
			t.Errorf("endpoints %v", lp.Endpoints)
		}
		if auth := legacyCPO.Requests(sim.PathHas(http.MethodGet, "/ocpi/versions")); len(auth) == 0 || strings.HasPrefix(auth[0].Header.Get("Authorization"), "Token B-") == false {
			t.Errorf("the hub did not call the 2.1.1 CPO back with its raw token: %v", auth)
		}

		// A partner registered in 2.1.1 switches to 2.2.1 with a PUT on the
		// 2.2.1 credentials endpoint, and back.
		sw := hubtest.StartSim(t, sim.StartEMSP, "Switcher", "FR", "SWI", versions("2.2.1", "2.1.1"))
		inv2, err := h.Parties.Invite(ctx(t), "Switcher", 0, false)
		mustOK(t, "invite", err)
		mustOK(t, "register in 2.1.1", sw.RegisterIn(ctx(t), h.Parties.VersionsURLFor(party.RoleEMSP), inv2.Token, "2.1.1"))
		if sp := platformOf(t, h, "FR", "SWI"); sp.Version != "2.1.1" || sp.TokenBase64 {
			t.Fatalf("switcher registered in %s base64 %v", sp.Version, sp.TokenBase64)
		}
		mustOK(t, "PUT location", cpo.PutLocation(ctx(t), "L1", location221("IN", "CPO", "L1", "2026-01-01T00:00:00Z")))
		waitFor(t, sw.Platform, 1, http.MethodPut, "/ocpi/2.1.1/emsp/locations/IN/CPO/L1")
		mustOK(t, "switch to 2.2.1", sw.SwitchVersion(ctx(t), "2.2.1"))
		sp := platformOf(t, h, "FR", "SWI")
		if sp.Version != "2.2.1" || !sp.TokenBase64 || len(sp.Roles) != 1 || sp.Roles[0].Role != party.RoleEMSP {
			t.Fatalf("after the switch: %s base64 %v roles %v", sp.Version, sp.TokenBase64, sp.Roles)
		}
		mustOK(t, "PUT location", cpo.PutLocation(ctx(t), "L2", location221("IN", "CPO", "L2", "2026-01-01T00:00:00Z")))
		waitFor(t, sw.Platform, 1, http.MethodPut, "/ocpi/2.2.1/emsp/locations/IN/CPO/L2")
		if got := sw.Location("IN", "CPO", "L2"); got["country_code"] != "IN" || got["parking_type"] != "ALONG_MOTORWAY" {
			t.Errorf("after the switch the eMSP got %v", got)
		}
		mustOK(t, "switch back to 2.1.1", sw.SwitchVersion(ctx(t), "2.1.1"))
		if sp := platformOf(t, h, "FR", "SWI"); sp.Version != "2.1.1" || sp.TokenBase64 {
			t.Errorf("after switching back: %s base64 %v", sp.Version, sp.TokenBase64)
		}

		// The hub starts the handshake with a 2.1.1 CPO: its role must be
		// given (legacy credentials do not say it).
		far := hubtest.StartSim(t, sim.StartCPO, "Far CPO", "IN", "FAR", versions("2.1.1"))
		if _, err := h.Parties.Connect(ctx(t), "", far.VersionsURL(), far.Invite()); ocpi.ErrorCode(err) != ocpi.EINVALID || !strings.Contains(err.Error(), "role") {
			t.Errorf("connect without a role: %v", err)
		}
		fp, err := h.Parties.ConnectWith(ctx(t), party.ConnectRequest{VersionsURL: far.VersionsURL(), Token: far.Invite(), Role: party.RoleCPO})
		mustOK(t, "connect with a role", err)
		if fp.Version != "2.1.1" || fp.TokenBase64 || fp.Name != "Far CPO" || fp.Roles[0].PartyID != "FAR" {
			t.Errorf("connected: %+v", fp)
		}
		_, err = h.Parties.Rotate(ctx(t), fp.ID)
		mustOK(t, "rotate a 2.1.1 connection", err)
		for _, s := range []*sim.Platform{far.Platform, legacyCPO.Platform, sw.Platform} {
			hubtest.CheckLegacyRequests(t, s)
		}
		if posts := far.Requests(sim.PathHas(http.MethodPost, "/ocpi/2.1.1/credentials")); len(posts) != 1 ||
			!strings.Contains(string(posts[0].Body), `"party_id":"HUB"`) || !strings.Contains(string(posts[0].Body), "/ocpi/cpo/versions") {
			t.Errorf("credentials POST to the 2.1.1 CPO: %v", posts)
		}
	})
}

// TestDeprecationHeaders: every answer on a legacy version, errors too,
// carries Deprecation, Sunset (when configured) and Link; 2.2.1 answers do
// not.
func TestDeprecationHeaders(t *testing.T) {
	t.Parallel()
	sunset := time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC)
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		e := hubtest.StartSim(t, sim.StartEMSP, "Old eMSP", "NL", "OLD", versions("2.1.1"))
		h.Register(t, e.Platform)
		for _, tc := range []struct {
			path, token string
			status      int
		}{
			{"/ocpi/2.1.1/emsp", e.Token(), http.StatusOK},
			{"/ocpi/2.1.1/emsp/locations", e.Token(), http.StatusOK},
			{"/ocpi/2.0/emsp/locations", "unknown-token", http.StatusUnauthorized},
			{"/ocpi/2.1.1/emsp/nothing", e.Token(), http.StatusNotFound},
		} {
			resp := h.Do(t, http.MethodGet, tc.path, tc.token, nil, nil)
			hd := resp.Header
			if resp.HTTPStatus != tc.status || hd.Get("Deprecation") != "@1633046400" || hd.Get("Sunset") != "Wed, 30 Jun 2027 00:00:00 GMT" ||
				!strings.Contains(strings.Join(hd.Values("Link"), ","), `/ocpi/2.2.1>; rel="successor-version"`) ||
				!strings.Contains(strings.Join(hd.Values("Link"), ","), `<https://hub.example/legacy>; rel="sunset"`) {
				t.Errorf("GET %s: HTTP %d, headers %v", tc.path, resp.HTTPStatus, hd)
			}
		}
		if hd := h.Do(t, http.MethodGet, "/ocpi/2.2.1", e.Token(), nil, nil).Header; hd.Get("Deprecation") != "" || hd.Get("Sunset") != "" {
			t.Errorf("2.2.1 answer with deprecation headers: %v", hd)
		}
		if !strings.Contains(scrape(t, h), `ocpihub_legacy_requests_total{direction="in",party="unknown",version="2.0"} 1`) {
			t.Error("the unauthenticated legacy request is not counted")
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			c.LegacySunset = sunset
			c.LegacyPolicyURL = "https://hub.example/legacy"
		}
	})
}
