package location_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestTariffDeleteWhileReferenced: a CPO deletes a tariff its connectors
// still list. The spec only recommends re-pointing the connectors first, so
// the hub accepts the DELETE (naming the connectors in the answer) and every
// eMSP gets it, instead of keeping a tariff its owner deleted.
func TestTariffDeleteWhileReferenced(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		resp, err := b.CPO.Push(b.ctx, "tariffs", http.MethodPut, hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0)), nil, "T1")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		loc := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE")
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, loc, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "tariff at "+e.Name(), func() bool { return e.Tariff("NL", "CP1", "T1") != nil })
		}

		resp, err = b.CPO.Push(b.ctx, "tariffs", http.MethodDelete, nil, nil, "T1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if !strings.Contains(resp.Envelope.StatusMessage, "LOC1/E1/1") {
			t.Errorf("status_message %q does not name the connector still listing the tariff", resp.Envelope.StatusMessage)
		}
		if got := resp.Header.Get("OCPI-from-party-id"); got != "HUB" {
			t.Errorf("OCPI-from-party-id of the answer = %q, want HUB", got)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "tariff DELETE at "+e.Name(), func() bool { return e.Tariff("NL", "CP1", "T1") == nil })
			if n := len(e.Requests(sim.PathHas(http.MethodDelete, "/tariffs/NL/CP1/T1"))); n != 1 {
				t.Errorf("%s got %d tariff DELETEs, want 1", e.Name(), n)
			}
		}
		resp, _ = hubGet(t, b.CPO.Platform, "tariffs", "RECEIVER", "/NL/CP1/T1", nil)
		hubtest.MustStatus(t, resp, nil, http.StatusNotFound, 2000)
		// A second DELETE (a retry) finds nothing (404), no second broadcast.
		resp, err = b.CPO.Push(b.ctx, "tariffs", http.MethodDelete, nil, nil, "T1")
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		// The location keeps its connector's tariff_ids as the CPO sent them.
		_, data := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1/E1/1", nil)
		if ids, _ := data["tariff_ids"].([]any); len(ids) != 1 || ids[0] != "T1" {
			t.Errorf("connector tariff_ids = %v, want [T1] as sent", data["tariff_ids"])
		}
	})
}
