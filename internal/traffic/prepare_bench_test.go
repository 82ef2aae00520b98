package traffic

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkPrepare measures the writer's work per exchange: redaction,
// object ids, compression.
func BenchmarkPrepare(b *testing.B) {
	r := New(nil, nil, nil, nil, Config{})
	c := &Capture{At: time.Now(), Direction: Out, Method: "PATCH", URL: "http://127.0.0.1:1/ocpi/emsp/2.2.1/locations/NL/BCP/P001/E1",
		RequestHeader:  http.Header{"Authorization": {"Token abc"}, "Content-Type": {"application/json"}, "X-Request-Id": {"r"}},
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		RequestBody:    []byte(`{"status":"CHARGING","last_updated":"2026-02-01T00:00:00.001Z"}`),
		ResponseBody:   []byte(`{"status_code":1000,"status_message":"Success","timestamp":"2026-02-01T00:00:00Z"}`)}
	b.ReportAllocs()
	for b.Loop() {
		r.prepare(c)
	}
}

// BenchmarkMaySecret measures the check that lets a body without secrets
// skip redaction, on a directory page of 100 locations: the keys alone, and
// every fragment looked for in a lower-cased copy (what it replaces).
func BenchmarkMaySecret(b *testing.B) {
	page := benchPage()
	for _, c := range []struct {
		name string
		fn   func([]byte) bool
	}{{"keys", func(b []byte) bool { return keysMaySecret(b, len(b)) }}, {"lower-cased", maySecretFold}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if c.fn(page) {
					b.Fatal("the page holds no secret")
				}
			}
		})
	}
}

// benchPage is a directory page of 100 locations.
func benchPage() []byte {
	loc := `{"country_code":"IN","party_id":"CPO","id":"LOC00001","publish":true,"name":"Koramangala Charging Hub",` +
		`"address":"80 Feet Road, 4th Block","city":"Bengaluru","postal_code":"560034","country":"IND",` +
		`"coordinates":{"latitude":"12.934533","longitude":"77.626579"},"parking_type":"ON_STREET","evses":[` +
		`{"uid":"E1","evse_id":"IN*CPO*E1","status":"AVAILABLE","capabilities":["RFID_READER","REMOTE_START_STOP_CAPABLE"],` +
		`"connectors":[{"id":"1","standard":"IEC_62196_T2_COMBO","format":"CABLE","power_type":"DC","max_voltage":920,` +
		`"max_amperage":200,"max_electric_power":150000,"tariff_ids":["T1"],"last_updated":"2026-01-01T00:00:00Z"}],` +
		`"last_updated":"2026-01-01T00:00:00Z"}],"time_zone":"Asia/Kolkata","last_updated":"2026-01-01T00:00:00Z"}`
	return []byte(`{"data":[` + strings.Repeat(loc+",", 99) + loc + `],"status_code":1000,"timestamp":"2026-01-01T00:00:00Z"}`)
}

// BenchmarkPreparePage measures the writer's work for a directory page's
// exchange: a GET answered with 100 locations.
func BenchmarkPreparePage(b *testing.B) {
	r := New(nil, nil, nil, nil, Config{})
	c := &Capture{At: time.Now(), Direction: In, Method: "GET", URL: "http://127.0.0.1:1/ocpi/2.2.1/emsp/locations?offset=90000&limit=100",
		RequestHeader:  http.Header{"Authorization": {"Token abc"}, "X-Request-Id": {"r"}},
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		ResponseBody:   benchPage()}
	b.ReportAllocs()
	for b.Loop() {
		r.prepare(c)
	}
}
