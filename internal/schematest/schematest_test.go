package schematest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// location returns a complete, spec-like 2.2.1 Location that the patched
// schemas accept, to be edited by each test.
func location() map[string]any {
	return decode(`{
	  "country_code": "IN", "party_id": "EXC", "id": "LOC-0001", "publish": true,
	  "name": "Example Charging Hub", "address": "12 MG Road", "city": "Bengaluru", "postal_code": "560001",
	  "state": "Karnataka", "country": "IND",
	  "coordinates": {"latitude": "12.975300", "longitude": "77.605100"},
	  "parking_type": "PARKING_LOT",
	  "evses": [{
	    "uid": "EVSE-1", "evse_id": "IN*EXC*E1", "status": "AVAILABLE", "capabilities": ["RFID_READER", "REMOTE_START_STOP_CAPABLE"],
	    "connectors": [
	      {"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE", "max_voltage": 400, "max_amperage": 32, "max_electric_power": 22000, "tariff_ids": ["T1"], "last_updated": "2025-01-01T10:00:00Z"},
	      {"id": "2", "standard": "IEC_62196_T2_COMBO", "format": "CABLE", "power_type": "DC", "max_voltage": 920, "max_amperage": 200, "last_updated": "2025-01-01T10:00:00.123"}
	    ],
	    "floor_level": "-1", "physical_reference": "1",
	    "last_updated": "2025-01-01T10:00:00Z"
	  }],
	  "directions": [{"language": "en", "text": "Enter from the north gate"}],
	  "operator": {"name": "Example CPO", "website": "https://cpo.example", "logo": {"url": "https://cpo.example/logo.png", "category": "OPERATOR", "type": "png", "width": 512, "height": 512}},
	  "facilities": ["CAFE", "WIFI"],
	  "time_zone": "Asia/Kolkata",
	  "opening_times": {"twentyfourseven": false, "regular_hours": [{"weekday": 1, "period_begin": "08:00", "period_end": "20:00"}]},
	  "charging_when_closed": false,
	  "last_updated": "2025-01-01T10:00:00Z"
	}`)
}

func decode(s string) map[string]any {
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func evse(l map[string]any) map[string]any { return l["evses"].([]any)[0].(map[string]any) }

// failures returns the "field: problem" lines of a validation error, nil
// when valid.
func failures(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not a validation error: %v", err)
	}
	return e.Failures
}

func TestSpecLikeLocationPasses(t *testing.T) {
	t.Parallel()
	if err := OCPI221().Validate("Location", encode(t, location())); err != nil {
		t.Fatal(err)
	}
	if err := OCPI221().Validate("[]Location", encode(t, []any{location(), location()})); err != nil {
		t.Fatal(err)
	}
	if err := OCPI221().Validate("EVSE", encode(t, evse(location()))); err != nil {
		t.Fatal(err)
	}
}

