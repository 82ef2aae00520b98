package charger

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// TestParkingNote: what parking costs, found by pricing an hour of parking
// at growing session durations with the engine.
func TestParkingNote(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct{ name, elements, want string }{
		{"no parking component", `[{"price_components":[{"type":"ENERGY","price":18.50,"vat":18,"step_size":1}]}]`, ""},
		{"parking from the start", `[{"price_components":[{"type":"ENERGY","price":18.50,"vat":18,"step_size":1},` +
			`{"type":"PARKING_TIME","price":50,"vat":18,"step_size":60}]}]`, "Parking after charging costs ₹59.00 per hour"},
		// Free parking for the first 2 hours of the session (2.2.1's
		// "parking after 2 h" pattern: a max_duration element first).
		{"parking after 2 h", `[{"price_components":[{"type":"PARKING_TIME","price":0,"step_size":60}],"restrictions":{"max_duration":7200}},` +
			`{"price_components":[{"type":"ENERGY","price":18.50,"step_size":1},{"type":"PARKING_TIME","price":100,"step_size":60}]}]`,
			"Parking costs ₹100.00 per hour once the session has lasted 2 h"},
		{"parking element from 2 h on", `[{"price_components":[{"type":"ENERGY","price":18.50,"vat":18,"step_size":1}]},` +
			`{"price_components":[{"type":"PARKING_TIME","price":100,"vat":18,"step_size":60}],"restrictions":{"min_duration":7200}}]`,
			"Parking costs ₹118.00 per hour once the session has lasted 2 h"},
		{"free parking", `[{"price_components":[{"type":"ENERGY","price":18.50,"step_size":1},{"type":"PARKING_TIME","price":0,"step_size":60}]}]`, ""},
	} {
		var tf ocpi.Tariff
		raw := `{"country_code":"IN","party_id":"CPO","id":"T1","currency":"INR","last_updated":"2026-01-01T00:00:00Z","elements":` + c.elements + `}`
		if err := ocpi.Decode([]byte(raw), &tf); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		conn := &Connector{Tariff: &tf, TimeZone: "Asia/Kolkata"}
		if got := conn.ParkingNote(now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
