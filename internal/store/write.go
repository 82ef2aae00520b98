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
// record of what was answered): the statement is sent alone, committed by
// itself, instead of inside a BEGIN … COMMIT of its own (one round trip on
// PostgreSQL instead of three, no transaction bookkeeping on SQLite's
// writer). Callers that write this way can later share a batch's commit
// without changing.
//
// Inside a write transaction (ctx holds one) the statement runs in it and
// commits with it. Under a commit hook (WithCommitHook: an idempotent
// request) it runs in a transaction of its own so the hook commits with it.
func (db *DB) Write(ctx context.Context, query string, args ...any) (n int64, err error) {
	if tx := HeldTx(ctx); tx != nil {
		return tx.Exec(ctx, query, args...)
	}
	if hooks, _ := ctx.Value(commitHookKey{}).([]CommitHook); len(hooks) > 0 {
		err = db.InTx(ctx, func(ctx context.Context, tx *Tx) error {
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
	if db.pool != nil {
		tag, err := db.pool.Exec(ctx, query, args...)
		return tag.RowsAffected(), err
	}
	res, err := db.write.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
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
