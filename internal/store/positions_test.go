package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// docsWorld is a docs table whose writes tell a position index their keys,
// as the location service does.
type docsWorld struct {
	db   *store.DB
	pos  *store.Positions
	now  time.Time
	mu   sync.Mutex
	keys map[string]store.Key // name → key
	lu   int64
}

func newDocsWorld(t *testing.T, db *store.DB, span int64) *docsWorld {
	createDocs(t, db)
	w := &docsWorld{db: db, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), keys: map[string]store.Key{}, lu: 1_000}
	w.pos = &store.Positions{TTL: 5 * time.Second, Span: span, Now: func() time.Time {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.now
	}}
	return w
}

// write inserts name (or moves it to a new last_updated when it exists),
// telling the index unless quiet (a write of another replica).
func (w *docsWorld) write(t *testing.T, name, grp string, quiet bool) {
	t.Helper()
	w.lu += 7
	lu := w.lu
	old, found := w.keys[name]
	var pk int64
	err := w.db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		if found {
			_, err := tx.Exec(ctx, "UPDATE docs SET last_updated = $1 WHERE name = $2", lu, name)
			pk = old.PK
			return err
		}
		return tx.QueryRow(ctx, "INSERT INTO docs (name, grp, last_updated, body) VALUES ($1, $2, $3, $4) RETURNING pk",
			name, grp, lu, fmt.Sprintf(`{"name":%q}`, name)).Scan(&pk)
	})
	if err != nil {
		t.Fatal(err)
	}
	next := store.Key{LastUpdated: lu, PK: pk}
	w.keys[name] = next
	if quiet {
		return
	}
	if found {
		w.pos.Changed([]store.Key{old}, []store.Key{next})
	} else {
		w.pos.Changed(nil, []store.Key{next})
	}
}

func (w *docsWorld) remove(t *testing.T, name string) {
	t.Helper()
	old := w.keys[name]
	err := w.db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM docs WHERE name = $1", name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(w.keys, name)
	w.pos.Changed([]store.Key{old}, nil)
}

// page lists through the index (idx) or with plain COUNT and OFFSET.
func (w *docsWorld) page(t *testing.T, p ocpi.PageRequest, grp string, idx bool) ([]string, int64) {
	t.Helper()
	l := store.List{Table: "docs", Columns: "pk, last_updated, body"}.WithPage(p)
	if grp != "" {
		l.Where, l.Args = []string{"grp = $1"}, []any{grp}
	}
	if idx {
		l.Positions = w.pos
	}
	items, page, err := store.Documents(context.Background(), w.db.Read(), l)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(items))
	for i, it := range items {
		var d struct{ Name string }
		if err := json.Unmarshal(it, &d); err != nil {
			t.Fatal(err)
		}
		names[i] = d.Name
	}
	return names, page.Total
}

// check compares index pages with plain OFFSET pages over offsets, limits,
// date windows and filters.
func (w *docsWorld) check(t *testing.T, rnd *rand.Rand, round int) {
	t.Helper()
	var n int
	if err := w.db.Read().QueryRow(context.Background(), "SELECT COUNT(*) FROM docs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		p := ocpi.PageRequest{Offset: rnd.IntN(n + 3), Limit: 1 + rnd.IntN(7)}
		if rnd.IntN(3) == 0 {
			p.DateFrom = ocpi.DateTime{Time: time.UnixMicro(rnd.Int64N(w.lu + 20))}
		}
		if rnd.IntN(3) == 0 {
			p.DateTo = ocpi.DateTime{Time: time.UnixMicro(rnd.Int64N(w.lu + 20))}
		}
		grp := ""
		if rnd.IntN(4) == 0 {
			grp = "odd"
		}
		want, wantTotal := w.page(t, p, grp, false)
		got, gotTotal := w.page(t, p, grp, true)
		if diff := cmp.Diff(want, got); diff != "" || gotTotal != wantTotal {
			t.Fatalf("round %d, %+v grp=%q: total %d, want %d; page (-offset +index):\n%s", round, p, grp, gotTotal, wantTotal, diff)
		}
	}
}

