package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ocpihub/ocpihub/internal/tracing"
)

// Querier runs SQL. Tx and the reader returned by DB.Read implement it, so a
// lower-case query helper that takes a Querier works inside a transaction and
// outside one.
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Engine() Engine
}

// Rows is a result set; always Close it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Row is a single-row result; Scan returns ErrNoRows when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Tx is a write transaction. Enqueue follow-up jobs through it (jobs.Client
// InsertTx) so that the state change and the work it causes commit together.
type Tx struct {
	db     *DB
	engine Engine
	sql    *sql.Tx
	// pgx is the connection the PostgreSQL transaction runs on, held (from
	// the pool) until it ends; beginOwed while its BEGIN is not sent yet:
	// it travels with the first statement (pgtx.go).
	pgx         *pgx.Conn
	held        *pgxpool.Conn
	beginOwed   bool
	afterCommit []func()
	// later are statements ExecLater queued (PostgreSQL): they travel with
	// the transaction's next statement.
	later []laterStmt
	// laterErr is the first failure of a queued statement: the outcome of
	// the member or transaction that queued it, even when the statement
	// that sent it was a read whose caller ignored its error (the
	// transaction is aborted from there on, and a later statement's
	// "aborted" error would hide which one failed, a unique violation
	// its retry looks for).
	laterErr error
	// notifies are the topics NotifyAtCommit was given (both engines).
	notifies []string
	// ended is set once the transaction committed or rolled back: a context
	// that outlives it no longer holds it.
	ended atomic.Bool
}

// laterStmt is a statement ExecLater queued.
type laterStmt struct {
	query string
	args  []any
}

// SQLTx returns the underlying database/sql transaction (SQLite), for River.
func (tx *Tx) SQLTx() *sql.Tx { return tx.sql }

// PgxTx returns the transaction as a pgx.Tx (PostgreSQL), for River and
// COPY. What tx queued is sent first, so their statements follow it.
func (tx *Tx) PgxTx(ctx context.Context) (pgx.Tx, error) {
	if err := tx.begun(ctx); err != nil {
		return nil, err
	}
	return connTx{conn: tx.pgx}, nil
}

// Engine returns the engine.
func (tx *Tx) Engine() Engine { return tx.engine }

// DB returns the database the transaction runs on.
func (tx *Tx) DB() *DB { return tx.db }

// AfterCommit registers fn to run once the transaction has committed (never
// when it rolls back): a place for in-process notifications.
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

// ExecLater runs a statement whose outcome the caller does not look at
// (no row count) as part of the transaction. On PostgreSQL it is queued and
// sent with the transaction's next statement, in one round trip with it
// (a pipeline), or at the end of the batch member or transaction that
// queued it: an error it causes is returned there and fails that member or
// transaction as if the statement had failed at once. Statements keep their
// order. On SQLite, where a statement is a function call, it runs at once.
//
// A write of several statements whose results it does not need (an EVSE
// status PATCH: the location, its EVSE row, the change record) so costs one
// round trip instead of one each.
func (tx *Tx) ExecLater(ctx context.Context, query string, args ...any) error {
	if tx.pgx == nil {
		_, err := tx.Exec(ctx, query, args...)
		return err
	}
	countQueued(ctx)
	tx.later = append(tx.later, laterStmt{query: query, args: args})
	return nil
}

// sendLater sends the queued statements followed by query (when not
// empty) in one round trip, the transaction's BEGIN first when it is
// owed, and reads the queued statements' outcomes; the caller reads
// query's result from the returned BatchResults and closes them.
func (tx *Tx) sendLater(ctx context.Context, query string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	n := len(tx.later)
	if tx.beginOwed {
		b.Queue("begin")
		tx.beginOwed = false
		n++
	}
	for _, l := range tx.later {
		b.Queue(l.query, l.args...)
	}
	tx.later = tx.later[:0]
	if query != "" {
		b.Queue(query, args...)
	}
	br := tx.pgx.SendBatch(ctx, b)
	for range n {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if tx.laterErr == nil {
				tx.laterErr = err
			}
			return nil, err
		}
	}
	return br, nil
}

// flushLater sends the statements ExecLater queued, if any.
func (tx *Tx) flushLater(ctx context.Context) error {
	if len(tx.later) == 0 {
		return nil
	}
	countWait(ctx)
	br, err := tx.sendLater(ctx, "", nil)
	if err != nil {
		return err
	}
	return br.Close()
}

// dropLater forgets queued statements of a member that is rolled back.
func (tx *Tx) dropLater() { tx.later = tx.later[:0] }

// Exec implements Querier.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	countStmt(ctx)
	if tx.pgx != nil {
		if len(tx.later) > 0 || tx.beginOwed {
			br, err := tx.sendLater(ctx, query, args)
			if err != nil {
				return 0, err
			}
			tag, err := br.Exec()
			if cerr := br.Close(); err == nil {
				err = cerr
			}
			return tag.RowsAffected(), err
		}
		tag, err := tx.pgx.Exec(ctx, query, args...)
		return tag.RowsAffected(), err
	}
	res, err := tx.sql.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Query implements Querier.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	countStmt(ctx)
	if tx.pgx != nil {
		if len(tx.later) > 0 || tx.beginOwed {
			br, err := tx.sendLater(ctx, query, args)
			if err != nil {
				return nil, err
			}
			rows, err := br.Query()
			if err != nil {
				_ = br.Close()
				return nil, err
			}
			return batchRows{pgxRows{rows}, br}, nil
		}
		rows, err := tx.pgx.Query(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		return pgxRows{rows}, nil
	}
	return tx.sql.QueryContext(ctx, query, args...)
}

