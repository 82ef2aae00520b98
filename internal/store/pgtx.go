package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A PostgreSQL write transaction sends its BEGIN with its first statement
// and its COMMIT with its last queued ones (ExecLater), each in one round
// trip with them (a pipeline), instead of one round trip each. pgx's own
// transaction sends both alone. An EVSE status PATCH so waits for the
// server twice instead of four times (bench/README.md, stop 37).
//
// The transaction holds a pooled connection (pgxpool.Conn) and runs its
// statements on it; the connection goes back to the pool when the
// transaction ends. Should it still be inside a transaction then (a failed
// ROLLBACK), the pool closes it instead of reusing it.

// beginPostgres starts tx on a connection of the pool: nothing is sent yet.
func (db *DB) beginPostgres(ctx context.Context, tx *Tx) error {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	tx.held, tx.pgx, tx.beginOwed = c, c.Conn(), true
	return nil
}

// commitPostgres sends the queued statements and COMMIT in one round trip
// (BEGIN before them when nothing was sent yet). A transaction that sent
// nothing has nothing to commit. An error of a queued statement is
// returned as it is; COMMIT's own is wrapped as the commit's.
func (tx *Tx) commitPostgres(ctx context.Context) error {
	if tx.beginOwed && len(tx.later) == 0 {
		tx.beginOwed = false
		return nil
	}
	countWait(ctx)
	br, err := tx.sendLater(ctx, "commit", nil)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() == "ROLLBACK" {
		// The server answers a COMMIT of a transaction a failed statement
		// aborted by rolling it back, without an error: a statement whose
		// error its caller ignored. Nothing was stored.
		return fmt.Errorf("commit: %w", errCommitRolledBack)
	}
	return nil
}

// errCommitRolledBack is a COMMIT the server answered with a rollback.
var errCommitRolledBack = errors.New("the transaction was rolled back: a statement in it failed and its error was ignored")

// endPostgres rolls back what tx sent unless it committed, and gives its
// connection back.
func (tx *Tx) endPostgres(ctx context.Context, committed bool) {
	if tx.held == nil {
		return
	}
	if !committed && !tx.beginOwed {
		_, _ = tx.pgx.Exec(ctx, "rollback")
	}
	tx.later = tx.later[:0]
	tx.held.Release()
	tx.held = nil
}

// begun sends the BEGIN tx still owes, with the queued statements.
func (tx *Tx) begun(ctx context.Context) error {
	if len(tx.later) > 0 {
		return tx.flushLater(ctx)
	}
	if !tx.beginOwed {
		return nil
	}
	tx.beginOwed = false
	countWait(ctx)
	_, err := tx.pgx.Exec(ctx, "begin")
	return err
}

// connTx is the transaction as a pgx.Tx, for River's job inserts and COPY
// (PgxTx): its statements run on the connection, inside the transaction
// the store began and ends. Begin makes a savepoint.
type connTx struct {
	conn *pgx.Conn
	// savepoint names this level (empty: the store's transaction).
	savepoint string
	depth     int
}

var errStoreEnds = errors.New("store: the store commits and rolls back its transactions")

func (t connTx) Begin(ctx context.Context) (pgx.Tx, error) {
	name := "store_sp_" + strconv.Itoa(t.depth+1)
	if _, err := t.conn.Exec(ctx, "savepoint "+name); err != nil {
		return nil, err
	}
	return connTx{conn: t.conn, savepoint: name, depth: t.depth + 1}, nil
}

func (t connTx) Commit(ctx context.Context) error {
	if t.savepoint == "" {
		return errStoreEnds
	}
	_, err := t.conn.Exec(ctx, "release savepoint "+t.savepoint)
	return err
}

func (t connTx) Rollback(ctx context.Context) error {
	if t.savepoint == "" {
		return errStoreEnds
	}
	_, err := t.conn.Exec(ctx, "rollback to savepoint "+t.savepoint+"; release savepoint "+t.savepoint)
	return err
}

func (t connTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return t.conn.CopyFrom(ctx, table, cols, src)
}

func (t connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.conn.SendBatch(ctx, b)
}

// LargeObjects is not available on a store transaction.
func (t connTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t connTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}

func (t connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.conn.Exec(ctx, sql, args...)
}

func (t connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.conn.Query(ctx, sql, args...)
}

func (t connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.conn.QueryRow(ctx, sql, args...)
}

func (t connTx) Conn() *pgx.Conn { return t.conn }
