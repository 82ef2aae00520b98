package location_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestAddressedRouting: a push carrying OCPI-to-* of an eMSP is forwarded to
// that eMSP alone, untouched, with a new X-Request-ID and the same
// X-Correlation-ID, and its answer comes back with the routing headers
// swapped; the hub stores nothing. The hub's own failures are 4001, 4002,
// 4003 and 4000.
func TestAddressedRouting(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		hdr := hubtest.ToHeader("DE", "EM1")
		hdr.Set("X-Correlation-ID", "corr-123")
		hdr.Set("X-Request-ID", "req-123")
		hdr.Set("OCPI-from-country-code", "NL")
		hdr.Set("OCPI-from-party-id", "CP1")
		// last_updated without a zone: a hub must not touch it.
		raw := []byte(`{"country_code":"NL","party_id":"CP1","id":"LOC7","publish":true,"address":"A","city":"B","country":"IND",` +
			`"coordinates":{"latitude":"12.97160","longitude":"77.59460"},"time_zone":"Asia/Kolkata","last_updated":"2026-03-01T10:00:00"}`)
		resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut, raw, hdr, "LOC7")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if resp.Header.Get("OCPI-from-party-id") != "EM1" || resp.Header.Get("OCPI-to-party-id") != "CP1" {
			t.Errorf("answer routing headers: from %s to %s, want from EM1 to CP1", resp.Header.Get("OCPI-from-party-id"), resp.Header.Get("OCPI-to-party-id"))
		}
		got := b.EMSP.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/LOC7"))
		if len(got) != 1 {
			t.Fatalf("eMSP One got %d forwarded PUTs", len(got))
		}
		fw := got[0]
		if string(fw.Body) != string(raw) {
			t.Errorf("the forwarded body changed:\n got %s\nwant %s", fw.Body, raw)
		}
		if fw.Header.Get("X-Correlation-ID") != "corr-123" || fw.Header.Get("X-Request-ID") == "req-123" || fw.Header.Get("X-Request-ID") == "" {
			t.Errorf("forwarded ids: correlation %q request %q", fw.Header.Get("X-Correlation-ID"), fw.Header.Get("X-Request-ID"))
		}
		if fw.Header.Get("OCPI-from-party-id") != "CP1" || fw.Header.Get("OCPI-to-party-id") != "EM1" {
			t.Errorf("forwarded routing headers: from %s to %s", fw.Header.Get("OCPI-from-party-id"), fw.Header.Get("OCPI-to-party-id"))
		}
		resp, _ = hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC7", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusNotFound, 2003)
		if n := len(b.EMSP2.Requests(sim.PathHas("", "LOC7"))); n != 0 {
			t.Errorf("an addressed push reached another eMSP %d times", n)
		}

		// The receiver's own errors pass back as they are.
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}, hubtest.ToHeader("DE", "EM1"), "NOPE", "E1")
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2003)

		// The hub's own failures.
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, raw, hubtest.ToHeader("ZZ", "ZZZ"), "LOC7")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4001)
		b.EMSP.SetDown(true)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, raw, hubtest.ToHeader("DE", "EM1"), "LOC7")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4000)
		b.EMSP.SetDown(false)
		b.EMSP.SetSilent(true)
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, raw, hubtest.ToHeader("DE", "EM1"), "LOC7")
		b.EMSP.SetSilent(false)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4002)
		var list []*party.Platform
		b.h.Admin(t, http.MethodGet, "/admin/parties", nil, &list)
		for _, p := range list {
			if p.Name == "eMSP Two" {
				b.h.Admin(t, http.MethodPost, fmt.Sprintf("/admin/parties/%d/suspend", p.ID), nil, nil)
			}
		}
		resp, err = b.CPO.Push(b.ctx, "tariffs", http.MethodPut, hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0)), hubtest.ToHeader("FR", "EM2"), "T1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4003)
		if !strings.Contains(resp.Envelope.StatusMessage, "FR/EM2") {
			t.Errorf("4003 message: %s", resp.Body)
		}
	}, fastPush(3))
}

// TestDirectoryRouting: OCPI-to-* of a CPO restricts the merged directory to
// it and disambiguates a location id two CPOs use; without it an ambiguous
// id is a 2001 asking for the header.
func TestDirectoryRouting(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		other := hubtest.Add(t, b.h, sim.StartCPO, "CPO Two", "NL", "CP2")
		b.putLocation(t, b.CPO, "CP1", "SAME", 0, "E1:AVAILABLE")
		b.putLocation(t, other, "CP2", "SAME", 1, "E1:CHARGING")
		b.putLocation(t, other, "CP2", "ONLY2", 2, "E1:CHARGING")
		resp, _ := hubGet(t, b.EMSP.Platform, "locations", "SENDER", "", nil)
		if resp.Header.Get("X-Total-Count") != "3" {
			t.Errorf("merged directory: X-Total-Count %s", resp.Header.Get("X-Total-Count"))
		}
		resp, _ = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "", hubtest.ToHeader("NL", "CP2"))
		if resp.Header.Get("X-Total-Count") != "2" || strings.Contains(string(resp.Envelope.Data), `"CP1"`) {
			t.Errorf("directory restricted to NL/CP2: %s %s", resp.Header.Get("X-Total-Count"), resp.Envelope.Data)
		}
		resp, _ = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "", hubtest.ToHeader("IN", "HUB"))
		if resp.Header.Get("X-Total-Count") != "3" {
			t.Errorf("OCPI-to = the hub is GET ALL via hub: %s", resp.Header.Get("X-Total-Count"))
		}
		resp, _ = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/SAME", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "location_id" {
			t.Errorf("ambiguous id: field %q", hubtest.ErrorField(resp))
		}
		resp, data := hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/SAME/E1", hubtest.ToHeader("NL", "CP2"))
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if data["status"] != "CHARGING" {
			t.Errorf("OCPI-to picked the wrong CPO: %v", data)
		}
		resp, data = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/ONLY2", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
		if data["party_id"] != "CP2" {
			t.Errorf("unique id: %v", data)
		}
	})
}