// TestOverlay: each corrected defect behaves as corrected.
func TestOverlay(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name   string
		schema string
		edit   func(l map[string]any) any // returns the body to validate
		want   string                     // "" valid; else the field that must be named
	}{
		// 1. `+` lists are required arrays of at least one.
		{"EVSE.connectors as a list", "Location", func(l map[string]any) any { return l }, ""},
		{"EVSE.connectors as one object", "Location", func(l map[string]any) any {
			evse(l)["connectors"] = evse(l)["connectors"].([]any)[0]
			return l
		}, "evses[0].connectors"},
		{"EVSE.connectors empty", "Location", func(l map[string]any) any { evse(l)["connectors"] = []any{}; return l }, "evses[0].connectors"},
		{"EVSE.connectors missing", "Location", func(l map[string]any) any { delete(evse(l), "connectors"); return l }, "evses[0]"},
		{"EVSEPartial.connectors optional list", "EVSEPartial", func(l map[string]any) any {
			return map[string]any{"status": "CHARGING", "last_updated": "2025-01-01T00:00:00Z"}
		}, ""},
		{"EVSEPartial.connectors not an object", "EVSEPartial", func(l map[string]any) any {
			return map[string]any{"connectors": evse(l)["connectors"].([]any)[0], "last_updated": "2025-01-01T00:00:00Z"}
		}, "connectors"},
		{"Credentials.roles as a list", "Credentials", func(map[string]any) any {
			return decode(`{"token":"t","url":"https://x.example/ocpi/versions","roles":[{"role":"CPO","country_code":"NL","party_id":"EXA","business_details":{"name":"x"}}]}`)
		}, ""},
		{"Credentials.roles missing", "Credentials", func(map[string]any) any {
			return decode(`{"token":"t","url":"https://x.example/ocpi/versions"}`)
		}, "(body)"},
		{"Credentials.roles as one object", "Credentials", func(map[string]any) any {
			return decode(`{"token":"t","url":"https://x.example/ocpi/versions","roles":{"role":"CPO","country_code":"NL","party_id":"EXA","business_details":{"name":"x"}}}`)
		}, "roles"},
		{"Tariff.elements and price_components as lists", "Tariff", func(map[string]any) any {
			return decode(`{"country_code":"IN","party_id":"EXC","id":"T1","currency":"INR","elements":[{"price_components":[{"type":"ENERGY","price":18.5,"vat":18,"step_size":1}]}],"last_updated":"2025-01-01T00:00:00Z"}`)
		}, ""},
		{"Tariff.elements missing", "Tariff", func(map[string]any) any {
			return decode(`{"country_code":"IN","party_id":"EXC","id":"T1","currency":"INR","last_updated":"2025-01-01T00:00:00Z"}`)
		}, "(body)"},
		{"TariffElement.price_components empty", "TariffElement", func(map[string]any) any { return decode(`{"price_components":[]}`) }, "price_components"},
		{"ChargingPeriod.dimensions as a list", "ChargingPeriod", func(map[string]any) any {
			return decode(`{"start_date_time":"2025-01-01T00:00:00Z","dimensions":[{"type":"ENERGY","volume":12.345}]}`)
		}, ""},
		{"ChargingPeriod.dimensions as one object", "ChargingPeriod", func(map[string]any) any {
			return decode(`{"start_date_time":"2025-01-01T00:00:00Z","dimensions":{"type":"ENERGY","volume":12.345}}`)
		}, "dimensions"},
		{"SignedData.signed_values missing", "SignedData", func(map[string]any) any { return decode(`{"encoding_method":"OCMF"}`) }, "(body)"},
		{"SignedData.signed_values as a list", "SignedData", func(map[string]any) any {
			return decode(`{"encoding_method":"OCMF","signed_values":[{"nature":"Start","plain_data":"x","signed_data":"y"}]}`)
		}, ""},

		// 2. Integers.
		{"RegularHours.weekday as a string", "Location", func(l map[string]any) any {
			l["opening_times"].(map[string]any)["regular_hours"].([]any)[0].(map[string]any)["weekday"] = "1"
			return l
		}, "opening_times.regular_hours[0].weekday"},
		{"RegularHours.weekday 8", "RegularHours", func(map[string]any) any { return decode(`{"weekday":8,"period_begin":"08:00","period_end":"09:00"}`) }, "weekday"},
		{"RegularHours.weekday 7", "RegularHours", func(map[string]any) any { return decode(`{"weekday":7,"period_begin":"08:00","period_end":"09:00"}`) }, ""},
		{"Image.width as a string", "Image", func(map[string]any) any {
			return decode(`{"url":"https://x.example/a.png","category":"OTHER","type":"png","width":"512"}`)
		}, "width"},
		{"Image.height of six digits", "Image", func(map[string]any) any {
			return decode(`{"url":"https://x.example/a.png","category":"OTHER","type":"png","height":100000}`)
		}, "height"},

		// 3. Length errata.
		{"Location.address of 255", "Location", func(l map[string]any) any { l["address"] = long(255); return l }, ""},
		{"Location.address of 256", "Location", func(l map[string]any) any { l["address"] = long(256); return l }, "address"},
		{"Location.state of 45", "Location", func(l map[string]any) any { l["state"] = long(45); return l }, ""},
		{"Location.state of 46", "Location", func(l map[string]any) any { l["state"] = long(46); return l }, "state"},
		{"LocationPartial.address of 255", "LocationPartial", func(l map[string]any) any {
			return map[string]any{"address": long(255), "last_updated": "2025-01-01T00:00:00Z"}
		}, ""},
		{"SignedValue.plain_data of 5000", "SignedValue", func(map[string]any) any {
			return map[string]any{"nature": "Start", "plain_data": long(5000), "signed_data": "x"}
		}, ""},
		{"SignedValue.plain_data of 5001", "SignedValue", func(map[string]any) any {
			return map[string]any{"nature": "Start", "plain_data": long(5001), "signed_data": "x"}
		}, "plain_data"},
		{"CdrLocation.address keeps 45", "CdrLocation", func(map[string]any) any {
			return decode(`{"id":"L","address":"` + long(46) + `","city":"c","country":"IND","coordinates":{"latitude":"12.975300","longitude":"77.605100"},"evse_uid":"E","evse_id":"E","connector_id":"1","connector_standard":"IEC_62196_T2","connector_format":"SOCKET","connector_power_type":"AC_1_PHASE"}`)
		}, "address"},

		// 4. DateTime: the shapes of transport.md §2, strictly UTC.
		{"DateTime with Z", "DateTime", func(map[string]any) any { return "2015-06-29T20:39:09Z" }, ""},
		{"DateTime without Z", "DateTime", func(map[string]any) any { return "2015-06-29T20:39:09" }, ""},
		{"DateTime with a fraction", "DateTime", func(map[string]any) any { return "2016-12-29T17:45:09.2Z" }, ""},
		{"DateTime with a fraction without Z", "DateTime", func(map[string]any) any { return "2018-01-01T01:08:01.123" }, ""},
		{"DateTime with an offset", "DateTime", func(map[string]any) any { return "2015-06-29T20:39:09+05:30" }, "(body)"},
		{"DateTime date only", "DateTime", func(map[string]any) any { return "2015-06-29" }, "(body)"},
		{"DateTime month 13", "DateTime", func(map[string]any) any { return "2015-13-29T20:39:09Z" }, "(body)"},
		{"DateTime longer than 25", "DateTime", func(map[string]any) any { return "2015-06-29T20:39:09.1234567Z" }, "(body)"},
		{"last_updated without Z in a Location", "Location", func(l map[string]any) any { l["last_updated"] = "2025-01-01T10:00:00"; return l }, ""},

		// ModuleID: standard, payments, custom; not anything.
		{"ModuleID standard", "Endpoint", func(map[string]any) any {
			return decode(`{"identifier":"locations","role":"SENDER","url":"https://x.example/l"}`)
		}, ""},
		{"ModuleID payments", "Endpoint", func(map[string]any) any {
			return decode(`{"identifier":"payments","role":"RECEIVER","url":"https://x.example/p"}`)
		}, ""},
		{"ModuleID custom", "Endpoint", func(map[string]any) any {
			return decode(`{"identifier":"inohe-webhooks","role":"SENDER","url":"https://x.example/w"}`)
		}, ""},
		{"ModuleID unknown", "Endpoint", func(map[string]any) any {
			return decode(`{"identifier":"webhooks","role":"SENDER","url":"https://x.example/w"}`)
		}, "identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := failures(t, OCPI221().Validate(tt.schema, encode(t, tt.edit(location()))))
			if tt.want == "" {
				if got != nil {
					t.Fatalf("rejected: %q", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("accepted; want a failure at %s", tt.want)
			}
			if !strings.HasPrefix(got[0], tt.want+": ") {
				t.Errorf("failures %q; want the first at %s", got, tt.want)
			}
		})
	}
}

