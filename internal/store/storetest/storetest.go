// Package storetest opens fresh, migrated databases for tests, on SQLite and
// on PostgreSQL, so that every storage test runs on both engines.
//
// PostgreSQL is found through OCPIHUB_TEST_POSTGRES (default: the local
// server, database "test"). Each test gets its own database copied from a
// migrated template (MigratedURL) or its own schema (URL), dropped at the end.
// When PostgreSQL is unreachable the PostgreSQL half of a test is skipped with a
// visible message, unless OCPIHUB_TEST_REQUIRE_POSTGRES=1 (CI), where it fails.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultPostgresURL is used when OCPIHUB_TEST_POSTGRES is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL returns the PostgreSQL server tests use.
func PostgresURL() string {
	if u := os.Getenv("OCPIHUB_TEST_POSTGRES"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

var (
	pgOnce      sync.Once
	pgReachable error
)

// postgresAvailable checks once per test binary whether PostgreSQL answers.
func postgresAvailable() error {
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, PostgresURL())
		if err != nil {
			pgReachable = err
			return
		}
		pgReachable = conn.Ping(ctx)
		conn.Close(ctx)
	})
	return pgReachable
}

// Engines returns the engines a test runs on.
func Engines() []store.Engine { return []store.Engine{store.SQLite, store.Postgres} }

// EachEngine runs fn as a parallel subtest per engine, named after it.
func EachEngine(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	for _, engine := range Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

// Each runs fn as a subtest per engine with a fresh migrated database. The
// subtests are parallel.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	EachEngine(t, func(t *testing.T, engine store.Engine) { fn(t, Open(t, engine)) })
}

// Open returns a fresh migrated database on engine, closed at the end of the
// test. On PostgreSQL it skips (or, in CI, fails) when the server is away.
func Open(t testing.TB, engine store.Engine) *store.DB {
	t.Helper()
	return OpenURL(t, MigratedURL(t, engine))
}

// OpenURL opens the database at url (from URL, where a test needs the
// address too: a child process, a second opener), migrates it and closes it
// at the end of the test.
func OpenURL(t testing.TB, url string) *store.DB {
	t.Helper()
	return openURL(t, url, true)
}

// OpenUnchecked is Open for a test that requests a pooled connection inside
// a write transaction on purpose: its cleanup does not report the
// violations (store.ErrTxHeld) the test provokes.
func OpenUnchecked(t testing.TB, engine store.Engine) *store.DB {
	t.Helper()
	return openURL(t, MigratedURL(t, engine), false)
}

func openURL(t testing.TB, url string, checkViolations bool) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url, store.Options{MaxConns: 8})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() {
		if n := db.Violations(); n > 0 && checkViolations {
			t.Errorf("%d pooled connections were requested inside a write transaction (store.ErrTxHeld)", n)
		}
		db.Close()
	})
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", url, err)
	}
	if err := jobs.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("migrate job tables on %s: %v", url, err)
	}
	return db
}

// MigratedURL is URL with the migrations already applied. On SQLite the
// test's file is a copy of one migrated once per test binary: migrating an
// SQLite file costs over a second under the race detector, and a test run
// starts hundreds of hubs; opening the copy finds nothing to apply. On
// PostgreSQL it is a new database copied from a template migrated once
// per server and set of migrations (pgtemplate.go), or, where the server
// cannot copy one, a new schema the hub migrates.
func MigratedURL(t testing.TB, engine store.Engine) string {
	t.Helper()
	if engine == store.Postgres {
		needPostgres(t)
		if url, ok := migratedPostgresURL(t); ok {
			return url
		}
	}
	url := URL(t, engine)
	if engine != store.SQLite {
		return url
	}
	tmpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	if err := os.WriteFile(strings.TrimPrefix(url, "sqlite:"), tmpl, 0o600); err != nil {
		t.Fatal(err)
	}
	return url
}

var (
	tmplOnce  sync.Once
	tmplBytes []byte
	tmplErr   error
)

// sqliteTemplate migrates an SQLite file once per test binary and returns
// its bytes (the write-ahead log checkpointed into it).
func sqliteTemplate() ([]byte, error) {
	tmplOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ocpihub-template-")
		if err != nil {
			tmplErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "template.db")
		ctx := context.Background()
		db, err := store.Open(ctx, "sqlite:"+path, store.Options{})
		if err != nil {
			tmplErr = err
			return
		}
		if err = db.Migrate(ctx); err == nil {
			if err = jobs.Migrate(ctx, db, nil); err == nil {
				err = db.Scrub(ctx) // checkpoints the log into the file
			}
		}
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tmplErr = err
			return
		}
		tmplBytes, tmplErr = os.ReadFile(path)
	})
	return tmplBytes, tmplErr
}

// URL returns a database URL reserved for the test: a new SQLite file in the
// test's temp directory, or the PostgreSQL server with a new schema (as
// search_path) that is dropped when the test ends. Use it where a test opens
// the database more than once (a restart, two replicas, the CLI).
func URL(t testing.TB, engine store.Engine) string {
	t.Helper()
	switch engine {
	case store.SQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "ocpihub.db")
	case store.Postgres:
		needPostgres(t)
		var b [6]byte
		_, _ = rand.Read(b[:])
		schema := "t_" + hex.EncodeToString(b[:])
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, PostgresURL())
			if err != nil {
				return
			}
			defer conn.Close(ctx)
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		})
		u, err := postgresURLFor("", schema, testPool)
		if err != nil {
			t.Fatalf("OCPIHUB_TEST_POSTGRES: %v", err)
		}
		return u
	}
	t.Fatalf("unknown engine %q", engine)
	return ""
}

// testPool is the pool a test's database URL asks for: many hubs run at
// once in a test binary, each with its pool and job workers, and a small
// pool each keeps them all under the server's connection limit.
const testPool = "6"

// postgresURLFor is the tests' server URL naming database (the base
// database when "") and schema as its search_path (none when ""), with a
// pool of conns connections unless the URL names one.
func postgresURLFor(database, schema, conns string) (string, error) {
	u, err := neturl.Parse(PostgresURL())
	if err != nil {
		return "", err
	}
	if database != "" {
		u.Path = "/" + database
	}
	q := u.Query()
	if schema != "" {
		q.Set("search_path", schema)
	} else {
		q.Del("search_path")
	}
	if q.Get("pool_max_conns") == "" {
		q.Set("pool_max_conns", conns)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// needPostgres skips t (fails it in CI) when PostgreSQL does not answer.
func needPostgres(t testing.TB) {
	t.Helper()
	if err := postgresAvailable(); err != nil {
		if os.Getenv("OCPIHUB_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required (OCPIHUB_TEST_REQUIRE_POSTGRES=1) but unreachable at %s: %v", PostgresURL(), err)
		}
		t.Skipf("SKIPPED ON POSTGRESQL: no server at %s (%v); set OCPIHUB_TEST_POSTGRES to run the PostgreSQL half", PostgresURL(), err)
	}
}

// Exec runs statements in one write transaction (a test's own tables and
// rows) and fails the test on an error.
func Exec(t testing.TB, db *store.DB, statements ...string) {
	t.Helper()
	err := db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		for _, s := range statements {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Listen runs db.Listen until the test ends and waits until it listens (at
// once on SQLite, where it returns).
func Listen(t testing.TB, db *store.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		db.Listen(ctx, ready)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("not listening after 10 s")
	}
}
