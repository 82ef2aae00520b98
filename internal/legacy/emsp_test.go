package legacy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// session221 is a 2.2.1 session of CPO IN/NEW at LOC9/E1/1 for a token.
func session221(id string, tok map[string]any, status string) map[string]any {
	return map[string]any{"country_code": "IN", "party_id": "NEW", "id": id, "start_date_time": "2026-02-01T10:00:00.250Z", "kwh": 0,
		"cdr_token":   map[string]any{"country_code": tok["cc"], "party_id": tok["pid"], "uid": tok["uid"], "type": "RFID", "contract_id": tok["contract"]},
		"auth_method": "COMMAND", "authorization_reference": "REF-1", "location_id": "LOC9", "evse_uid": "E1", "connector_id": "1",
		"currency": "INR", "status": status, "last_updated": "2026-02-01T10:00:00Z"}
}

// TestLegacyEMSPs: 2.1.1 and 2.0 eMSPs push tokens a 2.2.1 CPO receives in
// 2.2.1; the CPO's sessions and CDRs for their tokens reach them in their
// version; the CPO's real-time authorization of a 2.1.1 eMSP's token is
// answered by that eMSP; the 2.1.1 eMSP pulls its sessions and CDRs and
// starts a session on the 2.2.1 CPO, getting the result in 2.1.1.
func TestLegacyEMSPs(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		partners := startCast(t, h, newCPO|emsp211|emsp20)
		neu, e211, e20 := partners.neu, partners.e21, partners.e20
		mustOK(t, "location", neu.PutLocation(ctx(t), "LOC9", location221("IN", "NEW", "LOC9", "2026-01-02T10:00:00Z")))

		// Tokens from legacy eMSPs reach the 2.2.1 CPO in 2.2.1.
		t2 := e211.NewToken("T2", "RFID", "ALLOWED")
		if t2["auth_id"] != "C-T2" || t2["contract_id"] != nil {
			t.Fatalf("the 2.1.1 eMSP's token %v", t2)
		}
		if resp, err := e211.PutToken(ctx(t), t2); err != nil {
			t.Fatalf("2.1.1 token PUT: %v %s", err, bodyOf(resp))
		}
		t3 := e211.NewToken("T3", "RFID", "NEVER")
		if resp, err := e211.PutToken(ctx(t), t3); err != nil {
			t.Fatalf("2.1.1 token PUT: %v %s", err, bodyOf(resp))
		}
		t20 := e20.NewToken("T4", "RFID", "ALLOWED")
		delete(t20, "whitelist")
		t20["allow_whitelist"] = true
		if resp, err := e20.PutToken(ctx(t), t20); err != nil {
			t.Fatalf("2.0 token PUT: %v %s", err, bodyOf(resp))
		}
		waitFor(t, neu.Platform, 1, http.MethodPut, "/cpo/tokens/NL/E21/T2")
		waitFor(t, neu.Platform, 1, http.MethodPut, "/cpo/tokens/FR/E20/T4")
		if got := neu.ReceivedToken("NL", "E21", "T2", "RFID"); got["contract_id"] != "C-T2" || got["country_code"] != "NL" || got["auth_id"] != nil {
			t.Errorf("2.2.1 CPO got %v", got)
		}
		if got := neu.ReceivedToken("FR", "E20", "T4", "RFID"); got["whitelist"] != "ALLOWED" || got["allow_whitelist"] != nil {
			t.Errorf("2.2.1 CPO got the 2.0 token %v", got)
		}
		if resp, err := e211.PatchToken(ctx(t), "T2", "RFID", map[string]any{"valid": false}); err != nil {
			t.Fatalf("2.1.1 token PATCH without last_updated: %v %s", err, bodyOf(resp))
		}
		if err := neu.Until(ctx(t), func() bool { return neu.ReceivedToken("NL", "E21", "T2", "RFID")["valid"] == false }); err != nil {
			t.Fatal(err)
		}

		// The CPO's session and CDR for the 2.1.1 eMSP's token.
		tok := map[string]any{"cc": "NL", "pid": "E21", "uid": "T2", "contract": "C-T2"}
		mustOK(t, "session", neu.PutSession(ctx(t), session221("S7", tok, "ACTIVE")))
		waitFor(t, e211.Platform, 1, http.MethodPut, "/emsp/sessions/IN/NEW/S7")
		got := e211.Session("IN", "NEW", "S7")
		loc, _ := got["location"].(map[string]any)
		if got["auth_id"] != "C-T2" || got["auth_method"] != "AUTH_REQUEST" || got["start_datetime"] != "2026-02-01T10:00:00Z" ||
			loc["id"] != "LOC9" || len(loc["evses"].([]any)) != 1 || got["cdr_token"] != nil || got["authorization_reference"] != nil {
			t.Errorf("2.1.1 eMSP session %v", got)
		}
		mustOK(t, "session PATCH", neu.PatchSession(ctx(t), "S7", map[string]any{"status": "COMPLETED", "kwh": 20,
			"total_cost": map[string]any{"excl_vat": 300, "incl_vat": 354}, "last_updated": "2026-02-01T11:00:00Z"}))
		if err := e211.Until(ctx(t), func() bool { return e211.Session("IN", "NEW", "S7")["status"] == "COMPLETED" }); err != nil {
			t.Fatal(err)
		}
		if got := e211.Session("IN", "NEW", "S7"); got["total_cost"] != float64(300) {
			t.Errorf("patched 2.1.1 session %v", got)
		}
		cdr := map[string]any{"country_code": "IN", "party_id": "NEW", "id": "CDR7", "start_date_time": "2026-02-01T10:00:00Z",
			"end_date_time": "2026-02-01T11:00:00Z", "session_id": "S7",
			"cdr_token":   map[string]any{"country_code": "NL", "party_id": "E21", "uid": "T2", "type": "RFID", "contract_id": "C-T2"},
			"auth_method": "WHITELIST", "cdr_location": map[string]any{"id": "LOC9", "address": "Ring Road 2", "city": "Delhi", "country": "IND",
				"coordinates": map[string]any{"latitude": "28.613900", "longitude": "77.209000"}, "evse_uid": "E1", "evse_id": "IN*NEW*E1",
				"connector_id": "1", "connector_standard": "IEC_62196_T2_COMBO", "connector_format": "CABLE", "connector_power_type": "DC"},
			"currency": "INR", "charging_periods": []any{map[string]any{"start_date_time": "2026-02-01T10:00:00Z",
				"dimensions": []any{map[string]any{"type": "ENERGY", "volume": 20}}}},
			"total_cost": map[string]any{"excl_vat": 300, "incl_vat": 354}, "total_energy": 20, "total_time": 1, "last_updated": "2026-02-01T11:00:00Z"}
		if resp, err := neu.PostCDR(ctx(t), cdr); err != nil {
			t.Fatalf("CDR: %v %s", err, bodyOf(resp))
		}
		if _, err := e211.WaitFor(ctx(t), 1, func(sim.Request) bool { return len(e211.CDRs()) == 1 }); err != nil {
			t.Fatal(err)
		}
		c := e211.CDRs()[0]
		if c["stop_date_time"] != "2026-02-01T11:00:00Z" || c["total_cost"] != float64(300) || c["auth_id"] != "C-T2" ||
			c["location"].(map[string]any)["type"] != "OTHER" || c["session_id"] != nil {
			t.Errorf("2.1.1 eMSP CDR %v", c)
		}

		// The 2.0 eMSP's session: decimals as strings.
		tok4 := map[string]any{"cc": "FR", "pid": "E20", "uid": "T4", "contract": "C-T4"}
		s8 := session221("S8", tok4, "ACTIVE")
		s8["kwh"] = 1.25
		mustOK(t, "2.0 session", neu.PutSession(ctx(t), s8))
		waitFor(t, e20.Platform, 1, http.MethodPut, "/emsp/sessions/IN/NEW/S8")
		if b := lastBody(t, e20.Platform, sim.PathHas(http.MethodPut, "/emsp/sessions/IN/NEW/S8")); b["kwh"] != "1.25" {
			t.Errorf("2.0 session %v", b)
		}

		// Real-time authorization of the 2.1.1 eMSP's NEVER token: the
		// eMSP answers in 2.1.1, the CPO gets 2.2.1 with the token.
		base, _ := neu.HubEndpoint("tokens", "SENDER")
		var info map[string]any
		if _, err := neu.Do(ctx(t), http.MethodPost, base+"/T3/authorize", map[string]any{"location_id": "LOC9", "evse_uids": []any{"E1"}}, &info); err != nil {
			t.Fatalf("authorize: %v", err)
		}
		if info["allowed"] != "ALLOWED" || info["token"].(map[string]any)["contract_id"] != "C-T3" {
			t.Errorf("authorization %v", info)
		}
		if r := e211.Requests(sim.PathHas(http.MethodPost, "/ocpi/2.1.1/emsp/tokens/T3/authorize")); len(r) != 1 {
			t.Errorf("the 2.1.1 eMSP was asked %d times", len(r))
		}

		// The 2.1.1 eMSP pulls its sessions and CDRs.
		var sessions, cdrs []map[string]any
		if _, err := e211.Do(ctx(t), http.MethodGet, base2(t, e211.Platform, "sessions"), nil, &sessions); err != nil || len(sessions) != 1 || sessions[0]["auth_id"] != "C-T2" {
			t.Errorf("2.1.1 sessions pull: %v %v", err, sessions)
		}
		if _, err := e211.Do(ctx(t), http.MethodGet, base2(t, e211.Platform, "cdrs"), nil, &cdrs); err != nil || len(cdrs) != 1 || cdrs[0]["stop_date_time"] == nil {
			t.Errorf("2.1.1 CDRs pull: %v %v", err, cdrs)
		}

		// The 2.1.1 eMSP starts a session on the 2.2.1 CPO.
		uid, resp, err := e211.SendCommand(ctx(t), "START_SESSION", map[string]any{"token": t3, "location_id": "LOC9", "evse_uid": "E1"}, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 || strings.Contains(string(resp.Body), "timeout") {
			t.Fatalf("2.1.1 START_SESSION: %v %s", err, bodyOf(resp))
		}
		var answer map[string]any
		if err := json.Unmarshal(resp.Envelope.Data, &answer); err != nil || answer["result"] != "ACCEPTED" {
			t.Errorf("answer %s", resp.Body)
		}
		if tok := neu.Commands()[0].Body["token"].(map[string]any); tok["country_code"] != "NL" || tok["contract_id"] != "C-T3" {
			t.Errorf("the 2.2.1 CPO got the token %v", tok)
		}
		if res, err := e211.WaitResult(ctx(t), uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("result %q %v", res, err)
		}
		if r := e211.Results(uid); len(r) != 1 || len(r[0].Body) != 1 {
			t.Errorf("2.1.1 result %v", r)
		}
		neu.Wait()
		if err := e211.Until(ctx(t), func() bool { return e211.Sessions() == 2 }); err != nil {
			t.Fatal(err)
		}
		hubtest.CheckLegacyRequests(t, e211.Platform)
	})
}
