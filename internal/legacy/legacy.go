// Package legacy connects OCPI 2.1.1 and 2.0 partners to a hub whose model
// is 2.2.1: the Dialect that converts what the hub sends them (pushes and
// forwarded requests) at delivery time, and the Recorder that counts their
// traffic and logs, with a metric, every field a conversion drops. The wire
// types and the pure converters are in internal/ocpi/v211; the HTTP surface
// is in internal/httpapi.
package legacy

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// Directions of legacy traffic.
const (
	In  = "in"  // a legacy partner calls the hub
	Out = "out" // the hub calls a legacy partner
)

// Recorder counts legacy traffic per party and version, and reports what
// conversions lose. A nil Recorder records nothing.
type Recorder struct {
	logger  *slog.Logger
	traffic *prometheus.CounterVec
	lost    *prometheus.CounterVec
}

// NewRecorder returns a Recorder whose metrics are registered on reg.
func NewRecorder(logger *slog.Logger, reg prometheus.Registerer) *Recorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{
		logger: logger,
		traffic: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_legacy_requests_total",
			Help: "OCPI requests in a deprecated version (2.1.1, 2.0), by version, party (CC/PID, or unknown before authentication) and direction (in: the partner calls the hub; out: the hub calls the partner).",
		}, []string{"version", "party", "direction"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_legacy_fields_dropped_total",
			Help: "Fields dropped or approximated converting between OCPI 2.2.1 and a deprecated version, by version, module and field.",
		}, []string{"version", "module", "field"}),
	}
	// The requests of each version exist from the start, at 0 (as the
	// unauthenticated "unknown" party); a party's own series and the dropped
	// fields (which field is only known when one is dropped) appear with
	// their first event.
	for _, v := range []string{"2.1.1", "2.0"} {
		for _, d := range []string{"in", "out"} {
			r.traffic.WithLabelValues(v, "unknown", d)
		}
	}
	if reg != nil {
		reg.MustRegister(r.traffic, r.lost)
	}
	return r
}

// Traffic counts one legacy request.
func (r *Recorder) Traffic(version, party, direction string) {
	if r == nil {
		return
	}
	if party == "" {
		party = "unknown"
	}
	r.traffic.WithLabelValues(version, party, direction).Inc()
}

// Lost logs what converting object (e.g. "location NL/TNM/LOC1") of module
// for or from a partner speaking version dropped, and counts each field.
func (r *Recorder) Lost(ctx context.Context, version, module, object string, loss v211.Loss) {
	if r == nil || len(loss) == 0 {
		return
	}
	r.logger.InfoContext(ctx, "legacy conversion dropped fields", "version", version, "module", module, "object", object, "lost", loss.String())
	for _, f := range loss.Fields() {
		r.lost.WithLabelValues(version, module, f).Inc()
	}
}
