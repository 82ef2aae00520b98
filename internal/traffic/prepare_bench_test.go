package traffic

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
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
// skip redaction, on a directory page of 100 locations: the one pass that
// also validates it and reads its facts (scanBody), the three it replaced,
// and every fragment looked for in a lower-cased copy (what keys-only
// checking replaced before that).
func BenchmarkMaySecret(b *testing.B) {
	page := benchPage()
	for _, c := range []struct {
		name string
		fn   func([]byte) bool
	}{
		{"scan", func(b []byte) bool {
			var sc scanned
			return !scanBody(b, len(b), &sc) || sc.maySecret
		}},
		{"three-passes", func(b []byte) bool {
			return !gjson.ValidBytes(b) || refKeysMaySecret(b, len(b)) || refScanValidFacts(b).statusCode != 1000
		}},
		{"lower-cased", maySecretFold},
	} {
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

// benchPage is a directory page of 100 locations, each with its own ids,
// names, coordinates, one to four EVSEs and times, as a real page has (one
// location repeated a hundred times compresses for almost nothing, and
// understated gzip's share fivefold).
func benchPage() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	areas := []string{"Koramangala", "Indiranagar", "Whitefield", "Andheri", "Powai", "Saket"}
	standards := []string{"IEC_62196_T2", "IEC_62196_T2_COMBO", "CHADEMO"}
	statuses := []string{"AVAILABLE", "CHARGING", "OUTOFORDER", "BLOCKED"}
	at := func() string {
		return time.Date(2026, time.Month(1+rng.IntN(9)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60),
			rng.IntN(1000)*1e6, time.UTC).Format("2006-01-02T15:04:05.000Z")
	}
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"country_code":"IN","party_id":"CPO","id":"LOC%06d","publish":true,"name":"Charging Hub %d %s",`+
			`"address":"%d Ring Road","city":"Bengaluru","postal_code":"%06d","country":"IND",`+
			`"coordinates":{"latitude":"%.6f","longitude":"%.6f"},"parking_type":"ON_STREET","evses":[`,
			rng.IntN(1e6), rng.IntN(1e5), areas[rng.IntN(len(areas))], 1+rng.IntN(300), 100000+rng.IntN(900000),
			8+22*rng.Float64(), 70+20*rng.Float64())
		for e := range 1 + rng.IntN(4) {
			if e > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"uid":"EVSE%06d%d","evse_id":"IN*CPO*E%06d%d","status":"%s",`+
				`"capabilities":["RFID_READER","REMOTE_START_STOP_CAPABLE"],"connectors":[{"id":"1","standard":"%s",`+
				`"format":"CABLE","power_type":"DC","max_voltage":920,"max_amperage":%d,"max_electric_power":%d,`+
				`"tariff_ids":["T%d"],"last_updated":"%s"}],"last_updated":"%s"}`,
				i, e, i, e, statuses[rng.IntN(len(statuses))], standards[rng.IntN(len(standards))], 30+rng.IntN(370),
				7000+rng.IntN(343000), 1+rng.IntN(50), at(), at())
		}
		fmt.Fprintf(&b, `],"time_zone":"Asia/Kolkata","last_updated":"%s"}`, at())
	}
	b.WriteString(`],"status_code":1000,"timestamp":"2026-01-01T00:00:00Z"}`)
	return []byte(b.String())
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

// BenchmarkRedactCDR measures the redaction walk on a CDR as a CPO posts it:
// its cdr_token key sends every CDR, session and token body to the walk.
func BenchmarkRedactCDR(b *testing.B) {
	body := []byte(`{"country_code":"NL","party_id":"BCP","id":"BCDR-1","session_id":"BS-1",` +
		`"start_date_time":"2026-03-01T10:00:00Z","end_date_time":"2026-03-01T11:00:00Z","auth_method":"COMMAND",` +
		`"cdr_token":{"country_code":"DE","party_id":"BEM","uid":"NEVER-B","type":"RFID","contract_id":"C-NEVER-B"},` +
		`"cdr_location":{"id":"BLOC","address":"Bench Road 1","city":"Pune","country":"IND",` +
		`"coordinates":{"latitude":"18.00001","longitude":"73.85670"},"evse_uid":"E1","evse_id":"IN*BCP*E1",` +
		`"connector_id":"1","connector_standard":"IEC_62196_T2","connector_format":"SOCKET","connector_power_type":"AC_3_PHASE"},` +
		`"currency":"INR","charging_periods":[{"start_date_time":"2026-03-01T10:00:00Z","dimensions":[` +
		`{"type":"ENERGY","volume":12.5},{"type":"TIME","volume":1}]}],` +
		`"total_cost":{"excl_vat":231.25,"incl_vat":272.88},"total_energy":12.5,"total_time":1,"last_updated":"2026-03-01T11:00:00Z"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := redactBody(body, "application/json", DefaultMaxBodyBytes); err != nil {
			b.Fatal(err)
		}
	}
}
