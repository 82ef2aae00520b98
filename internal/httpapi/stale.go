package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// newStaleMetric counts the updates ignored as stale (ocpi.StaleError), by
// OCPI module. Every module the rule covers is present from the start at
// zero, so a rate or an alert works before the first stale update.
func newStaleMetric() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocpihub_stale_updates_total",
		Help: "Pushed updates ignored because their last_updated was older than the stored object's (answered 1000, not forwarded), by module.",
	}, []string{"module"})
	for _, m := range []string{"locations", "tariffs", "tokens", "sessions", "cdrs", "payments"} {
		c.WithLabelValues(m)
	}
	return c
}

// noteStale counts and logs an update ignored as stale; writeError answers
// it (HTTP 200, status_code 1000, the reason in status_message).
func (s *Server) noteStale(r *http.Request, st *ocpi.StaleError) {
	s.metrics.stale.WithLabelValues(st.Module).Inc()
	s.logger.InfoContext(r.Context(), "update ignored as stale", "module", st.Module, "object", st.Object,
		"stored_last_updated", st.Stored.String(), "sent_last_updated", st.Sent.String(), "reason", st.Reason,
		"method", r.Method, "path", r.URL.Path, "request_id", RequestID(r.Context()))
}
