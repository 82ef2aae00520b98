package payment_test

import (
	"context"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPTPOnVersions: the hub lists 2.3.0 with the Payments module; a PTP
// registers on it and gets 2.3.0 credentials (hub_party_id, the reachable
// parties, no HUB role); a CPO may not register on 2.3.0; partners on 2.2.1
// see the PTP as OTHER in HubClientInfo, pulled and pushed.
func TestPTPOnVersions(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		hubtest.Add(t, h, sim.StartCPO, "CPO One", "IN", "CP1")
		emsp := hubtest.Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1")

		var versions []ocpi.Version
		h.Admin(t, http.MethodGet, "/ocpi/versions", nil, &versions)
		if len(versions) < 2 || versions[0].Version != "2.3.0" || versions[0].URL != h.PublicURL()+"/ocpi/2.3.0" {
			t.Fatalf("versions: %+v", versions)
		}
		var details ocpi.VersionDetails
		h.Admin(t, http.MethodGet, "/ocpi/2.3.0", nil, &details)
		var got []string
		for _, e := range details.Endpoints {
			got = append(got, e.Identifier+" "+e.Role)
		}
		want := []string{"credentials SENDER", "payments RECEIVER", "payments SENDER", "commands RECEIVER"}
		if details.Version != "2.3.0" || !slices.Equal(got, want) {
			t.Fatalf("2.3.0 details: %v, want %v", got, want)
		}
		h.Admin(t, http.MethodGet, "/ocpi/2.2.1", nil, &details)
		if _, ok := details.Find("payments", "RECEIVER"); !ok {
			t.Error("2.2.1 details lack the payments module")
		}

		// The PTP registers on 2.3.0.
		ptp := hubtest.Add(t, h, ptpsim.Start, "Terminals Inc", "NL", "PAY", func(o *sim.Options) { o.Versions = []string{"2.3.0"} })
		if ptp.HubVersion() != "2.3.0" {
			t.Fatalf("the PTP speaks %s", ptp.HubVersion())
		}
		var creds ocpi.Credentials
		if _, err := ptp.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, &creds); err != nil {
			t.Fatal(err)
		}
		checkCreds230(t, creds)
		if _, err := ptp.UpdateCredentials(ctx); err != nil {
			t.Fatalf("credentials PUT on 2.3.0: %v", err)
		}
		p, err := h.Parties.FindByParty(ctx, party.RolePTP, "NL", "PAY")
		if err != nil || p.Version != "2.3.0" {
			t.Fatalf("the PTP's platform: %+v %v", p, err)
		}

		// A CPO is refused on 2.3.0 (the hub serves it only the Payments
		// module there): 3002, naming the version to use.
		cpo23 := hubtest.StartSim(t, sim.StartCPO, "CPO 23", "IN", "C23", func(o *sim.Options) { o.Versions = []string{"2.3.0"} })
		inv, err := h.Parties.Invite(ctx, "CPO 23", 0, false)
		if err != nil {
			t.Fatal(err)
		}
		err = cpo23.Register(ctx, h.VersionsURL(), inv.Token)
		if sim.StatusCode(err) != 3002 {
			t.Fatalf("a CPO registering on 2.3.0: %v", err)
		}

		// 2.2.1 partners see the PTP as OTHER.
		var infos []map[string]any
		if _, err := emsp.CallHub(ctx, http.MethodGet, "hubclientinfo", "", "", nil, &infos); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ci := range infos {
			if ci["party_id"] == "PAY" {
				found = true
				if ci["role"] != "OTHER" {
					t.Errorf("the PTP in a 2.2.1 HubClientInfo list: %v", ci)
				}
			}
		}
		if !found {
			t.Error("the PTP is missing from HubClientInfo")
		}
		wait(t, ctx, emsp.Platform, "the PTP's ClientInfo pushed to the eMSP", func() bool {
			_, ok := emsp.ClientInfo("OTHER", "NL", "PAY")
			return ok
		})
		if _, ok := emsp.ClientInfo("PTP", "NL", "PAY"); ok {
			t.Error("a 2.2.1 partner was pushed the PTP role")
		}
	}, options)
}

// checkCreds230 checks 2.3.0 credentials of the test hub: hub_party_id, the
// reachable parties and ours, no HUB role, not the caller's own.
func checkCreds230(t *testing.T, c ocpi.Credentials) {
	t.Helper()
	if c.HubPartyID != "INHUB" {
		t.Errorf("hub_party_id = %q, want INHUB", c.HubPartyID)
	}
	roles := map[string]bool{}
	for _, r := range c.Roles {
		roles[r.Role+" "+r.CountryCode+"/"+r.PartyID] = true
	}
	for _, want := range []string{"EMSP IN/OHE", "CPO IN/CP1", "EMSP DE/EM1"} {
		if !roles[want] {
			t.Errorf("2.3.0 credentials lack %s: %v", want, roles)
		}
	}
	for r := range roles {
		if r == "HUB IN/HUB" || r == "PTP NL/PAY" {
			t.Errorf("2.3.0 credentials list %s", r)
		}
	}
}
