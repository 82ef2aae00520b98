package hub

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// pushOutcomes are the outcome label values of ocpihub_hub_pushes_total.
var pushOutcomes = []string{outcomeDelivered, outcomeRejected, outcomeRetry, outcomeGaveUp, outcomeDropped, outcomeOffline, outcomeSkipped}

// pushCollector exports the push metrics with a zero series for every
// connected platform's receiver, module it receives and outcome, and a
// latency series per module, so dashboards and "absent" alerts work before
// the first push.
type pushCollector struct{ h *Hub }

// Describe implements prometheus.Collector.
func (c *pushCollector) Describe(ch chan<- *prometheus.Desc) {
	c.h.metrics.pushes.Describe(ch)
	c.h.metrics.delivery.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *pushCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.h
	for module := range h.sources {
		h.metrics.delivery.WithLabelValues(module)
	}
	if h.parties != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ps, err := h.parties.List(ctx, party.Filter{Status: []party.Status{party.StatusConnected}})
		cancel()
		if err == nil {
			for _, p := range ps {
				to := receivingParty(p)
				label := party.Notation(to.CountryCode, to.PartyID)
				for _, e := range p.Endpoints {
					if e.Role != ocpi.InterfaceReceiver {
						continue
					}
					for _, o := range pushOutcomes {
						h.metrics.pushes.WithLabelValues(label, e.Identifier, o)
					}
				}
			}
		}
	}
	h.metrics.pushes.Collect(ch)
	h.metrics.delivery.Collect(ch)
}
