package ocpi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

const validLocation = `{
  "country_code": "NL", "party_id": "TNM", "id": "LOC1", "publish": true,
  "address": "Stationsplein 1", "city": "Amsterdam", "country": "NLD",
  "coordinates": {"latitude": "52.37890", "longitude": "4.90000"},
  "time_zone": "Europe/Amsterdam",
  "evses": [{"uid": "E1", "status": "AVAILABLE", "last_updated": "2026-01-01T00:00:00Z",
    "connectors": [{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
      "max_voltage": 230, "max_amperage": 16, "tariff_ids": ["T1"], "last_updated": "2026-01-01T00:00:00Z"}]}],
  "last_updated": "2026-01-01T00:00:00Z",
  "x_custom": {"keep": [1, 2.50]}
}`

// mutate applies edits to the valid location: a JSON path-ish key set to a
// raw JSON value, or removed when value is "".
func mutate(t *testing.T, base string, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func evse0(m map[string]any) map[string]any { return m["evses"].([]any)[0].(map[string]any) }
func conn0(m map[string]any) map[string]any {
	return evse0(m)["connectors"].([]any)[0].(map[string]any)
}

func TestLocationValidation(t *testing.T) {
	t.Parallel()
	runFieldCases[ocpi.Location](t, validLocation, []fieldCase{
		{"missing id", func(m map[string]any) { delete(m, "id") }, "id"},
		{"id too long", func(m map[string]any) { m["id"] = strings.Repeat("x", 37) }, "id"},
		{"missing publish", func(m map[string]any) { delete(m, "publish") }, "publish"},
		{"address 255 ok, 256 not", func(m map[string]any) { m["address"] = strings.Repeat("a", 256) }, "address"},
		{"state 46", func(m map[string]any) { m["state"] = strings.Repeat("s", 46) }, "state"},
		{"city 46", func(m map[string]any) { m["city"] = strings.Repeat("c", 46) }, "city"},
		{"country alpha-2", func(m map[string]any) { m["country"] = "NL" }, "country"},
		{"latitude as number", func(m map[string]any) { m["coordinates"] = map[string]any{"latitude": 52.1, "longitude": "4.90000"} }, "coordinates.latitude"},
		{"latitude 4 decimals", func(m map[string]any) {
			m["coordinates"] = map[string]any{"latitude": "52.3789", "longitude": "4.90000"}
		}, "coordinates.latitude"},
		{"longitude out of range", func(m map[string]any) {
			m["coordinates"] = map[string]any{"latitude": "52.37890", "longitude": "190.00000"}
		}, "coordinates.longitude"},
		{"bad parking type", func(m map[string]any) { m["parking_type"] = "ROOF" }, "parking_type"},
		{"bad facility", func(m map[string]any) { m["facilities"] = []any{"HOTEL", "SPA"} }, "facilities[1]"},
		{"missing time_zone", func(m map[string]any) { delete(m, "time_zone") }, "time_zone"},
		{"last_updated garbage", func(m map[string]any) { m["last_updated"] = "yesterday" }, "last_updated"},
		{"evse bad status", func(m map[string]any) { evse0(m)["status"] = "UNAVAILABLE" }, "evses[0].status"},
		{"evse without connectors", func(m map[string]any) { evse0(m)["connectors"] = []any{} }, "evses[0].connectors"},
		{"connector voltage string", func(m map[string]any) { conn0(m)["max_voltage"] = "230" }, "evses[0].connectors[0].max_voltage"},
		{"connector bad standard", func(m map[string]any) { conn0(m)["standard"] = "IEC_62196_t2" }, "evses[0].connectors[0].standard"},
		{"connector missing amperage", func(m map[string]any) { delete(conn0(m), "max_amperage") }, "evses[0].connectors[0].max_amperage"},
		{"tariff id too long", func(m map[string]any) { conn0(m)["tariff_ids"] = []any{strings.Repeat("t", 37)} }, "evses[0].connectors[0].tariff_ids[0]"},
		{"duplicate evse uid", func(m map[string]any) { m["evses"] = append(m["evses"].([]any), m["evses"].([]any)[0]) }, "evses[1].uid"},
		{"opening times 24/7 missing", func(m map[string]any) { m["opening_times"] = map[string]any{} }, "opening_times.twentyfourseven"},
		{"regular hours bad time", func(m map[string]any) {
			m["opening_times"] = map[string]any{"twentyfourseven": false, "regular_hours": []any{map[string]any{"weekday": 1, "period_begin": "8:00", "period_end": "18:00"}}}
		}, "opening_times.regular_hours[0].period_begin"},
		{"energy mix percentage", func(m map[string]any) {
			m["energy_mix"] = map[string]any{"is_green_energy": true, "energy_sources": []any{map[string]any{"source": "SOLAR", "percentage": 120}}}
		}, "energy_mix.energy_sources[0].percentage"},
		{"image category", func(m map[string]any) {
			m["images"] = []any{map[string]any{"url": "https://x.example/a.png", "category": "SELFIE", "type": "png"}}
		}, "images[0].category"},
		{"publish_allowed_to without key", func(m map[string]any) {
			m["publish"] = false
			m["publish_allowed_to"] = []any{map[string]any{"issuer": "x"}}
		}, "publish_allowed_to[0]"},
		{"evses not a list", func(m map[string]any) { m["evses"] = map[string]any{} }, "evses"},
	})
}

func TestCanonicalKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	raw := mutate(t, validLocation, func(m map[string]any) {
		m["last_updated"] = "2026-01-01T00:00:00"
		evse0(m)["x_vendor"] = "kept"
	})
	s := string(canonical(t, raw, &ocpi.Location{}))
	for _, want := range []string{`"last_updated":"2026-01-01T00:00:00Z"`, `"x_custom":{"keep":[1,2.5]}`, `"x_vendor":"kept"`, `"max_voltage":230`} {
		if !strings.Contains(s, want) {
			t.Errorf("canonical form lacks %s: %s", want, s)
		}
	}
}

