package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestHSTSOnHTTPS: every answer of a hub whose public URL is https carries
// Strict-Transport-Security; on http none does.
func TestHSTSOnHTTPS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ public, want string }{
		{"https://hub.example.in", hstsMaxAge},
		{"http://localhost:8080", ""},
	} {
		u, _ := url.Parse(tc.public)
		s := New(Config{PublicURL: u})
		for _, path := range []string{"/healthz", "/ocpi/versions", "/nowhere"} {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			if got := w.Header().Get("Strict-Transport-Security"); got != tc.want {
				t.Errorf("%s %s: Strict-Transport-Security %q, want %q", tc.public, path, got, tc.want)
			}
		}
	}
}

// TestMetricsBehindToken: with a metrics token /metrics answers 401 without
// it or with a wrong one, and the metrics with it; with MetricsElsewhere
// the main address has no /metrics.
func TestMetricsBehindToken(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := New(Config{Registry: reg, MetricsToken: "metrics-secret-0123456789"})
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Token metrics-secret-0123456789", 401}, {"Bearer metrics-secret-0123456789", 200}} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("Authorization %q: HTTP %d, want %d", tc.auth, w.Code, tc.want)
		}
	}
	s = New(Config{Registry: prometheus.NewRegistry(), MetricsElsewhere: true})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("/metrics on the main address with its own address: HTTP %d, want 404", w.Code)
	}
}
