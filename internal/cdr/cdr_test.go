package cdr_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// bundle is the usual hubtest.Bundle.
type bundle struct{ *hubtest.Bundle }

// fast is what each configures (events recorded, fast retries), for the
// tests that start their hubs with hubtest.Each.
var fast = hubtest.Configure(true, nil)

// each runs fn in parallel on each engine, on a bundle of a hub started
// like fast and then with opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	hubtest.EachBundle(t, nil, setup, fn, opts...)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	return &bundle{hubtest.NewBundle(t, h, 60*time.Second)}
}

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func ts(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }

// cdrJSON is a CDR of CP1 for session sid, for a token of EM1.
func cdrJSON(id, sid, cost string) map[string]any {
	return map[string]any{
		"country_code": "IN", "party_id": "CP1", "id": id, "start_date_time": ts(0), "end_date_time": ts(time.Hour),
		"session_id": sid, "authorization_reference": "REF-" + sid,
		"cdr_token":   map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "TOK1", "type": "RFID", "contract_id": "C1"},
		"auth_method": "COMMAND",
		"cdr_location": map[string]any{"id": "LOC1", "address": "MG Road 1", "city": "Bengaluru", "country": "IND",
			"coordinates": map[string]any{"latitude": "12.97160", "longitude": "77.59460"}, "evse_uid": "E1", "evse_id": "IN*CP1*EE1",
			"connector_id": "1", "connector_standard": "IEC_62196_T2", "connector_format": "SOCKET", "connector_power_type": "AC_3_PHASE"},
		"currency":         "INR",
		"charging_periods": []any{map[string]any{"start_date_time": ts(0), "dimensions": []any{map[string]any{"type": "ENERGY", "volume": 7.5}}}},
		"total_cost":       map[string]any{"excl_vat": json.Number(cost)}, "total_energy": 7.5, "total_time": 1,
		"last_updated": ts(time.Hour), "x_meter": "kept",
	}
}

func sessionJSON(id, cost string) map[string]any {
	return map[string]any{
		"country_code": "IN", "party_id": "CP1", "id": id, "start_date_time": ts(0), "end_date_time": ts(time.Hour), "kwh": 7.5,
		"cdr_token":   map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "TOK1", "type": "RFID", "contract_id": "C1"},
		"auth_method": "COMMAND", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
		"total_cost": map[string]any{"excl_vat": json.Number(cost)}, "status": "COMPLETED", "last_updated": ts(time.Hour),
	}
}

func (b *bundle) post(t *testing.T, p *sim.Platform, body any) *ocpiclient.Response {
	t.Helper()
	base, _ := p.HubEndpoint("cdrs", "RECEIVER")
	resp, err := p.Raw(b.Ctx, http.MethodPost, base, body, nil)
	if resp == nil {
		t.Fatal(err)
	}
	return resp
}

