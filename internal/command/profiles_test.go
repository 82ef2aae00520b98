package command_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestChargingProfiles: set, get and clear are relayed like commands (the
// hub's response_url to the CPO, the result back to the eMSP's); the CPO's
// ActiveChargingProfile updates reach the party that set a profile; other
// parties cannot touch the session.
func TestChargingProfiles(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		now := ocpi.NewDateTime(time.Now())
		s := map[string]any{"country_code": "IN", "party_id": "CP1", "id": "S7", "start_date_time": now, "kwh": 1,
			"cdr_token":   map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "TOK1", "type": "APP_USER", "contract_id": "C"},
			"auth_method": "COMMAND", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR", "status": "ACTIVE",
			"last_updated": now}
		if err := b.CPO.PutSession(b.Ctx, s); err != nil {
			t.Fatal(err)
		}
		base, _ := b.EMSP.HubEndpoint("chargingprofiles", "RECEIVER")
		call := func(p *sim.EMSP, method, suffix string, body any) (string, string) {
			t.Helper()
			uid, rurl := p.ProfileURL()
			u := base + "/S7" + suffix
			if method == http.MethodPut {
				body.(map[string]any)["response_url"] = rurl
			} else {
				u += "&response_url=" + url.QueryEscape(rurl)
			}
			resp, err := p.Raw(b.Ctx, method, u, body, nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
			return uid, result(t, resp)
		}
		profile := map[string]any{"charging_profile": map[string]any{"charging_rate_unit": "A",
			"charging_profile_period": []any{map[string]any{"start_period": 0, "limit": 16}}}}

		uidSet, res := call(b.EMSP, http.MethodPut, "", profile)
		if res != "ACCEPTED" {
			t.Fatalf("set: %s", res)
		}
		uidGet, _ := call(b.EMSP, http.MethodGet, "?duration=900", nil)
		uidClear, _ := call(b.EMSP, http.MethodDelete, "?x=1", nil)

		reqs := b.CPO.ProfileRequests()
		if len(reqs) != 3 || reqs[0].Command != "PUT" || !strings.HasPrefix(reqs[0].Body["response_url"].(string), b.H.PublicURL()+"/ocpi/2.2.1/cpo/chargingprofiles/SET_CHARGING_PROFILE/") {
			t.Fatalf("CPO got %+v", reqs)
		}
		gets := b.CPO.Requests(sim.PathHas(http.MethodGet, "/cpo/chargingprofiles/S7"))
		if len(gets) != 1 {
			t.Fatalf("CPO got %d GETs", len(gets))
		}
		q, _ := url.ParseQuery(gets[0].Query)
		if q.Get("duration") != "900" || !strings.HasPrefix(q.Get("response_url"), b.H.PublicURL()+"/ocpi/2.2.1/cpo/chargingprofiles/GET_ACTIVE_CHARGING_PROFILE/") {
			t.Errorf("GET query %q", gets[0].Query)
		}

		// The results come back to the eMSP's own URLs.
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, func(sim.Request) bool { return len(b.EMSP.ProfileCallbacks()) >= 3 }); err != nil {
			t.Fatal(err)
		}
		seen := map[string]map[string]any{}
		for _, cb := range b.EMSP.ProfileCallbacks() {
			seen[strings.TrimPrefix(cb.UID, "results/")] = cb.Body
		}
		if seen[uidSet]["result"] != "ACCEPTED" || seen[uidClear]["result"] != "ACCEPTED" || seen[uidGet]["profile"] == nil {
			t.Errorf("results at the eMSP: %v", seen)
		}

		// The CPO's ActiveChargingProfile update reaches the setter.
		update := map[string]any{"start_date_time": ocpi.NewDateTime(time.Now()), "charging_profile": map[string]any{"charging_rate_unit": "A",
			"charging_profile_period": []any{map[string]any{"start_period": 0, "limit": 10}}}}
		hubtest.Eventually(t, b.Ctx, "the setter recorded", func() bool {
			var list []command.Record
			b.H.Admin(t, http.MethodGet, "/admin/commands?module=chargingprofiles&state=completed", nil, &list)
			return len(list) == 3
		})
		resp, err := b.CPO.PutActiveProfile(b.Ctx, "S7", update)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, sim.PathHas(http.MethodPut, "/emsp/chargingprofiles/S7")); err != nil {
			t.Fatal(err)
		}
		put := b.EMSP.Requests(sim.PathHas(http.MethodPut, "/emsp/chargingprofiles/S7"))[0]
		var got map[string]any
		_ = json.Unmarshal(put.Body, &got)
		periods := got["charging_profile"].(map[string]any)["charging_profile_period"].([]any)
		if put.Header.Get("OCPI-from-party-id") != "CP1" || periods[0].(map[string]any)["limit"] != 10.0 {
			t.Errorf("update at the eMSP: %s %s", put.Header.Get("OCPI-from-party-id"), put.Body)
		}
		resp, err = b.CPO2.PutActiveProfile(b.Ctx, "S7", update)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.CPO.PutActiveProfile(b.Ctx, "S7", map[string]any{"charging_profile": update["charging_profile"]})
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)

		// Another eMSP: the session is not its.
		resp, err = b.EMSP2.Raw(b.Ctx, http.MethodPut, base+"/S7", map[string]any{"charging_profile": profile["charging_profile"],
			"response_url": "https://emsp2.example/r"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "UNKNOWN_SESSION" {
			t.Errorf("another eMSP: %s", resp.Body)
		}
		// Malformed requests.
		resp, err = b.EMSP.Raw(b.Ctx, http.MethodGet, base+"/S7?response_url="+url.QueryEscape("https://x.example/r"), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "duration" {
			t.Errorf("GET without duration: %s", resp.Body)
		}
		resp, err = b.EMSP.Raw(b.Ctx, http.MethodDelete, base+"/S7", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "response_url" {
			t.Errorf("DELETE without response_url: %s", resp.Body)
		}
		if n := len(b.CPO.ProfileRequests()); n != 3 {
			t.Errorf("CPO got %d profile requests, want 3", n)
		}
	})
}
