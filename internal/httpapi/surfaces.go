package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// hstsMaxAge is a year: browsers keep to https for the public host once
// they saw it. includeSubDomains is left out: the hub does not own the
// other hosts of its domain.
const hstsMaxAge = "max-age=31536000"

// hsts sends Strict-Transport-Security on every answer when the public URL
// is https (TLS ends at the hub or at its load balancer; either way
// browsers reach it over https only).
func (s *Server) hsts(next http.Handler) http.Handler {
	if s.cfg.PublicURL.Scheme != "https" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsMaxAge)
		next.ServeHTTP(w, r)
	})
}

// MetricsHandler serves the Prometheus metrics of reg, behind token when
// one is set (Authorization: Bearer <token>, as Prometheus'
// authorization setting sends it; compared in constant time).
func MetricsHandler(reg prometheus.Gatherer, token string) http.Handler {
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "metrics need the metrics token (Authorization: Bearer …)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// metricsRoute is /metrics on the main address: absent when the metrics
// have their own address (--metrics-addr).
func (s *Server) metricsRoute() http.Handler {
	if s.cfg.MetricsElsewhere {
		return http.NotFoundHandler()
	}
	return MetricsHandler(s.cfg.Registry, s.cfg.MetricsToken)
}