// TestCDRRoutedAndImmutable: a CDR is stored (201, Location the CPO can
// GET), routed to its token's eMSP only (whose Location is kept), linked to
// its session with the costs compared; a repeat is 1000, a changed repeat
// 2001; credit CDRs are accepted; each eMSP pulls only its own.
func TestCDRRoutedAndImmutable(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if err := b.CPO.PutSession(b.Ctx, sessionJSON("S1", "150.00")); err != nil {
			t.Fatal(err)
		}
		resp := hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR1", "S1", "150")), nil, http.StatusCreated, 1000)
		loc := resp.Header.Get("Location")
		if !strings.HasSuffix(loc, "/ocpi/2.2.1/cpo/cdrs/IN/CP1/CDR1") || !strings.HasPrefix(loc, b.H.PublicURL()) {
			t.Fatalf("Location %q", loc)
		}
		got, err := b.CPO.Raw(b.Ctx, http.MethodGet, loc, nil, nil)
		hubtest.MustStatus(t, got, err, http.StatusOK, 1000)
		var stored map[string]any
		_ = json.Unmarshal(got.Envelope.Data, &stored)
		if stored["id"] != "CDR1" || stored["x_meter"] != "kept" {
			t.Errorf("stored CDR: %s", got.Body)
		}
		got, err = b.CPO2.Raw(b.Ctx, http.MethodGet, loc, nil, nil)
		hubtest.MustStatus(t, got, err, http.StatusNotFound, 2000)

		// Routed to EM1 from CP1; its Location is kept.
		reqs, err := b.EMSP.WaitFor(b.Ctx, 1, sim.PathHas(http.MethodPost, "/emsp/cdrs"))
		if err != nil {
			t.Fatal(err)
		}
		if hd := reqs[0].Header; hd.Get("OCPI-from-party-id") != "CP1" || hd.Get("OCPI-to-party-id") != "EM1" {
			t.Errorf("CDR push from %s to %s", hd.Get("OCPI-from-party-id"), hd.Get("OCPI-to-party-id"))
		}
		hubtest.Eventually(t, b.Ctx, "the eMSP's Location", func() bool {
			c, err := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "CDR1"})
			return err == nil && c.EMSPLocation == b.EMSP.URL()+"/ocpi/2.2.1/emsp/cdrs/1"
		})
		c, _ := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "CDR1"})
		if !c.SessionKnown || c.CostCheck != "match" {
			t.Errorf("link to the session: known %v, cost %q", c.SessionKnown, c.CostCheck)
		}

		// Repeats: the same CDR is 1000 again; a changed one 2001, naming
		// the field; nothing stored or sent again.
		resp = hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR1", "S1", "150")), nil, http.StatusOK, 1000)
		if resp.Header.Get("Location") != loc {
			t.Errorf("repeat Location %q", resp.Header.Get("Location"))
		}
		resp = hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR1", "S1", "160")), nil, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "total_cost" {
			t.Errorf("conflict field: %s", resp.Body)
		}
		if c, _ := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "CDR1"}); c.CDR.TotalCost.ExclVAT.String() != "150" {
			t.Errorf("stored CDR changed: %s", c.Body)
		}

		// A credit CDR, and a CDR whose cost differs from its session's.
		credit := cdrJSON("CDR1-C", "S1", "-150")
		credit["credit"], credit["credit_reference_id"] = true, "CDR1"
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, credit), nil, http.StatusCreated, 1000)
		if err := b.CPO.PutSession(b.Ctx, sessionJSON("S2", "100")); err != nil {
			t.Fatal(err)
		}
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR2", "S2", "120")), nil, http.StatusCreated, 1000)
		if c, _ := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "CDR2"}); c.CostCheck != "mismatch" {
			t.Errorf("cost check %q, want mismatch", c.CostCheck)
		}
		if v := counter(t, b.H, "ocpihub_cdr_cost_mismatch_total"); v != 1 {
			t.Errorf("mismatch counter = %v, want 1", v)
		}

		if _, err := b.EMSP.WaitFor(b.Ctx, 3, sim.PathHas(http.MethodPost, "/emsp/cdrs")); err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, d := range b.EMSP.CDRs() {
			ids = append(ids, d["id"].(string))
		}
		// Each CDR is a queue of its own: they may arrive in any order.
		sort.Strings(ids)
		if strings.Join(ids, ",") != "CDR1,CDR1-C,CDR2" {
			t.Errorf("eMSP received %v", ids)
		}
		created := b.Events.Events(event.CDRCreated)
		if len(created) != 3 || created[0].Data.(map[string]any)["cdr_id"] != "CDR1" || created[1].Data.(map[string]any)["credit"] != true {
			t.Errorf("cdr.created events: %v", created)
		}

		// Pulls: EM1 sees its three, EM2 none, a CPO may not.
		for _, c := range []struct {
			p    *sim.Platform
			want int
		}{{b.EMSP.Platform, 3}, {b.EMSP2.Platform, 0}} {
			base, _ := c.p.HubEndpoint("cdrs", "SENDER")
			resp, err := c.p.Raw(b.Ctx, http.MethodGet, base+"?limit=2", nil, nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
			var l []map[string]any
			_ = json.Unmarshal(resp.Envelope.Data, &l)
			if resp.Header.Get("X-Total-Count") != strconv.Itoa(c.want) || len(l) != min(c.want, 2) {
				t.Errorf("%s pulls %d of %s", c.p.Name(), len(l), resp.Header.Get("X-Total-Count"))
			}
		}
		base, _ := b.EMSP.HubEndpoint("cdrs", "SENDER")
		resp, err = b.CPO.Raw(b.Ctx, http.MethodGet, base, nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)

		// Go lookups the payment flows use.
		byRef, err := b.H.CDRs.FindByAuthorizationReference(b.Ctx, "REF-S2")
		if err != nil || len(byRef) != 1 || byRef[0].ID != "CDR2" {
			t.Errorf("FindByAuthorizationReference: %v %v", byRef, err)
		}
		bySession, err := b.H.CDRs.FindBySession(b.Ctx, session.Ref{CountryCode: "IN", PartyID: "CP1", ID: "S1"})
		if err != nil || len(bySession) != 2 {
			t.Errorf("FindBySession: %d %v", len(bySession), err)
		}
	})
}

