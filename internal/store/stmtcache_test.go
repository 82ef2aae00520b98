package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestPreparedStatements: statements run again are answered as the first
// time, on both engines, while SQLite keeps them prepared: a text run
// again while its own rows are still open in the transaction, a table
// changed after its statements were prepared, a row that is not there.
func TestPreparedStatements(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const list = "SELECT k, v FROM cache_probe WHERE k >= $1 ORDER BY k"
		const one = "SELECT v FROM cache_probe WHERE k = $1"
		const star = "SELECT * FROM cache_probe WHERE k = $1"
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "CREATE TABLE cache_probe (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
				return err
			}
			for _, k := range []int{1, 2, 3} {
				if _, err := tx.Exec(ctx, "INSERT INTO cache_probe (k, v) VALUES ($1, $2)", k, "v"+string(rune('0'+k))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Several rounds: the first runs the texts unprepared, the later
		// ones prepared.
		for round := range 3 {
			err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				rows, err := tx.Query(ctx, list, 1)
				if err != nil {
					return err
				}
				defer rows.Close()
				var got []string
				check := func(k int, v string) error {
					// The same text again: on SQLite while its rows are
					// open (nested), which must not disturb them.
					inner, err := tx.Query(ctx, list, k)
					if err != nil {
						return err
					}
					n := 0
					for inner.Next() {
						n++
					}
					inner.Close()
					if n != 4-k {
						t.Errorf("round %d: inner listing from %d has %d rows, want %d", round, k, n, 4-k)
					}
					var again string
					if err := tx.QueryRow(ctx, one, k).Scan(&again); err != nil || again != v {
						t.Errorf("round %d: row %d read %q (%v), want %q", round, k, again, err, v)
					}
					got = append(got, v)
					return nil
				}
				// PostgreSQL runs nothing else on a connection while rows
				// are open on it: there the rows are read first.
				var later []func() error
				for rows.Next() {
					var k int
					var v string
					if err := rows.Scan(&k, &v); err != nil {
						return err
					}
					if db.Engine() == store.SQLite {
						if err := check(k, v); err != nil {
							return err
						}
					} else {
						later = append(later, func() error { return check(k, v) })
					}
				}
				if err := rows.Err(); err != nil {
					return err
				}
				rows.Close()
				for _, fn := range later {
					if err := fn(); err != nil {
						return err
					}
				}
				if len(got) != 3 || got[0] != "v1" || got[2] != "v3" {
					t.Errorf("round %d: listing %v, want v1 v2 v3", round, got)
				}
				var k int
				var v string
				if err := tx.QueryRow(ctx, star, 1).Scan(&k, &v); err != nil || v != "v1" {
					t.Errorf("round %d: SELECT * read %d %q (%v)", round, k, v, err)
				}
				var none string
				if err := tx.QueryRow(ctx, one, 99).Scan(&none); !errors.Is(err, store.ErrNoRows) {
					t.Errorf("round %d: a missing row: %v, want ErrNoRows", round, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			var v string
			if err := db.Read().QueryRow(ctx, one, 2).Scan(&v); err != nil || v != "v2" {
				t.Fatalf("round %d: reader got %q (%v)", round, v, err)
			}
		}
		if w, r := db.CachedStmts(); db.Engine() == store.SQLite && (w < 2 || r < 1) {
			t.Errorf("SQLite keeps %d writer and %d reader statements prepared, want the texts run", w, r)
		}
		// A change of the table after its statements were prepared: SQLite
		// prepares them again. (On PostgreSQL, pgx's own statement cache
		// fails a SELECT * of a changed table once, "cached plan must not
		// change result type"; the hub names its columns, and its schema
		// changes only at start.)
		if db.Engine() != store.SQLite {
			return
		}
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "ALTER TABLE cache_probe ADD COLUMN extra TEXT NOT NULL DEFAULT 'x'")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var v string
			if err := tx.QueryRow(ctx, one, 3).Scan(&v); err != nil || v != "v3" {
				t.Errorf("after ALTER TABLE: %q (%v)", v, err)
			}
			var k int
			var extra string
			if err := tx.QueryRow(ctx, star, 1).Scan(&k, &v, &extra); err != nil || extra != "x" {
				t.Errorf("after ALTER TABLE: SELECT * read %d %q %q (%v), want the new column", k, v, extra, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
