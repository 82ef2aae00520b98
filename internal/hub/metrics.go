package hub

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the outbox's Prometheus series.
type metrics struct {
	pushes   *prometheus.CounterVec
	delivery *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_hub_pushes_total",
			Help: "Push delivery attempts to partners, by receiving party, module and outcome (delivered, rejected, retry, gave_up, offline, dropped, skipped: no form in the receiver's OCPI version).",
		}, []string{"receiver", "module", "outcome"}),
		delivery: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ocpihub_hub_push_delivery_seconds",
			Help:    "Time from a change being stored to its push being delivered, by module.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800},
		}, []string{"module"}),
	}
	// Registered by New through pushCollector (metrics_init.go), which
	// adds the zero series of every receiver first.
	return m
}

func (m *metrics) count(receiver, module, outcome string) {
	m.pushes.WithLabelValues(receiver, module, outcome).Inc()
}

func (m *metrics) latency(module string, d time.Duration) {
	m.delivery.WithLabelValues(module).Observe(d.Seconds())
}
