package store

import (
	"context"
	"sync/atomic"
)

type stmtCountKey struct{}

// StmtCount counts the statements run under a context (CountStmts).
type StmtCount struct{ n atomic.Int64 }

// N returns the number of statements counted so far.
func (c *StmtCount) N() int64 { return c.n.Load() }

// CountStmts returns a ctx under which every statement a Querier runs (a
// transaction's Exec, Query and QueryRow, and those of DB.Read) is counted
// in the returned StmtCount, so a test can hold a request's statements to a
// number. Transaction control (begin, savepoints, commit) and statements
// the job queue runs on the transaction's driver handle are not counted.
func CountStmts(ctx context.Context) (context.Context, *StmtCount) {
	c := &StmtCount{}
	return context.WithValue(ctx, stmtCountKey{}, c), c
}

// countStmt counts one statement run under ctx.
func countStmt(ctx context.Context) {
	if c, _ := ctx.Value(stmtCountKey{}).(*StmtCount); c != nil {
		c.n.Add(1)
	}
}
