package store

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
)

// ErrTxHeld is returned when code that holds a write transaction asks for
// another connection: a read through DB.Read, a second DB.InTx, or a job
// insert outside the transaction. Waiting for a pooled connection while
// holding one deadlocks as soon as the pool runs dry (on PostgreSQL the
// readers and the writers share one pool; on SQLite the writer pool has a
// single connection, so a nested write transaction waits for itself). Read
// through the transaction instead (DB.ReadIn, or the tx itself), or before
// it.
var ErrTxHeld = errors.New("store: a pooled connection was requested while the context holds a write transaction")

type txKey struct{}

// withTx marks ctx as holding tx, for the duration of fn in InTx.
func withTx(ctx context.Context, tx *Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// HeldTx returns the write transaction ctx holds (nil when none, or when it
// has already ended: a context that outlives its transaction is free again).
func HeldTx(ctx context.Context) *Tx {
	tx, _ := ctx.Value(txKey{}).(*Tx)
	if tx == nil || tx.ended.Load() {
		return nil
	}
	return tx
}

// ReadIn returns a Querier for reads: the transaction ctx holds, if any,
// otherwise the read pool (DB.Read). Code that may run both inside a write
// transaction (an observer, a hook) and outside one reads through it.
func (db *DB) ReadIn(ctx context.Context) Querier {
	if tx := HeldTx(ctx); tx != nil {
		return tx
	}
	return db.Read()
}

// CheckNoTx reports a request for a pooled connection made while ctx holds
// a write transaction. It returns ErrTxHeld (wrapped with what asked) and
// logs it with the stack. Inside a test binary it panics as well, so the
// pattern fails the tests wherever it happens, including in goroutines
// whose errors a test does not see. Packages that open their own pooled
// connections (the job queue) call it before doing so.
func (db *DB) CheckNoTx(ctx context.Context, what string) error {
	if HeldTx(ctx) == nil {
		return nil
	}
	return db.txHeld(ctx, what)
}

func (db *DB) txHeld(ctx context.Context, what string) error {
	err := fmt.Errorf("%s: %w", what, ErrTxHeld)
	db.violations.Add(1)
	stack := string(debug.Stack())
	db.logger.ErrorContext(ctx, "a pooled connection was requested inside a write transaction", "what", what, "stack", stack)
	if testing.Testing() {
		panic(err.Error() + "\n" + stack)
	}
	return err
}

// fallbackTx reports a read through DB.Read made while ctx holds a write
// transaction, as CheckNoTx does (logged with the stack, counted, a panic in
// test binaries), and returns the held transaction to read through instead:
// in production the read is answered, without waiting for a second pooled
// connection, rather than failing the request. Nil when ctx holds none.
func (db *DB) fallbackTx(ctx context.Context, what string) *Tx {
	tx := HeldTx(ctx)
	if tx == nil {
		return nil
	}
	_ = db.txHeld(ctx, what)
	return tx
}

// Violations counts the requests CheckNoTx refused since Open (test
// fixtures assert it stays zero).
func (db *DB) Violations() int64 { return db.violations.Load() }
