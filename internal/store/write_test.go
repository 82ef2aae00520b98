package store_test

import (
	"context"
	"errors"
	"sync"
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

// TestWriteJoinsBatch: on SQLite, concurrent Writes and InShared writes
// join the group commit (they wait for the running batch and share the next
// one's transaction) instead of each taking the writer for a transaction of
// its own; on PostgreSQL each runs on its own and does not wait for a batch.
func TestWriteJoinsBatch(t *testing.T) {
	t.Parallel()
	writes := map[string]func(ctx context.Context, db *store.DB, n int) error{
		"Write": func(ctx context.Context, db *store.DB, n int) error {
			_, err := db.Write(ctx, "INSERT INTO write_batch_probe (n) VALUES ($1)", n)
			return err
		},
		"InShared": func(ctx context.Context, db *store.DB, n int) error {
			return db.InShared(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO write_batch_probe (n) VALUES ($1)", n)
				return err
			})
		},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storetest.Exec(t, db, "CREATE TABLE write_batch_probe (n INTEGER NOT NULL UNIQUE)")
		const n = 3
		next := 0
		for _, name := range []string{"Write", "InShared"} {
			release, leading := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			lead := next
			wg.Go(func() {
				if err := db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
					close(leading)
					<-release
					_, err := tx.Exec(ctx, "INSERT INTO write_batch_probe (n) VALUES ($1)", lead)
					return err
				}); err != nil {
					t.Error(err)
				}
			})
			<-leading
			var written sync.WaitGroup
			for i := 1; i <= n; i++ {
				v := next + i
				written.Go(func() {
					if err := writes[name](ctx, db, v); err != nil {
						t.Error(err)
					}
				})
			}
			next += n + 1
			if db.Engine() == store.SQLite {
				waitFor(t, func() bool { return db.BatchQueued() == n })
			} else {
				written.Wait()
			}
			close(release)
			wg.Wait()
			written.Wait()
			if got := storetest.Count(t, db, "SELECT COUNT(*) FROM write_batch_probe"); got != next {
				t.Fatalf("%s: %d rows, want %d", name, got, next)
			}
		}
	})
}
