package token_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestStaleTokenUpdates: a delayed PATCH valid=true older than a valid=false
// does not re-enable the card, does not move last_updated back and is not
// forwarded to the CPO; the same for an older PUT. An equal last_updated is
// applied; a duplicate is harmless.
func TestStaleTokenUpdates(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		at := func(m int) ocpi.DateTime { return ocpi.NewDateTime(t0.Add(time.Duration(m) * time.Minute)) }
		tok := b.EMSP.NewToken("CARD1", "RFID", "ALLOWED")
		tok["last_updated"] = at(0)
		resp, err := b.EMSP.PutToken(b.ctx, tok)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.EMSP.PatchToken(b.ctx, "CARD1", "RFID", map[string]any{"valid": false, "last_updated": at(10)})
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)

		stale := func(what string, method string, body any) {
			t.Helper()
			resp, err := b.EMSP.Raw(b.ctx, method, hubtest.HubURL(t, b.EMSP.Platform, "tokens", "RECEIVER", "/DE/EM1/CARD1"), body, nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
			if !strings.Contains(resp.Envelope.StatusMessage, "stale") {
				t.Errorf("%s: status_message %q does not say it was ignored as stale", what, resp.Envelope.StatusMessage)
			}
		}
		stale("older PATCH valid=true", http.MethodPatch, map[string]any{"valid": true, "last_updated": at(5)})
		older := b.EMSP.NewToken("CARD1", "RFID", "ALLOWED")
		older["last_updated"] = at(7)
		stale("older PUT valid=true", http.MethodPut, older)

		stored, err := b.h.Tokens.Find(b.ctx, tokenRef("DE", "EM1", "CARD1", ""))
		if err != nil {
			t.Fatal(err)
		}
		if stored.IsValid() || !stored.LastUpdated.Equal(at(10).Time) {
			t.Errorf("after older updates the token is valid=%v at %s, want valid=false at %s", stored.IsValid(), stored.LastUpdated, at(10))
		}
		if n := b.h.StaleUpdates(t, "tokens"); n != 2 {
			t.Errorf("ocpihub_stale_updates_total{module=tokens} = %v, want 2", n)
		}

		// The same last_updated is applied; its duplicate changes nothing.
		for range 2 {
			resp, err = b.EMSP.PatchToken(b.ctx, "CARD1", "RFID", map[string]any{"whitelist": "NEVER", "last_updated": at(10)})
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		}
		// A later change reaches the CPO after anything queued before it.
		resp, err = b.EMSP.PatchToken(b.ctx, "CARD1", "RFID", map[string]any{"language": "en", "last_updated": at(11)})
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if _, err := b.CPO.WaitFor(b.ctx, 1, func(sim.Request) bool {
			return b.CPO.ReceivedToken("DE", "EM1", "CARD1", "RFID")["language"] == "en"
		}); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, r := range b.CPO.Requests(sim.PathHas("", "/cpo/tokens/DE/EM1/CARD1")) {
			var body map[string]any
			_ = json.Unmarshal(r.Body, &body)
			seen = append(seen, r.Method+" "+body["last_updated"].(string))
		}
		want := []string{"PUT " + at(0).String(), "PATCH " + at(10).String(), "PATCH " + at(10).String(), "PATCH " + at(11).String()}
		if strings.Join(seen, "\n") != strings.Join(want, "\n") {
			t.Errorf("the CPO received:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
		}
		if got := b.CPO.ReceivedToken("DE", "EM1", "CARD1", "RFID"); got["valid"] != false {
			t.Errorf("the CPO's copy is valid=%v, want false", got["valid"])
		}
	})
}
