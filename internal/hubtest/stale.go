package hubtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// MustStale fails the test unless an update was answered HTTP 200, status
// 1000, with a status_message saying it was ignored as stale.
func MustStale(t testing.TB, what string, resp *ocpiclient.Response, err error) {
	t.Helper()
	MustStatus(t, resp, err, http.StatusOK, 1000)
	if !strings.Contains(resp.Envelope.StatusMessage, "stale") {
		t.Errorf("%s: status_message %q does not say it was ignored as stale", what, resp.Envelope.StatusMessage)
	}
}

// StaleUpdates reads ocpihub_stale_updates_total of a module from the
// hub's registry; it fails the test when the series is absent (every module
// is exported from the start, at zero).
func (h *Hub) StaleUpdates(t testing.TB, module string) float64 {
	t.Helper()
	mfs, err := h.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "ocpihub_stale_updates_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "module" && l.GetValue() == module {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("the hub exports no ocpihub_stale_updates_total{module=%q}", module)
	return 0
}

// Stamp is the i-th second after 2026-03-01 10:00 UTC in RFC 3339: the
// last_updated of a test's objects, ordered as i is.
func Stamp(i int) string {
	return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
}
