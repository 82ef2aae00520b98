// Package store opens ocpihub's database, migrates it and runs transactions.
//
// Two engines sit behind one handle: SQLite (embedded, the default; a single
// writer connection and a pool of readers over WAL) and PostgreSQL (pgx, any
// number of replicas on one database). Domain packages write one SQL text for
// both ($N placeholders, ON CONFLICT, RETURNING, CAST) and run it through a
// Querier: a *Tx for writes, DB.Read for reads. Timestamps are stored as BIGINT
// microseconds since the Unix epoch and documents as JSON text (JSONB on
// PostgreSQL, but for the bodies read and written most, which are TEXT there
// too: migration 1140), so a query means the same on both engines.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ocpihub/ocpihub/internal/instance"
)

// Engine names a database engine.
type Engine string

// The engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DefaultURL is the database of a hub started with no settings: a SQLite file
// in the working directory.
const DefaultURL = "sqlite:ocpihub.db"

// ErrNoRows is returned by Row.Scan when the query matched nothing, on both
// engines.
var ErrNoRows = sql.ErrNoRows

// DB is an open database.
type DB struct {
	engine Engine
	url    string
	logger *slog.Logger

	write *sql.DB // SQLite: one connection, every write transaction
	read  *sql.DB // SQLite: readers (WAL lets them run beside the writer)
	pool  *pgxpool.Pool
	// schema is the PostgreSQL schema the pool's search_path points at
	// ("" = the server default); tests use one schema each.
	schema string

	// writeStmts and readStmts count the statement caches of the SQLite
	// pools (sqliteconn.go); nil on PostgreSQL, where pgx caches them.
	writeStmts, readStmts *stmtCounters
	// gate orders write transactions (writegate.go).
	gate *writeGate
	// batch and bgBatch run group commit (batch.go) of requests and of
	// background work.
	batch, bgBatch batcher
	// violations counts pooled connections requested inside a write
	// transaction (txguard.go).
	violations atomic.Int64
	// ckpt copies SQLite's WAL into the database file in the background
	// (checkpoint.go); nil on PostgreSQL.
	ckpt *checkpointer
	// notify holds what other processes' notifications run (notify.go).
	notify notifier
}

// Options tune Open.
type Options struct {
	Logger *slog.Logger
	// MaxConns caps the PostgreSQL pool and the SQLite reader pool. The
	// default for PostgreSQL is max(16, 4×CPUs): besides requests, the job
	// queue's workers (tens of them) and its listener hold connections, and a
	// pool of 4 made them queue for one. A pool_max_conns parameter in the URL
	// wins. SQLite readers default to max(4, 2×CPUs).
	// (0: a default from the number of CPUs).
	MaxConns int
	// Schema selects a PostgreSQL schema (created when missing); a
	// search_path parameter in the URL does the same.
	Schema string
}

// Open opens the database named by rawURL: "sqlite:path/to/file.db",
// a plain file path, or "postgres://…" / "postgresql://…". It does not
// migrate; call Migrate.
func Open(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	engine, target, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = max(4, 2*runtime.NumCPU())
		if engine == Postgres {
			opts.MaxConns = max(16, 4*runtime.NumCPU())
		}
	}
	db := &DB{engine: engine, url: rawURL, logger: opts.Logger, schema: opts.Schema}
	db.notify.self = string(instance.New())
	db.bgBatch.background = true
	switch engine {
	case SQLite:
		err = db.openSQLite(ctx, target, opts)
	case Postgres:
		err = db.openPostgres(ctx, target, opts)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	poolSize := opts.MaxConns
	if db.pool != nil {
		poolSize = int(db.pool.Config().MaxConns)
	}
	db.gate = newWriteGate(engine, poolSize)
	return db, nil
}

