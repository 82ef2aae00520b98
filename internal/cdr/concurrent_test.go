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

// TestConcurrentCDRs: 24 CDRs posted at once all complete. Each CDR's write
// transaction runs the payment observers, which looked a party up through
// the pool while holding the transaction's connection; on PostgreSQL (one
// pool for readers and writers, 6 connections in tests) enough concurrent
// CDRs held every connection and waited for one more: all of them hung.
func TestConcurrentCDRs(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		const n = 24
		// Generous: on a loaded CI machine 24 CDRs through SQLite's one
		// writer take a while; a hang never ends.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		base, _ := b.CPO.HubEndpoint("cdrs", "RECEIVER")
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := b.CPO.Raw(ctx, http.MethodPost, base, cdrJSON(fmt.Sprintf("CONC%02d", i), fmt.Sprintf("S%02d", i), "10.00"), nil)
				switch {
				case resp == nil:
					errs <- fmt.Errorf("CDR %d: %v", i, err)
				case resp.HTTPStatus != http.StatusCreated:
					errs <- fmt.Errorf("CDR %d: HTTP %d %s", i, resp.HTTPStatus, resp.Body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		hubtest.Eventually(t, ctx, "every CDR at eMSP One", func() bool {
			return len(b.EMSP.Requests(func(r sim.Request) bool { return r.Method == http.MethodPost })) >= n
		})
	})
}
