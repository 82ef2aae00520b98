package party_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestOCPI22CPO: a CPO management system of the OCPI 2.2 era (2.2 only,
// raw tokens, an empty 201 to our credentials POST followed by its own
// registration back, endpoints re-read before every push, nothing but 201
// accepted for a new object) registers in both directions and publishes a
// location that a 2.2.1 eMSP and a 2.1.1 eMSP receive.
func TestOCPI22CPO(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		emsp := hubtest.Add(t, h, sim.StartEMSP, "eMSP 221", "DE", "E21")
		old := hubtest.Add(t, h, sim.StartEMSP, "eMSP 211", "FR", "E11", func(o *sim.Options) { o.Versions = []string{"2.1.1"} })

		// The 2.2 CPO registers with us.
		in := hubtest.StartSim(t, sim.StartCPO22, "CPO 22 In", "NL", "C2I")
		if err := in.Register(ctx(t), h.VersionsURLOf(in.Platform), invite(t, h, "CPO 22 In").Token); err != nil {
			t.Fatalf("2.2 CPO registers with the hub: %v", err)
		}
		if in.HubVersion() != "2.2" {
			t.Errorf("the 2.2 CPO speaks %q with the hub, want 2.2", in.HubVersion())
		}
		// We register with another 2.2 CPO: it answers 201 without a body
		// and registers back.
		out := hubtest.StartSim(t, sim.StartCPO22, "CPO 22 Out", "NL", "C2O")
		p, err := h.Parties.Connect(ctx(t), "", out.VersionsURL(), out.Invite())
		if err != nil {
			t.Fatalf("connect to a 2.2 CPO answering 201 without a body: %v", err)
		}
		if p.Status != party.StatusConnected || p.Version != "2.2" || len(p.Roles) != 1 || p.Roles[0].PartyID != "C2O" || p.Name != "CPO 22 Out" {
			t.Errorf("connected platform: %+v", p)
		}
		for _, c := range []*sim.CPO22{in, out} {
			cc, pid := c.Party()
			found, err := h.Parties.FindByParty(ctx(t), "", cc, pid)
			if err != nil || found.Version != "2.2" || found.Status != party.StatusConnected || found.TokenBase64 {
				t.Fatalf("%s registered as %+v (%v), want CONNECTED on 2.2 with raw tokens", c.Name(), found, err)
			}

			loc := sim.LocationObject(cc, pid, "LOC-"+pid, "E1")
			loc["postal_code"] = "560001" // the 2.1.1 shape requires one
			if err := c.PutLocation(ctx(t), "LOC-"+pid, loc); err != nil {
				t.Fatalf("%s pushes a new location: %v", c.Name(), err)
			}
			if err := c.PutLocation(ctx(t), "LOC-"+pid, loc); err != nil {
				t.Fatalf("%s pushes it again (200, as the spec says for a replaced object): %v", c.Name(), err)
			}
			if base, ok := c.HubEndpoint("locations", "RECEIVER"); !ok || !strings.Contains(base, "/ocpi/2.2/") {
				t.Errorf("%s pushes to %q, want the hub's 2.2 locations receiver", c.Name(), base)
			}
			for _, e := range []*sim.EMSP{emsp, old} {
				e := e
				if err := e.Until(ctx(t), func() bool { return e.Location(cc, pid, "LOC-"+pid) != nil }); err != nil {
					t.Errorf("%s never got the location of %s: %v", e.Name(), c.Name(), err)
				}
			}
		}
	})
}

// TestLenientRegistration: a CPO without a locations SENDER registers as
// push-only, a party with an empty business name registers with a warning;
// what is really unusable is still refused, naming what is missing.
func TestLenientRegistration(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		pushOnly := hubtest.StartSim(t, sim.StartCPO, "", "NL", "PSO", func(o *sim.Options) { o.OmitEndpoints = []string{"locations"} })
		if err := pushOnly.Register(ctx(t), h.VersionsURLOf(pushOnly.Platform), invite(t, h, "Push Only").Token); err != nil {
			t.Fatalf("a CPO without locations SENDER and with an empty business name registers: %v", err)
		}
		p, err := h.Parties.FindByParty(ctx(t), "", "NL", "PSO")
		if err != nil {
			t.Fatal(err)
		}
		var got party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties/"+strconv.FormatInt(p.ID, 10), nil, &got)
		if !got.PushOnly || len(got.Warnings) != 2 || !strings.Contains(strings.Join(got.Warnings, "\n"), "business_details.name") ||
			!strings.Contains(strings.Join(got.Warnings, "\n"), "push-only") {
			t.Errorf("admin API: push_only %v warnings %q, want push-only and an empty-name warning", got.PushOnly, got.Warnings)
		}
		// It still pushes.
		if err := pushOnly.PutLocation(ctx(t), "LOC1", sim.LocationObject("NL", "PSO", "LOC1", "E1")); err != nil {
			t.Errorf("the push-only CPO pushes: %v", err)
		}
		// A sync pulls nothing from it and says why.
		if err := h.Syncer.SyncAll(ctx(t)); err != nil {
			t.Errorf("sync all: %v", err)
		}
		if n := len(pushOnly.Requests(sim.PathHas(http.MethodGet, "/locations"))); n != 0 {
			t.Errorf("the hub pulled %d times from a push-only CPO", n)
		}

		// Unusable: an eMSP without tokens SENDER is refused with 3003
		// naming it.
		bare := hubtest.StartSim(t, sim.StartEMSP, "Bare eMSP", "DE", "BRE", func(o *sim.Options) { o.OmitEndpoints = []string{"tokens"} })
		err = bare.Register(ctx(t), h.VersionsURLOf(bare.Platform), invite(t, h, "Bare").Token)
		if err == nil || !strings.Contains(err.Error(), "tokens SENDER") || !strings.Contains(err.Error(), "3003") {
			t.Errorf("eMSP without tokens SENDER: %v, want 3003 naming tokens SENDER", err)
		}
	})
}