// ParseURL splits a database URL into its engine and the driver's target.
func ParseURL(raw string) (Engine, string, error) {
	switch {
	case raw == "":
		raw = DefaultURL
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		return Postgres, raw, nil
	}
	path := raw
	if rest, ok := strings.CutPrefix(raw, "sqlite://"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(raw, "sqlite:"); ok {
		path = rest
	} else if strings.Contains(raw, "://") {
		return "", "", fmt.Errorf("database URL %q: unknown scheme (want sqlite:FILE or postgres://…)", raw)
	}
	if path == "" {
		return "", "", fmt.Errorf("database URL %q names no file", raw)
	}
	return SQLite, path, nil
}

func (db *DB) openSQLite(ctx context.Context, path string, opts Options) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create database directory: %w", err)
		}
	}
	// temp_store(MEMORY) keeps the sub-journal of a batch's savepoints in
	// memory: in a file, it was written (one pwrite a page) on the writer's
	// critical path, 4 % of the status-PATCH run's CPU. (Mapping the file,
	// mmap_size, was tried too: it saved read calls but measured no faster,
	// and one request at a time took longer.)
	base := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" +
		"&_pragma=temp_store(MEMORY)"
	// secure_delete(FAST) zeroes the bytes of deleted and overwritten rows
	// inside their pages, so replaced secrets (a partner token sealed after a
	// key was configured) do not linger in the file.
	wc, err := newCachingConnector(base + "&_pragma=journal_mode(WAL)&_pragma=secure_delete(FAST)&_pragma=wal_autocheckpoint(0)&_txlock=immediate")
	if err != nil {
		return err
	}
	write := sql.OpenDB(wc)
	// SQLite has one writer at a time: a single connection serialises writers in
	// the pool instead of failing them with SQLITE_BUSY.
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	db.write = write
	if err := write.PingContext(ctx); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	rc, err := newCachingConnector(base + "&_pragma=query_only(1)")
	if err != nil {
		return err
	}
	read := sql.OpenDB(rc)
	read.SetMaxOpenConns(opts.MaxConns)
	read.SetMaxIdleConns(opts.MaxConns)
	db.read = read
	db.writeStmts, db.readStmts = wc.counters, rc.counters
	if err := read.PingContext(ctx); err != nil {
		return err
	}
	return db.startCheckpoints(ctx, base)
}

func (db *DB) openPostgres(ctx context.Context, dsn string, opts Options) error {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = int32(opts.MaxConns)
	}
	if opts.Schema == "" {
		// A search_path in the URL selects the schema too (one per test, or
		// a hub sharing a database with other applications).
		opts.Schema = cfg.ConnConfig.RuntimeParams["search_path"]
		db.schema = opts.Schema
	}
	if opts.Schema != "" {
		admin, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			return fmt.Errorf("connect to PostgreSQL: %w", err)
		}
		_, err = admin.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{opts.Schema}.Sanitize())
		admin.Close(ctx)
		if err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	db.pool = pool
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return nil
}

// Engine returns the engine.
func (db *DB) Engine() Engine { return db.engine }

// Schema returns the PostgreSQL schema ("" for the default and for SQLite).
func (db *DB) Schema() string { return db.schema }

// SQLDB returns the SQLite writer pool, the handle River's SQLite driver runs
// on. It is nil on PostgreSQL.
func (db *DB) SQLDB() *sql.DB { return db.write }

// Pool returns the PostgreSQL pool. It is nil on SQLite.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if db.pool != nil {
		return db.pool.Ping(ctx)
	}
	return db.read.PingContext(ctx)
}

// Scrub removes, as far as the engine allows, the old versions of rows of
// tables that were just overwritten (secrets replaced by their sealed form).
// SQLite zeroes freed space in pages (secure_delete) but the WAL keeps old
// page images until it is reused: Scrub checkpoints and truncates it.
// PostgreSQL keeps dead row versions until vacuum: Scrub VACUUMs the tables.
func (db *DB) Scrub(ctx context.Context, tables ...string) error {
	if db.pool != nil {
		for _, t := range tables {
			if _, err := db.pool.Exec(ctx, "VACUUM "+pgx.Identifier{t}.Sanitize()); err != nil {
				return fmt.Errorf("vacuum %s: %w", t, err)
			}
		}
		return nil
	}
	_, err := db.write.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// Close closes every pool.
func (db *DB) Close() error {
	var errs []error
	if db.ckpt != nil {
		db.ckpt.stop()
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	if db.pool != nil {
		db.pool.Close()
	}
	return errors.Join(errs...)
}

// IsUniqueViolation reports whether err is a unique or primary key violation,
// on either engine.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
