package app

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// newTracer returns the OpenTelemetry span exporter of the OTLP settings,
// or nil (tracing off: its counters stay at zero) when no endpoint is set.
// The settings were
// validated with the configuration.
func newTracer(cfg Config, clk clock.Clock, logger *slog.Logger, reg prometheus.Registerer) *tracing.Tracer {
	if cfg.OTLPEndpoint == "" {
		tracing.RegisterIdleMetrics(reg)
		return nil
	}
	h, _ := tracing.ParseHeaders(cfg.OTLPHeaders)
	name := cmp.Or(cfg.OTLPServiceName, tracing.DefaultServiceName)
	if cfg.Sandbox {
		// The sandbox's traces are not production's.
		name += "-sandbox"
	}
	return tracing.New(tracing.Config{Endpoint: cfg.OTLPEndpoint, Header: h, ServiceName: name,
		SampleRatio: cfg.OTLPSampleRatio}, clk, logger.With("component", "otlp"), reg)
}

func (c Config) validateOTLP() error {
	if c.OTLPEndpoint != "" {
		u, err := url.Parse(c.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("OTLP endpoint %q must be an absolute http(s) URL", c.OTLPEndpoint)
		}
	}
	if _, err := tracing.ParseHeaders(c.OTLPHeaders); err != nil {
		return fmt.Errorf("OTLP headers: %w", err)
	}
	if c.OTLPSampleRatio < 0 || c.OTLPSampleRatio > 1 {
		return fmt.Errorf("OTLP sample ratio %v: want 0 to 1", c.OTLPSampleRatio)
	}
	return nil
}
