package location_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPullSync: the hub pulls a CPO's sender (several Link pages), stores the
// valid objects, counts and skips invalid ones and those of parties the CPO
// does not host, broadcasts only real changes, and a second pull from the
// last sync fetches only what changed since.
func TestPullSync(t *testing.T) {
	// Not parallel with the package's other tests: it times a stream of
	// deliveries end to end, and on two cores under the race detector the
	// dozens of hubs the other tests start at once starved it past its
	// deadline (CI). Delivery throughput under load is the write-path work.
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		for i := 0; i < 60; i++ {
			id := "P" + string(rune('A'+i/26)) + string(rune('A'+i%26))
			if err := b.CPO.SetLocation(locationJSON("NL", "CP1", id, "12.97160", "77.59460", hubtest.Stamp(i), "E1:AVAILABLE")); err != nil {
				t.Fatal(err)
			}
		}
		bad := locationJSON("NL", "CP1", "BAD", "12.97160", "77.59460", hubtest.Stamp(61), "E1:UNAVAILABLE")
		foreign := locationJSON("NL", "XX9", "FOREIGN", "12.97160", "77.59460", hubtest.Stamp(62), "E1:AVAILABLE")
		for _, l := range []map[string]any{bad, foreign} {
			if err := b.CPO.SetLocation(l); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.CPO.SetTariff(hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		p, err := h.Parties.FindByParty(b.ctx, party.RoleCPO, "NL", "CP1")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := h.Syncer.Sync(b.ctx, "locations", p.ID, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Received != 62 || res.Changed != 60 || res.Invalid != 2 || res.Unchanged != 0 {
			t.Errorf("first pull: %+v", res)
		}
		pages := len(b.CPO.Requests(sim.PathHas(http.MethodGet, "/cpo/locations")))
		if pages < 2 {
			t.Errorf("the pull read %d pages; the sender pages by 50", pages)
		}
		if last, _ := h.Syncer.LastSync(b.ctx, p.ID, "locations"); last.Before(start.Add(-time.Second)) {
			t.Errorf("last sync %v not recorded", last)
		}
		resp, _ := hubGet(t, b.EMSP.Platform, "locations", "SENDER", "", nil)
		if resp.Header.Get("X-Total-Count") != "60" {
			t.Errorf("directory after the pull: %s", resp.Header.Get("X-Total-Count"))
		}
		waitState(t, b.ctx, b.EMSP2.Platform, "broadcast of the pulled locations", func() bool { return b.EMSP2.LocationCount() == 60 })

		// Nothing changed: nothing broadcast.
		outbox, _ := h.Hub.Outbox(b.ctx, 0)
		res, err = h.Syncer.Sync(b.ctx, "locations", p.ID, time.Time{})
		if err != nil || res.Unchanged != 60 || res.Changed != 0 {
			t.Errorf("second full pull: %+v %v", res, err)
		}
		if again, _ := h.Hub.Outbox(b.ctx, 0); len(again) != len(outbox) {
			t.Errorf("an unchanged pull queued %d pushes", len(again)-len(outbox))
		}

		// Incremental: only objects changed since the given time.
		if err := b.CPO.SetLocation(locationJSON("NL", "CP1", "PAA", "12.97160", "77.59460", hubtest.Stamp(100), "E1:CHARGING")); err != nil {
			t.Fatal(err)
		}
		res, err = h.Syncer.Sync(b.ctx, "locations", p.ID, time.Date(2026, 3, 1, 10, 1, 30, 0, time.UTC))
		if err != nil || res.Received != 1 || res.Changed != 1 {
			t.Errorf("incremental pull: %+v %v", res, err)
		}
		waitState(t, b.ctx, b.EMSP.Platform, "the changed location", func() bool {
			return b.EMSP.EVSEStatus("NL", "CP1", "PAA", "E1") == "CHARGING"
		})
		res, err = h.Syncer.Sync(b.ctx, "tariffs", p.ID, time.Time{})
		if err != nil || res.Changed != 1 {
			t.Errorf("tariff pull: %+v %v", res, err)
		}
	}, fastPush(3))
}
