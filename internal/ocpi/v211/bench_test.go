package v211_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// BenchmarkLocationOut is the conversion every push of a location to a
// legacy receiver pays at delivery time.
func BenchmarkLocationOut(b *testing.B) {
	body := []byte(location221)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok, err := v211.LocationOut(v211.V211, v211.LevelLocation, body); err != nil || !ok {
			b.Fatal(err)
		}
	}
}

// BenchmarkEVSEPatchOut is the conversion of the hot path: an EVSE status
// PATCH to a legacy receiver.
func BenchmarkEVSEPatchOut(b *testing.B) {
	body := []byte(`{"status":"CHARGING","last_updated":"2026-01-01T00:00:00.250Z"}`)
	b.ReportAllocs()
	for b.Loop() {
		p, err := parse(body)
		if err != nil {
			b.Fatal(err)
		}
		out, _, ok := v211.LocationPatchFrom221(v211.LevelEVSE, p)
		if !ok {
			b.Fatal("not converted")
		}
		if _, err := v211.Encode(v211.V211, "locations", v211.LevelEVSE, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocationIn is what a legacy CPO's location PUT costs before the
// location service sees it.
func BenchmarkLocationIn(b *testing.B) {
	out, _, _, err := v211.LocationOut(v211.V211, v211.LevelLocation, []byte(location221))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := v211.LocationIn(v211.V211, v211.LevelLocation, out, "NL", "TNM", now); err != nil {
			b.Fatal(err)
		}
	}
}

func parse(b []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(b, &m)
	return m, err
}
