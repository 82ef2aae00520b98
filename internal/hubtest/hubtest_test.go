package hubtest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestHarnessRegistersAndRestarts drives the harness itself: a CPO registers,
// the hub restarts on the same database and address, and the CPO's token
// still works.
func TestHarnessRegistersAndRestarts(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, err := sim.StartCPO("Harness CPO", "NL", "HCP", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cpo.Close)
		h.Register(t, cpo.Platform)

		var list []*party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties", nil, &list)
		if len(list) != 1 || list[0].Status != party.StatusConnected || list[0].Name != "Harness CPO" {
			t.Fatalf("parties after registration: %+v", list)
		}

		h.Restart(t)
		url, _ := cpo.HubEndpoint("credentials", "")
		if _, err := cpo.Do(hubtest.Ctx(t, 10e9), http.MethodGet, url, nil, nil); err != nil {
			t.Fatalf("credentials GET after restart: %v", err)
		}
	})
}

// recordingTB collects what checks report instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestDefaultChecksValidateSchemas: the default checks catch an answer whose
// data breaks the spec's schema although its envelope is well-formed.
func TestDefaultChecksValidateSchemas(t *testing.T) {
	t.Parallel()
	ex := hubtest.Exchange{
		Method: "GET", Path: "/ocpi/2.2.1/hubclientinfo", Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   []byte(`{"data":[{"party_id":"EXA","country_code":"NL","role":"CPO","status":"ONLINE","last_updated":"2025-01-01T00:00:00Z"}],"status_code":1000,"timestamp":"2025-01-01T00:00:00Z"}`),
	}
	rec := &recordingTB{TB: t}
	for _, c := range hubtest.DefaultChecks() {
		c(rec, ex)
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "data[0].status") {
		t.Errorf("checks reported %q; want one schema failure naming data[0].status", rec.errors)
	}
	ex.Body = []byte(strings.Replace(string(ex.Body), "ONLINE", "OFFLINE", 1))
	rec = &recordingTB{TB: t}
	for _, c := range hubtest.DefaultChecks() {
		c(rec, ex)
	}
	if len(rec.errors) != 0 {
		t.Errorf("a valid answer was reported: %q", rec.errors)
	}
}
