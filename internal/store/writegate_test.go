package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestRequestAheadOfBackground: while a dozen background writers (delivery
// retrying a receiver that is down, job workers) keep the writer busy, a
// request's transaction waits for at most the one transaction running when
// it arrived (SQLite's single writer) or for none (PostgreSQL, where
// background work holds at most half the pool). CI once saw a location PUT
// wait over a minute for SQLite's writer behind such work: the pool hands a
// freed connection to a random waiter.
func TestRequestAheadOfBackground(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		storetest.Exec(t, db, "CREATE TABLE gate_probe (kind TEXT NOT NULL)")
		var committed, open, mostOpen atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		bg := store.Background(ctx)
		for range 12 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					err := db.InTx(bg, func(ctx context.Context, tx *store.Tx) error {
						n := open.Add(1)
						defer open.Add(-1)
						for {
							m := mostOpen.Load()
							if n <= m || mostOpen.CompareAndSwap(m, n) {
								break
							}
						}
						_, err := tx.Exec(ctx, "INSERT INTO gate_probe (kind) VALUES ('background')")
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
					committed.Add(1)
				}
			})
		}
		defer func() { close(stop); wg.Wait() }()
		for committed.Load() < 50 && !t.Failed() {
			time.Sleep(time.Millisecond)
		}
		for round := range 5 {
			before := committed.Load()
			var passed int64
			err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				passed = committed.Load() - before
				_, err := tx.Exec(ctx, "INSERT INTO gate_probe (kind) VALUES ('request')")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if db.Engine() == store.SQLite && passed > 2 {
				t.Errorf("round %d: %d background transactions committed while the request waited for the writer, want at most the one running and the one granted with it", round, passed)
			}
		}
		if db.Engine() == store.Postgres {
			if most, pool := mostOpen.Load(), int64(db.Pool().Config().MaxConns); most > pool/2 {
				t.Errorf("%d background transactions open at once in a pool of %d, want at most half", most, pool)
			}
		}
	})
}
