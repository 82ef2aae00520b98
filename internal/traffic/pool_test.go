package traffic_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// TestPooledBodiesAreStoredAsSent: the inbound edge copies bodies into the
// recorder's pooled buffers, and the recorder hands them back once it has
// prepared the exchange. Four senders record 400 exchanges, each body
// written into a buffer taken right after the previous Record (so buffers
// are reused while earlier exchanges wait in the batch), of sizes on both
// sides of what is compressed and of what is cut. Every stored exchange
// has its own bodies and ids, none a neighbour's; a dropped or skipped
// capture's buffers go back too (Return, for an exchange the edge skips).
func TestPooledBodiesAreStoredAsSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const limit = 4 << 10
		b := setup(t, db, traffic.Config{MaxBodyBytes: limit, BatchSize: 16})
		body := func(n int) string {
			// Sizes from a few bytes to past the cut, each naming its exchange.
			filler := strings.Repeat(fmt.Sprintf("%04d", n), (n*37)%(3*limit/4))
			return fmt.Sprintf(`{"data":{"id":"LOC-%04d","name":"%s"},"status_code":1000}`, n, filler)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 100 {
					n := w*100 + i
					c := capture(1, traffic.In, "GET", fmt.Sprintf("https://hub/ocpi/2.2.1/emsp/locations/NL/CPA/L%d", n), 200, fmt.Sprintf("c-%04d", n))
					req, resp := traffic.Buffer(), traffic.Buffer()
					req.WriteString(fmt.Sprintf(`{"n":%d}`, n))
					resp.WriteString(body(n))
					c.RequestBody, c.ResponseBody, c.Buffers = req.Bytes(), resp.Bytes(), []*bytes.Buffer{req, resp}
					b.rec.Record(c)
					// A capture the edge skips returns its buffers at once.
					skipped := traffic.Buffer()
					skipped.WriteString("never stored")
					traffic.Return([]*bytes.Buffer{skipped})
				}
			})
		}
		wg.Wait()
		b.flush(t)
		xs := b.list(t, traffic.Filter{Limit: 500})
		if len(xs) != 400 {
			t.Fatalf("%d exchanges stored, want 400", len(xs))
		}
		for _, x := range xs {
			var n int
			if _, err := fmt.Sscanf(x.CorrelationID, "c-%04d", &n); err != nil {
				t.Fatal(err)
			}
			whole, err := traffic.Find(context.Background(), db.Read(), x.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := body(n)
			if len(want) > limit {
				want = want[:limit] + "…[cut]"
			}
			if whole.RequestBody != fmt.Sprintf(`{"n":%d}`, n) || whole.ResponseBody != want {
				t.Fatalf("exchange %d stored %.80q… / %.80q…, want its own bodies", n, whole.RequestBody, whole.ResponseBody)
			}
			if id := fmt.Sprintf("LOC-%04d", n); len(body(n)) <= limit && !contains(x.ObjectIDs, id) {
				t.Errorf("exchange %d: ids %v, want %s", n, x.ObjectIDs, id)
			}
		}
	})
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
