package location_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPushDirectoryAndBroadcast drives the main path: a CPO publishes a
// location and a tariff; the hub stores them (201, then 200), serves them in
// the eMSP directory with the owner's party, and broadcasts them to both
// eMSPs with OCPI-from = the hub.
func TestPushDirectoryAndBroadcast(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		loc := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE", "E2:AVAILABLE")
		resp, err := b.CPO.Push(b.ctx, "tariffs", http.MethodPut, hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0)), nil, "T1")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, loc, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		if got := resp.Header.Get("OCPI-from-party-id"); got != "HUB" {
			t.Errorf("OCPI-from-party-id of the answer = %q, want HUB", got)
		}
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, loc, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		// A later change of the same location: it is delivered after
		// anything queued before it, so once it arrived a broadcast of the
		// unchanged re-PUT would have too.
		if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}

		// The CPO reads the hub's copy; unknown fields survive.
		resp, data := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if data["x_vendor_note"] != "kept as sent" || data["id"] != "LOC1" {
			t.Errorf("stored location lost fields: %s", resp.Envelope.Data)
		}

		// Both eMSPs receive the location and the tariff, from the hub.
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "broadcast to "+e.Name(), func() bool {
				return e.EVSEStatus("NL", "CP1", "LOC1", "E1") == "CHARGING" && e.Tariff("NL", "CP1", "T1") != nil
			})
			puts := e.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/LOC1"))
			if len(puts) != 1 {
				t.Errorf("%s got %d location PUTs, want 1 (an unchanged re-PUT is not broadcast)", e.Name(), len(puts))
			}
			hd := puts[0].Header
			if hd.Get("OCPI-from-party-id") != "HUB" || hd.Get("OCPI-from-country-code") != "IN" {
				t.Errorf("broadcast OCPI-from = %s/%s, want IN/HUB", hd.Get("OCPI-from-country-code"), hd.Get("OCPI-from-party-id"))
			}
			cc, pid := e.Party()
			if hd.Get("OCPI-to-party-id") != pid || hd.Get("OCPI-to-country-code") != cc {
				t.Errorf("broadcast OCPI-to = %s/%s, want %s/%s", hd.Get("OCPI-to-country-code"), hd.Get("OCPI-to-party-id"), cc, pid)
			}
		}
		if n := len(b.CPO.Requests(sim.PathHas(http.MethodPut, "/locations"))); n != 0 {
			t.Errorf("the sender got its own change back %d times", n)
		}

		// The directory: paged list with the owner's party, one location,
		// one EVSE, one connector.
		base, _ := b.EMSP.HubEndpoint("locations", "SENDER")
		resp, err = b.EMSP.Raw(b.ctx, http.MethodGet, base+"?limit=10", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		var list []map[string]any
		if err := json.Unmarshal(resp.Envelope.Data, &list); err != nil || len(list) != 1 {
			t.Fatalf("directory list: %s", resp.Body)
		}
		if list[0]["country_code"] != "NL" || list[0]["party_id"] != "CP1" || resp.Header.Get("X-Total-Count") != "1" {
			t.Errorf("directory entry %v, X-Total-Count %q", list[0], resp.Header.Get("X-Total-Count"))
		}
		resp, data = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/LOC1/E2/1", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if data["standard"] != "IEC_62196_T2" {
			t.Errorf("connector GET: %s", resp.Body)
		}
		resp, _ = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/NOPE", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusNotFound, 2003)
		resp, _ = hubGet(t, b.EMSP.Platform, "tariffs", "SENDER", "", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if !strings.Contains(strings.ReplaceAll(string(resp.Envelope.Data), " ", ""), `"price":18.5`) {
			t.Errorf("tariff price not kept exact as a number: %s", resp.Envelope.Data)
		}
	})
}
