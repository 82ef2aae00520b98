package storetest

import (
	"context"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
)

// Column runs a query that selects one column and returns its value in
// every row, in the order the query gives; the test fails on an error.
func Column[T any](t testing.TB, ctx context.Context, q store.Querier, query string, args ...any) []T {
	t.Helper()
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// Count runs a query that selects one number (a COUNT) and returns it; the
// test fails on an error.
func Count(t testing.TB, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
