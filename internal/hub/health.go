package hub

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// recordHealth reports one delivery attempt to the partner health
// (party.Service.RecordDelivery): a receiver that answered, even with a
// refusal, is up; a network error, timeout, 5xx, 401 or 429 is a failure.
// Recording is best effort: an error is logged, never fails the delivery.
func (h *Hub) recordHealth(ctx context.Context, platformID int64, row *pushRow, resp *ocpiclient.Response, callErr error) {
	if h.parties == nil {
		return
	}
	o := party.DeliveryOutcome{PlatformID: platformID, Answered: classify(resp, callErr) != outcomeRetry,
		Lag: time.Duration(h.now()-row.createdAt) * time.Microsecond}
	if !o.Answered {
		o.Error = describeFailure(resp, callErr)
	}
	if err := h.parties.RecordDelivery(context.WithoutCancel(ctx), o); err != nil {
		h.logger.ErrorContext(ctx, "could not record a partner's health", "platform_id", platformID, "error", err)
	}
}

// healthCollector exports the partner health of every platform at scrape
// time, from the database, so every replica reports the same.
type healthCollector struct {
	parties            *party.Service
	degraded, failures *prometheus.Desc
	lastSuccess        *prometheus.Desc
}

func newHealthCollector(parties *party.Service) *healthCollector {
	labels := []string{"platform_id", "platform"}
	return &healthCollector{
		parties: parties,
		degraded: prometheus.NewDesc("ocpihub_partner_degraded",
			"1 while a platform's receiver is DEGRADED (its pushes keep failing), else 0.", labels, nil),
		failures: prometheus.NewDesc("ocpihub_partner_consecutive_failures",
			"Push delivery attempts to a platform failed in a row since its last success.", labels, nil),
		lastSuccess: prometheus.NewDesc("ocpihub_partner_last_success_timestamp_seconds",
			"When a push to a platform last succeeded (Unix seconds; 0: never).", labels, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.degraded
	ch <- c.failures
	ch <- c.lastSuccess
}

// Collect implements prometheus.Collector. Every connected platform is
// listed, with zeroes until something was pushed to it.
func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := c.parties.List(ctx, party.Filter{Status: []party.Status{party.StatusConnected}})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.degraded, err)
		return
	}
	hs, err := c.parties.Health(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.degraded, err)
		return
	}
	for _, p := range ps {
		labels := []string{strconv.FormatInt(p.ID, 10), p.Name}
		var degraded, fails, ok float64
		if hl := hs[p.ID]; hl != nil {
			if hl.Degraded() {
				degraded = 1
			}
			fails = float64(hl.ConsecutiveFailures)
			if hl.LastSuccessAt != nil {
				ok = float64(hl.LastSuccessAt.Unix())
			}
		}
		ch <- prometheus.MustNewConstMetric(c.degraded, prometheus.GaugeValue, degraded, labels...)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, fails, labels...)
		ch <- prometheus.MustNewConstMetric(c.lastSuccess, prometheus.GaugeValue, ok, labels...)
	}
}