// QueryRow implements Querier.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) Row {
	countStmt(ctx)
	if tx.pgx != nil {
		if len(tx.later) > 0 || tx.beginOwed {
			br, err := tx.sendLater(ctx, query, args)
			if err != nil {
				return errRow{err}
			}
			return batchRow{pgxRow{br.QueryRow()}, br}
		}
		return pgxRow{tx.pgx.QueryRow(ctx, query, args...)}
	}
	return tx.sql.QueryRowContext(ctx, query, args...)
}

// InTxRetryUnique runs fn in a transaction, and once more when it failed on
// a unique violation: a concurrent first write of the same object won the
// race to insert it, and the second run finds the row and updates it.
func (db *DB) InTxRetryUnique(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	err := db.InTx(ctx, fn)
	if err != nil && IsUniqueViolation(err) {
		err = db.InTx(ctx, fn)
	}
	return err
}

// InTx runs fn in a write transaction and commits when it returns nil. An
// error or a panic rolls back. fn must not call out to other services: on
// SQLite a transaction holds the only writer.
//
// The ctx fn receives holds the transaction: inside it, DB.Read, a nested
// InTx and a job insert outside the transaction are refused (ErrTxHeld), as
// each would wait for a second pooled connection while holding one. Write
// transactions pass the writer gate first (writegate.go): on SQLite one at a
// time in arrival order, requests ahead of background work (Background)
// with a reserved share for it.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (err error) {
	if HeldTx(ctx) != nil {
		return db.txHeld(ctx, "InTx")
	}
	ctx, span := tracing.Start(ctx, "transaction", tracing.Client)
	defer span.EndErr(&err)
	span.SetDBSystem(string(db.engine))
	release, err := db.gate.acquire(ctx, IsBackground(ctx))
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { release() }()
	tx := &Tx{db: db, engine: db.engine}
	if db.pool != nil {
		if err = db.beginPostgres(ctx, tx); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	} else {
		if tx.sql, err = db.write.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	committed := false
	defer func() {
		tx.ended.Store(true)
		// A rollback on a dead context still has to release the connection.
		rctx := context.WithoutCancel(ctx)
		if tx.pgx != nil {
			tx.endPostgres(rctx, committed)
		} else if !committed {
			_ = tx.sql.Rollback()
		}
	}()
	tctx := withTx(ctx, tx)
	if err := fn(tctx, tx); err != nil || tx.laterErr != nil {
		return cmp.Or(tx.laterErr, err)
	}
	if err := runCommitHooks(tctx, tx); err != nil || tx.laterErr != nil {
		return cmp.Or(tx.laterErr, err)
	}
	if tx.pgx != nil {
		if err := tx.commitPostgres(tctx); err != nil {
			return err
		}
	} else if err := tx.sql.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	tx.ended.Store(true)
	release()
	release = func() {}
	for _, fn := range tx.afterCommit {
		fn()
	}
	return nil
}

// Read returns a Querier for reads outside a transaction: the reader pool on
// SQLite, the pool on PostgreSQL. It must not be used for writes.
func (db *DB) Read() Querier {
	if db.pool != nil {
		return pgxReader{db: db, pool: db.pool}
	}
	return sqlReader{db: db, read: db.read}
}

type sqlReader struct {
	db   *DB
	read *sql.DB
}

func (r sqlReader) Engine() Engine { return SQLite }

func (r sqlReader) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if tx := r.db.fallbackTx(ctx, "DB.Read().Exec"); tx != nil {
		return tx.Exec(ctx, query, args...)
	}
	countStmt(ctx)
	res, err := r.read.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (r sqlReader) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if tx := r.db.fallbackTx(ctx, "DB.Read().Query"); tx != nil {
		return tx.Query(ctx, query, args...)
	}
	countStmt(ctx)
	return r.read.QueryContext(ctx, query, args...)
}

func (r sqlReader) QueryRow(ctx context.Context, query string, args ...any) Row {
	if tx := r.db.fallbackTx(ctx, "DB.Read().QueryRow"); tx != nil {
		return tx.QueryRow(ctx, query, args...)
	}
	countStmt(ctx)
	return r.read.QueryRowContext(ctx, query, args...)
}

type pgxReader struct {
	db   *DB
	pool interface {
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (r pgxReader) Engine() Engine { return Postgres }

func (r pgxReader) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if tx := r.db.fallbackTx(ctx, "DB.Read().Exec"); tx != nil {
		return tx.Exec(ctx, query, args...)
	}
	countStmt(ctx)
	rows, err := r.pool.Query(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	rows.Close()
	return rows.CommandTag().RowsAffected(), rows.Err()
}

func (r pgxReader) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if tx := r.db.fallbackTx(ctx, "DB.Read().Query"); tx != nil {
		return tx.Query(ctx, query, args...)
	}
	countStmt(ctx)
	rows, err := r.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgxRows{rows}, nil
}

func (r pgxReader) QueryRow(ctx context.Context, query string, args ...any) Row {
	if tx := r.db.fallbackTx(ctx, "DB.Read().QueryRow"); tx != nil {
		return tx.QueryRow(ctx, query, args...)
	}
	countStmt(ctx)
	return pgxRow{r.pool.QueryRow(ctx, query, args...)}
}

type pgxRows struct{ pgx.Rows }

func (r pgxRows) Close() error {
	r.Rows.Close()
	return nil
}

type pgxRow struct{ row pgx.Row }

// batchRows and batchRow are the result of a statement sent with queued
// ones (ExecLater): closing them, or scanning the row, ends the round trip.
type batchRows struct {
	pgxRows
	br pgx.BatchResults
}

func (r batchRows) Close() error {
	r.pgxRows.Close()
	return r.br.Close()
}

type batchRow struct {
	row pgxRow
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (r pgxRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNoRows
	}
	return err
}
