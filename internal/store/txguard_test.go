package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// mustPanic runs fn and returns the panic's text ("" when it did not).
func mustPanic(fn func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "panic"
			}
		}
	}()
	fn()
	return ""
}

// TestNoPooledConnectionInsideATransaction: inside a write transaction a
// read through the pool, or a nested transaction, is refused (it would wait
// for a second pooled connection while holding one: the PostgreSQL CDR
// hang); in a test binary it panics so that no test can miss it. Reads
// through ReadIn use the transaction and see its writes; once the
// transaction ends, its context is free again.
func TestNoPooledConnectionInsideATransaction(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		// Unchecked: this test breaks the rule on purpose.
		db := storetest.OpenUnchecked(t, engine)
		var held context.Context
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			held = ctx
			if _, err := tx.Exec(ctx, "CREATE TABLE guard_probe (n INTEGER)"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO guard_probe (n) VALUES (7)"); err != nil {
				return err
			}
			if msg := mustPanic(func() { _ = db.Read().QueryRow(ctx, "SELECT 1").Scan(new(int)) }); !strings.Contains(msg, "DB.Read().QueryRow") {
				t.Errorf("a pooled read inside the transaction: panic %q", msg)
			}
			if msg := mustPanic(func() { _ = db.InTx(ctx, func(context.Context, *store.Tx) error { return nil }) }); !strings.Contains(msg, "InTx") {
				t.Errorf("a nested transaction: panic %q", msg)
			}
			var n int
			if err := db.ReadIn(ctx).QueryRow(ctx, "SELECT n FROM guard_probe").Scan(&n); err != nil || n != 7 {
				t.Errorf("ReadIn inside the transaction: %d, %v", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Violations(); got != 2 {
			t.Errorf("%d violations counted, want 2", got)
		}
		// The transaction has ended: its context may read again.
		var n int
		if err := db.Read().QueryRow(held, "SELECT n FROM guard_probe").Scan(&n); err != nil || n != 7 {
			t.Errorf("read after the transaction: %d, %v", n, err)
		}
		if store.HeldTx(held) != nil {
			t.Error("an ended transaction is still held")
		}
	})
}
