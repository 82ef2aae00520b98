package legacy_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// TestRecorder: every dropped field is logged with the object and counted
// by field (indexes folded), traffic by party; a nil Recorder is a no-op.
func TestRecorder(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	r := legacy.NewRecorder(slog.New(slog.NewTextHandler(&logs, nil)), reg)
	r.Lost(context.Background(), "2.1.1", "locations", "location IN/OLD/L1", v211.Loss{
		"evses[0].connectors[1].standard: GBT_DC is not a 2.1.1 ConnectorType",
		"evses[2].connectors[0].standard: GBT_DC is not a 2.1.1 ConnectorType",
		"state: not in 2.1.1",
	})
	r.Lost(context.Background(), "2.1.1", "locations", "location IN/OLD/L2", nil)
	r.Traffic("2.0", "", legacy.In)
	r.Traffic("2.0", "NL/ABC", legacy.Out)
	line := logs.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, "location IN/OLD/L1") || !strings.Contains(line, "GBT_DC") || !strings.Contains(line, "state: not in 2.1.1") {
		t.Errorf("log: %q", line)
	}
	want := `
# HELP ocpihub_legacy_fields_dropped_total Fields dropped or approximated converting between OCPI 2.2.1 and a deprecated version, by version, module and field.
# TYPE ocpihub_legacy_fields_dropped_total counter
ocpihub_legacy_fields_dropped_total{field="evses[].connectors[].standard",module="locations",version="2.1.1"} 2
ocpihub_legacy_fields_dropped_total{field="state",module="locations",version="2.1.1"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ocpihub_legacy_fields_dropped_total"); err != nil {
		t.Error(err)
	}
	want = `
# HELP ocpihub_legacy_requests_total OCPI requests in a deprecated version (2.1.1, 2.0), by version, party (CC/PID, or unknown before authentication) and direction (in: the partner calls the hub; out: the hub calls the partner).
# TYPE ocpihub_legacy_requests_total counter
ocpihub_legacy_requests_total{direction="in",party="unknown",version="2.0"} 1
ocpihub_legacy_requests_total{direction="in",party="unknown",version="2.1.1"} 0
ocpihub_legacy_requests_total{direction="out",party="NL/ABC",version="2.0"} 1
ocpihub_legacy_requests_total{direction="out",party="unknown",version="2.0"} 0
ocpihub_legacy_requests_total{direction="out",party="unknown",version="2.1.1"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ocpihub_legacy_requests_total"); err != nil {
		t.Error(err)
	}
	var none *legacy.Recorder
	none.Lost(context.Background(), "2.1.1", "tokens", "x", v211.Loss{"a: b"})
	none.Traffic("2.1.1", "x", legacy.In)
}
