package upi_test

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
)

// peerBundle is the UPI bundle with the CPO behind another roaming hub (a
// peer hub with the CPO IN/CPO and an eMSP DE/BBB behind it), and an eMSP
// of our own connected directly.
type peerBundle struct {
	*bundle
	peer *sim.PeerHub
	emsp *sim.EMSP
}

func setupPeer(t *testing.T, engine store.Engine) *peerBundle {
	t.Helper()
	// A longer budget than the UPI bundle's: two more platforms register,
	// and the race detector on a busy machine slows the hub's start.
	b := startBundle(t, engine, nil, 5*time.Minute)
	pb := &peerBundle{bundle: b}
	pb.emsp = hubtest.Add(t, b.h, sim.StartEMSP, "Our eMSP", "NL", "EMS")
	pb.peer, _ = b.h.AddPeer(t, "Peer Hub", "DE/PHB", cpoCC+"/"+cpoPID, "DE/BBB")
	b.cpo = pb.peer.CPO
	eventually(t, "the CPO behind the peer hub", func() bool {
		p, err := b.h.Parties.FindByParty(b.ctx, party.RoleCPO, cpoCC, cpoPID)
		return err == nil && p.Name == "Peer Hub"
	})
	b.publish(t)
	return pb
}

// TestPeerHubEndToEnd: a CPO behind another roaming hub publishes a
// location that our eMSP receives; our UPI driver pays at its connector and
// the session starts, settles and refunds through the peer hub; a token of
// our eMSP reaches the peer hub and authorizes at the CPO; the CDR of its
// session reaches our eMSP once.
func TestPeerHubEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		b := setupPeer(t, engine)

		// The location reaches our eMSP, untouched, from the CPO.
		eventually(t, "the location at our eMSP", func() bool { return b.emsp.Location(cpoCC, cpoPID, locID) != nil })

		// UPI: pay, charge, settle, refund, all through the peer hub.
		b.qr(t)
		orderID := b.order(t, "500")
		po := b.pgOrder(t, orderID)
		if _, err := b.pg.Pay(b.ctx, po.ID, pgsim.Captured); err != nil {
			t.Fatal(err)
		}
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging, func(p *paymentview.PaymentView) bool { return p.Command != nil && p.Command.Response != "" })
		if p.Session == nil || p.Command.Response != "ACCEPTED" {
			t.Fatalf("charging payment %+v", p)
		}
		cmds := b.peer.Commands()
		if len(cmds) != 1 || cmds[0].Header.Get("OCPI-to-country-code") != cpoCC || cmds[0].Header.Get("OCPI-to-party-id") != cpoPID {
			t.Fatalf("commands at the peer hub: %+v", cmds)
		}
		b.stop(t, p.Session.ID)
		p = b.waitStatus(t, orderID, paymentrow.StatusSettled, refundsDone)
		if p.Cost != "272.88" || p.Refunded != "227.12" || p.CDR == nil {
			t.Errorf("settled payment %+v", p)
		}

		// A token of our eMSP reaches the peer hub and authorizes at
		// the CPO behind it (forwarded to our eMSP).
		tok := b.emsp.NewToken("RFID1", "RFID", "ALLOWED")
		if _, err := b.emsp.PutToken(b.ctx, tok); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the token at the peer hub", func() bool { return b.peer.ReceivedToken("NL", "EMS", "RFID1", "RFID") != nil })
		resp, err := b.peer.Authorize(b.ctx, "RFID1", "RFID", ocpiclient.Party{CountryCode: "NL", PartyID: "EMS"}, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("authorize at the peer's CPO: %v %+v", err, resp)
		}
		if got := data[map[string]any](t, resp); got["allowed"] != "ALLOWED" {
			t.Errorf("authorization %v", got)
		}

		// Its session and CDR: the CDR reaches our eMSP once.
		id, err := b.peer.StartSession(b.ctx, map[string]any{"token": tok, "location_id": locID})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.peer.StopSession(b.ctx, id); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the CDR at our eMSP", func() bool { return len(b.emsp.CDRs()) > 0 })
		eventually(t, "an empty outbox", func() bool {
			left, err := b.h.Hub.Outbox(b.ctx, 0, "pending", "leased")
			return err == nil && len(left) == 0
		})
		if n := len(b.emsp.CDRs()); n != 1 {
			t.Errorf("our eMSP got %d CDRs, want 1", n)
		}
		if errs := b.peer.Errors(); len(errs) > 0 {
			t.Errorf("peer hub simulator errors: %v", errs)
		}
	})
}
