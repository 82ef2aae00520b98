// Package sandbox runs what is particular to the sandbox instance: the
// daily reset of its data.
//
// The sandbox is a second hub in the same process (app.New builds it when
// --sandbox-addr is set) with its own database, its own base URL and
// unlimited rate limits; partners test against it with sandbox credentials
// (ocpihub party invite --sandbox). Once a day, at a configured hour (UTC),
// its data is wiped: every table except those that say who is connected and
// how (platforms, their parties and invitations, webhook subscriptions, the
// hub's settings) and the bookkeeping of migrations and jobs. Tables a module
// adds later are wiped too, without a change here. Production, which lives in
// another database, is never touched.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
)

// markerKey is the settings row holding the time of the last reset.
const markerKey = "sandbox_reset_at"

// keptTables are the tables a reset leaves alone, besides the migration and
// job tables (goose_*, river_*) and SQLite's own (sqlite_*).
func keptTables() []string {
	return []string{
		"settings", "platforms", "platform_roles", "invitations", "client_info",
		"webhook_subscriptions", "webhook_subscription_events", "webhook_receivers", "rate_limit_counters",
	}
}

func kept(name string) bool {
	return slices.Contains(keptTables(), name) || strings.HasPrefix(name, "river_") ||
		strings.HasPrefix(name, "goose_") || strings.HasPrefix(name, "sqlite_")
}

// Tables returns the tables a reset empties, sorted.
func Tables(ctx context.Context, q store.Querier) ([]string, error) {
	query := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if q.Engine() == store.Postgres {
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	names, err := store.QueryAll(ctx, q, func(row store.Row) (string, error) {
		var name string
		err := row.Scan(&name)
		return name, err
	}, query)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(names, kept)
	slices.Sort(out)
	return out, nil
}

// reset empties the tables in tx: one TRUNCATE on PostgreSQL, DELETEs with
// foreign keys checked at commit on SQLite.
func reset(ctx context.Context, tx *store.Tx) ([]string, error) {
	tables, err := Tables(ctx, tx)
	if err != nil || len(tables) == 0 {
		return tables, err
	}
	if tx.Engine() == store.Postgres {
		quoted := make([]string, len(tables))
		for i, t := range tables {
			quoted[i] = pgx.Identifier{t}.Sanitize()
		}
		_, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(quoted, ", "))
		return tables, err
	}
	if _, err := tx.Exec(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
		return nil, err
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `DELETE FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`); err != nil {
			return nil, fmt.Errorf("empty %s: %w", t, err)
		}
	}
	return tables, nil
}

// DailyAt is a River periodic schedule: every day at Hour:00 UTC.
type DailyAt struct{ Hour int }

// Next implements river.PeriodicSchedule.
func (d DailyAt) Next(t time.Time) time.Time {
	t = t.UTC()
	next := time.Date(t.Year(), t.Month(), t.Day(), d.Hour, 0, 0, 0, time.UTC)
	if !next.After(t) {
		next = next.AddDate(0, 0, 1)
	}
	return next
}

// Last returns the latest scheduled time at or before t.
func (d DailyAt) Last(t time.Time) time.Time {
	t = t.UTC()
	last := time.Date(t.Year(), t.Month(), t.Day(), d.Hour, 0, 0, 0, time.UTC)
	if last.After(t) {
		last = last.AddDate(0, 0, -1)
	}
	return last
}

// Resetter resets the sandbox's database.
type Resetter struct {
	db     *store.DB
	clock  clock.Clock
	logger *slog.Logger
	at     DailyAt
}

// NewResetter returns a Resetter for the sandbox's database, resetting daily
// at hour (UTC), and registers its worker on jc.
func NewResetter(db *store.DB, jc *jobs.Client, clk clock.Clock, logger *slog.Logger, hour int) *Resetter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Resetter{db: db, clock: clk, logger: logger, at: DailyAt{Hour: hour}}
	if jc != nil {
		jobs.AddWorker(jc, jobs.CountedTask[resetArgs](r.RunIfDue))
	}
	return r
}

// Schedule adds the daily reset to jc. It also runs at start, so a reset
// missed while the hub was down happens when it comes back.
func (r *Resetter) Schedule(jc *jobs.Client) {
	jc.Periodic(r.at, resetArgs{}, &river.PeriodicJobOpts{RunOnStart: true})
}

// Banner is the text the sandbox's version details carry.
func (r *Resetter) Banner() string {
	return "SANDBOX: a test environment. Its data (locations, sessions, CDRs, payments, deliveries…) is deleted every day at " +
		fmt.Sprintf("%02d:00 UTC", r.at.Hour) + "; credentials and webhook subscriptions stay. Rate limits do not apply, " +
		"payments go to a simulated gateway and nothing here reaches production."
}

// ResetNow empties the sandbox's data at once and records the reset.
func (r *Resetter) ResetNow(ctx context.Context) error {
	return r.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return r.resetTx(ctx, tx, r.clock.Now())
	})
}

func (r *Resetter) resetTx(ctx context.Context, tx *store.Tx, now time.Time) error {
	tables, err := reset(ctx, tx)
	if err != nil {
		return fmt.Errorf("sandbox reset: %w", err)
	}
	if err := setMarker(ctx, tx, now); err != nil {
		return err
	}
	r.logger.InfoContext(ctx, "sandbox data reset", "tables", len(tables))
	return nil
}

// RunIfDue resets when a scheduled reset has passed since the last one. The
// first run on a database without a marker only records one (a fresh or
// upgraded sandbox keeps its data until the next scheduled time). It reports
// whether it reset.
func (r *Resetter) RunIfDue(ctx context.Context) (bool, error) {
	did := false
	err := r.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := r.clock.Now()
		var v string
		err := tx.QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", markerKey).Scan(&v)
		if errors.Is(err, store.ErrNoRows) {
			return setMarker(ctx, tx, now)
		}
		if err != nil {
			return err
		}
		last, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("sandbox reset marker %q: %w", v, err)
		}
		if last >= r.at.Last(now).UnixMicro() {
			return nil
		}
		did = true
		return r.resetTx(ctx, tx, now)
	})
	return did, err
}

func setMarker(ctx context.Context, tx *store.Tx, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		markerKey, strconv.FormatInt(now.UnixMicro(), 10), now.UnixMicro())
	return err
}

type resetArgs struct{}

// Kind implements river.JobArgs.
func (resetArgs) Kind() string { return "sandbox_reset" }
