package traffic_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type bundle struct {
	db    *store.DB
	clock *clock.Fake
	rec   *traffic.Recorder
}

func setup(t *testing.T, db *store.DB, cfg traffic.Config) *bundle {
	t.Helper()
	clk := clock.NewFake(t0)
	rec := traffic.New(db, clk, nil, nil, cfg)
	rec.Start()
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	return &bundle{db: db, clock: clk, rec: rec}
}

func (b *bundle) flush(t *testing.T) {
	t.Helper()
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) list(t *testing.T, f traffic.Filter) []traffic.Exchange {
	t.Helper()
	xs, _, err := traffic.List(context.Background(), b.db.Read(), f)
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

func capture(platform int64, dir traffic.Direction, method, url string, status int, cid string) *traffic.Capture {
	return &traffic.Capture{At: t0, Direction: dir, PlatformID: platform, Partner: fmt.Sprintf("p%d", platform),
		Method: method, URL: url, HTTPStatus: status, CorrelationID: cid, RequestID: "r-" + cid, Duration: 3 * time.Millisecond,
		RequestHeader:  http.Header{"Authorization": {"Token secret-token-1"}, "Content-Type": {"application/json"}},
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		RequestBody:    []byte(`{"status":"AVAILABLE","last_updated":"2026-03-01T12:00:00Z"}`),
		ResponseBody:   []byte(`{"status_code":1000,"timestamp":"2026-03-01T12:00:00Z"}`)}
}

func TestRecordAndSearch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, traffic.Config{})
		b.rec.Record(capture(1, traffic.In, "PATCH", "https://hub/ocpi/2.2.1/cpo/locations/NL/CPA/LOC1/E1", 200, "chain-1"))
		b.rec.Record(capture(2, traffic.Out, "PATCH", "https://emsp/ocpi/emsp/2.2.1/locations/NL/CPA/LOC1/E1", 200, "chain-1"))
		bad := capture(3, traffic.Out, "PATCH", "https://emsp3/locations/NL/CPA/LOC1/E1", 0, "chain-1")
		bad.ResponseBody, bad.Error = nil, "unreachable"
		b.rec.Record(bad)
		b.rec.Record(capture(2, traffic.Out, "PUT", "https://emsp/ocpi/emsp/2.2.1/tariffs/NL/CPA/T1", 200, "chain-2"))
		b.flush(t)

		chain := b.list(t, traffic.Filter{CorrelationID: "chain-1", Oldest: true})
		if len(chain) != 3 || chain[0].Direction != traffic.In || chain[0].PlatformID != 1 {
			t.Fatalf("chain: %+v", chain)
		}
		x := chain[0]
		if x.Module != "locations" || x.StatusCode != 1000 || x.DurationUS != 3000 || x.RequestID != "r-chain-1" ||
			!cmp.Equal(x.ObjectIDs, []string{"LOC1", "E1"}) {
			t.Errorf("exchange: %+v", x)
		}
		for _, tc := range []struct {
			name string
			f    traffic.Filter
			want int
		}{
			{"platform", traffic.Filter{PlatformID: 2}, 2},
			{"partner name", traffic.Filter{Partner: "p3"}, 1},
			{"module", traffic.Filter{Module: "tariffs"}, 1},
			{"direction", traffic.Filter{Direction: traffic.Out}, 3},
			{"failed", traffic.Filter{StatusClass: "failed"}, 1},
			{"2xx", traffic.Filter{StatusClass: "2xx"}, 3},
			{"1xxx", traffic.Filter{StatusClass: "1xxx"}, 3},
			{"object", traffic.Filter{ObjectID: "LOC1"}, 3},
			{"object with LIKE wildcard", traffic.Filter{ObjectID: "LOC_"}, 0},
			{"object T1", traffic.Filter{ObjectID: "T1"}, 1},
			{"time range", traffic.Filter{From: t0.Add(time.Second)}, 0},
			{"time range includes", traffic.Filter{From: t0, To: t0.Add(time.Second)}, 4},
		} {
			if got := len(b.list(t, tc.f)); got != tc.want {
				t.Errorf("%s: %d exchanges, want %d", tc.name, got, tc.want)
			}
		}

		whole, err := traffic.Find(context.Background(), db.Read(), x.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if whole.RequestHeader.Get("Authorization") != traffic.Redacted || !strings.Contains(whole.RequestBody, `"AVAILABLE"`) ||
			!strings.Contains(whole.ResponseBody, "1000") {
			t.Errorf("whole exchange: %+v", whole)
		}
		// Another platform never reads it.
		if _, err := traffic.Find(context.Background(), db.Read(), x.ID, 2); !ocpi.IsNotFound(err) {
			t.Errorf("another platform's exchange: %v", err)
		}
	})
}

func TestKeysetPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, traffic.Config{})
		for i := range 25 {
			b.rec.Record(capture(1, traffic.In, "GET", fmt.Sprintf("https://hub/ocpi/2.2.1/emsp/locations/L%d", i), 200, "c"))
		}
		b.flush(t)
		seen := map[int64]bool{}
		var before int64
		pages := 0
		for {
			xs, next, err := traffic.List(context.Background(), db.Read(), traffic.Filter{Limit: 10, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for i, x := range xs {
				if seen[x.ID] {
					t.Fatalf("exchange %d twice", x.ID)
				}
				if i > 0 && x.ID >= xs[i-1].ID {
					t.Fatalf("not newest first")
				}
				seen[x.ID] = true
			}
			if next == 0 {
				break
			}
			before = next
		}
		if len(seen) != 25 || pages != 3 {
			t.Errorf("%d exchanges in %d pages", len(seen), pages)
		}
	})
}

// TestRecordNeverBlocks: a full buffer drops and counts, and the caller
// returns at once even when the writer is stuck.
func TestRecordNeverBlocks(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	rec := traffic.New(db, clock.NewFake(t0), nil, nil, traffic.Config{BufferSize: 10})
	// Not started: nothing drains the buffer.
	done := make(chan struct{})
	go func() {
		for range 50 {
			rec.Record(capture(1, traffic.In, "GET", "https://hub/ocpi/versions", 200, "c"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Record blocked on a full buffer")
	}
	if got := rec.Dropped(); got != 40 {
		t.Errorf("dropped %d, want 40", got)
	}
	rec.Start()
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.Recorded(); got != 10 {
		t.Errorf("recorded %d, want 10", got)
	}
	_ = rec.Close(context.Background())
}

// TestRetentionAndSizeCap records a bounded load from concurrent writers
// over several simulated days and prunes as the periodic job does: nothing
// older than the retention stays, and the stored size stays under the cap.
func TestRetentionAndSizeCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const maxBytes = 200_000
		b := setup(t, db, traffic.Config{Retention: 48 * time.Hour, MaxBytes: maxBytes, BufferSize: 10_000})
		ctx := context.Background()
		body := []byte(`{"id":"LOC1","name":"` + strings.Repeat("x", 500) + `"}`)
		for day := range 5 {
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 150 {
						c := capture(int64(w+1), traffic.In, "PUT", "https://hub/ocpi/2.2.1/cpo/locations/NL/CPA/LOC1", 200, fmt.Sprint(day, w, i))
						c.At = b.clock.Now()
						c.RequestBody = body
						b.rec.Record(c)
					}
				}()
			}
			wg.Wait()
			b.flush(t)
			if _, err := b.rec.Prune(ctx); err != nil {
				t.Fatal(err)
			}
			var size, n, oldest int64
			if err := db.Read().QueryRow(ctx, "SELECT COALESCE(SUM(size), 0), COUNT(*), COALESCE(MIN(at), 0) FROM traffic").Scan(&size, &n, &oldest); err != nil {
				t.Fatal(err)
			}
			if size > maxBytes || n == 0 {
				t.Errorf("day %d: %d bytes in %d exchanges, cap %d", day, size, n, maxBytes)
			}
			if age := b.clock.Now().Sub(time.UnixMicro(oldest)); age > 48*time.Hour {
				t.Errorf("day %d: an exchange %s old is kept", day, age)
			}
			b.clock.Add(24 * time.Hour)
		}
		if b.rec.Dropped() != 0 {
			t.Errorf("%d dropped", b.rec.Dropped())
		}
		// Retention alone: two quiet days later nothing is left.
		b.clock.Add(72 * time.Hour)
		if _, err := b.rec.Prune(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(b.list(t, traffic.Filter{})); n != 0 {
			t.Errorf("%d exchanges past the retention", n)
		}
	})
}

// TestOldestByStartTime: a chain lists its hops by when they started, not
// by when they were recorded, and pages through them.
func TestOldestByStartTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, traffic.Config{})
		for i, off := range []int{3, 1, 2, 0, 4} {
			c := capture(1, traffic.Out, "PUT", fmt.Sprintf("https://x/locations/L%d", i), 200, "chain")
			c.At = t0.Add(time.Duration(off) * time.Millisecond)
			b.rec.Record(c)
		}
		b.flush(t)
		var got []time.Time
		var after int64
		for {
			xs, next, err := traffic.List(context.Background(), db.Read(), traffic.Filter{CorrelationID: "chain", Oldest: true, After: after, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				got = append(got, x.At)
			}
			if next == 0 {
				break
			}
			after = next
		}
		if len(got) != 5 {
			t.Fatalf("%d hops", len(got))
		}
		for i := range got {
			if !got[i].Equal(t0.Add(time.Duration(i) * time.Millisecond)) {
				t.Errorf("hop %d started at %s", i, got[i])
			}
		}
	})
}
