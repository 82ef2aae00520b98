package cdr_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestConcurrentCDRs: 8, 16 and 32 CDRs posted at once all complete, and
// nothing asked for a pooled connection while holding a write transaction.
// Each CDR's write transaction runs the payment and UPI observers, which
// looked a party up through the pool while holding the transaction's
// connection; on PostgreSQL (one pool for readers and writers) enough
// concurrent CDRs held every connection and waited for one more: all of
// them hung.
func TestConcurrentCDRs(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		sent := 0
		for _, n := range []int{8, 16, 32} {
			// Generous: on a loaded CI machine 32 CDRs through SQLite's one
			// writer take a while; a hang never ends.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			base, _ := b.CPO.HubEndpoint("cdrs", "RECEIVER")
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					id := fmt.Sprintf("C%02dN%02d", n, i)
					resp, err := b.CPO.Raw(ctx, http.MethodPost, base, cdrJSON(id, "S"+id, "10.00"), nil)
					switch {
					case resp == nil:
						errs <- fmt.Errorf("%d at once, CDR %d: %v", n, i, err)
					case resp.HTTPStatus != http.StatusCreated:
						errs <- fmt.Errorf("%d at once, CDR %d: HTTP %d %s", n, i, resp.HTTPStatus, resp.Body)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			sent += n
			hubtest.Eventually(t, ctx, fmt.Sprintf("%d CDRs at eMSP One", sent), func() bool {
				return len(b.EMSP.Requests(func(r sim.Request) bool { return r.Method == http.MethodPost })) >= sent
			})
			cancel()
			if v := b.H.App.DB.Violations(); v != 0 {
				t.Fatalf("%d at once: %d pooled reads inside a write transaction", n, v)
			}
		}
	})
}
