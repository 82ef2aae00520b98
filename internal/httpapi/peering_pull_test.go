package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/token"
)

// TestPeerHubPull: pushes of the parties behind a peer hub were lost on the
// way; the recovery pulls from the peer hub's senders (tokens, sessions,
// CDRs, asked as a hub with OCPI-to = the peer hub) bring them in, route them
// on as their pushes would have been (never back to the peer hub), and a
// second pull changes nothing. Before, the hub pulled only locations and
// tariffs, and only from CPOs.
func TestPeerHubPull(t *testing.T) {
	t.Parallel()
	hubtest.EachWith(t, setupPeering, func(t *testing.T, b *peering) {
		ctx := b.ctx
		if err := b.peer.PublishLocation(ctx, "LOCA", "E1"); err != nil {
			t.Fatal(err)
		}
		tok := b.emsp.NewToken("RFID9", "RFID", "ALLOWED")
		if _, err := b.emsp.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}

		// The CPO behind the peer hub charges our eMSP's driver; its
		// session and CDR pushes are lost. The eMSP behind it issues a token
		// that is never pushed.
		b.peer.LosePushes(true)
		id, err := b.peer.StartSession(ctx, map[string]any{"token": tok, "location_id": "LOCA"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.peer.StopSession(ctx, id); err != nil {
			t.Fatal(err)
		}
		theirs := b.peer.EMSPToken("THEIRS9", "RFID", "ALLOWED")
		b.peer.KeepToken(theirs)
		if b.emsp.Session("DE", "AAA", id) != nil || len(b.emsp.CDRs()) != 0 {
			t.Fatal("the lost pushes reached our eMSP")
		}

		for _, m := range []string{token.Module, session.Module, cdr.Module} {
			res, err := b.h.Syncer.Sync(ctx, m, b.peerID, time.Time{})
			if err != nil || res.Received != 1 || res.Changed != 1 || res.Invalid != 0 {
				t.Errorf("first pull of %s from the peer hub: %+v %v", m, res, err)
			}
		}
		for _, path := range []string{"/emsp/tokens", "/cpo/sessions", "/cpo/cdrs"} {
			got := b.peer.Requests(sim.PathHas(http.MethodGet, path))
			if len(got) == 0 {
				t.Errorf("no GET %s at the peer hub", path)
				continue
			}
			hd := got[len(got)-1].Header
			if hd.Get("OCPI-to-country-code") != "DE" || hd.Get("OCPI-to-party-id") != "PHA" || hd.Get("OCPI-from-party-id") == "" {
				t.Errorf("GET %s addressed from %s/%s to %s/%s, want to the peer hub DE/PHA", path,
					hd.Get("OCPI-from-country-code"), hd.Get("OCPI-from-party-id"), hd.Get("OCPI-to-country-code"), hd.Get("OCPI-to-party-id"))
			}
		}

		// The pulled session and CDR reach our eMSP (the token's owner);
		// the pulled token reaches our direct CPO, not the peer hub.
		waitFor(t, "the pulled session at our eMSP", func() bool { return b.emsp.Session("DE", "AAA", id) != nil })
		waitFor(t, "the pulled CDR at our eMSP", func() bool { return len(b.emsp.CDRs()) == 1 })
		waitFor(t, "the pulled token at our CPO", func() bool { return b.cpo.ReceivedToken("DE", "BBB", "THEIRS9", "RFID") != nil })

		// A second pull finds nothing new and sends nothing again.
		for _, m := range []string{token.Module, session.Module, cdr.Module} {
			res, err := b.h.Syncer.Sync(ctx, m, b.peerID, time.Time{})
			if err != nil || res.Received != 1 || res.Changed != 0 || res.Unchanged != 1 {
				t.Errorf("second pull of %s: %+v %v", m, res, err)
			}
		}
		waitFor(t, "an empty outbox", func() bool {
			left, err := b.h.Hub.Outbox(ctx, 0, "pending", "leased")
			return err == nil && len(left) == 0
		})
		if n := len(b.emsp.CDRs()); n != 1 {
			t.Errorf("our eMSP got %d CDRs, want 1", n)
		}
		if b.peer.ReceivedToken("DE", "BBB", "THEIRS9", "RFID") != nil {
			t.Error("the peer hub got its own eMSP's token back")
		}
		if n, m := b.peer.Received.Sessions(), len(b.peer.Received.CDRs()); n != 0 || m != 0 {
			t.Errorf("the peer hub got %d sessions and %d CDRs of its own back", n, m)
		}

		// The eMSP behind the peer hub updates its token by a push through
		// the peer hub: it reaches our CPO, never the peer hub.
		theirs["whitelist"], theirs["last_updated"] = "NEVER", time.Now().UTC().Add(time.Second).Format(time.RFC3339)
		b.peer.KeepToken(theirs)
		resp, err := b.peer.Raw(ctx, http.MethodPut, hubtest.HubURL(t, b.peer.Platform, "tokens", "RECEIVER", "/DE/BBB/THEIRS9?type=RFID"), theirs, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("token of DE/BBB pushed by the peer hub: %v %+v", err, resp)
		}
		waitFor(t, "the updated token at our CPO", func() bool {
			got := b.cpo.ReceivedToken("DE", "BBB", "THEIRS9", "RFID")
			return got != nil && got["whitelist"] == "NEVER"
		})
		if b.peer.ReceivedToken("DE", "BBB", "THEIRS9", "RFID") != nil {
			t.Error("the peer hub got its own eMSP's token back")
		}

		// Our direct CPO asks to authorize the pulled token: the hub routes
		// the request through the peer hub to the token's eMSP.
		u, ok := b.cpo.HubEndpoint("tokens", "SENDER")
		if !ok {
			t.Fatal("the hub lists no tokens SENDER")
		}
		resp, err = b.cpo.Raw(ctx, http.MethodPost, u+"/THEIRS9/authorize?type=RFID", nil, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("authorize THEIRS9 at IN/DIR: %v %+v", err, resp)
		}
		auths := b.peer.Requests(sim.PathHas(http.MethodPost, "/emsp/tokens/THEIRS9/authorize"))
		if len(auths) != 1 || auths[0].Header.Get("OCPI-to-party-id") != "BBB" || auths[0].Header.Get("OCPI-from-party-id") != "DIR" {
			t.Errorf("authorizations at the peer hub: %+v", auths)
		}

		// The periodic pull asks the peer hub for these modules, and no
		// direct partner.
		before := len(b.emsp.Requests(sim.PathHas(http.MethodGet, "/emsp/tokens")))
		if err := b.h.Syncer.SyncAll(ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(b.peer.Requests(sim.PathHas(http.MethodGet, "/cpo/cdrs"))); got != 3 {
			t.Errorf("%d CDR pulls from the peer hub after the periodic pull, want 3", got)
		}
		if got := len(b.emsp.Requests(sim.PathHas(http.MethodGet, "/emsp/tokens"))); got != before {
			t.Errorf("the periodic pull asked our direct eMSP for its tokens")
		}
		if got := len(b.cpo.Requests(sim.PathHas(http.MethodGet, "/cpo/cdrs"))); got != 0 {
			t.Errorf("the periodic pull asked our direct CPO for its CDRs")
		}
	})
}
