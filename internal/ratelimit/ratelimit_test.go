package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// start is the top of an hour, so the three windows start together.
var start = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

type bundle struct {
	l   *ratelimit.Limiter
	clk *clock.Fake
}

func setup(t *testing.T, db *store.DB) *bundle {
	clk := clock.NewFake(start)
	return &bundle{l: ratelimit.New(db, clk, ratelimit.Defaults()), clk: clk}
}

// take makes n requests and returns the last decision and how many were
// allowed.
func (b *bundle) take(t *testing.T, key string, n int) (ratelimit.Decision, int) {
	t.Helper()
	var d ratelimit.Decision
	allowed := 0
	for range n {
		var err error
		if d, err = b.l.Allow(context.Background(), key, ratelimit.Defaults()); err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		}
	}
	return d, allowed
}

func report(t *testing.T, d ratelimit.Decision) ratelimit.Window {
	t.Helper()
	w, ok := d.Report()
	if !ok {
		t.Fatal("no window reported")
	}
	return w
}

func TestWindowsBurstMinuteHour(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)

		// Burst: 20 in a second, the 21st refused until the next second.
		d, _ := b.take(t, "k", 1)
		if w := report(t, d); w.Name != "second" || w.Limit != 20 || w.Remaining() != 19 || !w.Reset.Equal(start.Add(time.Second)) {
			t.Fatalf("first request reports %+v", w)
		}
		d, allowed := b.take(t, "k", 20)
		if allowed != 19 || d.Allowed {
			t.Fatalf("%d of 20 more allowed, last %v", allowed, d.Allowed)
		}
		if w := report(t, d); w.Name != "second" || w.Remaining() != 0 || d.RetryAfter(b.clk.Now()) != time.Second {
			t.Fatalf("refused burst reports %+v, retry after %s", w, d.RetryAfter(b.clk.Now()))
		}
		b.clk.Add(time.Second)
		if d, _ = b.take(t, "k", 1); !d.Allowed {
			t.Fatal("refused in the next second")
		}
		// A refused request does not count: 21 allowed this minute so far.
		if d.Windows[1].Used != 21 || d.Windows[2].Used != 21 {
			t.Fatalf("counts %+v", d.Windows)
		}

		// Minute: 100, then refused until the minute ends. When the minute
		// has as few left as the second, the minute is reported.
		b.take(t, "k", 19)
		b.clk.Add(time.Second)
		b.take(t, "k", 20)
		b.clk.Add(time.Second)
		b.take(t, "k", 20)
		b.clk.Add(time.Second) // 80 used
		d, _ = b.take(t, "k", 1)
		if w := report(t, d); w.Name != "minute" || w.Remaining() != 19 {
			t.Fatalf("nearest exhaustion: %+v", w)
		}
		_, allowed = b.take(t, "k", 19)
		b.clk.Add(time.Second)
		d, _ = b.take(t, "k", 1)
		if allowed != 19 || d.Allowed {
			t.Fatalf("minute window: %d allowed, then %v", allowed, d.Allowed)
		}
		w := report(t, d)
		if w.Name != "minute" || !w.Reset.Equal(start.Add(time.Minute)) || d.RetryAfter(b.clk.Now()) != 55*time.Second {
			t.Fatalf("refused minute reports %+v, retry after %s", w, d.RetryAfter(b.clk.Now()))
		}

		// Hour: 1000 over ten minutes, then refused until the hour ends.
		for m := 1; m < 10; m++ {
			b.clk.Set(start.Add(time.Duration(m) * time.Minute))
			for s := range 5 {
				b.clk.Set(start.Add(time.Duration(m)*time.Minute + time.Duration(s)*time.Second))
				if _, n := b.take(t, "k", 20); n != 20 {
					t.Fatalf("minute %d second %d: %d of 20 allowed", m, s, n)
				}
			}
		}
		b.clk.Set(start.Add(10 * time.Minute))
		d, _ = b.take(t, "k", 1)
		w = report(t, d)
		if d.Allowed || w.Name != "hour" || w.Limit != 1000 || !w.Reset.Equal(start.Add(time.Hour)) || d.RetryAfter(b.clk.Now()) != 50*time.Minute {
			t.Fatalf("after 1000 in the hour: allowed %v, %+v, retry after %s", d.Allowed, w, d.RetryAfter(b.clk.Now()))
		}
		// Other tokens are not affected; a new hour starts afresh.
		if d, _ = b.take(t, "other", 1); !d.Allowed {
			t.Fatal("another key refused")
		}
		b.clk.Set(start.Add(time.Hour))
		if d, _ = b.take(t, "k", 1); !d.Allowed || d.Windows[2].Used != 1 {
			t.Fatalf("new hour: %+v", d)
		}
	})
}

