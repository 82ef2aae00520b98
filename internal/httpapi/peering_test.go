package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// peering is a hub with our eMSP NL/EMS and a CPO IN/DIR connected
// directly, and a peer hub DE/PHA with the CPO DE/AAA and the eMSP DE/BBB
// behind it.
type peering struct {
	h    *hubtest.Hub
	ctx  context.Context
	emsp *sim.EMSP
	cpo  *sim.CPO
	peer *sim.PeerHub
	// peerID is the peer hub's platform.
	peerID int64
}

func setupPeering(t *testing.T, h *hubtest.Hub) *peering {
	t.Helper()
	b := &peering{h: h, ctx: hubtest.Ctx(t, 2*time.Minute)}
	b.emsp = hubtest.Add(t, h, sim.StartEMSP, "Our eMSP", "NL", "EMS")
	b.cpo = hubtest.Add(t, h, sim.StartCPO, "Direct CPO", "IN", "DIR")
	b.peer, b.peerID = h.AddPeer(t, "Peer A", "DE/PHA", "DE/AAA", "DE/BBB")
	waitFor(t, "the CPO behind the peer hub", func() bool {
		p, err := h.Parties.FindByParty(b.ctx, party.RoleCPO, "DE", "AAA")
		return err == nil && p.ID == b.peerID
	})
	return b
}

// waitFor is hubtest.Eventually with the peering tests' one-minute bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	hubtest.Eventually(t, hubtest.Ctx(t, time.Minute), what, cond)
}

func clientInfo(cc, pid, role, status string, at time.Time) sim.ClientInfo {
	return sim.ClientInfo{CountryCode: cc, PartyID: pid, Role: role, Status: status, LastUpdated: ocpi.NewDateTime(at)}
}

