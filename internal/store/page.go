package store

import (
	"context"
	"strconv"
	"strings"
)

// Args collects the arguments of a query whose conditions are built one at
// a time: Add appends a value and returns its placeholder ($1, $2, …), to
// be written into the condition that uses it.
type Args []any

// Add appends v to a and returns its placeholder.
func (a *Args) Add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// Conds is a WHERE clause built a condition at a time, with the
// arguments its placeholders number.
type Conds struct {
	conds []string
	args  Args
}

// Arg adds v to the arguments and returns its placeholder.
func (c *Conds) Arg(v any) string { return c.args.Add(v) }

// And adds conditions, joined with AND.
func (c *Conds) And(conds ...string) { c.conds = append(c.conds, conds...) }

// Where returns the WHERE clause of the conditions ("" for none).
func (c *Conds) Where() string { return Where(c.conds) }

// Args returns the arguments.
func (c *Conds) Args() []any { return c.args }

// PageLimit is the page size of an operator's list asked for limit rows:
// def when limit is not positive or more than 500.
func PageLimit(limit, def int) int {
	if limit <= 0 || limit > 500 {
		return def
	}
	return limit
}

// Where joins conditions into a WHERE clause ("" for none).
func Where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// CountedPage is an operator's list: the count of the rows of from+where
// and one page of them, ordered by order, limit rows after skipping offset.
// It is for the console's tables, where a total is shown and pages are few;
// partner-facing lists page through List instead. scan reads one row.
func CountedPage[T any](ctx context.Context, q Querier, columns, from, where, order string, limit, offset int, args []any,
	scan func(Row) (T, error)) ([]T, int64, error) {
	var total int64
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM "+from+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := q.Query(ctx, "SELECT "+columns+" FROM "+from+where+" ORDER BY "+order+" LIMIT "+strconv.Itoa(limit)+
		" OFFSET "+strconv.Itoa(max(offset, 0)), args...)
	if err != nil {
		return nil, 0, err
	}
	out, err := Collect(rows, scan)
	return out, total, err
}

// QueryAll runs query on q and reads every row with scan.
func QueryAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return Collect(rows, scan)
}

// Collect reads every row with scan and closes rows.
func Collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