// TestBrokenBodyNamesTheField reports every bad field by its JSON path.
func TestBrokenBodyNamesTheField(t *testing.T) {
	t.Parallel()
	l := location()
	evse(l)["connectors"].([]any)[1].(map[string]any)["max_voltage"] = "920"
	evse(l)["status"] = "FREE"
	l["coordinates"].(map[string]any)["latitude"] = "12.9"
	delete(l, "time_zone")
	got := failures(t, OCPI221().Validate("Location", encode(t, l)))
	want := []string{
		"(body): missing property 'time_zone'",
		"coordinates.latitude: ",
		"evses[0].status: ",
		"evses[0].connectors[1].max_voltage: got string, want integer",
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.HasPrefix(g, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("no failure %q in %q", w, got)
		}
	}
	if err := OCPI221().Validate("Location", []byte(`{"id":`)); err == nil {
		t.Error("malformed JSON accepted")
	}
	if err := OCPI221().Validate("NoSuchObject", []byte(`{}`)); err == nil || OCPI221().Has("NoSuchObject") || !OCPI221().Has("CommandResponse") {
		t.Errorf("unknown schema: %v", err)
	}
}

// TestNamedSchemasCompile: every name the task needs exists and compiles.
func TestNamedSchemasCompile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Location", "EVSE", "Connector", "Tariff", "Token", "Session", "CDR", "Credentials", "Version",
		"VersionDetail", "ClientInfo", "CommandResponse", "CommandResult", "AuthorizationInfo", "LocationReferences", "StartSession",
		"StopSession", "ReserveNow", "CancelReservation", "UnlockConnector", "ChargingProfileResponse", "ChargingPreferences",
		"[]Location", "[]Tariff", "[]Token", "[]Session", "[]CDR", "[]ClientInfo", "[]Version", "Envelope"} {
		if !OCPI221().Has(name) {
			t.Errorf("no schema %s", name)
		}
	}
}