// TestPeerHub: another roaming hub peers with us. Each step failed before
// peering: its CPO's pushes were 404, it was never pulled, tokens and
// ClientInfo never reached it, and nothing could be routed to its parties.
func TestPeerHub(t *testing.T) {
	t.Parallel()
	hubtest.EachWith(t, setupPeering, func(t *testing.T, b *peering) {
		ctx := b.ctx

		// Pushes of the CPO behind the peer hub are accepted and reach our
		// eMSP, never the peer hub itself.
		if err := b.peer.PublishLocation(ctx, "LOCA", "E1"); err != nil {
			t.Fatalf("location of DE/AAA through the peer hub: %v", err)
		}
		waitFor(t, "DE/AAA's location at our eMSP", func() bool { return b.emsp.Location("DE", "AAA", "LOCA") != nil })
		// A party it does not represent: one connected directly, and one
		// nobody lists.
		for _, who := range []string{"IN/DIR", "XX/ZZZ"} {
			cc, pid, _ := strings.Cut(who, "/")
			resp, err := b.peer.Raw(ctx, http.MethodPut, hubtest.HubURL(t, b.peer.Platform, "locations", "RECEIVER", "/"+cc+"/"+pid+"/LOCX"), sim.LocationObject(cc, pid, "LOCX", "E1"), nil)
			if err != nil || resp.HTTPStatus != http.StatusNotFound {
				t.Errorf("location of %s from the peer hub: %v HTTP %d, want 404", who, err, resp.HTTPStatus)
			}
		}

		// Our direct CPO's location reaches the peer hub (for the eMSP
		// behind it); the peer's own does not come back to it.
		if err := b.cpo.PublishLocation(ctx, "LOCD", "E1"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "IN/DIR's location at the peer hub", func() bool { return b.peer.Received.Location("IN", "DIR", "LOCD") != nil })
		if b.peer.Received.Location("DE", "AAA", "LOCA") != nil {
			t.Error("the peer hub got its own location back")
		}

		// Tokens of our eMSP reach the peer hub.
		tok := b.emsp.NewToken("RFID1", "RFID", "ALLOWED")
		if _, err := b.emsp.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the token at the peer hub", func() bool { return b.peer.ReceivedToken("NL", "EMS", "RFID1", "RFID") != nil })

		// Sessions and CDRs of DE/AAA for our eMSP reach it; those for the
		// eMSP behind the peer hub are not sent back to the peer hub.
		id, err := b.peer.StartSession(ctx, map[string]any{"token": tok, "location_id": "LOCA"})
		if err != nil {
			t.Fatalf("session of DE/AAA: %v", err)
		}
		if err := b.peer.StopSession(ctx, id); err != nil {
			t.Fatalf("CDR of DE/AAA: %v", err)
		}
		waitFor(t, "the CDR at our eMSP", func() bool { return len(b.emsp.CDRs()) == 1 })
		theirs := map[string]any{"country_code": "DE", "party_id": "BBB", "uid": "THEIRS", "type": "RFID", "contract_id": "C-THEIRS"}
		id, err = b.peer.StartSession(ctx, map[string]any{"token": theirs, "location_id": "LOCA"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.peer.StopSession(ctx, id); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "an empty outbox", func() bool {
			left, err := b.h.Hub.Outbox(ctx, 0, "pending", "leased")
			return err == nil && len(left) == 0
		})
		if n, m := b.peer.Received.Sessions(), len(b.peer.Received.CDRs()); n != 0 || m != 0 {
			t.Errorf("the peer hub got %d sessions and %d CDRs of its own back", n, m)
		}
		if n := len(b.emsp.CDRs()); n != 1 {
			t.Errorf("our eMSP got %d CDRs, want 1", n)
		}

		// A session and CDR of our direct CPO for the eMSP behind the peer
		// hub go to the peer hub, addressed to that eMSP.
		if err := b.cpo.PublishLocation(ctx, "LOCS", "E1"); err != nil {
			t.Fatal(err)
		}
		id, err = b.cpo.StartSession(ctx, map[string]any{"token": theirs, "location_id": "LOCS"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.cpo.StopSession(ctx, id); err != nil {
			t.Fatal(err)
		}
		// The session and the CDR are two objects, delivered independently:
		// either may arrive first.
		waitFor(t, "the CDR and the session of IN/DIR at the peer hub", func() bool {
			return len(b.peer.Received.CDRs()) == 1 && b.peer.Received.Session("IN", "DIR", id) != nil
		})
		got := b.peer.Received.Requests(sim.PathHas(http.MethodPost, "/emsp/cdrs"))
		if len(got) != 1 || got[0].Header.Get("OCPI-to-party-id") != "BBB" || got[0].Header.Get("OCPI-from-party-id") != "DIR" {
			t.Errorf("CDR push to the peer hub: %+v", got)
		}

		// We pull from the peer hub as from a hub.
		if err := b.peer.SetLocation(sim.LocationObject("DE", "AAA", "LOCP", "E1")); err != nil {
			t.Fatal(err)
		}
		res, err := b.h.Syncer.Sync(ctx, location.Module, b.peerID, time.Time{})
		if err != nil || res.Changed != 1 || res.Invalid != 0 {
			t.Errorf("pull from the peer hub: %+v %v", res, err)
		}
		pulls := b.peer.Requests(sim.PathHas(http.MethodGet, "/cpo/locations"))
		if len(pulls) == 0 || pulls[len(pulls)-1].Header.Get("OCPI-to-party-id") != "PHA" {
			t.Errorf("pull addressed to %v, want the peer hub", pulls)
		}
		waitFor(t, "the pulled location at our eMSP", func() bool { return b.emsp.Location("DE", "AAA", "LOCP") != nil })

		// Our ClientInfo lists the parties behind the peer hub to our
		// partners, not to the peer hub itself.
		waitFor(t, "DE/AAA in our eMSP's ClientInfo", func() bool {
			ci, ok := b.emsp.ClientInfo("CPO", "DE", "AAA")
			return ok && ci.Status == "CONNECTED"
		})
		if _, ok := b.peer.ClientInfo("CPO", "DE", "AAA"); ok {
			t.Error("the peer hub was told about its own party")
		}

		testPeerClientInfo(t, b)
		testPeerConflict(t, b)
	})
}

// testPeerClientInfo: the peer hub's pushes of ClientInfo: a late older
// copy is ignored, a duplicate changes nothing, OFFLINE stops routing
// (4003), a party connected directly stays direct, others cannot push.
func testPeerClientInfo(t *testing.T, b *peering) {
	ctx := b.ctx
	now := time.Now()
	push := func(ci sim.ClientInfo) {
		t.Helper()
		resp, err := b.peer.PushClientInfo(ctx, ci)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("push %+v: %v %+v", ci, err, resp)
		}
	}
	forward := func() error {
		_, err := b.h.Hub.Forward(ctx, hub.ForwardRequest{From: ocpiclient.Party{CountryCode: "NL", PartyID: "EMS"},
			To: ocpiclient.Party{CountryCode: "DE", PartyID: "AAA"}, Module: "tokens", Interface: ocpi.InterfaceReceiver,
			Method: http.MethodGet, Suffix: "/NL/EMS/RFID1"})
		return err
	}
	push(clientInfo("DE", "AAA", "CPO", "OFFLINE", now))
	push(clientInfo("DE", "AAA", "CPO", "OFFLINE", now)) // duplicate
	if err := forward(); ocpi.ErrorCode(err) != ocpi.ENOTCONNECTED {
		t.Errorf("forward to an OFFLINE party behind the peer hub: %v, want 4003", err)
	}
	push(clientInfo("DE", "AAA", "CPO", "CONNECTED", now.Add(-time.Hour))) // older copy, late
	if err := forward(); ocpi.ErrorCode(err) != ocpi.ENOTCONNECTED {
		t.Errorf("an older CONNECTED copy was applied: %v", err)
	}
	push(clientInfo("DE", "AAA", "CPO", "CONNECTED", now.Add(time.Second)))
	if err := forward(); err != nil {
		t.Errorf("forward to DE/AAA once CONNECTED again: %v", err)
	}
	var n int
	if err := b.h.DB.Read().QueryRow(ctx, "SELECT COUNT(*) FROM peer_parties WHERE country_code = 'DE' AND party_id = 'AAA'").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d rows of DE/AAA (%v)", n, err)
	}

	// A party connected directly is reached directly.
	push(clientInfo("IN", "DIR", "CPO", "CONNECTED", now))
	if p, err := b.h.Parties.FindByParty(ctx, party.RoleCPO, "IN", "DIR"); err != nil || p.ID == b.peerID {
		t.Errorf("IN/DIR reached through %v (%v), want directly", p, err)
	}

	// Only a hub lists parties; a body naming another party is refused.
	resp, err := b.emsp.Raw(ctx, http.MethodPut, hubtest.HubURL(t, b.emsp.Platform, "hubclientinfo", "RECEIVER", "/DE/XYZ"), clientInfo("DE", "XYZ", "CPO", "CONNECTED", now), nil)
	if err != nil || resp.HTTPStatus != http.StatusNotFound {
		t.Errorf("ClientInfo from an eMSP: %v %+v, want 404", err, resp)
	}
	resp, err = b.peer.Raw(ctx, http.MethodPut, hubtest.HubURL(t, b.peer.Platform, "hubclientinfo", "RECEIVER", "/DE/XYZ"), clientInfo("DE", "XYW", "CPO", "CONNECTED", now), nil)
	if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 2001 {
		t.Errorf("ClientInfo naming another party than its URL: %v %+v, want 2001", err, resp)
	}
}

// testPeerConflict: a second peer hub lists DE/AAA too: the first keeps it,
// the second may not push for it, and the operator sees the conflict.
func testPeerConflict(t *testing.T, b *peering) {
	ctx := b.ctx
	second, _ := b.h.AddPeer(t, "Peer B", "DE/PHB", "DE/AAA", "DE/CCC")
	if p, err := b.h.Parties.FindByParty(ctx, party.RoleCPO, "DE", "AAA"); err != nil || p.ID != b.peerID {
		t.Errorf("DE/AAA reached through %v (%v), want the first peer hub", p, err)
	}
	resp, err := second.Raw(ctx, http.MethodPut, hubtest.HubURL(t, second.Platform, "locations", "RECEIVER", "/DE/AAA/LOCB"), sim.LocationObject("DE", "AAA", "LOCB", "E1"), nil)
	if err != nil || resp.HTTPStatus != http.StatusNotFound {
		t.Errorf("location of DE/AAA from the second peer hub: %v HTTP %d, want 404", err, resp.HTTPStatus)
	}
	var peers []party.Peer
	b.h.Admin(t, http.MethodGet, "/admin/peers", nil, &peers)
	if len(peers) != 2 {
		t.Fatalf("admin peers: %+v", peers)
	}
	for _, p := range peers {
		i := slices.IndexFunc(p.Parties, func(pp party.PeerParty) bool { return pp.CountryCode == "DE" && pp.PartyID == "AAA" })
		if i < 0 {
			t.Errorf("peer %s does not show DE/AAA: %+v", p.Name, p.Parties)
			continue
		}
		pp := p.Parties[i]
		first := p.PlatformID == b.peerID
		if pp.Represented != first || pp.Reachable != first || len(pp.ConflictWith) != 1 {
			t.Errorf("peer %s shows DE/AAA as %+v", p.Name, pp)
		}
	}
}
