package legacy_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// TestLegacyTariffPatchConcurrent: two concurrent 2.1.1 tariff PATCHes of
// different fields both survive, round after round (the merge runs on the
// row read under its lock, in the transaction that writes it).
func TestLegacyTariffPatchConcurrent(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		old := startCPO(t, "Old CPO", "IN", "OLD", versions("2.1.1"))
		h.Register(t, old.Platform)
		mustOK(t, "2.1.1 tariff PUT", old.PutTariff(ctx(t), "T1", map[string]any{"id": "T1", "currency": "INR",
			"elements":     []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 18.5, "step_size": 1}}}},
			"last_updated": "2026-01-01T10:00:00Z"}))
		const rounds = 40
		for i := range rounds {
			lu := fmt.Sprintf("2026-01-01T10:%02d:%02dZ", 1+i/60, i%60)
			patches := []map[string]any{
				{"tariff_alt_url": fmt.Sprintf("https://old.example/t1/%d", i), "last_updated": lu},
				{"tariff_alt_text": []any{map[string]any{"language": "en", "text": fmt.Sprintf("round %d", i)}}, "last_updated": lu},
			}
			var wg sync.WaitGroup
			errs := make([]error, len(patches))
			for j, p := range patches {
				wg.Go(func() {
					resp, err := old.Push(ctx(t), "tariffs", http.MethodPatch, p, nil, "T1")
					if err == nil && (resp.Envelope == nil || resp.Envelope.StatusCode != 1000) {
						err = fmt.Errorf("answer %s", bodyOf(resp))
					}
					errs[j] = err
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
			}
			body, err := h.Tariffs.Get(ctx(t), tariff.Ref{CountryCode: "IN", PartyID: "OLD", ID: "T1"})
			if err != nil {
				t.Fatal(err)
			}
			s := string(body)
			if !strings.Contains(s, fmt.Sprintf("https://old.example/t1/%d\"", i)) || !strings.Contains(s, fmt.Sprintf("round %d\"", i)) {
				t.Fatalf("round %d lost a PATCH: %s", i, body)
			}
		}
	})
}

// TestLegacyStaleUpdates: the staleness rule holds on the 2.1.1 paths: an
// older EVSE PATCH and an older tariff PATCH change nothing, are answered
// 1000 and never reach the eMSPs.
func TestLegacyStaleUpdates(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		old := startCPO(t, "Old CPO", "IN", "OLD", versions("2.1.1"))
		e221 := startEMSP(t, "eMSP 2.2.1", "DE", "E22")
		e211 := startEMSP(t, "eMSP 2.1.1", "NL", "E21", versions("2.1.1"))
		for _, p := range []*sim.Platform{old.Platform, e221.Platform, e211.Platform} {
			h.Register(t, p)
		}
		mustOK(t, "2.1.1 PUT", old.PutLocation(ctx(t), "LOC1", location211("LOC1", "2026-01-01T10:00:00Z")))
		mustOK(t, "2.1.1 PATCH", old.PatchEVSE(ctx(t), "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": "2026-01-01T10:10:00Z"}))
		mustOK(t, "2.1.1 tariff PUT", old.PutTariff(ctx(t), "T1", map[string]any{"id": "T1", "currency": "INR",
			"elements":     []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 18.5, "step_size": 1}}}},
			"last_updated": "2026-01-01T10:10:00Z"}))

		for _, c := range []struct {
			what   string
			module string
			body   map[string]any
			path   []string
		}{
			{"older EVSE PATCH", "locations", map[string]any{"status": "AVAILABLE", "last_updated": "2026-01-01T10:05:00Z"}, []string{"LOC1", "E1"}},
			{"older tariff PATCH", "tariffs", map[string]any{"currency": "EUR", "last_updated": "2026-01-01T10:05:00Z"}, []string{"T1"}},
		} {
			resp, err := old.Push(ctx(t), c.module, http.MethodPatch, c.body, nil, c.path...)
			if err != nil || resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 ||
				!strings.Contains(resp.Envelope.StatusMessage, "stale") {
				t.Errorf("%s: %v %s, want HTTP 200, 1000, ignored as stale", c.what, err, bodyOf(resp))
			}
		}
		if n := h.StaleUpdates(t, "locations") + h.StaleUpdates(t, "tariffs"); n != 2 {
			t.Errorf("stale updates counted: %v, want 2", n)
		}
		stored, err := h.Tariffs.Get(ctx(t), tariff.Ref{CountryCode: "IN", PartyID: "OLD", ID: "T1"})
		if err != nil || !strings.Contains(string(stored), `"INR"`) {
			t.Errorf("stored tariff after a stale PATCH: %s %v", stored, err)
		}

		// A later change reaches each eMSP after anything queued before it.
		mustOK(t, "later PATCH", old.PatchEVSE(ctx(t), "LOC1", "E1", map[string]any{"status": "BLOCKED", "last_updated": "2026-01-01T10:20:00Z"}))
		for _, e := range []*sim.EMSP{e221, e211} {
			if err := e.Until(ctx(t), func() bool { return e.EVSEStatus("IN", "OLD", "LOC1", "E1") == "BLOCKED" }); err != nil {
				t.Fatal(err)
			}
			var statuses []string
			for _, r := range e.Requests(sim.PathHas(http.MethodPatch, "/LOC1/E1")) {
				statuses = append(statuses, string(r.Body))
			}
			if got := strings.Join(statuses, "\n"); strings.Contains(got, "AVAILABLE") || len(statuses) != 2 {
				t.Errorf("%s received EVSE PATCHes:\n%s\nwant CHARGING then BLOCKED", e.Name(), got)
			}
			for _, r := range e.Requests(sim.PathHas("", "/tariffs/")) {
				if strings.Contains(string(r.Body), "EUR") {
					t.Errorf("%s received the stale tariff: %s", e.Name(), r.Body)
				}
			}
		}
	})
}

