package store

import (
	"context"
	"sync/atomic"
)

type stmtCountKey struct{}

// StmtCount counts the statements run under a context (CountStmts).
type StmtCount struct{ n, waits atomic.Int64 }

// N returns the number of statements counted so far.
func (c *StmtCount) N() int64 { return c.n.Load() }

// Waits returns how many times the caller waited for the database to answer
// its statements: once a statement, except that on PostgreSQL the
// statements a transaction queues (Tx.ExecLater) count none of their own and
// travel with its next statement, or at the end of the batch member or
// transaction when none follows; and a transaction's COMMIT, which carries
// what it queued last, counts one (its BEGIN travels with its first
// statement and counts none). A batch's commit counts for the member that
// led it. On SQLite, where a statement is a function call, it is N.
func (c *StmtCount) Waits() int64 { return c.waits.Load() }

// CountStmts returns a ctx under which every statement a Querier runs (a
// transaction's Exec, Query and QueryRow, and those of DB.Read) is counted
// in the returned StmtCount, so a test can hold a request's statements to a
// number. Transaction control (begin, savepoints, commit) and statements
// the job queue runs on the transaction's driver handle are not counted as
// statements (the commit is a wait: Waits).
func CountStmts(ctx context.Context) (context.Context, *StmtCount) {
	c := &StmtCount{}
	return context.WithValue(ctx, stmtCountKey{}, c), c
}

// countStmt counts one statement run under ctx, and the wait for it.
func countStmt(ctx context.Context) {
	if c, _ := ctx.Value(stmtCountKey{}).(*StmtCount); c != nil {
		c.n.Add(1)
		c.waits.Add(1)
	}
}

// countQueued counts one statement queued under ctx, sent later.
func countQueued(ctx context.Context) {
	if c, _ := ctx.Value(stmtCountKey{}).(*StmtCount); c != nil {
		c.n.Add(1)
	}
}

// countWait counts one wait for queued statements sent alone.
func countWait(ctx context.Context) {
	if c, _ := ctx.Value(stmtCountKey{}).(*StmtCount); c != nil {
		c.waits.Add(1)
	}
}
