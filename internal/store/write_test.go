package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestWrite: a statement written alone has committed when Write returns;
// inside a transaction it joins it (and rolls back with it); under a commit
// hook the hook commits with it.
func TestWrite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storetest.Exec(t, db, "CREATE TABLE write_probe (n INTEGER NOT NULL UNIQUE)")
		count := func() int { return storetest.Count(t, db, "SELECT COUNT(*) FROM write_probe") }
		for i := range 3 { // the second and third run the prepared text
			if n, err := db.Write(ctx, "INSERT INTO write_probe (n) VALUES ($1)", i); err != nil || n != 1 {
				t.Fatalf("write %d: %d rows, %v", i, n, err)
			}
		}
		if got := count(); got != 3 {
			t.Fatalf("%d rows after 3 writes", got)
		}
		if _, err := db.Write(ctx, "INSERT INTO write_probe (n) VALUES ($1)", 1); !store.IsUniqueViolation(err) {
			t.Fatalf("a failing write: %v", err)
		}
		boom := errors.New("boom")
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := db.Write(ctx, "INSERT INTO write_probe (n) VALUES ($1)", 10); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM write_probe").Scan(&n); err != nil || n != 4 {
				t.Errorf("inside the transaction: %d rows, %v", n, err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if got := count(); got != 3 {
			t.Fatalf("%d rows after a rolled back transaction that wrote one", got)
		}
		hooked := 0
		hctx := store.WithCommitHook(ctx, func(ctx context.Context, tx *store.Tx) error {
			hooked++
			_, err := tx.Exec(ctx, "INSERT INTO write_probe (n) VALUES ($1)", 100)
			return err
		})
		if _, err := db.Write(hctx, "INSERT INTO write_probe (n) VALUES ($1)", 11); err != nil {
			t.Fatal(err)
		}
		if got := count(); hooked != 1 || got != 5 {
			t.Fatalf("under a commit hook: hook ran %d times, %d rows (want 1, 5)", hooked, got)
		}
	})
}
