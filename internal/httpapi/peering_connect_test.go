package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPeerHubConnectInitiated: the operator connects us to another roaming
// hub (we POST our credentials to it). We learn the parties behind it by
// pulling its HubClientInfo sender, and its CPO's pushes then flow to our
// eMSP.
func TestPeerHubConnectInitiated(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 2*time.Minute)
		emsp := hubtest.Add(t, h, sim.StartEMSP, "Our eMSP", "NL", "EMS")
		peer := hubtest.StartPeer(t, "Peer A", "DE/PHA", "DE/AAA", "DE/BBB")

		p, err := h.Parties.Connect(ctx, "Peer A", peer.VersionsURL(), peer.Invite())
		if err != nil {
			t.Fatalf("connect to the peer hub: %v", err)
		}
		if !p.IsPeerHub() || p.Status != party.StatusConnected {
			t.Fatalf("the peer hub after our connect: %+v", p)
		}
		if n := len(peer.Requests(sim.PathHas(http.MethodPost, "/credentials"))); n != 1 {
			t.Errorf("%d credentials POSTs at the peer hub, want 1", n)
		}
		waitFor(t, "the parties behind the peer hub", func() bool {
			cpo, err1 := h.Parties.FindByParty(ctx, party.RoleCPO, "DE", "AAA")
			e, err2 := h.Parties.FindByParty(ctx, party.RoleEMSP, "DE", "BBB")
			return err1 == nil && err2 == nil && cpo.ID == p.ID && e.ID == p.ID
		})
		if got := peer.Requests(sim.PathHas(http.MethodGet, "/hubclientinfo")); len(got) == 0 {
			t.Error("the peer hub's HubClientInfo was never pulled")
		}
		var peers []party.Peer
		h.Admin(t, http.MethodGet, "/admin/peers", nil, &peers)
		if len(peers) != 1 || peers[0].PlatformID != p.ID || len(peers[0].Parties) != 2 {
			t.Fatalf("admin peers: %+v", peers)
		}
		for _, pp := range peers[0].Parties {
			if !pp.Reachable || !pp.Represented {
				t.Errorf("party behind the peer hub %+v, want reachable", pp)
			}
		}

		// Its CPO's location reaches our eMSP; our eMSP hears of its
		// parties.
		if err := peer.PublishLocation(ctx, "LOCI", "E1"); err != nil {
			t.Fatalf("location of DE/AAA after our connect: %v", err)
		}
		waitFor(t, "DE/AAA's location at our eMSP", func() bool { return emsp.Location("DE", "AAA", "LOCI") != nil })
		waitFor(t, "DE/AAA in our eMSP's ClientInfo", func() bool {
			ci, ok := emsp.ClientInfo("CPO", "DE", "AAA")
			return ok && ci.Status == "CONNECTED"
		})
	})
}

// TestPeerHub22: a peer hub that speaks OCPI 2.2 registers on 2.2 and
// reaches our HubClientInfo receiver, sender and its parties' modules under
// /ocpi/2.2/ (the receiver was listed in the 2.2 details but not served).
func TestPeerHub22(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 2*time.Minute)
		emsp := hubtest.Add(t, h, sim.StartEMSP, "Our eMSP", "NL", "EMS")
		peer, _ := h.AddPeer(t, "Peer 22", "DE/P22", "DE/A22", "DE/B22", func(o *sim.Options) { o.Versions = []string{"2.2"} })
		if peer.HubVersion() != "2.2" {
			t.Fatalf("the peer hub speaks %q with us, want 2.2", peer.HubVersion())
		}
		if u, ok := peer.HubEndpoint("hubclientinfo", "RECEIVER"); !ok || !strings.Contains(u, "/ocpi/2.2/") {
			t.Fatalf("hubclientinfo RECEIVER %q, want a 2.2 URL", u)
		}
		resp, err := peer.PushClientInfo(ctx, clientInfo("DE", "C22", "EMSP", "CONNECTED", time.Now()))
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("ClientInfo PUT on 2.2: %v %+v", err, resp)
		}
		waitFor(t, "DE/C22 and DE/A22 behind the peer hub", func() bool {
			p, err := h.Parties.FindByParty(ctx, party.RoleEMSP, "DE", "C22")
			c, err2 := h.Parties.FindByParty(ctx, party.RoleCPO, "DE", "A22")
			return err == nil && err2 == nil && p.Name == "Peer 22" && c.ID == p.ID
		})
		resp, err = peer.Raw(ctx, http.MethodGet, hubtest.HubURL(t, peer.Platform, "hubclientinfo", "RECEIVER", "/DE/C22"), nil, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("ClientInfo GET on 2.2: %v %+v", err, resp)
		}
		if err := peer.PublishLocation(ctx, "L22", "E1"); err != nil {
			t.Fatalf("location of DE/A22 on 2.2: %v", err)
		}
		waitFor(t, "DE/A22's location at our eMSP", func() bool { return emsp.Location("DE", "A22", "L22") != nil })
	})
}
