package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/tracing"
)

// Write runs one statement as a write of its own and returns the number of
// rows it affected; the change has committed when Write returns. It is the
// call for a request whose only write is one independent statement (a
// record of what was answered).
//
// On SQLite the statement joins the group commit (InBatch): concurrent
// records share one transaction, so eight authorizations at once take the
// single writer once instead of queueing at the writer gate eight times
// (authorize-own at 8 clients spent most of its p99 there). On PostgreSQL
// it is sent alone and commits by itself: one round trip instead of
// BEGIN … COMMIT's three, and the server already flushes concurrent
// commits' WAL together.
//
// Inside a write transaction (ctx holds one) the statement runs in it and
// commits with it. Under a commit hook (WithCommitHook: an idempotent
// request) it runs in a transaction so the hook commits with it.
func (db *DB) Write(ctx context.Context, query string, args ...any) (n int64, err error) {
	if tx := HeldTx(ctx); tx != nil {
		return tx.Exec(ctx, query, args...)
	}
	hooks, _ := ctx.Value(commitHookKey{}).([]CommitHook)
	if db.pool == nil || len(hooks) > 0 {
		err = db.InBatch(ctx, func(ctx context.Context, tx *Tx) error {
			n, err = tx.Exec(ctx, query, args...)
			return err
		})
		return n, err
	}
	ctx, span := tracing.Start(ctx, "write", tracing.Client)
	defer span.EndErr(&err)
	span.SetDBSystem(string(db.engine))
	release, err := db.gate.acquire(ctx, IsBackground(ctx))
	if err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	defer release()
	countStmt(ctx)
	tag, err := db.pool.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

// Values writes the VALUES list of a multi-row INSERT: rows groups of cols
// placeholders, numbered $1 … $(rows·cols) in order, for arguments given
// row after row. Numbered in order, they reach SQLite as "?" and bind by
// position (anonymousParams), so a long list costs no more a row than one.
func Values(rows, cols int) string {
	var sb strings.Builder
	sb.Grow(rows * cols * 6)
	for r := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for c := range cols {
			if c > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('$')
			sb.WriteString(strconv.Itoa(r*cols + c + 1))
		}
		sb.WriteByte(')')
	}
	return sb.String()
}