// TestLegacy211: the 2.1.1 set validates legacy objects and names fields.
func TestLegacy211(t *testing.T) {
	t.Parallel()
	loc := `{"id":"LOC1","type":"ON_STREET","address":"12 MG Road","city":"Bengaluru","postal_code":"560001","country":"IND",
	  "coordinates":{"latitude":"12.975300","longitude":"77.605100"},
	  "evses":[{"uid":"E1","status":"AVAILABLE","connectors":[{"id":"1","standard":"IEC_62196_T2","format":"SOCKET","power_type":"AC_3_PHASE","voltage":400,"amperage":32,"last_updated":"2025-01-01T00:00:00Z"}],"last_updated":"2025-01-01T00:00:00Z"}],
	  "last_updated":"2025-01-01T00:00:00Z"}`
	if err := OCPI211().Validate("location", []byte(loc)); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(loc, `"voltage":400`, `"voltage":"400"`, 1)
	got := failures(t, OCPI211().Validate("location", []byte(bad)))
	if len(got) == 0 || !strings.HasPrefix(got[0], "evses[0].connectors[0].voltage: ") {
		t.Errorf("failures %q", got)
	}
	if !OCPI211().Has("V2_1_1/eMSP/Server/Locations/locationGetResponse") || OCPI211().Has("common") {
		t.Error("2.1.1 names")
	}
}

