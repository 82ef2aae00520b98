package session_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is the usual hubtest.Bundle; CPO One publishes LOC1 (EVSE E1).
type bundle struct{ *hubtest.Bundle }

// each runs fn in parallel on each engine, on a bundle of a hub whose
// forwarded requests give up after a second, started with opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	hubtest.EachBundle(t, func(c *app.Config) { c.ForwardTimeout = time.Second }, setup, fn, opts...)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{hubtest.NewBundle(t, h, 60*time.Second)}
	if err := b.CPO.PublishLocation(b.Ctx, "LOC1", "E1"); err != nil {
		t.Fatal(err)
	}
	return b
}

// sessionJSON is an ACTIVE session of CP1 at LOC1/E1/1 for a token of
// owner (cc/pid).
func sessionJSON(id, cc, pid, status string, at time.Time) map[string]any {
	ts := at.UTC().Format(time.RFC3339)
	return map[string]any{
		"country_code": "IN", "party_id": "CP1", "id": id, "start_date_time": ts, "kwh": 0,
		"cdr_token":   map[string]any{"country_code": cc, "party_id": pid, "uid": "TOK1", "type": "RFID", "contract_id": "C1"},
		"auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
		"status": status, "last_updated": ts, "authorization_reference": "REF-" + id, "x_cpo_note": "kept",
	}
}

func period(at time.Time, kwh float64) map[string]any {
	return map[string]any{"start_date_time": at.UTC().Format(time.RFC3339), "dimensions": []any{map[string]any{"type": "ENERGY", "volume": kwh}}}
}

