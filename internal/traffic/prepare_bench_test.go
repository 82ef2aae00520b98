package traffic

import (
	"net/http"
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
