package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestStableLimit: a LIMIT given by a bound parameter, in each placeholder
// form SQLite and the job queue use, is wrapped in a cast; a literal limit
// and the rest of the text are left as they were.
func TestStableLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"SELECT id FROM t ORDER BY id LIMIT $2", "SELECT id FROM t ORDER BY id LIMIT CAST($2 AS INTEGER)"},
		{"SELECT id FROM t LIMIT ?11", "SELECT id FROM t LIMIT CAST(?11 AS INTEGER)"},
		{"SELECT id FROM t limit ?", "SELECT id FROM t LIMIT CAST(? AS INTEGER)"},
		{"SELECT id FROM t LIMIT @max_to_lock)", "SELECT id FROM t LIMIT CAST(@max_to_lock AS INTEGER))"},
		{"SELECT id FROM t LIMIT :n OFFSET $3", "SELECT id FROM t LIMIT CAST(:n AS INTEGER) OFFSET $3"},
		{"SELECT id FROM t LIMIT 10", "SELECT id FROM t LIMIT 10"},
		{"SELECT id FROM t WHERE unlimited = $1", "SELECT id FROM t WHERE unlimited = $1"},
	} {
		if got := store.StableLimit(c.in); got != c.want {
			t.Errorf("StableLimit(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStatementReuse: a text run many times with a different LIMIT each
// time returns the rows the limit asks for, on both engines; on SQLite it
// is parsed once and every later run reuses the prepared statement.
func TestStatementReuse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const page = "SELECT k FROM reuse_probe WHERE k > $1 ORDER BY k LIMIT $2"
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "CREATE TABLE reuse_probe (k INTEGER PRIMARY KEY)"); err != nil {
				return err
			}
			for k := 1; k <= 40; k++ {
				if _, err := tx.Exec(ctx, "INSERT INTO reuse_probe (k) VALUES ($1)", k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var before, after store.StmtStats
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			before = db.WriterStmts()
			for limit := 1; limit <= 30; limit++ {
				rows, err := tx.Query(ctx, page, 5, limit)
				if err != nil {
					return err
				}
				var got []int
				for rows.Next() {
					var k int
					if err := rows.Scan(&k); err != nil {
						return err
					}
					got = append(got, k)
				}
				if err := rows.Close(); err != nil {
					return err
				}
				if len(got) != limit || got[0] != 6 || got[len(got)-1] != 5+limit {
					t.Errorf("LIMIT %d after 5: %v", limit, got)
				}
			}
			after = db.WriterStmts()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if db.Engine() != store.SQLite {
			return
		}
		if parsed, reused := after.Parsed-before.Parsed, after.Reused-before.Reused; parsed != 1 || reused != 29 {
			t.Errorf("30 runs of one text: parsed %d, reused %d; want 1 and 29", parsed, reused)
		}
	})
}

// TestAnonymousParams: $1 … $n standing in order, once each, become "?";
// any other use of placeholders leaves the text as it was, and a "$" in a
// literal, a quoted name or a comment is not a placeholder.
func TestAnonymousParams(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)", "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"},
		{"SELECT a FROM t WHERE b = $1 AND c = '$2' LIMIT $2", "SELECT a FROM t WHERE b = ? AND c = '$2' LIMIT ?"},
		{"SELECT json_extract(d, '$.x') FROM t WHERE k = $1", "SELECT json_extract(d, '$.x') FROM t WHERE k = ?"},
		{"SELECT a FROM t -- $9\nWHERE b = $1 /* $7 */ AND c = $2", "SELECT a FROM t -- $9\nWHERE b = ? /* $7 */ AND c = ?"},
		{`SELECT "x$1", a FROM t WHERE b = $1`, `SELECT "x$1", a FROM t WHERE b = ?`},
		{"SELECT 'it''s', $1", "SELECT 'it''s', ?"},
		{"VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)", "VALUES (?,?,?,?,?,?,?,?,?,?,?)"},
		// Left alone: a repeat, another order, a gap, other forms.
		{"UPDATE t SET a = $1, b = $1 WHERE k = $2", "UPDATE t SET a = $1, b = $1 WHERE k = $2"},
		{"SELECT a FROM t WHERE b = $2 AND c = $1", "SELECT a FROM t WHERE b = $2 AND c = $1"},
		{"SELECT a FROM t WHERE b = $1 AND c = $3", "SELECT a FROM t WHERE b = $1 AND c = $3"},
		{"SELECT a FROM t WHERE b = $1 AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = ?"},
		{"SELECT a FROM t WHERE b = $1 AND c = @name", "SELECT a FROM t WHERE b = $1 AND c = @name"},
		{"SELECT a FROM t WHERE b = $1 AND c = :name", "SELECT a FROM t WHERE b = $1 AND c = :name"},
		{"SELECT a FROM t WHERE b = $1x", "SELECT a FROM t WHERE b = $1x"},
		{"SELECT a FROM t WHERE b = '$1", "SELECT a FROM t WHERE b = '$1"},
		{"SELECT 1", "SELECT 1"},
	} {
		if got := store.AnonymousParams(c.in); got != c.want {
			t.Errorf("AnonymousParams(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	// store.Values numbers a multi-row list so that it becomes anonymous.
	if got, want := store.Values(2, 3), "($1, $2, $3), ($4, $5, $6)"; got != want {
		t.Errorf("Values(2, 3) = %q, want %q", got, want)
	}
	if got, want := store.AnonymousParams("VALUES "+store.Values(2, 2)), "VALUES (?, ?), (?, ?)"; got != want {
		t.Errorf("AnonymousParams(VALUES Values(2, 2)) = %q, want %q", got, want)
	}
}

// TestManyParameters: a multi-row INSERT of 4 200 parameters, written with
// placeholders in order, stores every value where it belongs, and so does
// one that names a parameter twice; on both engines.
func TestManyParameters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storetest.Exec(t, db, "CREATE TABLE many_params (k INTEGER PRIMARY KEY, v TEXT NOT NULL, w TEXT NOT NULL)")
		const rows = 1400
		var args []any
		for i := range rows {
			args = append(args, i, fmt.Sprintf("v%d", i), fmt.Sprintf("w%d", i))
		}
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO many_params (k, v, w) VALUES "+store.Values(rows, 3), args...); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE many_params SET v = $1, w = $1 WHERE k = $2", "same", 7)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := storetest.Column[string](t, ctx, db.Read(), "SELECT k || ':' || v || ':' || w FROM many_params WHERE k IN (0, 7, 1399) ORDER BY k")
		if want := []string{"0:v0:w0", "7:same:same", "1399:v1399:w1399"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows %v, want %v", got, want)
		}
	})
}

