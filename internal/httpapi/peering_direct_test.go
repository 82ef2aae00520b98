package httpapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPeerHubDirectWins: a party reached through a peer hub that then
// connects to us directly is reached directly from then on: routing, the
// owner of its pushes (the peer hub may no longer write for it), and the
// operator's view (direct, not reachable through the peer).
func TestPeerHubDirectWins(t *testing.T) {
	t.Parallel()
	hubtest.EachWith(t, setupPeering, func(t *testing.T, b *peering) {
		ctx := b.ctx
		direct := hubtest.Add(t, b.h, sim.StartCPO, "DE/AAA direct", "DE", "AAA")
		p, err := b.h.Parties.FindByParty(ctx, party.RoleCPO, "DE", "AAA")
		if err != nil || p.ID == b.peerID {
			t.Fatalf("DE/AAA reached through %+v (%v), want directly", p, err)
		}

		// The direct connection writes for DE/AAA; the peer hub no longer.
		if err := direct.PublishLocation(ctx, "LOCD", "E1"); err != nil {
			t.Fatalf("location of DE/AAA, directly: %v", err)
		}
		resp, err := b.peer.Raw(ctx, http.MethodPut, hubtest.HubURL(t, b.peer.Platform, "locations", "RECEIVER", "/DE/AAA/LOCX"), sim.LocationObject("DE", "AAA", "LOCX", "E1"), nil)
		if err != nil || resp.HTTPStatus != http.StatusNotFound {
			t.Errorf("location of DE/AAA from the peer hub once it is direct: %v HTTP %d, want 404", err, resp.HTTPStatus)
		}

		// Our eMSP's token goes to both platforms (each hosts a CPO), the
		// command for DE/AAA's location only to the direct one.
		tok := b.emsp.NewToken("RFIDD", "RFID", "ALLOWED")
		if _, err := b.emsp.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the token at DE/AAA", func() bool { return direct.ReceivedToken("NL", "EMS", "RFIDD", "RFID") != nil })
		if _, resp, err := b.emsp.SendCommand(ctx, "START_SESSION", map[string]any{"token": tok, "location_id": "LOCD"}, nil); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("START_SESSION: %v %+v", err, resp)
		}
		if n, m := len(direct.Commands()), len(b.peer.Commands()); n != 1 || m != 0 {
			t.Errorf("commands: %d at DE/AAA directly, %d at the peer hub; want 1 and 0", n, m)
		}

		// The operator sees DE/AAA as direct, not reachable through the peer.
		var peers []party.Peer
		b.h.Admin(t, http.MethodGet, "/admin/peers", nil, &peers)
		i := slices.IndexFunc(peers, func(p party.Peer) bool { return p.PlatformID == b.peerID })
		if i < 0 {
			t.Fatalf("admin peers: %+v", peers)
		}
		j := slices.IndexFunc(peers[i].Parties, func(pp party.PeerParty) bool { return pp.CountryCode == "DE" && pp.PartyID == "AAA" })
		if j < 0 {
			t.Fatalf("peer parties: %+v", peers[i].Parties)
		}
		if pp := peers[i].Parties[j]; !pp.Direct || pp.Reachable || pp.Represented {
			t.Errorf("DE/AAA behind the peer hub shows as %+v, want direct", pp)
		}
	})
}
