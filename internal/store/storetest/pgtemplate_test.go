package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ocpihub/ocpihub/internal/store"
)

// TestMigratedPostgresCopies: each migrated PostgreSQL database is a
// database of its own, migrated (opening it finds nothing to apply),
// holding nothing another test wrote, with the base database's
// synchronous_commit, and dropped when its test ends.
func TestMigratedPostgresCopies(t *testing.T) {
	t.Parallel()
	needPostgres(t)
	ctx := context.Background()
	var names []string
	for i := range 2 {
		t.Run("copy", func(t *testing.T) {
			u := MigratedURL(t, store.Postgres)
			parsed, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(parsed.Path, "/")
			if !strings.HasPrefix(name, copyPrefix) {
				t.Fatalf("%s is not a copy of the template", u)
			}
			names = append(names, name)
			db, err := store.Open(ctx, u, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			current, latest, err := db.MigrationStatus(ctx)
			if err != nil || current != latest || current == 0 {
				t.Fatalf("the copy is at migration %d of %d (%v)", current, latest, err)
			}
			// What the first test wrote is not in the second's copy.
			var rows int
			if err := db.Read().QueryRow(ctx, "SELECT count(*) FROM settings WHERE key LIKE 'storetest-%'").Scan(&rows); err != nil || rows != 0 {
				t.Fatalf("%d settings of another test in a new copy (%v)", rows, err)
			}
			Exec(t, db, "INSERT INTO settings (key, value, updated_at) VALUES ('storetest-"+strconv.Itoa(i)+"', 'x', 0)")
			var want, got string
			if err := tmplPG.admin.QueryRow(ctx, "SHOW synchronous_commit").Scan(&want); err != nil {
				t.Fatal(err)
			}
			if err := db.Read().QueryRow(ctx, "SHOW synchronous_commit").Scan(&got); err != nil || got != want {
				t.Errorf("synchronous_commit %q in the copy, %q in the base database (%v)", got, want, err)
			}
		})
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("copies %v: want two databases", names)
	}
	var left int
	if err := tmplPG.admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d of the copies are still there after their tests (%v)", left, err)
	}
}

// TestHalfMadeTemplateIsMadeAgain: a template a killed binary left half
// made (not marked IS_TEMPLATE) is dropped and made again, and a complete
// one is used as it is.
func TestHalfMadeTemplateIsMadeAgain(t *testing.T) {
	t.Parallel()
	needPostgres(t)
	MigratedURL(t, store.Postgres) // the admin pool
	ctx := context.Background()
	var b [4]byte
	_, _ = rand.Read(b[:])
	tm := &pgTemplate{name: templatePrefix + "test_" + hex.EncodeToString(b[:]), admin: tmplPG.admin}
	t.Cleanup(func() {
		_, _ = tm.admin.Exec(ctx, "ALTER DATABASE "+tm.ident()+" IS_TEMPLATE false")
		_, _ = tm.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+tm.ident()+" WITH (FORCE)")
	})
	if _, err := tm.admin.Exec(ctx, "CREATE DATABASE "+tm.ident()); err != nil {
		t.Fatal(err)
	}
	oid := func() (o uint32, template bool) {
		t.Helper()
		if err := tm.admin.QueryRow(ctx, "SELECT oid, datistemplate FROM pg_database WHERE datname = $1", tm.name).Scan(&o, &template); err != nil {
			t.Fatal(err)
		}
		return o, template
	}
	half, _ := oid()
	if err := tm.ensure(ctx, int64(b[0])<<32|int64(b[1])); err != nil {
		t.Fatal(err)
	}
	made, template := oid()
	if made == half || !template {
		t.Fatalf("the half-made template was kept (oid %d, then %d, marked %v)", half, made, template)
	}
	if err := tm.ensure(ctx, int64(b[0])<<32|int64(b[1])); err != nil {
		t.Fatal(err)
	}
	if again, _ := oid(); again != made {
		t.Fatalf("a complete template was made again (oid %d, then %d)", made, again)
	}
	u, err := tm.copy(t)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := parsed.Query()
	q.Del("pool_max_conns")
	parsed.RawQuery = q.Encode()
	conn, err := pgx.Connect(ctx, parsed.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'settings'").Scan(&tables); err != nil || tables != 1 {
		t.Fatalf("the copy of the remade template has %d settings tables (%v)", tables, err)
	}
}

// TestLeftoverCopiesDropped: copies hours old (a killed binary's) are
// dropped when a binary sets the template up; recent ones, another
// binary's at work, and the template stay.
func TestLeftoverCopiesDropped(t *testing.T) {
	t.Parallel()
	needPostgres(t)
	MigratedURL(t, store.Postgres) // the template and its admin pool
	ctx := context.Background()
	var b [4]byte
	_, _ = rand.Read(b[:])
	old := copyPrefix + strconv.FormatInt(time.Now().Add(-leftoverAge-time.Minute).Unix(), 10) + "_" + hex.EncodeToString(b[:])
	recent := copyPrefix + strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10) + "_" + hex.EncodeToString(b[:])
	for _, n := range []string{old, recent} {
		if _, err := tmplPG.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{n}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = tmplPG.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()) })
	}
	tmplPG.dropLeftovers(ctx)
	for n, want := range map[string]bool{old: false, recent: true, tmplPG.name: true} {
		var found bool
		if err := tmplPG.admin.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", n).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if found != want {
			t.Errorf("%s there after the sweep: %v, want %v", n, found, want)
		}
	}
}
