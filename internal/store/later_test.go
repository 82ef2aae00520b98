package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// insertLater queues the write of a doc named name with value v.
func insertLater(ctx context.Context, tx *store.Tx, name string, v int) error {
	return tx.ExecLater(ctx, "INSERT INTO docs (name, grp, last_updated, body) VALUES ($1, 'g', $2, $3)", name, v, fmt.Sprintf(`{"v":%d}`, v))
}

// TestExecLater: statements queued with ExecLater run in order, before the
// transaction's next statement (which sees them, whichever way it is run),
// and at the end of a member or transaction that queued them last; one that
// fails fails its own member, whose neighbours commit, or its own
// transaction, which then commits nothing.
func TestExecLater(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupBatch(t, db)
		ctx := context.Background()
		count := func(ctx context.Context, tx *store.Tx) (n int, err error) {
			err = tx.QueryRow(ctx, "SELECT COUNT(*) FROM docs WHERE grp = 'g'").Scan(&n)
			return n, err
		}
		var seen []int
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := insertLater(ctx, tx, "x1", 1); err != nil {
				return err
			}
			// In order: the second sees the first's row.
			if err := tx.ExecLater(ctx, "UPDATE docs SET last_updated = last_updated + 10 WHERE name = 'x1'"); err != nil {
				return err
			}
			n, err := count(ctx, tx) // QueryRow
			if err != nil {
				return err
			}
			seen = append(seen, n)
			if err := insertLater(ctx, tx, "x2", 2); err != nil {
				return err
			}
			names, err := store.QueryAll(ctx, tx, func(r store.Row) (s string, err error) { return s, r.Scan(&s) },
				"SELECT name FROM docs WHERE grp = 'g' ORDER BY name") // Query
			if err != nil {
				return err
			}
			seen = append(seen, len(names))
			if err := insertLater(ctx, tx, "x3", 3); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE docs SET last_updated = last_updated + 100 WHERE name = 'x3'"); err != nil { // Exec
				return err
			}
			// Queued last: sent before the commit.
			return insertLater(ctx, tx, "x4", 4)
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(seen) != "[1 2]" {
			t.Errorf("the next statements saw %v rows, want [1 2]", seen)
		}
		for name, want := range map[string]int64{"x1": 11, "x2": 2, "x3": 103, "x4": 4} {
			if got := b.doc(t, name); got != want {
				t.Errorf("doc %s = %d, want %d", name, got, want)
			}
		}

		// A queued statement that fails fails its transaction at the end,
		// and nothing of it commits.
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if err := insertLater(ctx, tx, "y1", 1); err != nil {
				return err
			}
			return insertLater(ctx, tx, "x1", 5) // a duplicate
		})
		if !store.IsUniqueViolation(err) {
			t.Errorf("a transaction whose queued statement failed returned %v, want the unique violation", err)
		}
		if got := b.doc(t, "y1"); got != -1 {
			t.Errorf("the failed transaction left y1 = %d", got)
		}

		// In a batch: the member whose queued statement fails gets the
		// error and is undone; the one whose queued statement fails at its
		// next statement too; their neighbours commit and do not see them.
		var sawZ2 int
		out := b.together(t, nil,
			func(ctx context.Context, tx *store.Tx) error { return insertLater(ctx, tx, "z1", 1) },
			func(ctx context.Context, tx *store.Tx) error {
				if err := insertLater(ctx, tx, "z2", 2); err != nil {
					return err
				}
				return insertLater(ctx, tx, "x2", 6) // a duplicate, sent at the member's end
			},
			func(ctx context.Context, tx *store.Tx) error {
				if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM docs WHERE name = 'z2'").Scan(&sawZ2); err != nil {
					return err
				}
				if err := insertLater(ctx, tx, "x3", 7); err != nil { // a duplicate, sent with the next statement
					return err
				}
				_, err := count(ctx, tx)
				return err
			},
			func(ctx context.Context, tx *store.Tx) error { return insertLater(ctx, tx, "z4", 4) },
		)
		if out[0].err != nil || out[3].err != nil {
			t.Fatalf("neighbours failed: %+v", out)
		}
		if !store.IsUniqueViolation(out[1].err) || !store.IsUniqueViolation(out[2].err) {
			t.Errorf("members whose queued statement failed got %v and %v, want unique violations", out[1].err, out[2].err)
		}
		if sawZ2 != 0 {
			t.Error("the member after a failed one saw its queued write")
		}
		for name, want := range map[string]int64{"z1": 1, "z2": -1, "z4": 4} {
			if got := b.doc(t, name); got != want {
				t.Errorf("doc %s = %d, want %d", name, got, want)
			}
		}
	})
}

