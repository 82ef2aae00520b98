package hubtest_test

import (
	"net/http"
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
