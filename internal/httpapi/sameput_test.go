package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestSameObjectPutAtOnce: the first PUT of a session, a token and a
// tariff, sent by 8 clients at once (a partner retrying over several
// connections), is stored once and every PUT is answered with success. The
// losers of the race to insert the row hit its key (on PostgreSQL when the
// queued row is sent, with the next statement or the COMMIT) and run again
// as updates of it.
func TestSameObjectPutAtOnce(t *testing.T) {
	hubtest.EachBundle(t, nil, func(t *testing.T, h *hubtest.Hub) *hubtest.Bundle {
		b := hubtest.NewBundle(t, h, time.Minute)
		if err := b.CPO.PublishLocation(b.Ctx, "LOC1", "E1"); err != nil {
			t.Fatal(err)
		}
		return b
	}, func(t *testing.T, b *hubtest.Bundle) {
		at := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		for _, c := range []struct {
			module string
			p      *sim.Platform
			suffix string
			body   map[string]any
			table  string
			id     string
		}{
			{"sessions", b.CPO.Platform, "/IN/CP1/SAME", map[string]any{
				"country_code": "IN", "party_id": "CP1", "id": "SAME", "start_date_time": at, "kwh": 0,
				"cdr_token":   map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "TOK1", "type": "RFID", "contract_id": "C1"},
				"auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
				"status": "ACTIVE", "last_updated": at,
			}, "sessions", "SAME"},
			{"tokens", b.EMSP.Platform, "/DE/EM1/SAME", b.EMSP.NewToken("SAME", "RFID", "ALLOWED"), "tokens", "SAME"},
			{"tariffs", b.CPO.Platform, "/IN/CP1/SAME", map[string]any{
				"country_code": "IN", "party_id": "CP1", "id": "SAME", "currency": "INR", "last_updated": at,
				"elements": []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 20, "step_size": 1}}}},
			}, "tariffs", "SAME"},
		} {
			role := "RECEIVER"
			url := hubtest.HubURL(t, c.p, c.module, role, c.suffix)
			const n = 8
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					resp, err := c.p.Raw(b.Ctx, http.MethodPut, url, c.body, nil)
					switch {
					case resp == nil:
						t.Errorf("%s PUT %d: %v", c.module, i, err)
					case resp.HTTPStatus >= 300 || resp.Envelope == nil || resp.Envelope.StatusCode != 1000:
						t.Errorf("%s PUT %d: HTTP %d %s", c.module, i, resp.HTTPStatus, resp.Body)
					}
				})
			}
			wg.Wait()
			var rows int
			q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE id = $1", c.table)
			if c.table == "tokens" {
				q = "SELECT COUNT(*) FROM tokens WHERE uid = $1"
			}
			if err := b.H.DB.Read().QueryRow(context.Background(), q, c.id).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != 1 {
				t.Errorf("%s: %d rows after %d PUTs at once, want 1", c.module, rows, n)
			}
		}
	})
}
