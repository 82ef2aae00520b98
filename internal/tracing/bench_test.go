package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRequest measures what a traced request costs over an untraced
// one: off (no Tracer) the handler is the hub's own; on, a server span and
// a transaction span per request, ended into the export queue (drained by
// a collector on loopback).
func BenchmarkRequest(b *testing.B) {
	work := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		ctx, span := Start(r.Context(), "transaction", Client)
		span.SetDBSystem("sqlite")
		NoteRoute(ctx, "PATCH /ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}")
		span.EndErr(&err)
		w.Write([]byte(`{"status_code":1000,"timestamp":"2026-01-01T00:00:00Z"}`))
	})
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer collector.Close()
	for _, bc := range []struct {
		name string
		t    *Tracer
	}{{"off", nil}, {"on", New(Config{Endpoint: collector.URL}, nil, nil, nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			bc.t.Start()
			defer bc.t.Close(context.Background())
			h := bc.t.Handler(work)
			req := httptest.NewRequest(http.MethodPatch, "/ocpi/2.2.1/cpo/locations/NL/CP1/LOC1/E1", nil)
			req.Header.Set("X-Correlation-ID", "bench")
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
