package v211_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/schematest"
)

// location221 is a 2.2.1 location whose every field has a 2.1.1 counterpart.
const location221 = `{
  "country_code": "NL", "party_id": "TNM", "id": "LOC1", "publish": true, "name": "Station",
  "address": "Stationsplein 1", "city": "Amsterdam", "postal_code": "1012AB", "country": "NLD",
  "coordinates": {"latitude": "52.378900", "longitude": "4.900000"},
  "related_locations": [{"latitude": "52.379000", "longitude": "4.901000", "name": {"language": "en", "text": "Entrance"}}],
  "parking_type": "PARKING_GARAGE",
  "evses": [{"uid": "E1", "evse_id": "NL*TNM*E1", "status": "AVAILABLE", "capabilities": ["RFID_READER", "REMOTE_START_STOP_CAPABLE"],
    "status_schedule": [{"period_begin": "2026-02-01T00:00:00Z", "period_end": "2026-02-02T00:00:00Z", "status": "INOPERATIVE"}],
    "floor_level": "-1", "physical_reference": "1", "parking_restrictions": ["EV_ONLY"],
    "connectors": [{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
      "max_voltage": 230, "max_amperage": 16, "tariff_ids": ["T1"], "terms_and_conditions": "https://tnm.example/terms",
      "last_updated": "2026-01-01T00:00:00Z"}],
    "last_updated": "2026-01-01T00:00:00Z"}],
  "directions": [{"language": "en", "text": "Level -1"}],
  "operator": {"name": "TNM"},
  "facilities": ["TRAIN_STATION", "CAFE"],
  "time_zone": "Europe/Amsterdam",
  "opening_times": {"twentyfourseven": false, "regular_hours": [{"weekday": 1, "period_begin": "08:00", "period_end": "20:00"}],
    "exceptional_closings": [{"period_begin": "2026-12-25T00:00:00Z", "period_end": "2026-12-26T00:00:00Z"}]},
  "charging_when_closed": true,
  "energy_mix": {"is_green_energy": true, "energy_sources": [{"source": "WIND", "percentage": 100}],
    "environ_impact": [{"category": "CARBON_DIOXIDE", "amount": 0}]},
  "last_updated": "2026-01-01T12:00:00Z"
}`

func decode221(t *testing.T, raw string) ocpi.Location {
	t.Helper()
	return decodeValid[ocpi.Location](t, []byte(raw))
}

