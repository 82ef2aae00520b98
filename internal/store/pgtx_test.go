package store_test

import (
	"context"
	"errors"
	neturl "net/url"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// openCounted opens the PostgreSQL test database, with the docs table,
// through a proxy that counts the client's round trips, on one connection
// (every statement prepared once on it), without the migrations (the job
// queue's need a second connection).
func openCounted(t *testing.T) (*storetest.Proxy, *store.DB) {
	t.Helper()
	f, proxied, _ := storetest.ProxiedURL(t)
	u, err := neturl.Parse(proxied)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	db, err := store.Open(context.Background(), u.String(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	setupBatch(t, db)
	return f, db
}

// TestPostgresRoundTrips: a PostgreSQL write transaction sends its BEGIN
// with its first statement and its COMMIT with what it queued last, so a
// transaction of queued statements is one round trip, counted on the wire
// by a proxy. pgx's own transactions sent BEGIN and COMMIT alone (three
// round trips for the first case). A failed transaction still rolls back,
// and its connection serves the next one.
func TestPostgresRoundTrips(t *testing.T) {
	t.Parallel()
	f, db := openCounted(t)
	// BEGIN and COMMIT are prepared once a connection (pgx caches its
	// statements), as the cases' statements are in their first run.
	if err := db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		return tx.ExecLater(ctx, "DELETE FROM docs WHERE name = 'none'")
	}); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the function failed")
	for i, c := range []struct {
		name    string
		fn      func(ctx context.Context, tx *store.Tx) error
		want    int64 // round trips (-1: not counted)
		wantErr error
		docs    int64 // rows of docs after it
	}{
		{"nothing sent", func(ctx context.Context, tx *store.Tx) error { return nil }, 0, nil, 0},
		{"queued statements only", func(ctx context.Context, tx *store.Tx) error {
			insertLater(ctx, tx, "a", 1)
			return insertLater(ctx, tx, "b", 2)
		}, 1, nil, 2},
		{"a read, then queued statements", func(ctx context.Context, tx *store.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM docs").Scan(&n); err != nil {
				return err
			}
			return insertLater(ctx, tx, "c", 3)
		}, 2, nil, 3},
		{"a statement, then the function fails", func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO docs (name, grp, last_updated, body) VALUES ('d', 'g', 4, '{}')"); err != nil {
				return err
			}
			return failed
		}, 2, failed, 3},
		// Its round trips are not counted: pgx drops the statements a
		// failed pipeline prepared, and prepares them again.
		{"a queued statement fails at the commit", func(ctx context.Context, tx *store.Tx) error {
			insertLater(ctx, tx, "e", 5)
			return insertLater(ctx, tx, "a", 6) // a duplicate name
		}, -1, nil, 3},
		{"after the failure (its COMMIT prepared again)", func(ctx context.Context, tx *store.Tx) error {
			return insertLater(ctx, tx, "f", 7)
		}, -1, nil, 4},
		{"then", func(ctx context.Context, tx *store.Tx) error {
			return insertLater(ctx, tx, "g", 8)
		}, 1, nil, 5},
		{"a batch member alone in its batch", func(ctx context.Context, tx *store.Tx) error {
			return insertLater(ctx, tx, "h", 9)
		}, 1, nil, 6},
	} {
		for run := range 2 { // the first run prepares the statements
			if run == 1 {
				f.ResetFlights()
			}
			write := db.InTx
			if strings.HasPrefix(c.name, "a batch member") {
				write = db.InBatch
			}
			err := write(context.Background(), func(ctx context.Context, tx *store.Tx) error {
				if run == 0 && i > 0 {
					// Prepared in a transaction that is rolled back (a
					// statement sends what the function queued).
					_ = c.fn(ctx, tx)
					_, _ = tx.Exec(ctx, "SELECT 1")
					return failed
				}
				return c.fn(ctx, tx)
			})
			if run == 0 {
				continue
			}
			switch {
			case c.name == "a queued statement fails at the commit":
				if !store.IsUniqueViolation(err) {
					t.Errorf("%s: %v, want the unique violation", c.name, err)
				}
			case !errors.Is(err, c.wantErr):
				t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
			}
			if got := f.Flights(); c.want >= 0 && got != c.want {
				t.Errorf("%s: %d round trips, want %d", c.name, got, c.want)
			}
		}
		var n int64
		if err := db.Read().QueryRow(context.Background(), "SELECT COUNT(*) FROM docs").Scan(&n); err != nil {
			t.Fatalf("after %s: %v", c.name, err)
		}
		if n != c.docs {
			t.Errorf("after %s: %d docs, want %d", c.name, n, c.docs)
		}
	}
}

// TestPgxTxSavepoints: the transaction as River and COPY see it
// (Tx.PgxTx) runs on the store's transaction, after what it queued; its
// Begin is a savepoint, rolled back or released on its own; the store's
// own transaction it neither commits nor rolls back.
func TestPgxTxSavepoints(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	b := setupBatch(t, db)
	err := db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		insertLater(ctx, tx, "queued", 1)
		ptx, err := tx.PgxTx(ctx)
		if err != nil {
			return err
		}
		var n int
		if err := ptx.QueryRow(ctx, "SELECT COUNT(*) FROM docs WHERE name = 'queued'").Scan(&n); err != nil || n != 1 {
			t.Errorf("what the transaction queued, seen from PgxTx: %d, %v", n, err)
		}
		if ptx.Commit(ctx) == nil || ptx.Rollback(ctx) == nil {
			t.Error("PgxTx ended the store's transaction")
		}
		for _, c := range []struct {
			name string
			keep bool
		}{{"undone", false}, {"kept", true}} {
			sp, err := ptx.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := sp.Exec(ctx, "INSERT INTO docs (name, grp, last_updated, body) VALUES ($1, 'g', 2, '{}')", c.name); err != nil {
				return err
			}
			end := sp.Rollback
			if c.keep {
				end = sp.Commit
			}
			if err := end(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"queued": 1, "undone": -1, "kept": 2} {
		if got := b.doc(t, name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}
