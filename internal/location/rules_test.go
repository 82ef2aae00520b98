package location_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestEVSELifecycle covers the nested writes: an EVSE and a connector
// created by PUT inside their location, PATCH merges, the last_updated
// cascade, REMOVED EVSEs kept, and a location with every EVSE REMOVED still
// in the directory.
func TestEVSELifecycle(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putLocation(t, b.CPO, "CP1", "LOC1", 0, "E1:AVAILABLE")
		resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut, evseJSON("E2", "AVAILABLE", hubtest.Stamp(5)), nil, "LOC1", "E2")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, connectorJSON("2", "IEC_62196_T2_COMBO", "DC", 920, 200, hubtest.Stamp(7)), nil, "LOC1", "E2", "2")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"tariff_ids": []string{"T9"}, "last_updated": hubtest.Stamp(8)}, nil, "LOC1", "E2", "2")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		// Older than the location's cascaded last_updated: ignored as stale.
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"name": "Stale name", "last_updated": hubtest.Stamp(3)}, nil, "LOC1")
		hubtest.MustStale(t, "location PATCH older than a child's change", resp, err)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"name": "Renamed", "last_updated": hubtest.Stamp(8)}, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)

		_, loc := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1", nil)
		if loc["name"] != "Renamed" || loc["address"] != "Main Street 1" {
			t.Errorf("PATCH did not merge: %v", loc)
		}
		if loc["last_updated"] != hubtest.Stamp(8) {
			t.Errorf("location last_updated = %v, want the latest child's %s (cascade)", loc["last_updated"], hubtest.Stamp(8))
		}
		_, e2 := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1/E2", nil)
		conns, _ := e2["connectors"].([]any)
		if len(conns) != 2 || e2["last_updated"] != hubtest.Stamp(8) {
			t.Fatalf("EVSE E2 after connector PUT/PATCH: %v", e2)
		}
		if c := conns[1].(map[string]any); c["tariff_ids"].([]any)[0] != "T9" || c["last_updated"] != hubtest.Stamp(8) {
			t.Errorf("connector after PATCH: %v", c)
		}

		// Every EVSE REMOVED: the location stays, in the directory too.
		for _, uid := range []string{"E1", "E2"} {
			if err := b.CPO.PatchEVSE(b.ctx, "LOC1", uid, map[string]any{"status": "REMOVED", "last_updated": hubtest.Stamp(9)}); err != nil {
				t.Fatal(err)
			}
		}
		resp, _ = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "", nil)
		var list []map[string]any
		_ = json.Unmarshal(resp.Envelope.Data, &list)
		if len(list) != 1 || strings.Count(strings.ReplaceAll(string(resp.Envelope.Data), " ", ""), `"status":"REMOVED"`) != 2 {
			t.Errorf("a location whose EVSEs are all REMOVED must stay listed: %s", resp.Body)
		}

		// The eMSPs end with the same state as the hub, PATCHes included.
		waitState(t, b.ctx, b.EMSP2.Platform, "final state at eMSP Two", func() bool {
			return b.EMSP2.EVSEStatus("NL", "CP1", "LOC1", "E1") == "REMOVED" && b.EMSP2.EVSEStatus("NL", "CP1", "LOC1", "E2") == "REMOVED"
		})
		got := b.EMSP2.Location("NL", "CP1", "LOC1")
		if got["name"] != "Renamed" {
			t.Errorf("eMSP copy: %v", got)
		}
		patches := b.EMSP2.Requests(sim.PathHas(http.MethodPatch, "/emsp/locations/NL/CP1/LOC1/E1"))
		var body map[string]any
		if len(patches) == 1 {
			_ = json.Unmarshal(patches[0].Body, &body)
		}
		if len(patches) != 1 || body["status"] != "REMOVED" || body["last_updated"] != hubtest.Stamp(9) || len(body) != 2 {
			t.Errorf("status PATCH broadcast as %d requests: %v", len(patches), body)
		}
	})
}