// decode decodes raw into a new T.
func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := ocpi.Decode(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// decodeValid is decode of an object that must pass its Check.
func decodeValid[T any, P interface {
	*T
	Check(*ocpi.Check)
}](t *testing.T, raw []byte) T {
	t.Helper()
	v := decode[T](t, raw)
	if err := checkErr(P(&v)); err != nil {
		t.Fatalf("test %T is not valid: %v", v, err)
	}
	return v
}

// checkErr runs v's Check and returns what it found.
func checkErr(v interface{ Check(*ocpi.Check) }) error {
	c := ocpi.NewCheck("")
	v.Check(c)
	return c.Err()
}

// reread marshals v in 2.1.1 and decodes it into a new T, as the partner
// it is sent to reads it.
func reread[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := v211.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decode[T](t, b)
}

func validate211(t *testing.T, schema string, v any) {
	t.Helper()
	b, err := v211.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.OCPI211().Validate(schema, b); err != nil {
		t.Errorf("2.1.1 schema: %v\n%s", err, b)
	}
}

// TestLocationRoundTrip converts a 2.2.1 location whose every field exists in
// 2.1.1 to 2.1.1 and back: nothing is lost, the 2.1.1 form is valid against
// the 2.1.1 schemas, and the result equals the original.
func TestLocationRoundTrip(t *testing.T) {
	t.Parallel()
	in := decode221(t, location221)
	legacy, loss := v211.FromLocation(&in)
	if len(loss) > 0 {
		t.Errorf("loss: %v", loss)
	}
	validate211(t, "location", legacy)
	if legacy.Type != "PARKING_GARAGE" || *legacy.EVSEs[0].Connectors[0].Voltage != 230 || legacy.EVSEs[0].Connectors[0].TariffID != "T1" {
		t.Errorf("renamed fields: %+v", legacy)
	}
	// Through JSON, as on the wire.
	back := reread[v211.Location](t, legacy)
	out, loss := back.To221("NL", "TNM")
	if len(loss) > 0 {
		t.Errorf("loss back: %v", loss)
	}
	if diff := cmp.Diff(canonical(t, in), canonical(t, out)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func canonical(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLocationLoss converts a location full of 2.2.1-only values: each is
// dropped or approximated and reported, nothing is invented, and what is
// left is valid 2.1.1.
func TestLocationLoss(t *testing.T) {
	t.Parallel()
	in := decode221(t, location221)
	in.ParkingType = "ON_DRIVEWAY"
	in.State = "Noord-Holland"
	in.PostalCode = ""
	in.Address = strings.Repeat("a", 50)
	in.Coordinates = &ocpi.GeoLocation{Latitude: "52.3789015", Longitude: "4.90000"}
	in.Facilities = []string{"METRO_STATION", "CAFE"}
	in.EVSEs[0].Capabilities = append(in.EVSEs[0].Capabilities, "PED_TERMINAL")
	k := in.EVSEs[0].Connectors[0]
	k.TariffIDs = []string{"T1", "T2"}
	power := int64(11000)
	k.MaxElectricPower = &power
	gbt := ocpi.Connector{ID: "2", Standard: "GBT_DC", Format: "CABLE", PowerType: "DC", MaxVoltage: k.MaxVoltage, MaxAmperage: k.MaxAmperage, LastUpdated: k.LastUpdated}
	in.EVSEs[0].Connectors = []ocpi.Connector{k, gbt}
	onlyGBT := ocpi.EVSE{UID: "E2", Status: "AVAILABLE", Connectors: []ocpi.Connector{gbt}, LastUpdated: in.LastUpdated}
	in.EVSEs = append(in.EVSEs, onlyGBT)

	legacy, loss := v211.FromLocation(&in)
	want := []string{"parking_type", "state", "postal_code", "address", "coordinates", "facilities[]",
		"evses[].capabilities[]", "evses[].connectors[].tariff_ids", "evses[].connectors[].max_electric_power",
		"evses[].connectors[].standard", "evses[]"}
	got := loss.Fields()
	for _, f := range want {
		if !slices.Contains(got, f) {
			t.Errorf("loss lacks %s: %v", f, loss)
		}
	}
	if legacy.Type != "OTHER" || len(legacy.Address) != 45 || legacy.Coordinates.Latitude != "52.378902" ||
		!slices.Equal(legacy.Facilities, []string{"CAFE"}) || legacy.PostalCode != "" {
		t.Errorf("converted: %+v", legacy)
	}
	if len(legacy.EVSEs) != 1 || len(legacy.EVSEs[0].Connectors) != 1 || legacy.EVSEs[0].Connectors[0].TariffID != "T1" ||
		slices.Contains(legacy.EVSEs[0].Capabilities, "PED_TERMINAL") {
		t.Errorf("EVSEs: %+v", legacy.EVSEs)
	}
	legacy.PostalCode = "1012AB" // the one required field the source lacked
	validate211(t, "location", legacy)
}

// TestLocationFrom211 reads 2.1.1 locations: the owner comes from the
// caller, publish is true, type maps to parking_type (OTHER and UNKNOWN to
// none), and a missing time_zone is taken from a single-zone country only.
func TestLocationFrom211(t *testing.T) {
	t.Parallel()
	raw := `{"id": "L9", "type": "OTHER", "address": "MG Road 1", "city": "Bengaluru", "postal_code": "560001", "country": "IND",
		"coordinates": {"latitude": "12.975000", "longitude": "77.605000"},
		"evses": [{"uid": "E1", "status": "CHARGING", "connectors": [{"id": "1", "standard": "IEC_62196_T2_COMBO", "format": "CABLE",
			"power_type": "DC", "voltage": 500, "amperage": 120, "tariff_id": "FAST", "last_updated": "2026-01-01T00:00:00Z"}],
			"last_updated": "2026-01-01T00:00:00Z"}],
		"last_updated": "2026-01-01T00:00:00Z"}`
	if err := schematest.OCPI211().Validate("location", []byte(raw)); err != nil {
		t.Fatalf("test input is not 2.1.1: %v", err)
	}
	l := decodeValid[v211.Location](t, []byte(raw))
	out, loss := l.To221("IN", "CPX")
	if !slices.Equal(loss.Fields(), []string{"type"}) {
		t.Errorf("loss: %v", loss)
	}
	if err := checkErr(&out); err != nil {
		t.Fatalf("converted location is not valid 2.2.1: %v", err)
	}
	k := out.EVSEs[0].Connectors[0]
	if out.CountryCode != "IN" || out.PartyID != "CPX" || !*out.Publish || out.ParkingType != "" || out.TimeZone != "Asia/Kolkata" ||
		*k.MaxVoltage != 500 || *k.MaxAmperage != 120 || !slices.Equal(k.TariffIDs, []string{"FAST"}) {
		t.Errorf("converted: %+v %+v", out, k)
	}

	l.Country, l.TimeZone = "USA", ""
	if err := checkErr(&l); err == nil || !strings.Contains(err.Error(), "time_zone") {
		t.Errorf("a location in a country of several zones without time_zone: %v", err)
	}
}

// TestLocationPatch converts PATCH bodies both ways, field by field.
func TestLocationPatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, level, in, want string
		ok                    bool
		lost                  []string
	}{
		{"EVSE status", v211.LevelEVSE, `{"status": "CHARGING", "last_updated": "2026-01-01T00:00:00.250Z"}`,
			`{"status": "CHARGING", "last_updated": "2026-01-01T00:00:00Z"}`, true, nil},
		{"connector power", v211.LevelConnector, `{"max_voltage": 400, "tariff_ids": ["A", "B"], "max_electric_power": 22000, "last_updated": "2026-01-01T00:00:00Z"}`,
			`{"voltage": 400, "tariff_id": "A", "last_updated": "2026-01-01T00:00:00Z"}`, true, []string{"tariff_ids", "max_electric_power"}},
		{"only 2.2.1 fields", v211.LevelLocation, `{"publish_allowed_to": [{"uid": "X", "type": "RFID"}], "last_updated": "2026-01-01T00:00:00Z"}`,
			``, false, []string{"publish_allowed_to"}},
		{"connector becomes GB/T", v211.LevelConnector, `{"standard": "GBT_DC", "last_updated": "2026-01-01T00:00:00Z"}`,
			``, false, []string{"standard"}},
		{"parking type", v211.LevelLocation, `{"parking_type": "ALONG_MOTORWAY", "last_updated": "2026-01-01T00:00:00Z"}`,
			`{"type": "OTHER", "last_updated": "2026-01-01T00:00:00Z"}`, true, []string{"parking_type"}},
	} {
		in, err := ocpi.ParseObject([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		out, loss, ok := v211.LocationPatchFrom221(tc.level, in)
		lost := loss.Fields()
		slices.Sort(lost)
		slices.Sort(tc.lost)
		if ok != tc.ok || !slices.Equal(lost, tc.lost) {
			t.Errorf("%s: ok %v loss %v", tc.name, ok, loss)
			continue
		}
		if !ok {
			continue
		}
		if diff := cmp.Diff(canonical(t, mustParse(t, tc.want)), canonical(t, out)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}

	in, _ := ocpi.ParseObject([]byte(`{"type": "UNKNOWN", "evses": [{"uid": "E1", "status": "AVAILABLE", "last_updated": "2026-01-01T00:00:00Z",
		"connectors": [{"id": "1", "standard": "CHADEMO", "format": "CABLE", "power_type": "DC", "voltage": 500, "amperage": 100, "last_updated": "2026-01-01T00:00:00Z"}]}]}`))
	out, _, err := v211.LocationPatchTo221(v211.LevelLocation, in)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := out["parking_type"]; !ok || v != nil {
		t.Errorf("type UNKNOWN must clear parking_type: %v", out)
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"max_voltage":500`) || strings.Contains(string(b), `"voltage"`) {
		t.Errorf("nested connector not converted: %s", b)
	}
}

func mustParse(t *testing.T, s string) ocpi.Object {
	t.Helper()
	o, err := ocpi.ParseObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestLocation20 writes and reads the 2.0 form: no last_updated on the
// location, its EVSEs and connectors, a status per connector, decimals as
// strings; on the way in the hub stamps the receipt time.
func TestLocation20(t *testing.T) {
	t.Parallel()
	in := decode221(t, location221)
	legacy, _ := v211.FromLocation(&in)
	b, err := v211.Encode(v211.V20, "locations", v211.LevelLocation, legacy)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "last_updated") || strings.Count(s, `"status":"AVAILABLE"`) != 2 || !strings.Contains(s, `"percentage":"100"`) {
		t.Fatalf("2.0 form: %s", s)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var back v211.Location
	if err := v211.Decode(v211.V20, "locations", v211.LevelLocation, b, now, &back); err != nil {
		t.Fatal(err)
	}
	if back.LastUpdated.Time().Time != now || back.EVSEs[0].Connectors[0].LastUpdated.Time().Time != now {
		t.Errorf("stamps: %v %v", back.LastUpdated, back.EVSEs[0].Connectors[0].LastUpdated)
	}
	out, _ := back.To221("NL", "TNM")
	if err := checkErr(&out); err != nil {
		t.Errorf("2.0 location read back is not valid 2.2.1: %v", err)
	}
}