func (b *bundle) put(t *testing.T, p *sim.Platform, method, path string, body any) *ocpiclient.Response {
	t.Helper()
	resp, err := p.Raw(b.Ctx, method, hubtest.HubURL(t, p, "sessions", "RECEIVER", path), body, nil)
	if resp == nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func list(t *testing.T, resp *ocpiclient.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(resp.Envelope.Data, &out); err != nil {
		t.Fatalf("not a list: %s", resp.Body)
	}
	return out
}

// TestSessionLifecycle drives a session through PUT and PATCHes: it reaches
// only the token's eMSP, in order and addressed from the CPO; charging
// periods append; session.started and session.stopped fire once each; only
// the owners see it.
func TestSessionLifecycle(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/S1", sessionJSON("S1", "DE", "EM1", "ACTIVE", t0)), nil, http.StatusCreated, 1000)
		for i := 1; i <= 2; i++ {
			patch := map[string]any{"kwh": 2 * i, "charging_periods": []any{period(t0.Add(time.Duration(i)*time.Minute), float64(2*i))},
				"last_updated": t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}
			hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1", patch), nil, http.StatusOK, 1000)
		}
		end := t0.Add(30 * time.Minute).Format(time.RFC3339)
		stop := map[string]any{"status": "COMPLETED", "end_date_time": end, "kwh": 7.5, "last_updated": end,
			"total_cost": map[string]any{"excl_vat": 150, "incl_vat": 177}}
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1", stop), nil, http.StatusOK, 1000)
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1", map[string]any{"kwh": 7.6, "charging_periods": nil, "last_updated": end}), nil, http.StatusOK, 1000)

		// The eMSP got the PUT and the PATCHes in order, from the CPO.
		if _, err := b.EMSP.WaitFor(b.Ctx, 5, sim.PathHas("", "/emsp/sessions/IN/CP1/S1")); err != nil {
			t.Fatal(err)
		}
		got := b.EMSP.Requests(sim.PathHas("", "/emsp/sessions/IN/CP1/S1"))
		methods := []string{}
		for _, r := range got {
			methods = append(methods, r.Method)
		}
		if strings.Join(methods, ",") != "PUT,PATCH,PATCH,PATCH,PATCH" {
			t.Errorf("eMSP got %v", methods)
		}
		if hd := got[0].Header; hd.Get("OCPI-from-party-id") != "CP1" || hd.Get("OCPI-to-party-id") != "EM1" || hd.Get("OCPI-to-country-code") != "DE" {
			t.Errorf("session push addressed to %s/%s from %s", hd.Get("OCPI-to-country-code"), hd.Get("OCPI-to-party-id"), hd.Get("OCPI-from-party-id"))
		}
		mine := b.EMSP.Session("IN", "CP1", "S1")
		if mine["status"] != "COMPLETED" || len(mine["charging_periods"].([]any)) != 2 || mine["x_cpo_note"] != "kept" {
			t.Errorf("eMSP's copy: %v", mine)
		}
		if n := len(b.EMSP2.Requests(sim.PathHas("", "/sessions/"))); n != 0 {
			t.Errorf("another eMSP got %d session requests", n)
		}

		// The hub's copy: periods appended, final state.
		resp := hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodGet, "/IN/CP1/S1", nil), nil, http.StatusOK, 1000)
		var stored map[string]any
		_ = json.Unmarshal(resp.Envelope.Data, &stored)
		if len(stored["charging_periods"].([]any)) != 2 || stored["status"] != "COMPLETED" || stored["kwh"] != 7.6 {
			t.Errorf("stored session: %s", resp.Body)
		}

		// Events: one started, one stopped, with the seed's fields.
		started, stopped := b.Events.Events(event.SessionStarted), b.Events.Events(event.SessionStopped)
		if len(started) != 1 || len(stopped) != 1 {
			t.Fatalf("%d session.started, %d session.stopped events, want 1 each", len(started), len(stopped))
		}
		d := started[0].Data.(map[string]any)
		if d["session_id"] != "S1" || d["location_id"] != "LOC1" || d["evse_id"] != "IN*CP1*EE1" || d["authorization_reference"] != "REF-S1" {
			t.Errorf("session.started data: %v", d)
		}
		if ps := started[0].Parties; len(ps) != 2 || ps[0].PartyID != "CP1" || ps[1].PartyID != "EM1" {
			t.Errorf("session.started parties: %v", ps)
		}
		if d := stopped[0].Data.(map[string]any); d["status"] != "COMPLETED" || d["timestamp"].(interface{ String() string }).String() != end ||
			d["evse_id"] != "IN*CP1*EE1" {
			t.Errorf("session.stopped data: %v", d)
		}

		// Who sees it: the CPO and the token's eMSP only.
		hubtest.MustStatus(t, b.put(t, b.CPO2.Platform, http.MethodGet, "/IN/CP1/S1", nil), nil, http.StatusNotFound, 2000)
		hubtest.MustStatus(t, b.put(t, b.CPO2.Platform, http.MethodPatch, "/IN/CP1/S1", map[string]any{"kwh": 1, "last_updated": end}), nil, http.StatusNotFound, 2000)
		resp, err := b.EMSP.Raw(b.Ctx, http.MethodGet, hubtest.HubURL(t, b.EMSP.Platform, "sessions", "SENDER", "?date_from="+t0.Format(time.RFC3339)), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if l := list(t, resp); len(l) != 1 || l[0]["id"] != "S1" {
			t.Errorf("eMSP's list: %s", resp.Body)
		}
		resp, err = b.EMSP.Raw(b.Ctx, http.MethodGet, hubtest.HubURL(t, b.EMSP.Platform, "sessions", "SENDER", "?date_from="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if l := list(t, resp); len(l) != 0 {
			t.Errorf("date_from ignored: %s", resp.Body)
		}
		resp, err = b.EMSP2.Raw(b.Ctx, http.MethodGet, hubtest.HubURL(t, b.EMSP2.Platform, "sessions", "SENDER", ""), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if l := list(t, resp); len(l) != 0 {
			t.Errorf("another eMSP sees %d sessions", len(l))
		}
		resp, err = b.CPO.Raw(b.Ctx, http.MethodGet, hubtest.HubURL(t, b.EMSP2.Platform, "sessions", "SENDER", ""), nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)

		// Go lookups the payment flows use.
		found, err := b.H.Sessions.FindByAuthorizationReference(b.Ctx, "REF-S1")
		if err != nil || len(found) != 1 || found[0].Status != "COMPLETED" || found[0].Owner.PartyID != "EM1" {
			t.Errorf("FindByAuthorizationReference: %v %v", found, err)
		}
	})
}

// TestSessionOfOwnToken: a session of ocpihub's own eMSP token is kept,
// emitted and pushed to nobody.
func TestSessionOfOwnToken(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/OWN1", sessionJSON("OWN1", "IN", "OHE", "ACTIVE", t0)), nil, http.StatusCreated, 1000)
		if _, err := b.Events.Wait(b.Ctx, event.SessionStarted, 1); err != nil {
			t.Fatal(err)
		}
		found, err := b.H.Sessions.FindByAuthorizationReference(b.Ctx, "REF-OWN1")
		if err != nil || len(found) != 1 || found[0].Owner.PartyID != "OHE" {
			t.Fatalf("own session: %v %v", found, err)
		}
		entries, err := b.H.Hub.Outbox(b.Ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Module == "sessions" {
				t.Errorf("own session queued for platform %d", e.PlatformID)
			}
		}
	})
}

