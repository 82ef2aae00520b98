package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// TestSyncCommand runs `ocpihub sync tariffs --party … --json` against the
// database of a running hub and reads its report.
func TestSyncCommand(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, err := sim.StartCPO("CLI CPO", "NL", "CLI", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cpo.Close)
		h.Register(t, cpo.Platform)
		for _, id := range []string{"T1", "T2"} {
			if err := cpo.SetTariff(map[string]any{"country_code": "NL", "party_id": "CLI", "id": id, "currency": "INR",
				"last_updated": "2026-03-01T10:00:00Z", "elements": []any{map[string]any{"price_components": []any{
					map[string]any{"type": "FLAT", "price": 0, "step_size": 1}}}}}); err != nil {
				t.Fatal(err)
			}
		}
		var out, errOut bytes.Buffer
		env := func(string) string { return "" }
		code := run(context.Background(), []string{"sync", "tariffs", "--party", "NL-CLI", "--db", h.DBURL, "--json", "--log-level", "error",
			"--outbound-allow", "127.0.0.0/8,::1"}, &out, &errOut, env)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var res location.SyncResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Received != 2 || res.Changed != 2 {
			t.Fatalf("report %s (%v)", out.String(), err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := h.Tariffs.Get(ctx, tariff.Ref{CountryCode: "NL", PartyID: "CLI", ID: "T2"}); err != nil {
			t.Errorf("pulled tariff not stored: %v", err)
		}
		if code := run(context.Background(), []string{"sync", "tariffs", "--party", "NL"}, &out, &errOut, env); code != 2 {
			t.Errorf("a malformed --party exits %d, want 2", code)
		}
	})
}
