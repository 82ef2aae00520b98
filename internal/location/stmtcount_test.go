package location_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// maxStmtsStatusPatch bounds the statements of one EVSE status PATCH with
// 10 receivers registered, counted through the store's Queriers (reads and
// the write transaction; begin/commit and a batch's savepoints are not
// counted). Today: 5 on both engines — the location locked and read, its
// row, the EVSE row, the one change row for the broadcast (its receivers
// are resolved at delivery) and the webhook subscribers' lookup. It was 15
// before the fan-out moved to delivery. Lower it when the path gets
// cheaper; it must never creep up.
const maxStmtsStatusPatch = 5

// TestStatusPatchStatements holds the statement count of an EVSE status
// PATCH to maxStmtsStatusPatch, on both engines.
func TestStatusPatchStatements(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60e9)
		hubtest.Add(t, h, sim.StartCPO, "CPO One", "NL", "CP1")
		for i := range 10 {
			hubtest.Add(t, h, sim.StartEMSP, fmt.Sprintf("eMSP %d", i), "DE", fmt.Sprintf("E%02d", i))
		}
		p, err := h.Parties.FindByParty(ctx, party.RoleCPO, "NL", "CP1")
		if err != nil {
			t.Fatal(err)
		}
		ch := location.Change{PlatformID: p.ID}
		ref := location.Ref{CountryCode: "NL", PartyID: "CP1", LocationID: "LOC1"}
		raw, _ := json.Marshal(locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE", "E2:AVAILABLE"))
		if _, err := h.Locations.Put(ctx, ch, ref, raw); err != nil {
			t.Fatal(err)
		}
		ref.EVSEUID = "E1"
		statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED"}
		for i, status := range statuses {
			cctx, n := store.CountStmts(ctx)
			res, err := h.Locations.Patch(cctx, ch, ref, []byte(fmt.Sprintf(`{"status":%q,"last_updated":%q}`, status, hubtest.Stamp(10+i))))
			if err != nil || !res.Changed {
				t.Fatalf("PATCH %s: %+v %v", status, res, err)
			}
			if n.N() == 0 || n.N() > maxStmtsStatusPatch {
				t.Errorf("PATCH %s ran %d statements, want 1..%d", status, n.N(), maxStmtsStatusPatch)
			}
			t.Logf("PATCH %s: %d statements", status, n.N())
		}
	})
}
