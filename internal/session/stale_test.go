package session_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestStaleSessionUpdates: a late ACTIVE (PATCH or PUT) older than the stored
// COMPLETED changes nothing and is not routed; an ACTIVE with the same
// last_updated as the COMPLETED does not reopen it either; a later update
// is applied; a duplicate of the current state is harmless.
func TestStaleSessionUpdates(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		at := func(m int) string { return t0.Add(time.Duration(m) * time.Minute).UTC().Format(time.RFC3339) }
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/S1", sessionJSON("S1", "DE", "EM1", "ACTIVE", t0)), nil, http.StatusCreated, 1000)
		stop := map[string]any{"status": "COMPLETED", "end_date_time": at(30), "kwh": 7.5, "last_updated": at(30)}
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1", stop), nil, http.StatusOK, 1000)

		hubtest.MustStale(t, "older ACTIVE PATCH", b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1",
			map[string]any{"status": "ACTIVE", "kwh": 5, "last_updated": at(20)}), nil)
		hubtest.MustStale(t, "older ACTIVE PUT", b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/S1",
			sessionJSON("S1", "DE", "EM1", "ACTIVE", t0.Add(25*time.Minute))), nil)
		hubtest.MustStale(t, "ACTIVE at the COMPLETED's last_updated", b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1",
			map[string]any{"status": "ACTIVE", "last_updated": at(30)}), nil)
		// A duplicate of the stored state, and an equal-time change that
		// keeps it final, are applied (the duplicate changes nothing).
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1", stop), nil, http.StatusOK, 1000)
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1",
			map[string]any{"kwh": 7.6, "last_updated": at(30)}), nil, http.StatusOK, 1000)

		got, err := b.H.Sessions.Find(b.Ctx, sessionRef("IN", "CP1", "S1"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "COMPLETED" || got.Session.LastUpdated.UTC().Format(time.RFC3339) != at(30) || got.Session.KWh.String() != "7.6" {
			t.Errorf("stored session is %s at %s with %s kWh, want COMPLETED at %s with 7.6", got.Status, got.Session.LastUpdated, got.Session.KWh, at(30))
		}
		if n := b.H.StaleUpdates(t, "sessions"); n != 3 {
			t.Errorf("ocpihub_stale_updates_total{module=sessions} = %v, want 3", n)
		}

		// A later change is routed after anything queued before it.
		hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPatch, "/IN/CP1/S1",
			map[string]any{"total_cost": map[string]any{"excl_vat": 150}, "last_updated": at(31)}), nil, http.StatusOK, 1000)
		if _, err := b.EMSP.WaitFor(b.Ctx, 4, sim.PathHas("", "/emsp/sessions/IN/CP1/S1")); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, r := range b.EMSP.Requests(sim.PathHas("", "/emsp/sessions/IN/CP1/S1")) {
			var body map[string]any
			_ = json.Unmarshal(r.Body, &body)
			seen = append(seen, r.Method+" "+strOf(body["status"])+" "+strOf(body["last_updated"]))
		}
		want := []string{"PUT ACTIVE " + at(0), "PATCH COMPLETED " + at(30), "PATCH  " + at(30), "PATCH  " + at(31)}
		if strings.Join(seen, "\n") != strings.Join(want, "\n") {
			t.Errorf("the eMSP received:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
		}
	})
}

func strOf(v any) string {
	s, _ := v.(string)
	return s
}
