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

// TestSameCDRPostedAtOnce: one CDR posted by 8 clients at once (a CPO
// retrying over several connections) is stored once and pushed to its
// eMSP once; every POST is answered with success, one of them as the
// creation. The losers of the race to insert it hit the key (on PostgreSQL
// when their insert is sent, with the transaction's next statement) and
// answer as repeats.
func TestSameCDRPostedAtOnce(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		base, _ := b.CPO.HubEndpoint("cdrs", "RECEIVER")
		body := cdrJSON("CSAME", "SSAME", "10.00")
		const n = 8
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for range n {
			wg.Go(func() {
				resp, err := b.CPO.Raw(ctx, http.MethodPost, base, body, nil)
				if resp == nil {
					t.Errorf("POST: %v", err)
					return
				}
				statuses <- resp.HTTPStatus
			})
		}
		wg.Wait()
		close(statuses)
		created := 0
		for s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("a POST of the same CDR was answered HTTP %d", s)
			}
		}
		if created != 1 {
			t.Errorf("%d of %d POSTs created the CDR, want 1", created, n)
		}
		var stored, pushes int
		if err := b.H.DB.Read().QueryRow(ctx, "SELECT COUNT(*) FROM cdrs WHERE id = 'CSAME'").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if err := b.H.DB.Read().QueryRow(ctx, "SELECT COUNT(*) FROM hub_push WHERE module = 'cdrs'").Scan(&pushes); err != nil {
			t.Fatal(err)
		}
		if stored != 1 || pushes != 1 {
			t.Errorf("stored %d CDRs and queued %d pushes, want 1 and 1", stored, pushes)
		}
	})
}