// TestBackgroundCheckpoint: on SQLite, the writer keeps its sub-journals
// in memory and its automatic checkpoint is off; what it commits is copied
// into the database file by the background checkpoint, and the written rows
// read back. PostgreSQL has none of this.
func TestBackgroundCheckpoint(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Engine() != store.SQLite {
			return
		}
		ctx := context.Background()
		var tempStore, autoCheckpoint int64
		if err := db.SQLDB().QueryRowContext(ctx, "PRAGMA temp_store").Scan(&tempStore); err != nil {
			t.Fatal(err)
		}
		if err := db.SQLDB().QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&autoCheckpoint); err != nil {
			t.Fatal(err)
		}
		if tempStore != 2 || autoCheckpoint != 0 {
			t.Fatalf("temp_store %d (want 2, memory), wal_autocheckpoint %d (want 0: checkpoints run in the background)", tempStore, autoCheckpoint)
		}
		storetest.Exec(t, db, "CREATE TABLE ckpt_probe (n INTEGER PRIMARY KEY, pad TEXT NOT NULL)")
		before := db.CheckpointRuns()
		pad := strings.Repeat("x", 4000)
		for i := range 50 {
			if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO ckpt_probe (n, pad) VALUES ($1, $2)", i, pad)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, func() bool { return db.CheckpointRuns() > before })
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM ckpt_probe"); n != 50 {
			t.Fatalf("%d rows after the checkpoint, want 50", n)
		}
	})
}