func TestLimitsOfZeroAreLifted(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	limits := ratelimit.Limits{PerSecond: 0, PerMinute: 3}
	for i := range 3 {
		if d, err := b.l.Allow(ctx, "k", limits); err != nil || !d.Allowed || len(d.Windows) != 1 || d.Windows[0].Name != "minute" {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	if d, _ := b.l.Allow(ctx, "k", limits); d.Allowed {
		t.Fatal("fourth request in the minute allowed")
	}
	if d, _ := b.l.Allow(ctx, "k", ratelimit.Limits{}); !d.Allowed || len(d.Windows) != 0 {
		t.Fatalf("unlimited: %+v", d)
	}
}

// TestReplicasShareCounters: two limiters on one PostgreSQL database (two
// replicas) enforce one limit.
func TestReplicasShareCounters(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.Postgres)
	ctx := context.Background()
	var ls [2]*bundle
	clk := clock.NewFake(start)
	for i := range ls {
		db, err := store.Open(ctx, url, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ls[i] = &bundle{l: ratelimit.New(db, clk, ratelimit.Defaults()), clk: clk}
	}
	_, a := ls[0].take(t, "shared", 12)
	_, b := ls[1].take(t, "shared", 12)
	if a != 12 || b != 8 {
		t.Fatalf("replica A allowed %d, replica B %d; want 12 and 8", a, b)
	}
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ctx := context.Background()
		var id int64
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			return tx.QueryRow(ctx, `INSERT INTO platforms (name, status, endpoints, created_at, updated_at)
				VALUES ('p', 'CONNECTED', '[]', 0, 0) RETURNING id`).Scan(&id)
		})
		if err != nil {
			t.Fatal(err)
		}
		if l, err := b.l.LimitsFor(ctx, id); err != nil || l != ratelimit.Defaults() {
			t.Fatalf("no override: %+v %v", l, err)
		}
		five, zero := 5, 0
		if err := b.l.SetOverride(ctx, id, ratelimit.Override{PerMinute: &five, PerHour: &zero}); err != nil {
			t.Fatal(err)
		}
		if l, err := b.l.LimitsFor(ctx, id); err != nil || l != (ratelimit.Limits{PerSecond: 20, PerMinute: 5, PerHour: 0}) {
			t.Fatalf("override: %+v %v", l, err)
		}
		neg := -1
		var e *ocpi.Error
		if err := b.l.SetOverride(ctx, id, ratelimit.Override{PerSecond: &neg}); !errors.As(err, &e) || e.Field != "per_second" {
			t.Fatalf("negative limit: %v", err)
		}
		if err := b.l.SetOverride(ctx, id+100, ratelimit.Override{}); !ocpi.IsNotFound(err) {
			t.Fatalf("unknown platform: %v", err)
		}
		if err := b.l.SetOverride(ctx, id, ratelimit.Override{}); err != nil {
			t.Fatal(err)
		}
		if l, _ := b.l.LimitsFor(ctx, id); l != ratelimit.Defaults() {
			t.Fatalf("after clearing: %+v", l)
		}
	})
}
