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
//
// A write that only moves a row's last_updated (a status change) changes no
// total but those of a date window: Moved drops just those. An insert or a
// delete changes them all: Invalidate.
type Totals struct {
	TTL time.Duration
	// Now tells the time (default time.Now); pass the service's clock.
	Now func() time.Time

	mu sync.Mutex
	// gen moves with every Invalidate, dgen with every Moved too: a count
	// taken under an older one is not kept.
	gen, dgen uint64
	m         map[string]total
}

type total struct {
	n         int64
	gen, dgen uint64
	dated     bool
	at        time.Time
}

// Moved drops the cached totals of date windows (call it after a committed
// write that changed a row's last_updated but added or removed no row).
func (t *Totals) Moved() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dgen++
	for k, e := range t.m {
		if e.dated {
			delete(t.m, k)
		}
	}
}

func (e total) valid(gen, dgen uint64) bool {
	return e.gen == gen && (!e.dated || e.dgen == dgen)
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
	dated := l.DateFrom != 0 || l.DateTo != 0
	t.mu.Lock()
	e, ok := t.m[key]
	gen, dgen := t.gen, t.dgen
	t.mu.Unlock()
	if ok && e.valid(gen, dgen) && now.Sub(e.at) < t.TTL {
		return e.n, nil
	}
	n, err := l.Count(ctx, q)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	if e := (total{n: n, gen: gen, dgen: dgen, dated: dated, at: now}); e.valid(t.gen, t.dgen) {
		if t.m == nil || len(t.m) > 1000 {
			t.m = map[string]total{}
		}
		t.m[key] = e
	}
	t.mu.Unlock()
	return n, nil
}
