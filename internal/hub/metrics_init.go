package hub

import (
	"context"
	"slices"
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	ps, err := h.connected(ctx)
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
	h.metrics.pushes.Collect(ch)
	h.metrics.delivery.Collect(ch)
}

// connected lists the connected platforms (none without a registry).
func (h *Hub) connected(ctx context.Context) ([]*party.Platform, error) {
	if h.parties == nil {
		return nil, nil
	}
	return h.parties.List(ctx, party.Filter{Status: []party.Status{party.StatusConnected}})
}

// receiverIDs lists the connected platforms with a receiver endpoint: the
// receivers whose delivery series exist from the start.
func (h *Hub) receiverIDs(ctx context.Context) ([]int64, error) {
	ps, err := h.connected(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, p := range ps {
		if slices.ContainsFunc(p.Endpoints, func(e ocpi.Endpoint) bool { return e.Role == ocpi.InterfaceReceiver }) {
			ids = append(ids, p.ID)
		}
	}
	return ids, nil
}