// TestChargingPreferences: the eMSP's preferences reach the session's CPO
// and its answer comes back; another eMSP cannot address the session.
func TestChargingPreferences(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		s := sessionJSON("S2", "DE", "EM1", "ACTIVE", time.Now().Add(-time.Minute))
		if err := b.CPO.PutSession(b.Ctx, s); err != nil {
			t.Fatal(err)
		}
		prefs := map[string]any{"profile_type": "FAST", "energy_need": 20.5, "departure_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
		u := hubtest.HubURL(t, b.EMSP.Platform, "sessions", "SENDER", "/S2/charging_preferences")
		resp, err := b.EMSP.Raw(b.Ctx, http.MethodPut, u, prefs, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if string(resp.Envelope.Data) != `"ACCEPTED"` {
			t.Errorf("answer: %s", resp.Body)
		}
		got := b.CPO.Requests(sim.PathHas(http.MethodPut, "/cpo/sessions/S2/charging_preferences"))
		if len(got) != 1 || got[0].Header.Get("OCPI-from-party-id") != "EM1" || !strings.Contains(string(got[0].Body), `"profile_type":"FAST"`) {
			t.Fatalf("CPO got %+v", got)
		}
		resp, err = b.EMSP2.Raw(b.Ctx, http.MethodPut, u, prefs, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.EMSP.Raw(b.Ctx, http.MethodPut, u, map[string]any{"profile_type": "TURBO"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "profile_type" {
			t.Errorf("bad profile: %s", resp.Body)
		}
		if n := len(b.CPO.Requests(sim.PathHas(http.MethodPut, "/charging_preferences"))); n != 1 {
			t.Errorf("CPO got %d preference requests, want 1", n)
		}

		// A session id in mixed case, with its periods, named in another
		// case: the CPO is asked at the id as the session spells it.
		mixed := sessionJSON("s-Mixed3", "DE", "EM1", "ACTIVE", time.Now().Add(-time.Hour))
		mixed["charging_periods"] = []any{period(time.Now().Add(-time.Hour), 1), period(time.Now().Add(-30*time.Minute), 2)}
		if err := b.CPO.PutSession(b.Ctx, mixed); err != nil {
			t.Fatal(err)
		}
		resp, err = b.EMSP.Raw(b.Ctx, http.MethodPut, hubtest.HubURL(t, b.EMSP.Platform, "sessions", "SENDER", "/S-MIXED3/charging_preferences"), prefs, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if got := b.CPO.Requests(sim.PathHas(http.MethodPut, "/cpo/sessions/s-Mixed3/charging_preferences")); len(got) != 1 {
			t.Errorf("CPO asked at %v", b.CPO.Requests(sim.PathHas(http.MethodPut, "/charging_preferences")))
		}
	})
}

// TestSessionValidation: malformed pushes are refused with the field
// named, and change nothing.
func TestSessionValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		base := sessionJSON("S1", "DE", "EM1", "ACTIVE", t0)
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/S1", base), nil, http.StatusCreated, 1000)
		edit := func(f func(m map[string]any)) map[string]any {
			m := sessionJSON("S1", "DE", "EM1", "ACTIVE", t0)
			f(m)
			return m
		}
		lu := t0.Add(time.Minute).Format(time.RFC3339)
		cases := []struct {
			name, method, path string
			body               any
			http, code         int
			field              string
		}{
			{"id mismatch", "PUT", "/IN/CP1/S9", base, 200, 2001, "id"},
			{"party mismatch", "PUT", "/IN/CP1/S1", edit(func(m map[string]any) { m["party_id"] = "CP2" }), 200, 2001, "party_id"},
			{"foreign prefix", "PUT", "/IN/CP2/S1", base, 404, 2000, ""},
			{"status", "PUT", "/IN/CP1/S1", edit(func(m map[string]any) { m["status"] = "RESERVED" }), 200, 2001, "status"},
			{"cdr_token", "PUT", "/IN/CP1/S1", edit(func(m map[string]any) { delete(m, "cdr_token") }), 200, 2001, "cdr_token"},
			{"kwh text", "PUT", "/IN/CP1/S1", edit(func(m map[string]any) { m["kwh"] = "much" }), 200, 2001, "kwh"},
			{"end before start", "PUT", "/IN/CP1/S1", edit(func(m map[string]any) { m["end_date_time"] = t0.Add(-time.Hour).Format(time.RFC3339) }), 200, 2001, "end_date_time"},
			{"patch no last_updated", "PATCH", "/IN/CP1/S1", map[string]any{"kwh": 3}, 200, 2001, "last_updated"},
			{"patch changes id", "PATCH", "/IN/CP1/S1", map[string]any{"id": "S2", "last_updated": lu}, 200, 2001, "id"},
			{"patch bad period", "PATCH", "/IN/CP1/S1", map[string]any{"charging_periods": []any{map[string]any{"start_date_time": lu, "dimensions": []any{}}}, "last_updated": lu}, 200, 2001, "charging_periods[0].dimensions"},
			{"patch moves token", "PATCH", "/IN/CP1/S1", map[string]any{"cdr_token": map[string]any{"country_code": "FR", "party_id": "EM2", "uid": "X", "type": "RFID", "contract_id": "C"}, "last_updated": lu}, 200, 2001, "cdr_token"},
			{"patch status", "PATCH", "/IN/CP1/S1", map[string]any{"status": "DONE", "last_updated": lu}, 200, 2001, "status"},
			{"patch unknown", "PATCH", "/IN/CP1/S404", map[string]any{"kwh": 3, "last_updated": lu}, 404, 2000, ""},
			{"not JSON", "PUT", "/IN/CP1/S1", []byte("[1,"), 400, 2001, ""},
		}
		for _, c := range cases {
			hubtest.MustError(t, c.name, b.put(t, b.CPO.Platform, c.method, c.path, c.body), nil, c.http, c.code, c.field)
		}
		st, err := b.H.Sessions.Find(b.Ctx, sessionRef("IN", "CP1", "S1"))
		if err != nil || st.Status != "ACTIVE" || len(st.Session.ChargingPeriods) != 0 || st.Owner.PartyID != "EM1" {
			t.Errorf("stored session changed: %+v %v", st, err)
		}
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, sim.PathHas(http.MethodPut, "/emsp/sessions/IN/CP1/S1")); err != nil {
			t.Fatal(err)
		}
		if n := len(b.EMSP.Requests(sim.PathHas("", "/emsp/sessions/"))); n != 1 {
			t.Errorf("eMSP got %d session requests, want the one valid PUT", n)
		}
		if evs, err := b.Events.Wait(b.Ctx, event.SessionStarted, 1); err != nil || len(evs) != 1 {
			t.Errorf("%d session.started events (%v), want 1", len(evs), err)
		}
	})
}

func sessionRef(cc, pid, id string) session.Ref {
	return session.Ref{CountryCode: cc, PartyID: pid, ID: id}
}
