package cli

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
	"github.com/ocpihub/ocpihub/internal/token"
)

// TestSyncCommand runs `ocpihub sync tariffs --party … --json` against the
// database of a running hub and reads its report.
func TestSyncCommand(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.Add(t, h, sim.StartCPO, "CLI CPO", "NL", "CLI")
		for _, id := range []string{"T1", "T2"} {
			if err := cpo.SetTariff(map[string]any{"country_code": "NL", "party_id": "CLI", "id": id, "currency": "INR",
				"last_updated": "2026-03-01T10:00:00Z", "elements": []any{map[string]any{"price_components": []any{
					map[string]any{"type": "FLAT", "price": 0, "step_size": 1}}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if res, out := runSync(t, h, "tariffs", "NL-CLI"); res.Received != 2 || res.Changed != 2 {
			t.Fatalf("report %s", out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := h.Tariffs.Get(ctx, tariff.Ref{CountryCode: "NL", PartyID: "CLI", ID: "T2"}); err != nil {
			t.Errorf("pulled tariff not stored: %v", err)
		}
		var out, errOut bytes.Buffer
		env := func(string) string { return "" }
		if code := run(context.Background(), []string{"sync", "tariffs", "--party", "NL"}, &out, &errOut, env); code != 2 {
			t.Errorf("a malformed --party exits %d, want 2", code)
		}
	})
}

// TestSyncCommandPeerTokens runs `ocpihub sync tokens --party …` naming an
// eMSP behind a peer hub: the tokens come from the peer hub's sender.
func TestSyncCommandPeerTokens(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		peer, _ := h.AddPeer(t, "CLI Peer", "DE/PHC", "DE/AAC", "DE/BBC")
		peer.KeepToken(peer.EMSPToken("CLITOK", "RFID", "ALLOWED"))
		if res, out := runSync(t, h, "tokens", "DE-BBC"); res.Module != "tokens" || res.Received != 1 || res.Changed != 1 {
			t.Fatalf("report %s", out)
		}
		if _, err := h.Tokens.Find(ctx, token.Ref{CountryCode: "DE", PartyID: "BBC", UID: "CLITOK", Type: "RFID"}); err != nil {
			t.Errorf("pulled token not stored: %v", err)
		}
		var out, errOut bytes.Buffer
		env := func(string) string { return "" }
		if code := run(context.Background(), []string{"sync", "vouchers", "--party", "DE-BBC"}, &out, &errOut, env); code != 2 {
			t.Errorf("an unknown module exits %d, want 2", code)
		}
	})
}

// runSync runs `ocpihub sync module --party party --json` against h's
// database and returns its report (the test fails unless it exits 0 with
// one) and the output it was read from.
func runSync(t *testing.T, h *hubtest.Hub, module, party string) (location.SyncResult, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"sync", module, "--party", party, "--db", h.DBURL, "--json", "--log-level", "error",
		"--outbound-allow", "127.0.0.0/8,::1"}, &out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res location.SyncResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("report %s (%v)", out.String(), err)
	}
	return res, out.String()
}
