package store_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// bodyTables are the tables whose document bodies migration 1140 stores as
// text on PostgreSQL.
var bodyTables = []string{"locations", "tariffs", "sessions", "cdrs"}

// TestDocumentBodiesStoredAsWritten: a location's body reads back byte for
// byte as the hub wrote it, on both engines (JSONB re-rendered it: spaces,
// its own key order).
func TestDocumentBodiesStoredAsWritten(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		body := `{"id":"L1","address":"Main Street 1","evses":[{"uid":"E1","power":22.50}],"a":1}`
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO locations (country_code, party_id, id, publish, lat_e7, lon_e7, last_updated, body)
				VALUES ('NL', 'ACM', 'L1', TRUE, 0, 0, 1, $1)`, body)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.Read().QueryRow(ctx, "SELECT body FROM locations WHERE id = 'L1'").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != body {
			t.Fatalf("stored %s, read back %s", body, got)
		}
	})
}

// TestBodiesBecomeTextOnUpgrade: a PostgreSQL database migrated before
// 1140, with documents stored as JSONB, keeps them through the migration
// (the same JSON, in JSONB's rendering), and its body columns are TEXT after
// it.
func TestBodiesBecomeTextOnUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.URL(t, store.Postgres), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	all, err := store.MigrationsFor(store.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	err = fs.WalkDir(all, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p >= "1140" {
			return err
		}
		b, err := fs.ReadFile(all, p)
		before[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil || len(before) == 0 {
		t.Fatalf("the migrations before 1140: %d, %v", len(before), err)
	}
	if err := db.UpFS(ctx, before); err != nil {
		t.Fatal(err)
	}
	typeOf := func(table string) string {
		var typ string
		if err := db.Read().QueryRow(ctx, "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'body'", table).Scan(&typ); err != nil {
			t.Fatal(err)
		}
		return typ
	}
	for _, table := range bodyTables {
		if typ := typeOf(table); typ != "jsonb" {
			t.Fatalf("%s.body before 1140 is %s, want jsonb", table, typ)
		}
	}
	loc := `{"id":"L1","address":"Main Street 1","evses":[{"uid":"E1","power":22.50}],"a":1}`
	tariff := `{"id":"T1","currency":"INR","elements":[{"price_components":[{"type":"ENERGY","price":20.00,"step_size":1}]}]}`
	err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO locations (country_code, party_id, id, publish, lat_e7, lon_e7, last_updated, body)
			VALUES ('NL', 'ACM', 'L1', TRUE, 0, 0, 1, $1)`, loc); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO tariffs (country_code, party_id, id, last_updated, body) VALUES ('NL', 'ACM', 'T1', 1, $1)", tariff)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.UpFS(ctx, all); err != nil {
		t.Fatal(err)
	}
	for _, table := range bodyTables {
		if typ := typeOf(table); typ != "text" {
			t.Fatalf("%s.body after 1140 is %s, want text", table, typ)
		}
	}
	for table, want := range map[string]string{"locations": loc, "tariffs": tariff} {
		var got string
		if err := db.Read().QueryRow(ctx, "SELECT body FROM "+table).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, ": ") || canonical(t, got) != canonical(t, want) {
			t.Fatalf("%s after the migration: %s, want JSONB's rendering of %s", table, got, want)
		}
	}
}

// canonical is a body in the hub's canonical form (keys sorted, numbers by
// their digits), as the domain packages compare stored bodies.
func canonical(t *testing.T, body string) string {
	t.Helper()
	o, err := ocpi.ParseObject([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	b, err := ocpi.MarshalObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