// TestWaitsCountRoundTrips: a statement queued with ExecLater is counted as
// a statement, and as a wait only on SQLite, where it runs at once; on
// PostgreSQL it travels with the next statement, or with the COMMIT at the
// end of the transaction (a batch member alone in its batch too), and the
// COMMIT is a wait of its own.
func TestWaitsCountRoundTrips(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		setupBatch(t, db)
		for _, c := range []struct {
			name       string
			batch      bool
			fn         func(ctx context.Context, tx *store.Tx) error
			n, pgWaits int64
		}{
			{"two queued, then a statement", false, func(ctx context.Context, tx *store.Tx) error {
				insertLater(ctx, tx, "w1", 1)
				insertLater(ctx, tx, "w2", 2)
				_, err := tx.Exec(ctx, "UPDATE docs SET last_updated = 5 WHERE name = 'w1'")
				return err
			}, 3, 2},
			{"two queued last", false, func(ctx context.Context, tx *store.Tx) error {
				var n int
				if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM docs").Scan(&n); err != nil {
					return err
				}
				insertLater(ctx, tx, "w3", 3)
				return insertLater(ctx, tx, "w4", 4)
			}, 3, 2},
			{"a batch member's two queued, alone in its batch", true, func(ctx context.Context, tx *store.Tx) error {
				insertLater(ctx, tx, "w5", 5)
				return insertLater(ctx, tx, "w6", 6)
			}, 2, 1},
		} {
			ctx, count := store.CountStmts(context.Background())
			run := db.InTx
			if c.batch {
				run = db.InBatch
			}
			if err := run(ctx, c.fn); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			wantWaits := c.n
			if db.Engine() == store.Postgres {
				wantWaits = c.pgWaits
			}
			if count.N() != c.n || count.Waits() != wantWaits {
				t.Errorf("%s: %d statements and %d waits, want %d and %d", c.name, count.N(), count.Waits(), c.n, wantWaits)
			}
		}
	})
}

// TestQueuedFailureIgnoredByAReadIsTheOutcome: a queued statement that
// fails when a later read sends it (on PostgreSQL) fails its transaction or
// batch member with its own error, though the read's caller ignored the
// error (looking something up that may be missing): a unique violation
// stays one, for the retry that looks for it, and nothing is stored. The
// member's neighbours in a batch commit.
func TestQueuedFailureIgnoredByAReadIsTheOutcome(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		setupBatch(t, db)
		ctx := context.Background()
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return insertLater(ctx, tx, "taken", 1) }); err != nil {
			t.Fatal(err)
		}
		fn := func(ctx context.Context, tx *store.Tx) error {
			if err := insertLater(ctx, tx, "new", 2); err != nil {
				return err
			}
			if err := insertLater(ctx, tx, "taken", 3); err != nil {
				return err // SQLite: at once
			}
			var v int
			_ = tx.QueryRow(ctx, "SELECT last_updated FROM docs WHERE name = 'none'").Scan(&v) // the error ignored
			return nil
		}
		for _, c := range []struct {
			name string
			run  func(ctx context.Context, fn func(ctx context.Context, tx *store.Tx) error) error
		}{
			{"a transaction", db.InTx},
			{"a batch member", db.InBatch},
			{"a shared write", db.InShared},
		} {
			if err := c.run(ctx, fn); !store.IsUniqueViolation(err) {
				t.Errorf("%s: %v, want the queued statement's unique violation", c.name, err)
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM docs WHERE name = 'new'"); n != 0 {
				t.Errorf("%s: the failed write's other row was stored", c.name)
			}
		}
		// In a batch beside others: only the failing member fails.
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() {
				if i == 3 {
					errs[i] = db.InBatch(ctx, fn)
					return
				}
				errs[i] = db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
					return insertLater(ctx, tx, fmt.Sprintf("n%d", i), i)
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if i == 3 != store.IsUniqueViolation(err) || (i != 3 && err != nil) {
				t.Errorf("batch member %d: %v", i, err)
			}
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM docs WHERE name LIKE 'n%'"); n != 5 {
			t.Errorf("%d of the 5 good members' rows stored", n)
		}
	})
}

// TestFailedStatementIgnoredIsNoCommit: a statement that fails inside a
// transaction whose function ignores the error and returns nil is not a
// commit: PostgreSQL answers the COMMIT of the aborted transaction by
// rolling it back, and the caller gets an error, not a success with
// nothing stored. (SQLite carries on after a failed statement: the
// transaction commits what succeeded.)
func TestFailedStatementIgnoredIsNoCommit(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	setupBatch(t, db)
	ctx := context.Background()
	err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO docs (name, grp, last_updated, body) VALUES ('kept', 'g', 1, '{}')"); err != nil {
			return err
		}
		_, _ = tx.Exec(ctx, "SELECT no_such_column FROM docs") // the error ignored
		return nil
	})
	if err == nil {
		t.Fatal("a transaction aborted by a failed statement reported a commit")
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM docs"); n != 0 {
		t.Errorf("%d rows stored by the rolled-back transaction", n)
	}
}
