package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
)

// A migrated PostgreSQL database for a test is a copy of a template
// (CREATE DATABASE … TEMPLATE): migrating a new schema costs about 0.7 s
// of the server's and the test's time under the race detector, copying the
// template about 50 ms, and a test run opens hundreds. The template is
// migrated once per server and set of migrations: it is named after their
// digest and River's version, so a change to either makes a new one. Where
// the server refuses (a role without CREATEDB), tests fall back to a new
// schema the hub migrates, as before. The templates of earlier migration
// sets stay on the server (a run of older code may still copy them); drop
// them with ALTER DATABASE … IS_TEMPLATE false and DROP DATABASE.
const (
	templatePrefix = "ocpihubtest_tmpl_"
	copyPrefix     = "ocpihubtest_t_"
	// leftoverAge is how old a copy must be before a later run drops it:
	// the copies of a test binary that was killed, never dropped.
	leftoverAge = 3 * time.Hour
)

var (
	tmplPGOnce sync.Once
	tmplPG     *pgTemplate
	tmplPGErr  error
)

// pgTemplate is the migrated template on the tests' server and the
// connections that copy it.
type pgTemplate struct {
	name     string
	admin    *pgxpool.Pool
	settings []string // the base database's settings the copies take (synchronous_commit)
}

// migratedPostgresURL returns a new database copied from the template, or
// ok false when the server cannot copy one.
func migratedPostgresURL(t testing.TB) (string, bool) {
	t.Helper()
	tmplPGOnce.Do(func() {
		if tmplPG, tmplPGErr = newPGTemplate(context.Background()); tmplPGErr != nil {
			fmt.Fprintf(os.Stderr, "storetest: no migrated PostgreSQL template (%v); each test migrates a schema of its own\n", tmplPGErr)
		}
	})
	if tmplPGErr != nil {
		return "", false
	}
	url, err := tmplPG.copy(t)
	if err != nil {
		t.Fatalf("copy the migrated template %s: %v", tmplPG.name, err)
	}
	return url, true
}

// newPGTemplate finds the template for these migrations on the server, or
// makes it. Binaries of one run making it at once wait for each other on
// an advisory lock of the base database.
func newPGTemplate(ctx context.Context) (*pgTemplate, error) {
	digest, err := store.MigrationsDigest()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(digest + " " + riverVersion()))
	name := templatePrefix + hex.EncodeToString(sum[:8])
	cfg, err := pgxpool.ParseConfig(PostgresURL())
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4
	admin, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tm := &pgTemplate{name: name, admin: admin}
	if err := tm.ensure(ctx, int64(binary.BigEndian.Uint64(sum[8:16]))); err != nil {
		admin.Close()
		return nil, err
	}
	var syncCommit string
	if err := admin.QueryRow(ctx, "SHOW synchronous_commit").Scan(&syncCommit); err != nil {
		admin.Close()
		return nil, err
	}
	if syncCommit != "on" {
		tm.settings = append(tm.settings, "synchronous_commit = "+pgx.Identifier{syncCommit}.Sanitize())
	}
	tm.dropLeftovers(ctx)
	return tm, nil
}

// ensure makes the template unless a complete one exists (marked
// IS_TEMPLATE once migrated; one that is not was left half made).
func (tm *pgTemplate) ensure(ctx context.Context, lockKey int64) error {
	conn, err := tm.admin.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", lockKey) }()
	var done bool
	err = conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", tm.name).Scan(&done)
	switch {
	case err == nil && done:
		return nil
	case err == nil:
		if _, err := conn.Exec(ctx, "DROP DATABASE "+tm.ident()+" WITH (FORCE)"); err != nil {
			return err
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+tm.ident()); err != nil {
		return err
	}
	url, err := postgresURLFor(tm.name, "", "2")
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		return err
	}
	err = db.Migrate(ctx)
	if err == nil {
		err = jobs.Migrate(ctx, db, nil)
	}
	db.Close()
	if err != nil {
		return fmt.Errorf("migrate the template: %w", err)
	}
	// No connections from here on, autovacuum's included: CREATE DATABASE
	// waits for those to the template it copies.
	_, err = conn.Exec(ctx, "ALTER DATABASE "+tm.ident()+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
	return err
}

// copy makes a new database from the template for t, dropped when t ends.
func (tm *pgTemplate) copy(t testing.TB) (string, error) {
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := copyPrefix + strconv.FormatInt(time.Now().Unix(), 10) + "_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := tm.admin.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE "+tm.ident()); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = tm.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	})
	for _, s := range tm.settings {
		if _, err := tm.admin.Exec(ctx, "ALTER DATABASE "+ident+" SET "+s); err != nil {
			return "", err
		}
	}
	return postgresURLFor(name, "", testPool)
}

// dropLeftovers drops the copies killed test binaries left, hours old.
func (tm *pgTemplate) dropLeftovers(ctx context.Context) {
	rows, err := tm.admin.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", copyPrefix)
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, n := range names {
		stamp, _, _ := strings.Cut(strings.TrimPrefix(n, copyPrefix), "_")
		if sec, err := strconv.ParseInt(stamp, 10, 64); err == nil && time.Since(time.Unix(sec, 0)) > leftoverAge {
			_, _ = tm.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
		}
	}
}

func (tm *pgTemplate) ident() string { return pgx.Identifier{tm.name}.Sanitize() }

// riverVersion is the version of River's migrations built in.
func riverVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/riverqueue/river" {
				return d.Version
			}
		}
	}
	return "unknown"
}
