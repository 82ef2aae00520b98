package store

import (
	"context"
	"errors"
)

// Lock locks the rows of table that where keeps until tx ends and reports
// whether there were any. The lock is an UPDATE that sets lockColumn to
// itself: on both engines a concurrent write of the same rows waits for tx
// (PostgreSQL takes the row lock, SQLite holds the only writer), which
// orders the writes of one object (and the outbox rows they enqueue).
func (tx *Tx) Lock(ctx context.Context, table, lockColumn, where string, args ...any) (found bool, err error) {
	n, err := tx.Exec(ctx, "UPDATE "+table+" SET "+lockColumn+" = "+lockColumn+" WHERE "+where, args...)
	return err == nil && n > 0, err
}

// LockRow locks one row of table as Lock does and reads columns of it into
// dest; found is false, with no error, when there is none. It is one
// statement (one round trip on PostgreSQL): a read that takes the lock an
// UPDATE takes (FOR NO KEY UPDATE) on PostgreSQL, a plain read on SQLite,
// where a write transaction (BEGIN IMMEDIATE) already excludes every
// other writer. Unlike Lock it writes nothing, so a lock leaves no row
// version behind on PostgreSQL.
func (tx *Tx) LockRow(ctx context.Context, table, columns, where string, args []any, dest ...any) (found bool, err error) {
	q := "SELECT " + columns + " FROM " + table + " WHERE " + where
	if tx.engine == Postgres {
		q += " FOR NO KEY UPDATE"
	}
	switch err := tx.QueryRow(ctx, q, args...).Scan(dest...); {
	case errors.Is(err, ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// DeleteBatches runs query, a DELETE of at most batch rows, again and again,
// each time in a write transaction of its own, until one deletes fewer than
// batch rows, and returns how many rows the committed batches deleted. A
// large prune so holds the writer one batch at a time; it stops between
// batches when ctx is done.
func (db *DB) DeleteBatches(ctx context.Context, batch int64, query string, args ...any) (int64, error) {
	var total int64
	for {
		var n int64
		err := db.InTx(ctx, func(ctx context.Context, tx *Tx) error {
			var err error
			n, err = tx.Exec(ctx, query, args...)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < batch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