// counter reads a counter from the hub's registry.
func counter(t *testing.T, h *hubtest.Hub, name string) float64 {
	t.Helper()
	mfs, err := h.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestCDRValidation: malformed CDRs are refused with the field named, and
// nothing is stored or routed.
func TestCDRValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		edit := func(f func(m map[string]any)) map[string]any {
			m := cdrJSON("BAD", "S1", "10")
			f(m)
			return m
		}
		cases := []struct {
			name       string
			body       any
			http, code int
			field      string
		}{
			{"another CPO's", edit(func(m map[string]any) { m["party_id"] = "CP2" }), 404, 2000, ""},
			{"id 37", edit(func(m map[string]any) { m["id"] = strings.Repeat("i", 37) }), 200, 2001, "id"},
			{"credit without reference", edit(func(m map[string]any) { m["credit"] = true }), 200, 2001, "credit_reference_id"},
			{"no periods", edit(func(m map[string]any) { m["charging_periods"] = []any{} }), 200, 2001, "charging_periods"},
			{"session-only dimension", edit(func(m map[string]any) {
				m["charging_periods"] = []any{map[string]any{"start_date_time": ts(0), "dimensions": []any{map[string]any{"type": "POWER", "volume": 7}}}}
			}), 200, 2001, "charging_periods[0].dimensions[0].type"},
			{"location address", edit(func(m map[string]any) { m["cdr_location"].(map[string]any)["address"] = strings.Repeat("a", 46) }), 200, 2001, "cdr_location.address"},
			{"negative cost", edit(func(m map[string]any) { m["total_cost"] = map[string]any{"excl_vat": -1} }), 200, 2001, "total_cost.excl_vat"},
			{"cost as text", edit(func(m map[string]any) { m["total_cost"] = map[string]any{"excl_vat": "ten"} }), 200, 2001, "total_cost.excl_vat"},
			{"not an object", []byte(`[]`), 200, 2001, "body"},
			{"not JSON", []byte(`{"id":`), 400, 2001, ""},
		}
		for _, c := range cases {
			hubtest.MustError(t, c.name, b.post(t, b.CPO.Platform, c.body), nil, c.http, c.code, c.field)
		}
		base, _ := b.EMSP.HubEndpoint("cdrs", "RECEIVER")
		resp, err := b.EMSP.Raw(b.Ctx, http.MethodPost, base, cdrJSON("X", "S1", "1"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		if _, err := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "BAD"}); err == nil {
			t.Error("an invalid CDR was stored")
		}
		entries, _ := b.H.Hub.Outbox(b.Ctx, 0)
		for _, e := range entries {
			if e.Module == "cdrs" {
				t.Errorf("an invalid CDR was queued: %+v", e)
			}
		}
		if n := len(b.Events.Events(event.CDRCreated)); n != 0 {
			t.Errorf("%d cdr.created events", n)
		}
	})
}
