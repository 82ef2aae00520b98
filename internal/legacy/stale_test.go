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
		old := startCast(t, h, oldCPO).old
		putTariff211(t, old, "2026-01-01T10:00:00Z")
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
		partners := startCast(t, h, oldCPO|emsp221|emsp211)
		old, e221, e211 := partners.old, partners.e22, partners.e21
		mustOK(t, "2.1.1 PUT", old.PutLocation(ctx(t), "LOC1", location211("LOC1", "2026-01-01T10:00:00Z")))
		mustOK(t, "2.1.1 PATCH", old.PatchEVSE(ctx(t), "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": "2026-01-01T10:10:00Z"}))
		putTariff211(t, old, "2026-01-01T10:10:00Z")

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
			hubtest.MustStale(t, c.what, resp, err)
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
		old := startCast(t, h, oldCPO).old
		const future = "2099-01-01T00:00:00Z"
		mustOK(t, "2.1.1 PUT", old.PutLocation(ctx(t), "LOC1", location211("LOC1", future)))
		putTariff211(t, old, future)
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

// TestLegacyStaleSessionsTokensAnd20: the staleness rule on the other
// legacy paths. A 2.1.1 session PUT older than its stored COMPLETED copy,
// a 2.1.1 eMSP's token PATCH re-enabling a card older than the PATCH that
// revoked it, and a 2.0 CPO's EVSE PATCH older than the stored status each
// change nothing, are answered 1000 and are not forwarded.
func TestLegacyStaleSessionsTokensAnd20(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		partners := startCast(t, h, oldCPO|twoCPO|emsp221|emsp211)
		old, two, e22, e21 := partners.old, partners.two, partners.e22, partners.e21

		// 2.1.1 session: COMPLETED at 11:00, then a late ACTIVE copy of 10:30.
		tok := e22.NewToken("T1", "RFID", "ALLOWED")
		if _, err := e22.PutToken(ctx(t), tok); err != nil {
			t.Fatal(err)
		}
		loc := location211("LOC1", "2026-01-01T09:00:00Z")
		mustOK(t, "location", old.PutLocation(ctx(t), "LOC1", loc))
		mustOK(t, "session PUT", old.PutSession(ctx(t), session211("S1", "C-T1", loc, 0, "ACTIVE", "2026-01-01T10:00:00Z")))
		mustOK(t, "session PATCH", old.PatchSession(ctx(t), "S1", map[string]any{"kwh": 12.5, "status": "COMPLETED",
			"end_datetime": "2026-01-01T11:00:00Z", "last_updated": "2026-01-01T11:00:00Z"}))
		if err := e22.Until(ctx(t), func() bool { return e22.Session("IN", "OLD", "S1")["status"] == "COMPLETED" }); err != nil {
			t.Fatal(err)
		}
		resp, err := old.Push(ctx(t), "sessions", http.MethodPut, session211("S1", "C-T1", loc, 3, "ACTIVE", "2026-01-01T10:30:00Z"), nil, "S1")
		hubtest.MustStale(t, "older 2.1.1 session PUT", resp, err)

		// 2.1.1 eMSP token: revoked at 10:10, a delayed re-enable of 10:05.
		ltok := e21.NewToken("L1", "RFID", "ALLOWED")
		ltok["last_updated"] = "2026-01-01T10:00:00Z"
		if _, err := e21.PutToken(ctx(t), ltok); err != nil {
			t.Fatal(err)
		}
		if _, err := e21.PatchToken(ctx(t), "L1", "RFID", map[string]any{"valid": false, "last_updated": "2026-01-01T10:10:00Z"}); err != nil {
			t.Fatal(err)
		}
		revoked := func(r sim.Request) bool {
			return r.Handled && strings.Contains(r.Path, "/tokens/NL/E21/L1") && strings.Contains(string(r.Body), `"valid":false`)
		}
		if _, err := old.WaitArrived(ctx(t), 1, revoked); err != nil {
			t.Fatalf("the revocation never reached the CPO: %v", err)
		}
		resp, err = e21.PatchToken(ctx(t), "L1", "RFID", map[string]any{"valid": true, "last_updated": "2026-01-01T10:05:00Z"})
		hubtest.MustStale(t, "older 2.1.1 token PATCH", resp, err)

		// 2.0 CPO: CHARGING at 10:10, a delayed AVAILABLE of 10:05.
		mustOK(t, "2.0 location", two.PutLocation(ctx(t), "LOC2", location211("LOC2", "2026-01-01T09:00:00Z")))
		mustOK(t, "2.0 PATCH", two.PatchEVSE(ctx(t), "LOC2", "E1", map[string]any{"status": "CHARGING", "last_updated": "2026-01-01T10:10:00Z"}))
		resp, err = two.Push(ctx(t), "locations", http.MethodPatch, map[string]any{"status": "AVAILABLE", "last_updated": "2026-01-01T10:05:00Z"}, nil, "LOC2", "E1")
		hubtest.MustStale(t, "older 2.0 EVSE PATCH", resp, err)

		if n := h.StaleUpdates(t, "sessions"); n != 1 {
			t.Errorf("stale session updates counted: %v, want 1", n)
		}
		if n := h.StaleUpdates(t, "tokens"); n != 1 {
			t.Errorf("stale token updates counted: %v, want 1", n)
		}
		if n := h.StaleUpdates(t, "locations"); n != 1 {
			t.Errorf("stale location updates counted: %v, want 1", n)
		}
		// A later change to each object: once it has arrived, nothing stale
		// was forwarded before it.
		mustOK(t, "later session PATCH", old.PatchSession(ctx(t), "S1", map[string]any{"total_cost": 231.25, "last_updated": "2026-01-01T11:05:00Z"}))
		mustOK(t, "later 2.0 PATCH", two.PatchEVSE(ctx(t), "LOC2", "E1", map[string]any{"status": "BLOCKED", "last_updated": "2026-01-01T10:20:00Z"}))
		if _, err := e21.PatchToken(ctx(t), "L1", "RFID", map[string]any{"whitelist": "NEVER", "last_updated": "2026-01-01T10:20:00Z"}); err != nil {
			t.Fatal(err)
		}
		if err := e22.Until(ctx(t), func() bool {
			return e22.EVSEStatus("IN", "TWO", "LOC2", "E1") == "BLOCKED" && e22.Session("IN", "OLD", "S1")["total_cost"] != nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := old.WaitArrived(ctx(t), 1, func(r sim.Request) bool {
			return r.Handled && strings.Contains(r.Path, "/tokens/NL/E21/L1") && strings.Contains(string(r.Body), "NEVER")
		}); err != nil {
			t.Fatalf("the later token change never reached the CPO: %v", err)
		}
		if got := e22.Session("IN", "OLD", "S1"); got["status"] != "COMPLETED" {
			t.Errorf("the eMSP's session after a stale ACTIVE copy: %v", got)
		}
		for _, r := range e22.Requests(sim.PathHas("", "/sessions/IN/OLD/S1")) {
			if strings.Contains(string(r.Body), `"kwh":3`) {
				t.Errorf("the stale session copy was forwarded: %s", r.Body)
			}
		}
		for _, r := range e22.Requests(sim.PathHas(http.MethodPatch, "/LOC2/E1")) {
			if strings.Contains(string(r.Body), "AVAILABLE") {
				t.Errorf("the stale 2.0 EVSE PATCH was forwarded: %s", r.Body)
			}
		}
		for _, r := range old.Requests(sim.PathHas("", "/tokens/NL/E21/L1")) {
			if strings.Contains(string(r.Body), `"valid":true`) && strings.Contains(string(r.Body), "10:05") {
				t.Errorf("the stale re-enable was forwarded: %s", r.Body)
			}
		}
	})
}