// TestFieldPath converts JSON pointers.
func TestFieldPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "(body)", "/": "(body)", "/id": "id", "/evses/0/connectors/12/id": "evses[0].connectors[12].id", "/0/url": "[0].url", "/a~1b/c~0d": "a/b.c~d"} {
		if got := FieldPath(in); got != want {
			t.Errorf("FieldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckResponse is the check every test hub runs on every answer.
func TestCheckResponse(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	const ts = `"timestamp":"2025-01-01T00:00:00Z"`
	tests := []struct {
		name         string
		method, path string
		header       http.Header
		body         string
		want         string // "" passes; else a substring of the error
	}{
		{"versions", "GET", "/ocpi/versions", jsonHeader, `{"data":[{"version":"2.2.1","url":"https://hub.example/ocpi/2.2.1"}],"status_code":1000,` + ts + `}`, ""},
		{"versions with a bad version", "GET", "/ocpi/versions/", jsonHeader, `{"data":[{"version":"2.2.2","url":"https://hub.example/ocpi/2.2.1"}],"status_code":1000,` + ts + `}`, "data[0].version: "},
		{"versions without data", "GET", "/ocpi/versions", jsonHeader, `{"status_code":1000,` + ts + `}`, "data is missing, want []Version"},
		{"details through the role alias", "GET", "/ocpi/cpo/2.2.1/", jsonHeader, `{"data":{"version":"2.2.1","endpoints":[]},"status_code":1000,` + ts + `}`, "data.endpoints: "},
		{"details", "GET", "/ocpi/2.2.1", jsonHeader, `{"data":{"version":"2.2.1","endpoints":[{"identifier":"credentials","role":"SENDER","url":"https://hub.example/ocpi/2.2.1/credentials"}]},"status_code":1000,` + ts + `}`, ""},
		{"credentials through the unversioned alias", "POST", "/ocpi/credentials", jsonHeader, `{"data":{"token":"t","url":"u"},"status_code":1000,` + ts + `}`, "data: missing property 'roles'"},
		{"credentials DELETE without data", "DELETE", "/ocpi/2.2.1/credentials", jsonHeader, `{"status_code":1000,` + ts + `}`, ""},
		{"credentials DELETE with data", "DELETE", "/ocpi/2.2.1/credentials", jsonHeader, `{"data":{},"status_code":1000,` + ts + `}`, "data must be absent"},
		{"error without data", "GET", "/ocpi/2.2.1/hubclientinfo", jsonHeader, `{"status_code":2000,"error":{"code":"UNAUTHORIZED","description":"x"},` + ts + `}`, ""},
		{"error with data", "GET", "/ocpi/2.2.1/hubclientinfo", jsonHeader, `{"data":[],"status_code":2000,` + ts + `}`, "data must be absent"},
		{"client info list", "GET", "/ocpi/2.2.1/hubclientinfo", jsonHeader, `{"data":[{"party_id":"EXA","country_code":"NL","role":"CPO","status":"CONNECTED","last_updated":"2025-01-01T00:00:00Z"}],"status_code":1000,` + ts + `}`, ""},
		{"client info with a bad status", "GET", "/ocpi/2.2.1/hubclientinfo", jsonHeader, `{"data":[{"party_id":"EXA","country_code":"NL","role":"CPO","status":"ONLINE","last_updated":"2025-01-01T00:00:00Z"}],"status_code":1000,` + ts + `}`, "data[0].status: "},
		{"unknown route: envelope only", "GET", "/ocpi/2.2.1/cpo/whatever", jsonHeader, `{"data":{"anything":1},"status_code":1000,` + ts + `}`, ""},
		{"envelope without timestamp", "GET", "/ocpi/2.2.1/cpo/whatever", jsonHeader, `{"status_code":1000}`, "missing property 'timestamp'"},
		{"envelope with a string status_code", "GET", "/ocpi/2.2.1/cpo/whatever", jsonHeader, `{"status_code":"1000",` + ts + `}`, "status_code: "},
		{"envelope with an offset timestamp", "GET", "/ocpi/2.2.1/cpo/whatever", jsonHeader, `{"status_code":1000,"timestamp":"2025-01-01T05:30:00+05:30"}`, "timestamp: "},
		{"not JSON although it says so", "GET", "/ocpi/versions", jsonHeader, `<html>`, "not JSON"},
		{"a page is not checked", "GET", "/ocpi/2.2.1/payments/upi/qr/abc", http.Header{"Content-Type": {"text/html; charset=utf-8"}}, `<html>`, ""},
		{"admin is not OCPI", "GET", "/admin/parties", jsonHeader, `{"whatever":true}`, ""},
		{"legacy 2.1.1 is not checked against 2.2.1", "GET", "/ocpi/2.1.1/emsp/locations", jsonHeader,
			`{"data":[],"status_code":1000,"timestamp":"2025-01-01T00:00:00Z"}`, ""},
		{"legacy 2.1.1 envelope", "GET", "/ocpi/2.0/emsp/locations", jsonHeader, `{"data":[]}`, "missing properties"},
		{"legacy 2.1.1 timestamp without fractions", "GET", "/ocpi/2.1.1/emsp/locations", jsonHeader,
			`{"data":[],"status_code":1000,"timestamp":"2025-01-01T00:00:00.123Z"}`, "timestamp"},
		{"legacy 2.1.1 data", "GET", "/ocpi/2.1.1/emsp/locations", jsonHeader,
			`{"data":[{"id":"L1"}],"status_code":1000,"timestamp":"2025-01-01T00:00:00Z"}`, "missing properties"},
		{"HEAD is not checked", "HEAD", "/ocpi/versions", jsonHeader, ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckResponse(tt.method, tt.path, tt.header, []byte(tt.body))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one containing %q", err, tt.want)
			}
		})
	}
}

// TestFindRoute matches like the hub's ServeMux, aliases included.
func TestFindRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method, path string
		want         *Route
	}{
		{"GET", "/ocpi/versions", &Route{Method: "GET", Pattern: "/ocpi/versions", Success: "[]Version"}},
		{"HEAD", "/ocpi/versions", &Route{Method: "GET", Pattern: "/ocpi/versions", Success: "[]Version"}},
		{"PUT", "/ocpi/credentials/", &Route{Method: "PUT", Pattern: "/ocpi/2.2.1/credentials", Success: "Credentials"}},
		{"PATCH", "/ocpi/2.2.1/credentials", nil},
		{"GET", "/ocpi/2.2.1/nothing", nil},
	} {
		got, ok := FindRoute(tt.method, tt.path)
		var gotp *Route
		if ok {
			gotp = &got
		}
		if diff := cmp.Diff(tt.want, gotp); diff != "" {
			t.Errorf("FindRoute(%s %s) (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}
