package party_test

import (
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestConcurrentRegistrationsWithOneTokenA: several credentials POSTs with
// the same token A, all past authentication at the same time, register the
// platform exactly once; the others get 401.
func TestConcurrentRegistrationsWithOneTokenA(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		const n = 4
		cpo := hubtest.StartSim(t, sim.StartCPO, "Acme", "NL", "ACM")
		inv := invite(t, h, "acme")
		tokenB, err := cpo.Begin(ctx(t), h.VersionsURL(), inv.Token)
		if err != nil {
			t.Fatal(err)
		}
		credURL, _ := cpo.HubEndpoint("credentials", "")
		// Hold the hub's callbacks until every POST has made one: then all n
		// have been authenticated with the unused token A.
		callback := func(r sim.Request) bool { return r.Method == http.MethodGet && r.Path == "/ocpi/versions" }
		release := cpo.Hold(callback)
		defer release()

		type result struct {
			httpStatus, code int
			err              error
		}
		results := make(chan result, n)
		for range n {
			go func() {
				resp, err := cpo.Raw(ctx(t), http.MethodPost, credURL, cpo.Credentials(tokenB), nil)
				if err != nil || resp.Envelope == nil {
					results <- result{err: err}
					return
				}
				results <- result{httpStatus: resp.HTTPStatus, code: resp.Envelope.StatusCode}
			}()
		}
		if _, err := cpo.WaitArrived(ctx(t), n, callback); err != nil {
			t.Fatal(err)
		}
		release()

		var ok, refused int
		for range n {
			r := <-results
			switch {
			case r.err != nil:
				t.Errorf("POST failed: %v", r.err)
			case r.httpStatus == http.StatusOK && r.code == ocpi.StatusSuccess:
				ok++
			case r.httpStatus == http.StatusUnauthorized && r.code == ocpi.StatusClientError:
				refused++
			default:
				t.Errorf("POST answered HTTP %d status_code %d", r.httpStatus, r.code)
			}
		}
		if ok != 1 || refused != n-1 {
			t.Errorf("%d registrations succeeded and %d got 401, want 1 and %d", ok, refused, n-1)
		}
		if got := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms"); got != 1 {
			t.Errorf("%d platforms stored, want 1", got)
		}
		if got := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platform_roles"); got != 1 {
			t.Errorf("%d roles stored, want 1", got)
		}
	})
}