// TestPositionsMatchOffset holds pages found through the position index to
// the plain OFFSET query's pages and its totals to COUNT(*), while rows are
// moved to the end (status changes), inserted and deleted between pages.
func TestPositionsMatchOffset(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := newDocsWorld(t, db, 4)
		rnd := rand.New(rand.NewPCG(1, 2))
		for i := range 60 {
			grp := "even"
			if i%2 == 1 {
				grp = "odd"
			}
			w.write(t, fmt.Sprintf("d%03d", i), grp, false)
		}
		next := 60
		for round := range 120 {
			w.check(t, rnd, round)
			for range 1 + rnd.IntN(4) {
				names := make([]string, 0, len(w.keys))
				for k := range w.keys {
					names = append(names, k)
				}
				if len(names) == 0 {
					break
				}
				name := names[rnd.IntN(len(names))]
				switch op := rnd.IntN(10); {
				case op < 6: // a status change: the row moves to the end
					w.write(t, name, "", false)
				case op < 8:
					w.write(t, fmt.Sprintf("d%03d", next), []string{"even", "odd"}[next%2], false)
					next++
				default:
					w.remove(t, name)
				}
			}
		}
	})
}

// TestPositionsOtherReplica: writes the index is not told of (another
// replica's) show once the counts are older than the TTL.
func TestPositionsOtherReplica(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := newDocsWorld(t, db, 4)
		for i := range 30 {
			w.write(t, fmt.Sprintf("d%03d", i), "even", false)
		}
		all := ocpi.PageRequest{Offset: 10, Limit: 5}
		if _, total := w.page(t, all, "", true); total != 30 {
			t.Fatalf("total = %d, want 30", total)
		}
		for i := range 5 {
			w.write(t, fmt.Sprintf("q%03d", i), "even", true)
		}
		w.write(t, "d003", "", true) // moved, quietly
		if _, total := w.page(t, all, "", true); total != 30 {
			t.Fatalf("total within the TTL = %d, want the cached 30 (the test must see the cache to mean anything)", total)
		}
		w.mu.Lock()
		w.now = w.now.Add(8 * time.Second)
		w.mu.Unlock()
		// The first list after the TTL answers with the counts it has and
		// counts them again in the background.
		w.page(t, all, "", true)
		w.pos.WaitRefresh()
		rnd := rand.New(rand.NewPCG(3, 4))
		w.check(t, rnd, 0)
		if _, total := w.page(t, all, "", true); total != 35 {
			t.Fatalf("total after the TTL = %d, want 35", total)
		}
	})
}

// TestTotalsMoved: a moved last_updated drops the cached totals of date
// windows and keeps the others.
func TestTotalsMoved(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := newDocsWorld(t, db, 4)
		for i := range 10 {
			w.write(t, fmt.Sprintf("d%03d", i), "even", true)
		}
		totals := &store.Totals{TTL: time.Hour}
		count := func(p ocpi.PageRequest) int64 {
			t.Helper()
			l := store.List{Table: "docs", Columns: "pk, last_updated, body", Totals: totals}.WithPage(p)
			_, page, err := store.Documents(context.Background(), db.Read(), l)
			if err != nil {
				t.Fatal(err)
			}
			return page.Total
		}
		all := ocpi.PageRequest{Limit: 1}
		window := ocpi.PageRequest{Limit: 1, DateTo: ocpi.DateTime{Time: time.UnixMicro(w.keys["d004"].LastUpdated + 1)}}
		if got := count(all); got != 10 {
			t.Fatalf("total = %d, want 10", got)
		}
		if got := count(window); got != 5 {
			t.Fatalf("window total = %d, want 5", got)
		}
		w.write(t, "d000", "", true)      // moved out of the window
		w.write(t, "extra", "even", true) // inserted, and not told: the cached total stays
		totals.Moved()
		if got := count(window); got != 4 {
			t.Fatalf("window total after a move = %d, want 4", got)
		}
		if got := count(all); got != 10 {
			t.Fatalf("total after a move = %d, want the cached 10", got)
		}
		totals.Invalidate()
		if got := count(all); got != 11 {
			t.Fatalf("total after Invalidate = %d, want 11", got)
		}
	})
}
