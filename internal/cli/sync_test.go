package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/party"
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

// TestSyncCommandPeerTokens runs `ocpihub sync tokens --party …` naming an
// eMSP behind a peer hub: the tokens come from the peer hub's sender.
func TestSyncCommandPeerTokens(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		peer, err := sim.StartPeerHub("CLI Peer", "DE/PHC", "DE/AAC", "DE/BBC", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(peer.Close)
		h.Register(t, peer.Platform)
		for {
			if _, err := h.Parties.FindByParty(ctx, party.RoleEMSP, "DE", "BBC"); err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the parties behind the peer hub were not pulled")
			}
			time.Sleep(20 * time.Millisecond)
		}
		peer.KeepToken(peer.EMSPToken("CLITOK", "RFID", "ALLOWED"))
		var out, errOut bytes.Buffer
		env := func(string) string { return "" }
		code := run(context.Background(), []string{"sync", "tokens", "--party", "DE-BBC", "--db", h.DBURL, "--json", "--log-level", "error",
			"--outbound-allow", "127.0.0.0/8,::1"}, &out, &errOut, env)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var res location.SyncResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Module != "tokens" || res.Received != 1 || res.Changed != 1 {
			t.Fatalf("report %s (%v)", out.String(), err)
		}
		if _, err := h.Tokens.Find(ctx, token.Ref{CountryCode: "DE", PartyID: "BBC", UID: "CLITOK", Type: "RFID"}); err != nil {
			t.Errorf("pulled token not stored: %v", err)
		}
		if code := run(context.Background(), []string{"sync", "vouchers", "--party", "DE-BBC"}, &out, &errOut, env); code != 2 {
			t.Errorf("an unknown module exits %d, want 2", code)
		}
	})
}
