package party_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPlannedPartiesWithdrawn: a party is PLANNED only while an open
// invitation names it. When the invitation expires unused, is revoked, or
// is used for its other parties only, the party leaves the client info
// list and connected platforms get it as SUSPENDED; a party another open
// invitation still names stays PLANNED.
func TestPlannedPartiesWithdrawn(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		clk := h.Clock.(*clock.Fake)
		emsp := addVolt(t, h)
		inviteFor := func(name string, ttl time.Duration, parties ...party.PartyRef) *party.Invitation {
			t.Helper()
			inv, err := h.Parties.Invite(ctx(t), name, ttl, false, parties...)
			if err != nil {
				t.Fatal(err)
			}
			return inv
		}
		acm := party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"}
		lat := party.PartyRef{Role: party.RoleEMSP, CountryCode: "FR", PartyID: "LAT"}
		rev := party.PartyRef{Role: party.RoleEMSP, CountryCode: "BE", PartyID: "REV"}
		inviteFor("acme", time.Hour, acm)
		inviteFor("latecomer", time.Hour, lat)
		inviteFor("latecomer again", 3*time.Hour, lat)
		revoked := inviteFor("revoked", 72*time.Hour, rev)
		for _, r := range []party.PartyRef{acm, lat, rev} {
			waitPush(t, emsp.Platform, r.CountryCode, r.PartyID, clientinfo.Planned)
		}
		listed := func() map[string]string {
			t.Helper()
			all, _, _ := listClientInfo(t, emsp.Platform, "")
			out := map[string]string{}
			for _, ci := range all {
				out[ci.Role+" "+ci.CountryCode+"/"+ci.PartyID] = ci.Status
			}
			return out
		}
		sweep := func() []party.PartyRef {
			t.Helper()
			got, err := h.Parties.WithdrawPlanned(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			return got
		}

		// Revoked: withdrawn at once, its token A dead.
		revokedAt := clk.Now()
		if err := h.Parties.RevokeInvitation(ctx(t), revoked.ID); err != nil {
			t.Fatal(err)
		}
		waitPush(t, emsp.Platform, "BE", "REV", clientinfo.Suspended)
		if ci, _ := emsp.ClientInfo("EMSP", "BE", "REV"); !ci.LastUpdated.Equal(revokedAt) {
			t.Errorf("the withdrawal's last_updated is %v, want %v", ci.LastUpdated, revokedAt)
		}
		if _, ok := listed()["EMSP BE/REV"]; ok {
			t.Error("the revoked invitation's party is still listed")
		}
		if err := hubtest.StartSim(t, sim.StartCPO, "Rev", "BE", "REV").Register(ctx(t), h.VersionsURL(), revoked.Token); err == nil {
			t.Error("a revoked token A registered a partner")
		}
		if err := h.Parties.RevokeInvitation(ctx(t), revoked.ID); ocpi.ErrorCode(err) != ocpi.ENOTFOUND {
			t.Errorf("revoking twice: %v", err)
		}

		// Not expired yet: nothing goes.
		clk.Add(59 * time.Minute)
		if got := sweep(); len(got) != 0 {
			t.Fatalf("withdrawn before expiry: %v", got)
		}
		// Expired: NL/ACM goes; FR/LAT stays, a second invitation names it.
		clk.Add(2 * time.Minute)
		if diff := cmp.Diff([]party.PartyRef{acm}, sweep()); diff != "" {
			t.Fatalf("withdrawn after the first expiry (-want +got):\n%s", diff)
		}
		waitPush(t, emsp.Platform, "NL", "ACM", clientinfo.Suspended)
		if diff := cmp.Diff(map[string]string{"EMSP IN/OHE": "CONNECTED", "EMSP DE/VMO": "CONNECTED", "EMSP FR/LAT": "PLANNED"}, listed()); diff != "" {
			t.Errorf("client info list (-want +got):\n%s", diff)
		}
		clk.Add(2 * time.Hour)
		if diff := cmp.Diff([]party.PartyRef{lat}, sweep()); diff != "" {
			t.Fatalf("withdrawn after the second expiry (-want +got):\n%s", diff)
		}
		waitPush(t, emsp.Platform, "FR", "LAT", clientinfo.Suspended)
		if got := sweep(); len(got) != 0 {
			t.Errorf("a second sweep withdrew %v", got)
		}

		// Used for one of its two parties: the other will not come.
		two := party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "TWO"}
		twoEMSP := party.PartyRef{Role: party.RoleEMSP, CountryCode: "NL", PartyID: "TWO"}
		inv := inviteFor("two", time.Hour, two, twoEMSP)
		if err := hubtest.StartSim(t, sim.StartCPO, "Two", "NL", "TWO").Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]party.PartyRef{twoEMSP}, sweep()); diff != "" {
			t.Fatalf("withdrawn after a partial registration (-want +got):\n%s", diff)
		}
		waitPush(t, emsp.Platform, "NL", "TWO", party.ClientConnected)
		if l := listed(); l["CPO NL/TWO"] != party.ClientConnected || l["EMSP NL/TWO"] != "" {
			t.Errorf("after a partial registration: %v", l)
		}
		// The eMSP got the withdrawal as a SUSPENDED PUT of the EMSP party,
		// never of the CPO party.
		waitPushes(t, emsp.Platform, 1, "NL", "TWO", clientinfo.Suspended)
		if got := pushesAbout(t, emsp.Platform, "NL", "TWO"); !slices.Contains(got, "EMSP SUSPENDED") || slices.Contains(got, "CPO SUSPENDED") {
			t.Errorf("pushes about NL/TWO: %v", got)
		}
	}, withFakeClock)
}

// pushesAbout lists the ClientInfo PUTs p received for cc/pid as "ROLE
// STATUS".
func pushesAbout(t *testing.T, p *sim.Platform, cc, pid string) []string {
	t.Helper()
	var out []string
	for _, r := range p.Requests(func(r sim.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/"+cc+"/"+pid)
	}) {
		var ci sim.ClientInfo
		if err := json.Unmarshal(r.Body, &ci); err != nil {
			t.Fatal(err)
		}
		out = append(out, ci.Role+" "+ci.Status)
	}
	return out
}
