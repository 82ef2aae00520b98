package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPeerHubClientInfoGet: our HubClientInfo sender lists the parties
// behind a peer hub to our partners but not to the peer hub itself (loop
// rule), and the receiver's GET of one party answers a peer hub with what
// it reported for its own parties and with our view of the others.
func TestPeerHubClientInfoGet(t *testing.T) {
	t.Parallel()
	hubtest.EachWith(t, setupPeering, func(t *testing.T, b *peering) {
		ctx := b.ctx
		list := func(p *sim.Platform) []sim.ClientInfo {
			t.Helper()
			u, ok := p.HubEndpoint("hubclientinfo", "SENDER")
			if !ok {
				t.Fatal("the hub lists no hubclientinfo SENDER")
			}
			resp, err := p.Raw(ctx, http.MethodGet, u+"?limit=100", nil, nil)
			if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
				t.Fatalf("GET hubclientinfo: %v %+v", err, resp)
			}
			var out []sim.ClientInfo
			if err := json.Unmarshal(resp.Envelope.Data, &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		has := func(l []sim.ClientInfo, role, cc, pid string) bool {
			return slices.ContainsFunc(l, func(ci sim.ClientInfo) bool { return ci.Role == role && ci.CountryCode == cc && ci.PartyID == pid })
		}
		waitFor(t, "the peer's parties in our list", func() bool {
			l := list(b.emsp.Platform)
			return has(l, "CPO", "DE", "AAA") && has(l, "EMSP", "DE", "BBB")
		})
		l := list(b.peer.Platform)
		if has(l, "CPO", "DE", "AAA") || has(l, "EMSP", "DE", "BBB") {
			t.Errorf("the peer hub's own parties were listed back to it: %+v", l)
		}
		if !has(l, "CPO", "IN", "DIR") || !has(l, "EMSP", "NL", "EMS") {
			t.Errorf("the peer hub does not see our partners: %+v", l)
		}

		get := func(p *sim.Platform, cc, pid string) (int, sim.ClientInfo) {
			t.Helper()
			resp, err := p.Raw(ctx, http.MethodGet, hubtest.HubURL(t, p, "hubclientinfo", "RECEIVER", "/"+cc+"/"+pid), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ci sim.ClientInfo
			if resp.Envelope != nil && resp.Envelope.StatusCode == 1000 {
				if err := json.Unmarshal(resp.Envelope.Data, &ci); err != nil {
					t.Fatal(err)
				}
			}
			return resp.HTTPStatus, ci
		}
		// What the peer hub reported for its party, as it reported it.
		at := time.Now().Add(time.Minute).Truncate(time.Second)
		if resp, err := b.peer.PushClientInfo(ctx, clientInfo("DE", "BBB", "EMSP", "OFFLINE", at)); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("push: %v %+v", err, resp)
		}
		if st, ci := get(b.peer.Platform, "de", "bbb"); st != http.StatusOK || ci.Status != "OFFLINE" || ci.Role != "EMSP" || !ci.LastUpdated.Time.Equal(at) {
			t.Errorf("GET DE/BBB by the peer hub: HTTP %d %+v, want OFFLINE at %v", st, ci, at)
		}
		// Our view of a party connected to us.
		if st, ci := get(b.peer.Platform, "IN", "DIR"); st != http.StatusOK || ci.Status != "CONNECTED" || ci.Role != "CPO" {
			t.Errorf("GET IN/DIR by the peer hub: HTTP %d %+v", st, ci)
		}
		if st, _ := get(b.peer.Platform, "XX", "ZZZ"); st != http.StatusNotFound {
			t.Errorf("GET of an unknown party: HTTP %d, want 404", st)
		}
		// Only a hub reads the receiver.
		if st, _ := get(b.emsp.Platform, "IN", "DIR"); st != http.StatusNotFound {
			t.Errorf("GET by an eMSP: HTTP %d, want 404", st)
		}
		// Our partners see the party OFFLINE now.
		waitFor(t, "DE/BBB OFFLINE in our list", func() bool {
			return slices.ContainsFunc(list(b.emsp.Platform), func(ci sim.ClientInfo) bool {
				return ci.CountryCode == "DE" && ci.PartyID == "BBB" && ci.Status == "OFFLINE"
			})
		})
	})
}
