package legacy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// session211 is a 2.1.1 session at LOC1/E1/1 of a CPO for contract authID.
func session211(id, authID string, loc map[string]any, kwh any, status, at string) map[string]any {
	return map[string]any{"id": id, "start_datetime": "2026-01-01T10:00:00Z", "kwh": kwh, "auth_id": authID, "auth_method": "WHITELIST",
		"location": loc, "currency": "INR", "status": status, "last_updated": at}
}

// cdr211 is a 2.1.1 CDR of session id.
func cdr211(id, authID string, loc map[string]any) map[string]any {
	return map[string]any{"id": id, "start_date_time": "2026-01-01T10:00:00Z", "stop_date_time": "2026-01-01T11:00:00Z",
		"auth_id": authID, "auth_method": "WHITELIST", "location": loc, "currency": "INR",
		"charging_periods": []any{map[string]any{"start_date_time": "2026-01-01T10:00:00Z", "dimensions": []any{
			map[string]any{"type": "ENERGY", "volume": 12.5}, map[string]any{"type": "FLAT", "volume": 1}}}},
		"total_cost": 231.25, "total_energy": 12.5, "total_time": 1, "last_updated": "2026-01-01T11:00:00Z"}
}

// TestLegacyCPOSessions: a 2.1.1 CPO registers, pushes a location, a
// session and a CDR; the 2.2.1 eMSP whose token it names (by contract id)
// receives them in 2.2.1; that eMSP starts a session on the 2.1.1 CPO and
// gets the result and the session. A 2.0 CPO does the same, without the
// commands 2.0 lacks.
func TestLegacyCPOSessions(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		partners := startCast(t, h, oldCPO|twoCPO|emsp221)
		old, two, e22 := partners.old, partners.two, partners.e22
		tok := e22.NewToken("T1", "RFID", "ALLOWED")
		if _, err := e22.PutToken(ctx(t), tok); err != nil {
			t.Fatal(err)
		}
		// The legacy CPOs get the token in their version.
		waitFor(t, old.Platform, 1, http.MethodPut, "/cpo/tokens/DE/E22/T1")
		waitFor(t, two.Platform, 1, http.MethodPut, "/cpo/tokens/DE/E22/T1")
		if got := old.ReceivedToken("DE", "E22", "T1", "RFID"); got["auth_id"] != "C-T1" || got["contract_id"] != nil {
			t.Errorf("2.1.1 CPO token %v", got)
		}
		if r := old.Requests(sim.PathHas(http.MethodPut, "/cpo/tokens/DE/E22/T1")); strings.Contains(r[0].Query, "type") {
			t.Errorf("2.1.1 token URL with a type: %s", r[0].Query)
		}
		if got := two.ReceivedToken("DE", "E22", "T1", "RFID"); got["allow_whitelist"] != true || got["whitelist"] != nil {
			t.Errorf("2.0 CPO token %v", got)
		}

		// The 2.1.1 CPO: location, session, PATCH, CDR.
		loc := location211("LOC1", "2026-01-01T09:00:00Z")
		mustOK(t, "location", old.PutLocation(ctx(t), "LOC1", loc))
		sloc := location211("LOC1", "2026-01-01T09:00:00Z")
		mustOK(t, "session PUT", old.PutSession(ctx(t), session211("S1", "C-T1", sloc, 0, "ACTIVE", "2026-01-01T10:00:00Z")))
		waitFor(t, e22.Platform, 1, http.MethodPut, "/emsp/sessions/IN/OLD/S1")
		got := e22.Session("IN", "OLD", "S1")
		ct, _ := got["cdr_token"].(map[string]any)
		if got["country_code"] != "IN" || got["location_id"] != "LOC1" || got["evse_uid"] != "E1" || got["connector_id"] != "1" ||
			ct["uid"] != "T1" || ct["party_id"] != "E22" || ct["contract_id"] != "C-T1" || got["start_date_time"] != "2026-01-01T10:00:00Z" {
			t.Errorf("2.2.1 eMSP session %v", got)
		}
		mustOK(t, "session PATCH", old.PatchSession(ctx(t), "S1", map[string]any{"kwh": 12.5, "status": "COMPLETED",
			"end_datetime": "2026-01-01T11:00:00Z", "total_cost": 231.25}))
		if err := e22.Until(ctx(t), func() bool { return e22.Session("IN", "OLD", "S1")["status"] == "COMPLETED" }); err != nil {
			t.Fatal(err)
		}
		got = e22.Session("IN", "OLD", "S1")
		if cost, _ := got["total_cost"].(map[string]any); cost["excl_vat"] != 231.25 || got["end_date_time"] != "2026-01-01T11:00:00Z" || got["kwh"] != 12.5 {
			t.Errorf("patched session %v", got)
		}
		resp, err := old.PostCDR(ctx(t), cdr211("CDR1", "C-T1", sloc))
		if err != nil || resp.HTTPStatus != http.StatusCreated || !strings.Contains(resp.Header.Get("Location"), "/ocpi/2.1.1/cpo/cdrs/IN/OLD/CDR1") {
			t.Fatalf("CDR POST: %v %s %v", err, bodyOf(resp), resp.Header)
		}
		if _, err := e22.WaitFor(ctx(t), 1, func(sim.Request) bool { return len(e22.CDRs()) == 1 }); err != nil {
			t.Fatal(err)
		}
		c := e22.CDRs()[0]
		cl, _ := c["cdr_location"].(map[string]any)
		if c["end_date_time"] != "2026-01-01T11:00:00Z" || cl["evse_id"] != "IN*OLD*E1" || cl["connector_standard"] != "IEC_62196_T2" ||
			c["total_cost"].(map[string]any)["excl_vat"] != 231.25 || strings.Contains(toJSON(c), "FLAT") {
			t.Errorf("2.2.1 eMSP CDR %v", c)
		}
		var hubCDR map[string]any
		if _, err := old.Do(ctx(t), http.MethodGet, resp.Header.Get("Location"), nil, &hubCDR); err != nil || hubCDR["stop_date_time"] != "2026-01-01T11:00:00Z" {
			t.Errorf("the CDR at its Location: %v %v", err, hubCDR)
		}

		// The 2.2.1 eMSP starts a session on the 2.1.1 CPO.
		uid, resp, err := e22.SendCommand(ctx(t), "START_SESSION", map[string]any{"token": tok, "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1"}, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("START_SESSION: %v %s", err, bodyOf(resp))
		}
		var answer ocpi.CommandResponse
		if err := json.Unmarshal(resp.Envelope.Data, &answer); err != nil || answer.Result != "ACCEPTED" || answer.Timeout == nil || *answer.Timeout != 60 {
			t.Errorf("START_SESSION answer %s", resp.Body)
		}
		cmds := old.Commands()
		if len(cmds) != 1 {
			t.Fatalf("the 2.1.1 CPO got %d commands", len(cmds))
		}
		body := cmds[0].Body
		if u, _ := body["response_url"].(string); !strings.Contains(u, "/ocpi/2.1.1/cpo/commands/START_SESSION/") || body["connector_id"] != nil ||
			body["token"].(map[string]any)["auth_id"] != "C-T1" {
			t.Errorf("the 2.1.1 CPO got %v", body)
		}
		if res, err := e22.WaitResult(ctx(t), uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("START_SESSION result %q %v", res, err)
		}
		old.Wait()
		if errs := old.Errors(); len(errs) > 0 {
			t.Fatalf("2.1.1 CPO: %v", errs)
		}
		if err := e22.Until(ctx(t), func() bool { return e22.Sessions() == 2 }); err != nil {
			t.Fatal(err)
		}

		// A 2.0 CPO: location, session, CDR in 2.0 shapes.
		loc20 := location211("LOC2", "")
		delete(loc20, "last_updated")
		for _, e := range loc20["evses"].([]any) {
			em := e.(map[string]any)
			delete(em, "last_updated")
			for _, k := range em["connectors"].([]any) {
				km := k.(map[string]any)
				delete(km, "last_updated")
				km["status"] = "AVAILABLE"
			}
		}
		mustOK(t, "2.0 location", two.PutLocation(ctx(t), "LOC2", loc20))
		waitFor(t, e22.Platform, 1, http.MethodPut, "/emsp/locations/IN/TWO/LOC2")
		if l := e22.Location("IN", "TWO", "LOC2"); l["last_updated"] == nil || l["evses"] == nil {
			t.Errorf("2.0 location at the 2.2.1 eMSP: %v", l)
		}
		s20 := session211("S2", "C-T1", loc20, "3.5", "ACTIVE", "2026-01-02T10:00:00Z")
		mustOK(t, "2.0 session", two.PutSession(ctx(t), s20))
		waitFor(t, e22.Platform, 1, http.MethodPut, "/emsp/sessions/IN/TWO/S2")
		if s := e22.Session("IN", "TWO", "S2"); s["kwh"] != 3.5 || s["cdr_token"] == nil {
			t.Errorf("2.0 session at the 2.2.1 eMSP: %v", s)
		}
		c20 := cdr211("CDR2", "C-T1", loc20)
		for _, k := range []string{"total_energy", "total_time"} {
			delete(c20, k)
		}
		c20["total_cost"] = "231.25"
		c20["total_usage"] = []any{map[string]any{"type": "ENERGY", "volume": "12.5"}, map[string]any{"type": "TIME", "volume": "1"}}
		if resp, err := two.PostCDR(ctx(t), c20); err != nil {
			t.Fatalf("2.0 CDR: %v %s", err, bodyOf(resp))
		}
		if _, err := e22.WaitFor(ctx(t), 1, func(sim.Request) bool { return len(e22.CDRs()) == 2 }); err != nil {
			t.Fatal(err)
		}
		var c2 map[string]any
		for _, c := range e22.CDRs() {
			if c["id"] == "CDR2" {
				c2 = c
			}
		}
		if c2["total_energy"] != 12.5 || c2["total_time"] != float64(1) || c2["total_cost"].(map[string]any)["excl_vat"] != 231.25 {
			t.Errorf("2.0 CDR at the 2.2.1 eMSP: %v", c2)
		}
		// 2.0 has no commands: a START_SESSION on its location fails
		// clearly at the hub.
		_, resp, err = e22.SendCommand(ctx(t), "START_SESSION", map[string]any{"token": tok, "location_id": "LOC2", "evse_uid": "E1"}, nil)
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode == 1000 || len(two.Commands()) != 0 {
			t.Errorf("START_SESSION on a 2.0 CPO: %v %s", err, bodyOf(resp))
		}

		// A session naming a contract the hub does not know cannot be
		// routed: a clear 2001 naming auth_id, nothing stored.
		resp, err = old.Push(ctx(t), "sessions", http.MethodPut, session211("S9", "C-UNKNOWN", sloc, 0, "ACTIVE", "2026-01-01T10:00:00Z"), nil, "S9")
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 2001 || !strings.Contains(string(resp.Body), "auth_id") {
			t.Errorf("unknown contract: %v %s", err, bodyOf(resp))
		}
		hubtest.CheckLegacyRequests(t, old.Platform)
	})
}
