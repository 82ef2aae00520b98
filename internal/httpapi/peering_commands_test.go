package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPeerHubCommands: our eMSP's command and charging profiles for a CPO
// behind a peer hub go to the peer hub addressed to that CPO, with our
// response_url; the CPO's results and ActiveChargingProfile update come
// back through the peer hub to our eMSP.
func TestPeerHubCommands(t *testing.T) {
	t.Parallel()
	hubtest.EachWith(t, setupPeering, func(t *testing.T, b *peering) {
		ctx := b.ctx
		if err := b.peer.PublishLocation(ctx, "LOCC", "E1"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "DE/AAA's location at our eMSP", func() bool { return b.emsp.Location("DE", "AAA", "LOCC") != nil })
		tok := b.emsp.NewToken("APP1", "APP_USER", "ALLOWED")
		if _, err := b.emsp.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}

		// START_SESSION: to the peer hub, OCPI-to DE/AAA, our response_url;
		// the result comes back to our eMSP, and so does the session.
		uid, resp, err := b.emsp.SendCommand(ctx, ocpi.CommandStartSession, map[string]any{"token": tok, "location_id": "LOCC",
			"evse_uid": "E1", "connector_id": "1"}, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("START_SESSION: %v %+v", err, resp)
		}
		cmds := b.peer.Commands()
		if len(cmds) != 1 || cmds[0].Header.Get("OCPI-to-country-code") != "DE" || cmds[0].Header.Get("OCPI-to-party-id") != "AAA" ||
			cmds[0].Header.Get("OCPI-from-party-id") != "EMS" {
			t.Fatalf("commands at the peer hub: %+v", cmds)
		}
		if ru, _ := cmds[0].Body["response_url"].(string); !strings.HasPrefix(ru, b.h.PublicURL()+"/") {
			t.Errorf("the peer hub got response_url %q, want ours", ru)
		}
		res, err := b.emsp.WaitResult(ctx, uid)
		if err != nil || res != ocpi.CommandAccepted {
			t.Fatalf("START_SESSION result at our eMSP: %q %v", res, err)
		}
		waitFor(t, "the session at our eMSP", func() bool { return b.emsp.Sessions() == 1 })
		var sessionID string
		for _, r := range b.emsp.Requests(sim.PathHas(http.MethodPut, "/emsp/sessions/DE/AAA/")) {
			sessionID = r.Path[strings.LastIndex(r.Path, "/")+1:]
		}
		if sessionID == "" {
			t.Fatal("no session PUT at our eMSP")
		}

		// SET_CHARGING_PROFILE for that session: the same way.
		base, _ := b.emsp.HubEndpoint("chargingprofiles", "RECEIVER")
		puid, rurl := b.emsp.ProfileURL()
		body := map[string]any{"response_url": rurl, "charging_profile": map[string]any{"charging_rate_unit": "A",
			"charging_profile_period": []any{map[string]any{"start_period": 0, "limit": 16}}}}
		resp, err = b.emsp.Raw(ctx, http.MethodPut, base+"/"+url.PathEscape(sessionID), body, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("SET_CHARGING_PROFILE: %v %+v", err, resp)
		}
		profs := b.peer.ProfileRequests()
		if len(profs) != 1 || profs[0].Header.Get("OCPI-to-party-id") != "AAA" || profs[0].Header.Get("OCPI-from-party-id") != "EMS" {
			t.Fatalf("charging profile requests at the peer hub: %+v", profs)
		}
		waitFor(t, "the profile result at our eMSP", func() bool {
			for _, cb := range b.emsp.ProfileCallbacks() {
				if strings.TrimPrefix(cb.UID, "results/") == puid && cb.Body["result"] == "ACCEPTED" {
					return true
				}
			}
			return false
		})

		// The CPO's ActiveChargingProfile update reaches our eMSP.
		update := map[string]any{"start_date_time": ocpi.NewDateTime(time.Now()), "charging_profile": map[string]any{"charging_rate_unit": "A",
			"charging_profile_period": []any{map[string]any{"start_period": 0, "limit": 10}}}}
		resp, err = b.peer.PutActiveProfile(ctx, sessionID, update)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("ActiveChargingProfile from the peer hub: %v %+v", err, resp)
		}
		waitFor(t, "the update at our eMSP", func() bool {
			return len(b.emsp.Requests(sim.PathHas(http.MethodPut, "/emsp/chargingprofiles/"+sessionID))) == 1
		})
		put := b.emsp.Requests(sim.PathHas(http.MethodPut, "/emsp/chargingprofiles/"+sessionID))[0]
		var got map[string]any
		_ = json.Unmarshal(put.Body, &got)
		if put.Header.Get("OCPI-from-party-id") != "AAA" || got["charging_profile"] == nil {
			t.Errorf("update at our eMSP: %s %s", put.Header.Get("OCPI-from-party-id"), put.Body)
		}
		if errs := b.peer.Errors(); len(errs) > 0 {
			t.Errorf("peer hub simulator errors: %v", errs)
		}
	})
}
