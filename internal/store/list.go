package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/ocpihub/ocpihub/internal/ocpi"
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

	// Positions, when set, counts the total and finds OFFSET pages through
	// a sparse position index (Documents); else Totals, when set, caches
	// the total.
	Positions *Positions
	Totals    *Totals
}

func (l List) col(name string) string {
	if l.Prefix == "" {
		return name
	}
	return l.Prefix + "." + name
}

// baseWhere returns the filter's own conditions: no date window, no
// position.
func (l List) baseWhere() ([]string, []any) {
	return append([]string(nil), l.Where...), append([]any(nil), l.Args...)
}

func (l List) where(withAfter bool) (string, []any) {
	conds, args := l.windowConds()
	if withAfter && l.HasAfter {
		// A row-value comparison: both engines seek the (last_updated, pk)
		// index with it; PostgreSQL does not with the equivalent OR form.
		args = append(args, l.AfterLastUpdated, l.AfterPK)
		conds = append(conds, fmt.Sprintf("(%s, %s) > ($%d, $%d)", l.col("last_updated"), l.col("pk"), len(args)-1, len(args)))
	}
	return Where(conds), args
}

// windowConds returns the filter's conditions with the date window.
func (l List) windowConds() ([]string, []any) {
	conds, args := l.baseWhere()
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
	return conds, args
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
	out := make([]json.RawMessage, 0, min(max(l.Limit, 0), 100))
	var rows Rows
	if l.Positions != nil {
		v, err := l.Positions.view(ctx, q, l)
		if err != nil {
			return nil, page, fmt.Errorf("count %s: %w", l.Table, err)
		}
		from, total, err := l.total(ctx, q, v)
		if err != nil {
			return nil, page, fmt.Errorf("count %s: %w", l.Table, err)
		}
		page.Total = total
		if l.Limit <= 0 || int64(l.Offset) >= total {
			return out, page, nil
		}
		if !l.HasAfter && l.Offset > 0 {
			rows, err = l.queryAt(ctx, q, v, from)
		} else {
			rows, err = l.Query(ctx, q)
		}
		if err != nil {
			return nil, page, fmt.Errorf("list %s: %w", l.Table, err)
		}
	} else {
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
		if l.Limit <= 0 || int64(l.Offset) >= total {
			return out, page, nil
		}
		if rows, err = l.Query(ctx, q); err != nil {
			return nil, page, fmt.Errorf("list %s: %w", l.Table, err)
		}
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

// queryAt returns the page at l.Offset without an OFFSET scan: from the
// bucket of the position index that holds it (from is the position of the
// date window's first row), the key of the page's first row, found by
// skipping fewer rows than a bucket holds, then a keyset page from there.
func (l List) queryAt(ctx context.Context, q Querier, v []bucketView, from int64) (Rows, error) {
	start, skip := seek(v, from+int64(l.Offset))
	if l.DateFrom != 0 {
		if w := (Key{l.DateFrom, math.MinInt64}); start.less(w) {
			start, skip = w, int64(l.Offset)
		}
	}
	conds, args := l.windowConds()
	conds, args = l.rangeConds(conds, args, start, nil)
	order := " ORDER BY " + l.col("last_updated") + ", " + l.col("pk")
	var first Key
	err := q.QueryRow(ctx, "SELECT "+l.col("last_updated")+", "+l.col("pk")+" FROM "+l.Table+Where(conds)+order+
		fmt.Sprintf(" LIMIT 1 OFFSET %d", skip), args...).Scan(&first.LastUpdated, &first.PK)
	if errors.Is(err, ErrNoRows) {
		first = Key{math.MaxInt64, math.MaxInt64} // past the end: an empty page
	} else if err != nil {
		return nil, err
	}
	conds, args = l.windowConds()
	conds, args = l.rangeConds(conds, args, first, nil)
	return q.Query(ctx, "SELECT "+l.Columns+" FROM "+l.Table+Where(conds)+order+fmt.Sprintf(" LIMIT %d", l.Limit), args...)
}
