package delivery

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are an engine's series, labelled by receiver.
type metrics struct {
	lag     *prometheus.HistogramVec
	backlog *prometheus.GaugeVec
}

func newMetrics(name string) *metrics {
	return &metrics{
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
}

// collector exports an engine's series with an empty one for every
// receiver Config.Known names, so dashboards and "absent" alerts work
// before a receiver's first item.
type collector struct{ e *Engine }

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	c.e.metrics.lag.Describe(ch)
	c.e.metrics.backlog.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	if e.cfg.Known != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ids, err := e.cfg.Known(ctx)
		cancel()
		if err == nil {
			for _, id := range ids {
				l := e.q.Label(id)
				e.metrics.lag.WithLabelValues(l)
				e.metrics.backlog.WithLabelValues(l)
			}
		}
	}
	e.metrics.lag.Collect(ch)
	e.metrics.backlog.Collect(ch)
}