// TestLegacyUnstampedPatchNeverStale: a 2.1.1 PATCH without last_updated
// (stamped with its arrival) is applied even when the stored object carries
// a later last_updated, as happens when a concurrent write committed a later
// stamp first; the stored last_updated does not move back.
func TestLegacyUnstampedPatchNeverStale(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		old := startCPO(t, "Old CPO", "IN", "OLD", versions("2.1.1"))
		h.Register(t, old.Platform)
		const future = "2099-01-01T00:00:00Z"
		mustOK(t, "2.1.1 PUT", old.PutLocation(ctx(t), "LOC1", location211("LOC1", future)))
		mustOK(t, "2.1.1 tariff PUT", old.PutTariff(ctx(t), "T1", map[string]any{"id": "T1", "currency": "INR",
			"elements":     []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 18.5, "step_size": 1}}}},
			"last_updated": future}))
		mustOK(t, "unstamped EVSE PATCH", old.PatchEVSE(ctx(t), "LOC1", "E1", map[string]any{"status": "CHARGING"}))
		resp, err := old.Push(ctx(t), "tariffs", http.MethodPatch, map[string]any{"tariff_alt_url": "https://old.example/t1"}, nil, "T1")
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 || strings.Contains(resp.Envelope.StatusMessage, "stale") {
			t.Fatalf("unstamped tariff PATCH: %v %s", err, bodyOf(resp))
		}
		body, err := h.Locations.Get(ctx(t), location.Ref{CountryCode: "IN", PartyID: "OLD", LocationID: "LOC1", EVSEUID: "E1"})
		if err != nil || !strings.Contains(string(body), `"CHARGING"`) || !strings.Contains(string(body), future) {
			t.Errorf("EVSE after an unstamped PATCH: %s %v", body, err)
		}
		body, err = h.Tariffs.Get(ctx(t), tariff.Ref{CountryCode: "IN", PartyID: "OLD", ID: "T1"})
		if err != nil || !strings.Contains(string(body), "https://old.example/t1") || !strings.Contains(string(body), future) {
			t.Errorf("tariff after an unstamped PATCH: %s %v", body, err)
		}
		if n := h.StaleUpdates(t, "locations") + h.StaleUpdates(t, "tariffs"); n != 0 {
			t.Errorf("unstamped PATCHes counted as stale: %v", n)
		}
	})
}
