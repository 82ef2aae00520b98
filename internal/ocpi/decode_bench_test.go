package ocpi_test

import (
	"encoding/json"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// BenchmarkDecodeSession decodes a session with 20 charging periods: what
// a meter PATCH decodes once, and a CDR or session PUT as it arrives.
func BenchmarkDecodeSession(b *testing.B) {
	var ps []any
	for i := 0; i < 20; i++ {
		ps = append(ps, map[string]any{"start_date_time": "2026-03-01T10:00:00Z", "dimensions": []any{map[string]any{"type": "ENERGY", "volume": 1.5}, map[string]any{"type": "TIME", "volume": 0.25}}})
	}
	raw, _ := json.Marshal(map[string]any{"country_code": "IN", "party_id": "CP1", "id": "S1", "start_date_time": "2026-03-01T10:00:00Z",
		"kwh": 3, "auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
		"cdr_token": map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "T1", "type": "RFID", "contract_id": "C1"},
		"status":    "ACTIVE", "charging_periods": ps, "last_updated": "2026-03-01T10:00:00Z"})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var s ocpi.Session
		if err := ocpi.Decode(raw, &s); err != nil {
			b.Fatal(err)
		}
	}
}
