package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestReads: the reads of a set are answered in the order they were
// queued, a missing row as ErrNoRows, a function's error returned without
// stopping the others, a row its function did not scan given back, and
// inside a write transaction they see its writes. Statements are counted
// one each, and on PostgreSQL one wait for them all.
func TestReads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		setupBatch(t, db)
		ctx := context.Background()
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			insertLater(ctx, tx, "a", 1)
			return insertLater(ctx, tx, "b", 2)
		}); err != nil {
			t.Fatal(err)
		}
		valueOf := func(rs *store.Reads, name string, v *int, missing *bool) {
			rs.QueryRow(func(row store.Row) error {
				err := row.Scan(v)
				if errors.Is(err, store.ErrNoRows) {
					*missing = true
					return nil
				}
				return err
			}, "SELECT last_updated FROM docs WHERE name = $1", name)
		}
		cctx, n := store.CountStmts(ctx)
		rs := db.Reads()
		var a, b, c int
		var aMissing, bMissing, cMissing bool
		valueOf(rs, "a", &a, &aMissing)
		valueOf(rs, "none", &c, &cMissing)
		// Not scanned: its row is given back all the same.
		rs.QueryRow(func(store.Row) error { return nil }, "SELECT name FROM docs WHERE name = 'a'")
		var names []string
		rs.Query(func(rows store.Rows) error {
			var err error
			names, err = store.Collect(rows, func(r store.Row) (s string, err error) { return s, r.Scan(&s) })
			return err
		}, "SELECT name FROM docs ORDER BY name")
		valueOf(rs, "b", &b, &bMissing)
		if rs.Len() != 5 {
			t.Fatalf("%d reads queued, want 5", rs.Len())
		}
		if err := rs.Run(cctx); err != nil {
			t.Fatal(err)
		}
		if a != 1 || b != 2 || aMissing || bMissing || !cMissing {
			t.Errorf("a %d (missing %v), b %d (missing %v), none missing %v; want 1, 2 and only none missing", a, aMissing, b, bMissing, cMissing)
		}
		if strings.Join(names, ",") != "a,b" {
			t.Errorf("the rows read: %q, want a and b", names)
		}
		wantWaits := int64(1)
		if db.Engine() == store.SQLite {
			wantWaits = 5
		}
		if n.N() != 5 || n.Waits() != wantWaits {
			t.Errorf("%d statements, %d waits; want 5 and %d", n.N(), n.Waits(), wantWaits)
		}
		if err := rs.Run(ctx); err == nil {
			t.Error("a set of reads ran twice")
		}

		// A function's error is the set's; the reads after it still run.
		failed := errors.New("scan refused")
		rs = db.Reads()
		rs.QueryRow(func(store.Row) error { return failed }, "SELECT last_updated FROM docs WHERE name = 'a'")
		b, bMissing = 0, false
		valueOf(rs, "b", &b, &bMissing)
		if err := rs.Run(ctx); !errors.Is(err, failed) {
			t.Errorf("%v, want the function's error", err)
		}
		if b != 2 {
			t.Errorf("the read after a failed one: %d, want 2", b)
		}
		// A statement the database refuses is an error; the pool serves
		// the next set.
		rs = db.Reads()
		rs.QueryRow(func(row store.Row) error { var v int; return row.Scan(&v) }, "SELECT no_such_column FROM docs")
		rs.QueryRow(func(row store.Row) error { var v int; return row.Scan(&v) }, "SELECT 1")
		if err := rs.Run(ctx); err == nil {
			t.Error("a read of a missing column succeeded")
		}

		// Inside a write transaction: its own writes are seen, queued ones
		// included.
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			insertLater(ctx, tx, "c", 3)
			rs := db.Reads()
			c, cMissing = 0, false
			a = 0
			valueOf(rs, "c", &c, &cMissing)
			valueOf(rs, "a", &a, &aMissing)
			var n int
			rs.Query(func(rows store.Rows) error {
				for rows.Next() {
					n++
				}
				return rows.Err()
			}, "SELECT name FROM docs")
			if err := rs.Run(ctx); err != nil {
				return err
			}
			if n != 3 {
				t.Errorf("in the transaction: %d rows, want 3", n)
			}
			if c != 3 || cMissing || a != 1 {
				t.Errorf("in the transaction: c %d (missing %v), a %d; want 3 and 1", c, cMissing, a)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if v := db.Violations(); v != 0 {
			t.Errorf("%d pooled reads while holding a transaction", v)
		}
		for i := range 20 { // nothing left held: the pool serves on
			rs := db.Reads()
			a = 0
			valueOf(rs, "a", &a, &aMissing)
			valueOf(rs, "b", &b, &bMissing)
			if err := rs.Run(ctx); err != nil || a != 1 {
				t.Fatalf("set %d: %v, a %d", i, err, a)
			}
		}
	})
}

// TestReadsRoundTrips (PostgreSQL): a set of reads is one round trip on
// the wire, however many it holds.
func TestReadsRoundTrips(t *testing.T) {
	t.Parallel()
	f, db := openCounted(t)
	ctx := context.Background()
	for _, n := range []int{2, 3, 5} {
		for run := range 2 { // the first run prepares the statements
			if run == 1 {
				f.ResetFlights()
			}
			rs := db.Reads()
			got := make([]int, n)
			for i := range n - 1 {
				rs.QueryRow(func(row store.Row) error { return row.Scan(&got[i]) }, "SELECT $1::int + 0 * (SELECT COUNT(*) FROM docs)", i)
			}
			rs.Query(func(rows store.Rows) error {
				for rows.Next() {
					if err := rows.Scan(&got[n-1]); err != nil {
						return err
					}
				}
				return rows.Err()
			}, "SELECT g FROM generate_series(0, $1::int) AS g", n-1)
			if err := rs.Run(ctx); err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if v != i {
					t.Fatalf("read %d answered %d", i, v)
				}
			}
			if run == 1 {
				if flights := f.Flights(); flights != 1 {
					t.Errorf("%d reads: %d round trips, want 1", n, flights)
				}
			}
		}
	}
}
