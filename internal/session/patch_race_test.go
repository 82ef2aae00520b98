package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestPatchAppliedBeforeItsTransaction: a PATCH applied to the session as
// read before its transaction (SQLite) is applied again when another write
// of the session committed between the read and the lock: that write's
// charging period is kept, and an older PATCH does not overwrite a newer
// one. On PostgreSQL the PATCH is applied in its transaction; the outcome
// is the same.
func TestPatchAppliedBeforeItsTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		s := New(db, nil, nil, nil, nil, clock.NewFake(t0), nil)
		at := func(min int) string { return t0.Add(time.Duration(min) * time.Minute).Format(time.RFC3339) }
		period := func(min int) map[string]any {
			return map[string]any{"start_date_time": at(min), "dimensions": []any{map[string]any{"type": "ENERGY", "volume": min}}}
		}
		patch := func(min, lu int) []byte {
			b, _ := json.Marshal(map[string]any{"kwh": min, "charging_periods": []any{period(min)}, "last_updated": at(lu)})
			return b
		}
		state := func(r Ref) (periods []int, lastUpdated string) {
			t.Helper()
			st, err := s.Find(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range st.Session.ChargingPeriods {
				periods = append(periods, int(p.StartDateTime.Time.Sub(t0)/time.Minute))
			}
			return periods, st.Session.LastUpdated.Time.Format(time.RFC3339)
		}
		for i, c := range []struct {
			name        string
			between     int // the last_updated (minutes) of the PATCH that commits between the read and the lock
			wantPeriods string
			wantLU      int
			wantStale   bool
		}{
			{"an older write between", 1, "[0 1 2]", 2, false},
			{"a newer write between", 3, "[0 3]", 3, true},
		} {
			r := Ref{CountryCode: "IN", PartyID: "CP1", ID: fmt.Sprintf("S%d", i)}
			body, _ := json.Marshal(map[string]any{"country_code": "IN", "party_id": "CP1", "id": r.ID, "start_date_time": at(0),
				"kwh": 0, "auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
				"cdr_token": map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "T1", "type": "RFID", "contract_id": "C1"},
				"status":    "ACTIVE", "charging_periods": []any{period(0)}, "last_updated": at(0)})
			if _, err := s.Put(ctx, Change{}, r, body); err != nil {
				t.Fatal(err)
			}
			ran := false
			s.afterRead = func() {
				s.afterRead = nil
				ran = true
				if err := s.Patch(ctx, Change{}, r, patch(c.between, c.between)); err != nil {
					t.Errorf("%s: the PATCH between: %v", c.name, err)
				}
			}
			err := s.Patch(ctx, Change{}, r, patch(2, 2))
			s.afterRead = nil
			if ran != (db.Engine() == store.SQLite) {
				t.Errorf("%s: the PATCH read before its transaction: %v on %s", c.name, ran, db.Engine())
			}
			var stale *ocpi.StaleError
			if isStale := errors.As(err, &stale); isStale != (c.wantStale && ran) || (err != nil && !isStale) {
				t.Errorf("%s: %v; want stale %v", c.name, err, c.wantStale && ran)
			}
			periods, lu := state(r)
			if ran && (fmt.Sprint(periods) != c.wantPeriods || lu != at(c.wantLU)) {
				t.Errorf("%s: periods %v, last_updated %s; want %s and %s", c.name, periods, lu, c.wantPeriods, at(c.wantLU))
			}
		}
	})
}
