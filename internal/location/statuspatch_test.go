package location_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestStatusPatchInPlace: a status PATCH changed in the stored bytes (the
// fast path) stores the same document as the general path, which a PATCH
// that also names the uid takes: same status, last_updated raised the same
// way, a stale one refused, an older one leaving the newer last_updated.
func TestStatusPatchInPlace(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60e9)
		hubtest.Add(t, h, sim.StartCPO, "CPO One", "NL", "CP1")
		p, err := h.Parties.FindByParty(ctx, party.RoleCPO, "NL", "CP1")
		if err != nil {
			t.Fatal(err)
		}
		ch := location.Change{PlatformID: p.ID}
		body := func(id string) map[string]any {
			var b string
			if err := h.DB.Read().QueryRow(ctx, "SELECT body FROM locations WHERE id = $1", id).Scan(&b); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(b), &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "id")
			delete(m, "name")
			return m
		}
		for _, id := range []string{"FAST", "SLOW"} {
			raw, _ := json.Marshal(locationJSON("NL", "CP1", id, "12.97160", "77.59460", hubtest.Stamp(5), "E1:AVAILABLE", "E2:AVAILABLE"))
			if _, err := h.Locations.Put(ctx, ch, location.Ref{CountryCode: "NL", PartyID: "CP1", LocationID: id}, raw); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			status string
			lu     int
			stale  bool
		}{{"CHARGING", 10, false}, {"CHARGING", 10, false}, {"BLOCKED", 20, false}, {"AVAILABLE", 15, true}}
		for _, st := range steps {
			var errs [2]error
			for i, id := range []string{"FAST", "SLOW"} {
				extra := ""
				if id == "SLOW" {
					extra = `,"uid":"E1"`
				}
				raw := fmt.Sprintf(`{"status":%q,"last_updated":%q%s}`, st.status, hubtest.Stamp(st.lu), extra)
				_, errs[i] = h.Locations.Patch(ctx, ch, location.Ref{CountryCode: "NL", PartyID: "CP1", LocationID: id, EVSEUID: "e1"}, []byte(raw))
			}
			if (errs[0] != nil) != st.stale || (errs[1] != nil) != st.stale {
				t.Fatalf("%+v: errors %v / %v", st, errs[0], errs[1])
			}
			if diff := cmp.Diff(body("SLOW"), body("FAST")); diff != "" {
				t.Fatalf("after %+v the documents differ (-general +in place):\n%s", st, diff)
			}
		}
		var status string
		if err := h.DB.Read().QueryRow(ctx, "SELECT e.status FROM evses e JOIN locations l ON l.pk = e.location_pk WHERE l.id = 'FAST' AND e.uid = 'E1'").Scan(&status); err != nil || status != "BLOCKED" {
			t.Errorf("indexed status = %q (%v), want BLOCKED", status, err)
		}
	})
}
