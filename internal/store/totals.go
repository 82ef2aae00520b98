package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// Totals caches the totals of list queries (X-Total-Count): counting a large
// table on every page costs more than the page itself (a COUNT over 100 000
// rows on PostgreSQL scans them). A cached total is used for at most TTL and
// only while no write of this process has invalidated it, so a client of
// this replica sees its own writes at once; writes through other replicas
// show within TTL. Set it on List.Totals.
type Totals struct {
	TTL time.Duration
	// Now tells the time (default time.Now); pass the service's clock.
	Now func() time.Time

	mu  sync.Mutex
	gen uint64
	m   map[string]total
}

type total struct {
	n   int64
	gen uint64
	at  time.Time
}

// Invalidate drops every cached total (call it after a committed write).
func (t *Totals) Invalidate() {
	t.mu.Lock()
	t.gen++
	t.m = nil
	t.mu.Unlock()
}

// count returns the total of l, from the cache when fresh.
func (t *Totals) count(ctx context.Context, q Querier, l List) (int64, error) {
	where, args := l.where(false)
	key := fmt.Sprint(l.Table, where, args)
	now := clock.Real{}.Now()
	if t.Now != nil {
		now = t.Now()
	}
	t.mu.Lock()
	e, ok := t.m[key]
	gen := t.gen
	t.mu.Unlock()
	if ok && e.gen == gen && now.Sub(e.at) < t.TTL {
		return e.n, nil
	}
	n, err := l.Count(ctx, q)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	if t.gen == gen {
		if t.m == nil || len(t.m) > 1000 {
			t.m = map[string]total{}
		}
		t.m[key] = total{n: n, gen: gen, at: now}
	}
	t.mu.Unlock()
	return n, nil
}
