package hubtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// StartPeer starts a simulated roaming hub (sim.StartPeerHub) with its own
// party hub and a CPO cpo and an eMSP emsp behind it (each "CC/PID"),
// logging like the test hubs; it is closed when the test ends, and not
// registered with any hub (a test that has the hub connect to it, or
// registers it itself, starts here).
func StartPeer(t testing.TB, name, hub, cpo, emsp string, tweak ...func(*sim.Options)) *sim.PeerHub {
	t.Helper()
	p, err := sim.StartPeerHub(name, hub, cpo, emsp, Logger(), tweak...)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(p.Close)
	return p
}

// AddPeer is StartPeer, and then registers the peer hub with h and waits
// (a minute at most) until h has pulled its HubClientInfo: the eMSP behind
// it is reached through it. It returns the peer hub and the id of its
// platform at h.
func (h *Hub) AddPeer(t testing.TB, name, hub, cpo, emsp string, tweak ...func(*sim.Options)) (*sim.PeerHub, int64) {
	t.Helper()
	peer := StartPeer(t, name, hub, cpo, emsp, tweak...)
	h.Register(t, peer.Platform)
	ctx := Ctx(t, time.Minute)
	hcc, hpid, _ := strings.Cut(hub, "/")
	p, err := h.Parties.FindByParty(ctx, party.RoleHUB, hcc, hpid)
	if err != nil {
		t.Fatalf("the peer hub %s after its registration: %v", hub, err)
	}
	ecc, epid, _ := strings.Cut(emsp, "/")
	Eventually(t, ctx, "the parties behind "+name, func() bool {
		e, err := h.Parties.FindByParty(ctx, party.RoleEMSP, ecc, epid)
		return err == nil && e.ID == p.ID
	})
	return peer, p.ID
}

// InClientInfo reports whether h's client info (what its HubClientInfo
// sender lists) holds the party cc/pid; the test fails on an error.
func (h *Hub) InClientInfo(t testing.TB, ctx context.Context, cc, pid string) bool {
	t.Helper()
	list, _, err := h.Parties.ListClientInfo(ctx, 0, ocpi.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range list {
		if ci.CountryCode == cc && ci.PartyID == pid {
			return true
		}
	}
	return false
}
