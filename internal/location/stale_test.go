package location_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// mustStale checks that an update was answered as ignored: HTTP 200,
// status_code 1000, a status_message saying so.

// evseOf returns an EVSE of the hub's copy of LOC1.
func evseOf(t *testing.T, b *bundle, uid string) map[string]any {
	t.Helper()
	resp, data := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1/"+uid, nil)
	hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
	return data
}

// TestStaleLocationUpdates: an EVSE PATCH, an EVSE PUT, a connector PATCH and
// a whole-location PUT older than the stored object change nothing (status
// and last_updated stay), are answered 1000, are counted and never reach the
// eMSPs; an update with the same last_updated is applied; a duplicate of the
// current state is harmless.
func TestStaleLocationUpdates(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putT1(t)
		b.putLocation(t, b.CPO, "CP1", "LOC1", 0, "E1:AVAILABLE", "E2:AVAILABLE")
		if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(10)}); err != nil {
			t.Fatal(err)
		}

		// An older EVSE PATCH: the status and the time stay.
		resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"status": "AVAILABLE", "last_updated": hubtest.Stamp(5)}, nil, "LOC1", "E1")
		hubtest.MustStale(t, "older EVSE PATCH", resp, err)
		if e := evseOf(t, b, "E1"); e["status"] != "CHARGING" || e["last_updated"] != hubtest.Stamp(10) {
			t.Errorf("after an older PATCH the EVSE is %v at %v, want CHARGING at %s", e["status"], e["last_updated"], hubtest.Stamp(10))
		}
		// An older whole-location PUT, an older EVSE PUT and an older
		// connector PATCH.
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut,
			locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(3), "E1:BLOCKED", "E2:BLOCKED"), nil, "LOC1")
		hubtest.MustStale(t, "older location PUT", resp, err)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, evseJSON("E1", "OUTOFORDER", hubtest.Stamp(7)), nil, "LOC1", "E1")
		hubtest.MustStale(t, "older EVSE PUT", resp, err)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"max_amperage": 16, "last_updated": hubtest.Stamp(-1)}, nil, "LOC1", "E2", "1")
		hubtest.MustStale(t, "older connector PATCH", resp, err)
		if e := evseOf(t, b, "E2"); e["status"] != "AVAILABLE" {
			t.Errorf("E2 is %v after stale updates, want AVAILABLE", e["status"])
		}
		if c := evseOf(t, b, "E2/1"); c["max_amperage"] != float64(32) {
			t.Errorf("connector E2/1 max_amperage %v after a stale PATCH, want 32", c["max_amperage"])
		}
		if got := b.h.StaleUpdates(t, "locations"); got != 4 {
			t.Errorf("ocpihub_stale_updates_total{module=locations} = %v, want 4", got)
		}

		// The same last_updated is applied (two changes in one second);
		// sent again, it changes nothing and goes nowhere.
		for range 2 {
			if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": "BLOCKED", "last_updated": hubtest.Stamp(10)}); err != nil {
				t.Fatal(err)
			}
		}
		if e := evseOf(t, b, "E1"); e["status"] != "BLOCKED" {
			t.Errorf("a PATCH with the stored last_updated was not applied: E1 is %v", e["status"])
		}

		// A later change is delivered after anything queued before it: once
		// it arrived, a broadcast of a stale update would have too.
		if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": "AVAILABLE", "last_updated": hubtest.Stamp(20)}); err != nil {
			t.Fatal(err)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "the later change at "+e.Name(), func() bool {
				return e.EVSEStatus("NL", "CP1", "LOC1", "E1") == "AVAILABLE" &&
					len(e.Requests(sim.PathHas(http.MethodPatch, "/LOC1/E1"))) >= 3
			})
			var got []string
			for _, r := range e.Requests(sim.PathHas("", "/emsp/locations/NL/CP1/LOC1")) {
				var body map[string]any
				_ = json.Unmarshal(r.Body, &body)
				got = append(got, r.Method+" "+r.Path[strings.Index(r.Path, "LOC1"):]+" "+str(body["status"])+" "+str(body["last_updated"]))
			}
			want := []string{
				"PUT LOC1  " + hubtest.Stamp(0),
				"PATCH LOC1/E1 CHARGING " + hubtest.Stamp(10),
				"PATCH LOC1/E1 BLOCKED " + hubtest.Stamp(10),
				"PATCH LOC1/E1 AVAILABLE " + hubtest.Stamp(20),
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s received:\n%s\nwant:\n%s", e.Name(), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}, fastPush(5))
}

// TestStaleTariffPut: an older whole tariff is ignored and not broadcast.
func TestStaleTariffPut(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if err := b.CPO.PutTariff(b.ctx, "T1", hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(10))); err != nil {
			t.Fatal(err)
		}
		old := hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(5))
		old["currency"] = "EUR"
		resp, err := b.CPO.Push(b.ctx, "tariffs", http.MethodPut, old, nil, "T1")
		hubtest.MustStale(t, "older tariff PUT", resp, err)
		resp, data := hubGet(t, b.CPO.Platform, "tariffs", "RECEIVER", "/NL/CP1/T1", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if data["currency"] != "INR" || data["last_updated"] != hubtest.Stamp(10) {
			t.Errorf("hub's tariff after an older PUT: %s", resp.Envelope.Data)
		}
		if got := b.h.StaleUpdates(t, "tariffs"); got != 1 {
			t.Errorf("ocpihub_stale_updates_total{module=tariffs} = %v, want 1", got)
		}
		// Same time, other content: applied.
		same := hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(10))
		same["currency"] = "USD"
		resp, err = b.CPO.Push(b.ctx, "tariffs", http.MethodPut, same, nil, "T1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		waitState(t, b.ctx, b.EMSP.Platform, "the tariff with the same last_updated", func() bool {
			tt := b.EMSP.Tariff("NL", "CP1", "T1")
			return tt != nil && tt["currency"] == "USD"
		})
		for _, r := range b.EMSP.Requests(sim.PathHas(http.MethodPut, "/tariffs/NL/CP1/T1")) {
			if strings.Contains(string(r.Body), "EUR") {
				t.Errorf("the stale tariff reached eMSP One: %s", r.Body)
			}
		}
	}, fastPush(5))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