// TestPartyIsolation checks that a CPO can neither read nor write another
// CPO's objects: every attempt is a 404, and the objects stay as they were.
func TestPartyIsolation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		other := hubtest.Add(t, b.h, sim.StartCPO, "CPO Two", "NL", "CP2")
		b.putLocation(t, b.CPO, "CP1", "LOC1", 0, "E1:AVAILABLE")
		b.putT1(t)
		before := snapshot(t, b)
		rec, _ := other.HubEndpoint("locations", "RECEIVER")
		trec, _ := other.HubEndpoint("tariffs", "RECEIVER")
		attempts := []struct {
			method, url string
			body        any
		}{
			{http.MethodGet, rec + "/NL/CP1/LOC1", nil},
			{http.MethodGet, rec + "/NL/CP1/LOC1/E1", nil},
			{http.MethodPut, rec + "/NL/CP1/LOC1", locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(5), "E1:CHARGING")},
			{http.MethodPatch, rec + "/NL/CP1/LOC1/E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(5)}},
			{http.MethodPut, rec + "/NL/CP1/LOC2", locationJSON("NL", "CP1", "LOC2", "12.97160", "77.59460", hubtest.Stamp(5), "E1:CHARGING")},
			{http.MethodGet, trec + "/NL/CP1/T1", nil},
			{http.MethodPut, trec + "/NL/CP1/T1", hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(5))},
			{http.MethodDelete, trec + "/NL/CP1/T1", nil},
		}
		for _, a := range attempts {
			resp, err := other.Raw(b.ctx, a.method, a.url, a.body, nil)
			if err != nil && resp == nil {
				t.Fatal(err)
			}
			if resp.HTTPStatus != http.StatusNotFound {
				t.Errorf("%s %s by another CPO: HTTP %d %s, want 404", a.method, a.url, resp.HTTPStatus, resp.Body)
			}
		}
		// A body naming the other party under one's own URL is a 2001.
		resp, err := other.Push(b.ctx, "locations", http.MethodPut, locationJSON("NL", "CP1", "LOC3", "12.97160", "77.59460", hubtest.Stamp(5), "E1:CHARGING"), nil, "LOC3")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "party_id" {
			t.Errorf("field %q, want party_id", hubtest.ErrorField(resp))
		}
		if after := snapshot(t, b); string(before) != string(after) {
			t.Errorf("another CPO changed objects:\n%s\n%s", before, after)
		}
	})
}

// TestTariffLifecycle: once the connectors are re-pointed, DELETE removes
// the tariff and the eMSPs get the DELETE (a DELETE while connectors still
// list it is accepted too: TestTariffDeleteWhileReferenced).
func TestTariffLifecycle(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putT1(t)
		b.putLocation(t, b.CPO, "CP1", "LOC1", 0, "E1:AVAILABLE", "E2:AVAILABLE")
		for _, uid := range []string{"E1", "E2"} {
			resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"tariff_ids": []string{}, "last_updated": hubtest.Stamp(2)}, nil, "LOC1", uid, "1")
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		}
		if err := b.CPO.DeleteTariff(b.ctx, "T1"); err != nil {
			t.Fatal(err)
		}
		resp, _ := hubGet(t, b.EMSP.Platform, "tariffs", "SENDER", "/T1", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusNotFound, 2000)
		waitState(t, b.ctx, b.EMSP.Platform, "tariff DELETE at eMSP One", func() bool {
			return len(b.EMSP.Requests(sim.PathHas(http.MethodDelete, "/emsp/tariffs/NL/CP1/T1"))) == 1
		})
		if b.EMSP.Tariff("NL", "CP1", "T1") != nil {
			t.Error("eMSP One still holds the deleted tariff")
		}
	})
}

// TestLateReceiverGetsFullObject: an eMSP that joins after a location was
// published receives a PATCH it cannot apply; it answers 2003, and the hub
// follows with a PUT of the whole location (transport.md §10).
func TestLateReceiverGetsFullObject(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putLocation(t, b.CPO, "CP1", "LOC1", 0, "E1:AVAILABLE")
		// The PUT delivered before the late eMSP registers: a change is
		// sent to the receivers registered when it is delivered, and one
		// delivered after would bring the late eMSP the whole location
		// first (on a busy machine it did).
		waitState(t, b.ctx, b.EMSP.Platform, "the location at eMSP One", func() bool {
			return b.EMSP.EVSEStatus("NL", "CP1", "LOC1", "E1") == "AVAILABLE"
		})
		late := hubtest.Add(t, b.h, sim.StartEMSP, "Late eMSP", "ES", "LAT")
		if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.ctx, late.Platform, "the full location at the late eMSP", func() bool {
			return late.EVSEStatus("NL", "CP1", "LOC1", "E1") == "CHARGING"
		})
		reqs := late.Requests(sim.PathHas("", "/emsp/locations/NL/CP1/LOC1"))
		if len(reqs) != 2 || reqs[0].Method != http.MethodPatch || reqs[1].Method != http.MethodPut {
			var got []string
			for _, r := range reqs {
				got = append(got, r.Method)
			}
			t.Errorf("late eMSP got %v, want the PATCH then a full PUT", got)
		}
	})
}
