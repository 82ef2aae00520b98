package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// docRows are the INSERTs of n docs named prefix0…, in group prefix, the
// i-th last updated at i.
func docRows(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`INSERT INTO docs (name, grp, last_updated, body) VALUES ('%s%d', '%s', %d, '{}')`, prefix, i, prefix, i))
	}
	return out
}

func TestLock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createDocs(t, db)
		storetest.Exec(t, db, docRows("a", 3)...)
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var grp string
			var lu int64
			found, err := tx.LockRow(ctx, "docs", "grp, last_updated", "name = $1", []any{"a2"}, &grp, &lu)
			if err != nil || !found || grp != "a" || lu != 2 {
				t.Errorf("LockRow(a2) = %v, %v; read %q, %d", found, err, grp, lu)
			}
			found, err = tx.LockRow(ctx, "docs", "grp", "name = $1", []any{"zzz"}, &grp)
			if err != nil || found {
				t.Errorf("LockRow(missing) = %v, %v; want not found, no error", found, err)
			}
			if found, err := tx.Lock(ctx, "docs", "last_updated", "grp = $1", "a"); err != nil || !found {
				t.Errorf("Lock(group a) = %v, %v; want its rows found", found, err)
			}
			if found, err := tx.Lock(ctx, "docs", "last_updated", "grp = $1", "zzz"); err != nil || found {
				t.Errorf("Lock(missing) = %v, %v; want not found, no error", found, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM docs"); n != 3 {
			t.Fatalf("%d rows after LockRow, want 3 (a lock writes nothing)", n)
		}
		if db.Engine() != store.Postgres {
			return // SQLite's one writer excludes every other write transaction
		}
		// On PostgreSQL the row LockRow read stays locked until its
		// transaction ends: another transaction's update of it waits (here:
		// gives up after its lock_timeout), an update of another row does not.
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var lu int64
			if found, err := tx.LockRow(ctx, "docs", "last_updated", "name = $1", []any{"a1"}, &lu); err != nil || !found {
				return fmt.Errorf("LockRow(a1) = %v, %v", found, err)
			}
			// Another transaction, from a context that holds none.
			update := func(name string) error {
				done := make(chan error, 1)
				go func() {
					done <- db.InTx(context.Background(), func(ctx context.Context, other *store.Tx) error {
						if _, err := other.Exec(ctx, "SET LOCAL lock_timeout = '200ms'"); err != nil {
							return err
						}
						_, err := other.Exec(ctx, "UPDATE docs SET last_updated = 100 WHERE name = $1", name)
						return err
					})
				}()
				return <-done
			}
			if err := update("a1"); err == nil || !strings.Contains(err.Error(), "lock timeout") {
				t.Errorf("an update of the locked row: %v, want it to wait for the lock", err)
			}
			if err := update("a0"); err != nil {
				t.Errorf("an update of another row: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestDeleteBatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createDocs(t, db)
		storetest.Exec(t, db, append(docRows("old", 7), docRows("new", 2)...)...)
		const del = "DELETE FROM docs WHERE pk IN (SELECT pk FROM docs WHERE grp = $1 LIMIT 3)"
		n, err := db.DeleteBatches(ctx, 3, del, "old")
		if err != nil || n != 7 {
			t.Fatalf("DeleteBatches = %d, %v; want 7 in three batches", n, err)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM docs"); n != 2 {
			t.Fatalf("%d rows left, want the 2 new ones", n)
		}
		if n, err := db.DeleteBatches(ctx, 3, del, "old"); err != nil || n != 0 {
			t.Fatalf("DeleteBatches of nothing = %d, %v", n, err)
		}

		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := db.DeleteBatches(cctx, 3, del, "new"); err == nil {
			t.Fatal("DeleteBatches on a done context: no error")
		}
	})
}
