package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestCDRLookupsUseTheirKey: a CDR is found by its key, and a session's
// CDRs by the session, through an index covering every column compared,
// on a table that has never been analyzed — a new hub's first minutes,
// before PostgreSQL's autovacuum first counts the rows. PostgreSQL chose
// the session index for the key lookup there (both indexes start with
// country_code, party_id, and nothing told it one party has thousands of
// CDRs), and filtered every CDR of the CPO by id: about 4 ms a CDR at a
// few thousand, twice for each CDR posted.
func TestCDRLookupsUseTheirKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Write(ctx, `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000)
			INSERT INTO cdrs (country_code, party_id, id, token_country_code, token_party_id, session_id, body_hash, created_at,
			last_updated, body) SELECT 'NL', 'CP1', 'CDR' || n, 'DE', 'EM1', 'S' || n, 'h', n, n, '{}' FROM g`); err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct{ query, columns string }{
			{"SELECT body_hash, body FROM cdrs WHERE country_code = 'NL' AND party_id = 'CP1' AND id = 'CDR77'", "country_code party_id id"},
			{"UPDATE cdrs SET emsp_location = 'x' WHERE country_code = 'NL' AND party_id = 'CP1' AND id = 'CDR77'", "country_code party_id id"},
			{"SELECT pk FROM cdrs WHERE country_code = 'NL' AND party_id = 'CP1' AND session_id = 'S77'", "country_code party_id session_id"},
		} {
			plan := explain(t, db, q.query)
			for _, col := range strings.Fields(q.columns) {
				// PostgreSQL: "(id = 'x')"; SQLite: "(country_code=? AND id=?)".
				if !strings.Contains(plan.cond, "("+col+" =") && !strings.Contains(plan.cond, "("+col+"=") &&
					!strings.Contains(plan.cond, " "+col+"=") {
					t.Errorf("%s\n%s compares %s outside its index:\n%s", q.query, db.Engine(), col, plan.text)
				}
			}
			if plan.filtered {
				t.Errorf("%s\nfilters rows the index found:\n%s", q.query, plan.text)
			}
		}
	})
}

type queryPlan struct {
	text     string
	cond     string // what the index is searched with
	filtered bool   // rows the index found are filtered again
}

// explain returns the plan of query: on PostgreSQL its Index Cond and
// whether it has a Filter, on SQLite the constraints of its SEARCH.
func explain(t *testing.T, db *store.DB, query string) queryPlan {
	t.Helper()
	ctx := context.Background()
	var p queryPlan
	if db.Engine() == store.Postgres {
		lines := storetest.Column[string](t, ctx, db.Read(), "EXPLAIN "+query)
		p.text = strings.Join(lines, "\n")
		for _, l := range lines {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "Index Cond:") {
				p.cond += l
			}
			if strings.HasPrefix(l, "Filter:") {
				p.filtered = true
			}
		}
		return p
	}
	rows, err := db.Read().Query(ctx, "EXPLAIN QUERY PLAN "+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		p.text += detail + "\n"
		if strings.HasPrefix(detail, "SEARCH") {
			p.cond += detail
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPushHistoryIndex: the retention sweep deletes finished pushes through
// hub_push_done, the partial index that holds only them, and a receiver's
// open pushes are read through hub_push_queue (migration 1120 dropped the
// index of every push by state, which each lease and settlement wrote to).
func TestPushHistoryIndex(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.Write(ctx, `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000)
			INSERT INTO hub_push (platform_id, module, object_key, method, path, state, created_at, updated_at)
			SELECT n % 10, 'locations', 'NL/CP1/L' || n, 'PUT', '/x', CASE WHEN n % 100 = 0 THEN 'pending' ELSE 'delivered' END, n, n FROM g`); err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct{ query, index string }{
			{"DELETE FROM hub_push WHERE state IN ('delivered', 'rejected', 'superseded', 'failed', 'skipped') AND updated_at < 100", "hub_push_done"},
			{"SELECT id FROM hub_push WHERE platform_id = 3 AND state IN ('pending', 'leased') ORDER BY id LIMIT 4096", "hub_push_queue"},
		} {
			if plan := explain(t, db, q.query); !strings.Contains(plan.text, q.index) {
				t.Errorf("%s\n%s does not use %s:\n%s", q.query, db.Engine(), q.index, plan.text)
			}
		}
	})
}
