package delivery

import "github.com/prometheus/client_golang/prometheus"

// metrics are an engine's series, labelled by receiver.
type metrics struct {
	lag     *prometheus.HistogramVec
	backlog *prometheus.GaugeVec
}

func newMetrics(name string, reg prometheus.Registerer) *metrics {
	m := &metrics{
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "ocpihub_delivery_lag_seconds",
			Help:        "Time from a change's commit to the receiver's 2xx for it, by engine (hub, webhooks) and receiver.",
			Buckets:     []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800},
			ConstLabels: prometheus.Labels{"engine": name},
		}, []string{"receiver"}),
		backlog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name:        "ocpihub_delivery_backlog",
			Help:        "Items open (queued or in flight) for a receiver at its latest claim, by engine and receiver (a claim looks at a bounded number).",
			ConstLabels: prometheus.Labels{"engine": name},
		}, []string{"receiver"}),
	}
	if reg != nil {
		reg.MustRegister(m.lag, m.backlog)
	}
	return m
}
