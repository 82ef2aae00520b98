package store

import (
	"encoding/json"

	"context"
	"fmt"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"strings"
)

// List is a paged query over a document table. Document tables share a shape:
// a surrogate BIGINT key `pk`, a `last_updated` BIGINT (microseconds), the
// body, and an index on (last_updated, pk). Pages are ordered by last_updated,
// then pk; a page that continues from a known position (After) seeks through
// that index instead of skipping Offset rows, so page 10 000 costs what page 1
// costs.
type List struct {
	Table   string // table, with an alias if Where uses one
	Columns string // select list
	// Where holds extra conditions joined with AND; their placeholders are
	// numbered from $1 in the order of Args.
	Where []string
	Args  []any

	DateFrom, DateTo int64 // microseconds; 0: unbounded
	Offset, Limit    int
	// AfterLastUpdated/AfterPK continue after a known row; used when HasAfter.
	HasAfter         bool
	AfterLastUpdated int64
	AfterPK          int64

	// Prefix names the table alias of last_updated and pk ("" for none).
	Prefix string

	// Totals, when set, caches the total (Documents).
	Totals *Totals
}

func (l List) col(name string) string {
	if l.Prefix == "" {
		return name
	}
	return l.Prefix + "." + name
}

func (l List) where(withAfter bool) (string, []any) {
	conds := append([]string(nil), l.Where...)
	args := append([]any(nil), l.Args...)
	next := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if l.DateFrom != 0 {
		conds = append(conds, l.col("last_updated")+" >= "+next(l.DateFrom))
	}
	if l.DateTo != 0 {
		conds = append(conds, l.col("last_updated")+" < "+next(l.DateTo))
	}
	if withAfter && l.HasAfter {
		// A row-value comparison: both engines seek the (last_updated, pk)
		// index with it; PostgreSQL does not with the equivalent OR form.
		lu, pk := next(l.AfterLastUpdated), next(l.AfterPK)
		conds = append(conds, fmt.Sprintf("(%s, %s) > (%s, %s)", l.col("last_updated"), l.col("pk"), lu, pk))
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Count returns the number of rows matching the filters (not the page).
func (l List) Count(ctx context.Context, q Querier) (int64, error) {
	where, args := l.where(false)
	var n int64
	err := q.QueryRow(ctx, "SELECT COUNT(*) FROM "+l.Table+where, args...).Scan(&n)
	return n, err
}

// Query returns the rows of the page.
func (l List) Query(ctx context.Context, q Querier) (Rows, error) {
	where, args := l.where(true)
	query := "SELECT " + l.Columns + " FROM " + l.Table + where +
		" ORDER BY " + l.col("last_updated") + ", " + l.col("pk") +
		fmt.Sprintf(" LIMIT %d", max(l.Limit, 0))
	if !l.HasAfter && l.Offset > 0 {
		query += fmt.Sprintf(" OFFSET %d", l.Offset)
	}
	return q.Query(ctx, query, args...)
}

// WithPage applies an OCPI page request: offset, limit, the date window and,
// when the request continues one of our own Link URLs, the keyset position.
func (l List) WithPage(p ocpi.PageRequest) List {
	l.Offset, l.Limit = p.Offset, p.Limit
	if !p.DateFrom.IsZero() {
		l.DateFrom = p.DateFrom.Micros()
	}
	if !p.DateTo.IsZero() {
		l.DateTo = p.DateTo.Micros()
	}
	if p.After != nil {
		l.HasAfter, l.AfterLastUpdated, l.AfterPK = true, p.After.LastUpdated, p.After.Key
	}
	return l
}

// Documents runs a List whose Columns are "pk, last_updated, body" (with the
// alias prefix if any) and returns the bodies as stored, the total and the
// position after the last one.
func Documents(ctx context.Context, q Querier, l List) ([]json.RawMessage, ocpi.Page, error) {
	var page ocpi.Page
	var total int64
	var err error
	if l.Totals != nil {
		total, err = l.Totals.count(ctx, q, l)
	} else {
		total, err = l.Count(ctx, q)
	}
	if err != nil {
		return nil, page, fmt.Errorf("count %s: %w", l.Table, err)
	}
	page.Total = total
	out := make([]json.RawMessage, 0, min(l.Limit, 100))
	if l.Limit == 0 || int64(l.Offset) >= total {
		return out, page, nil
	}
	rows, err := l.Query(ctx, q)
	if err != nil {
		return nil, page, fmt.Errorf("list %s: %w", l.Table, err)
	}
	defer rows.Close()
	var pk, lu int64
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&pk, &lu, &body); err != nil {
			return nil, page, err
		}
		out = append(out, json.RawMessage(body))
	}
	if err := rows.Err(); err != nil {
		return nil, page, err
	}
	if len(out) > 0 {
		page.Last = &ocpi.Cursor{Offset: l.Offset + len(out), LastUpdated: lu, Key: pk}
	}
	return out, page, nil
}