func TestCanonicalKeepsNumberDigits(t *testing.T) {
	t.Parallel()
	out := canonical(t, []byte(validLocation), &ocpi.Location{})
	if !strings.Contains(string(out), `"keep":[1,2.50]`) {
		t.Errorf("number digits changed: %s", out)
	}
}

func TestTariffValidation(t *testing.T) {
	t.Parallel()
	valid := `{"country_code":"NL","party_id":"TNM","id":"T1","currency":"EUR","last_updated":"2026-01-01T00:00:00Z",
	  "elements":[{"price_components":[{"type":"ENERGY","price":"0.25","vat":21,"step_size":1}],
	  "restrictions":{"start_time":"08:00","day_of_week":["MONDAY"]}}]}`
	el := func(m map[string]any) map[string]any { return m["elements"].([]any)[0].(map[string]any) }
	pc := func(m map[string]any) map[string]any { return el(m)["price_components"].([]any)[0].(map[string]any) }
	runFieldCases[ocpi.Tariff](t, valid, []fieldCase{
		{"currency", func(m map[string]any) { m["currency"] = "EURO" }, "currency"},
		{"type", func(m map[string]any) { m["type"] = "CHEAP" }, "type"},
		{"no elements", func(m map[string]any) { m["elements"] = []any{} }, "elements"},
		{"dimension", func(m map[string]any) { pc(m)["type"] = "KWH" }, "elements[0].price_components[0].type"},
		{"price text", func(m map[string]any) { pc(m)["price"] = "cheap" }, "elements[0].price_components[0].price"},
		{"step size missing", func(m map[string]any) { delete(pc(m), "step_size") }, "elements[0].price_components[0].step_size"},
		{"day of week", func(m map[string]any) { el(m)["restrictions"] = map[string]any{"day_of_week": []any{"FUNDAY"}} }, "elements[0].restrictions.day_of_week[0]"},
		{"start date", func(m map[string]any) { el(m)["restrictions"] = map[string]any{"start_date": "2026-13-01"} }, "elements[0].restrictions.start_date"},
		{"reservation on energy", func(m map[string]any) { el(m)["restrictions"] = map[string]any{"reservation": "RESERVATION"} }, "elements[0].price_components[0].type"},
	})
}
