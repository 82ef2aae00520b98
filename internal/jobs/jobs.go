// Package jobs is ocpihub's durable job queue, on River, over the same
// database as the data (SQLite through riversqlite, PostgreSQL through
// riverpgxv5).
//
// The rule it exists for: a state change that needs follow-up work (push an
// object to a partner, relay a command result, deliver a webhook, retry a
// refund) enqueues the job with InsertTx in the same transaction. Either both
// commit or neither does; nothing is sent from inside a request where a crash
// between "stored" and "sent" could lose it.
//
// Jobs are retried with exponential backoff and jitter; a job whose worker
// died (a crashed or killed process) runs again: at once when the process
// that restarts on the same machine sees its predecessor gone (Recover),
// else once it has been running for longer than RescueAfter. So every
// worker must be idempotent: keyed by ids, checking what it already did.
package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Queues ocpihub uses. Partner-facing traffic is split from internal
// bookkeeping so a slow partner cannot starve reconciliation.
const (
	QueueDefault  = river.QueueDefault
	QueuePush     = "push"     // pushes and relays to OCPI partners
	QueueWebhooks = "webhooks" // webhook jobs queued before the delivery engine sent webhooks
	QueueMoney    = "money"    // payments, refunds, reconciliation
)

// Config tunes a Client. Zero values mean the defaults.
type Config struct {
	Logger *slog.Logger
	// Workers per queue; nil: a default set for every queue above.
	Queues map[string]int
	// PollInterval is how often idle workers look for new jobs (default 100ms;
	// SQLite has no LISTEN/NOTIFY, and a short poll is cheap on an index).
	PollInterval time.Duration
	// JobTimeout bounds one attempt of a job whose worker names no timeout
	// of its own (default DefaultJobTimeout).
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before it is considered
	// orphaned by a dead worker and run again (default JobTimeout +
	// DefaultRescueMargin). Recover re-arms the jobs of a process known to
	// be dead sooner; this bounds the wait for one that cannot be judged
	// (another machine, another container).
	RescueAfter time.Duration
	// MaxAttempts before a job is discarded (default 25).
	MaxAttempts int
	// Time stubs River's clock in tests.
	Time rivertype.TimeGenerator
	// Instance names this process in the jobs it works (River's client
	// id), so that Recover can tell the jobs of a dead process. Empty: River
	// names the client by host and time, and Recover does nothing.
	Instance instance.ID
	// InsertOnly builds a client that can enqueue but never works jobs (CLI
	// commands that change data while a server runs the queue).
	InsertOnly bool
	// Middleware wraps every insert and every attempt, inside the queue's
	// own (tracing: a job's span).
	Middleware []rivertype.Middleware
}

// Client enqueues and works jobs.
type Client struct {
	db      *store.DB
	self    instance.ID
	workers *river.Workers
	logger  *slog.Logger
	sq      *river.Client[*sql.Tx]
	pg      *river.Client[pgx.Tx]
	// stats counts job outcomes for metrics.
	stats *Stats
	// stopping is set when Stop begins: River's maintenance services then
	// see their context cancelled mid-query and log it, which is not an
	// error of a clean shutdown.
	stopping *atomic.Bool
}

// New builds a client on db. Register workers with AddWorker and periodic jobs
// with AddPeriodic before Start.
func New(db *store.DB, cfg Config) (*Client, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{db: db, self: cfg.Instance, workers: river.NewWorkers(), logger: cfg.Logger, stats: newStats(), stopping: &atomic.Bool{}}
	jobTimeout := cfg.JobTimeout
	if jobTimeout == 0 {
		jobTimeout = DefaultJobTimeout
	}
	rescue := cfg.RescueAfter
	if rescue == 0 {
		rescue = jobTimeout + DefaultRescueMargin
	}
	queues := map[string]river.QueueConfig{}
	if !cfg.InsertOnly {
		qs := cfg.Queues
		if qs == nil {
			qs = map[string]int{QueueDefault: 10, QueuePush: 20, QueueWebhooks: 1, QueueMoney: 5}
		}
		for name, n := range qs {
			queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	rc := &river.Config{
		FetchCooldown:        min(cfg.PollInterval, 50*time.Millisecond),
		FetchPollInterval:    cmp.Or(cfg.PollInterval, 100*time.Millisecond),
		ID:                   string(cfg.Instance),
		JobTimeout:           jobTimeout,
		Logger:               slog.New(shutdownFilter{quietRiver(cfg.Logger).Handler(), c.stopping}),
		MaxAttempts:          cmp.Or(cfg.MaxAttempts, 25),
		RescueStuckJobsAfter: rescue,
		RetryPolicy:          Backoff{Time: cfg.Time},
		Schema:               db.Schema(),
		Workers:              c.workers,
		ErrorHandler:         &errorHandler{logger: cfg.Logger},
		Middleware:           append([]rivertype.Middleware{&backgroundWork{}}, cfg.Middleware...),
	}
	if rc.FetchCooldown <= 0 {
		rc.FetchCooldown = 50 * time.Millisecond
	}
	if len(queues) > 0 {
		rc.Queues = queues
	}
	if cfg.Time != nil {
		rc.Test.Time = cfg.Time
	}
	var err error
	switch db.Engine() {
	case store.SQLite:
		// Poll only: SQLite has no LISTEN/NOTIFY.
		rc.PollOnly = true
		c.sq, err = river.NewClient(riversqlite.New(db.SQLDB()), rc)
	case store.Postgres:
		c.pg, err = river.NewClient(riverpgxv5.New(db.Pool()), rc)
	}
	if err != nil {
		return nil, fmt.Errorf("job client: %w", err)
	}
	return c, nil
}

// backgroundWork marks every worker's context as background work: its write
// transactions yield to requests at the store's writer gate, within a
// reserved share (store.Background).
type backgroundWork struct{ river.MiddlewareDefaults }

func (*backgroundWork) Work(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
	return doInner(store.Background(ctx))
}

// Migrate creates or updates River's tables. It runs after store migrations
// and, on PostgreSQL, under an advisory lock so replicas take turns.
func Migrate(ctx context.Context, db *store.DB, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := &rivermigrate.Config{Logger: quietRiver(logger), Schema: db.Schema()}
	switch db.Engine() {
	case store.SQLite:
		m, err := rivermigrate.New(riversqlite.New(db.SQLDB()), cfg)
		if err != nil {
			return err
		}
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	default:
		conn, err := db.Pool().Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		h := fnv.New64a()
		h.Write([]byte("ocpihub-river-migrate:" + db.Schema()))
		key := int64(h.Sum64() >> 1)
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key) //nolint:errcheck
		m, err := rivermigrate.New(riverpgxv5.New(db.Pool()), cfg)
		if err != nil {
			return err
		}
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}
}

// AddWorker registers a worker for its job kind.
func AddWorker[T river.JobArgs](c *Client, w river.Worker[T]) {
	river.AddWorker(c.workers, w)
	var args T
	c.stats.known(args.Kind())
}

// AddPeriodic schedules a job to be enqueued periodically (by the leader only,
// so a cluster runs it once).
func (c *Client) AddPeriodic(job *river.PeriodicJob) {
	if c.sq != nil {
		c.sq.PeriodicJobs().Add(job)
	} else {
		c.pg.PeriodicJobs().Add(job)
	}
}

// Every enqueues args every interval (by the leader only), the first time
// one interval after start. id, when not empty, names the periodic job.
// args is enqueued as it is each time: a job without parameters.
func (c *Client) Every(interval time.Duration, args river.JobArgs, id string) {
	var opts *river.PeriodicJobOpts
	if id != "" {
		opts = &river.PeriodicJobOpts{ID: id}
	}
	c.Periodic(river.PeriodicInterval(interval), args, opts)
}

// Periodic enqueues args on schedule (by the leader only), with River's
// options (RunOnStart: also once at start).
func (c *Client) Periodic(schedule river.PeriodicSchedule, args river.JobArgs, opts *river.PeriodicJobOpts) {
	c.AddPeriodic(river.NewPeriodicJob(schedule, func() (river.JobArgs, *river.InsertOpts) { return args, nil }, opts))
}

// Start starts working jobs until Stop.
func (c *Client) Start(ctx context.Context) error {
	go c.countEvents()
	if c.sq != nil {
		return c.sq.Start(ctx)
	}
	return c.pg.Start(ctx)
}

// Stop stops fetching new jobs and waits for running ones to finish. If ctx
// ends first, running jobs are cancelled; a cancelled attempt is recorded as
// failed and retried later, so nothing is lost.
func (c *Client) Stop(ctx context.Context) error {
	c.stopping.Store(true)
	var err error
	if c.sq != nil {
		err = c.sq.Stop(ctx)
	} else {
		err = c.pg.Stop(ctx)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if c.sq != nil {
			return c.sq.StopAndCancel(hard)
		}
		return c.pg.StopAndCancel(hard)
	}
	return err
}

// InsertTx enqueues a job inside tx: it exists only if tx commits.
func (c *Client) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if c.sq != nil {
		return c.sq.InsertTx(ctx, tx.SQLTx(), args, opts)
	}
	ptx, err := tx.PgxTx(ctx)
	if err != nil {
		return nil, err
	}
	return c.pg.InsertTx(ctx, ptx, args, opts)
}

// InsertManyTx enqueues several jobs inside tx in one statement (the fan-out
// of one event to many webhook subscriptions).
func (c *Client) InsertManyTx(ctx context.Context, tx *store.Tx, params []river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	var err error
	if c.sq != nil {
		_, err = c.sq.InsertManyTx(ctx, tx.SQLTx(), params)
	} else {
		var ptx pgx.Tx
		if ptx, err = tx.PgxTx(ctx); err == nil {
			_, err = c.pg.InsertManyTx(ctx, ptx, params)
		}
	}
	return err
}

// Insert enqueues a job on its own, for work that follows no state change of
// ours (an operator's retry, a scheduled sync).
func (c *Client) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if err := c.db.CheckNoTx(ctx, "jobs.Insert"); err != nil {
		return nil, err
	}
	if c.sq != nil {
		return c.sq.Insert(ctx, args, opts)
	}
	return c.pg.Insert(ctx, args, opts)
}

// InsertMany enqueues several jobs at once, outside a transaction (a
// worker fanning out work it was given durably).
func (c *Client) InsertMany(ctx context.Context, params []river.InsertManyParams) error {
	if err := c.db.CheckNoTx(ctx, "jobs.InsertMany"); err != nil {
		return err
	}
	var err error
	if c.sq != nil {
		_, err = c.sq.InsertMany(ctx, params)
	} else {
		_, err = c.pg.InsertMany(ctx, params)
	}
	return err
}

// ListParams filter a job listing.
type ListParams struct {
	States []rivertype.JobState
	Kinds  []string
	Limit  int
	// After continues a listing after the job with this id (keyset paging:
	// the last id of the previous page).
	After int64
}

// List returns jobs, newest first.
func (c *Client) List(ctx context.Context, p ListParams) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(cmp.Or(p.Limit, 100))
	if p.After > 0 {
		last, err := c.Get(ctx, p.After)
		if err != nil {
			return nil, err
		}
		params = params.After(river.JobListCursorFromJob(last))
	}
	if len(p.States) > 0 {
		params = params.States(p.States...)
	}
	if len(p.Kinds) > 0 {
		params = params.Kinds(p.Kinds...)
	}
	var res *river.JobListResult
	var err error
	if c.sq != nil {
		res, err = c.sq.JobList(ctx, params)
	} else {
		res, err = c.pg.JobList(ctx, params)
	}
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

// Failed returns the jobs that gave up (discarded), were cancelled, or wait
// for a retry further away than a few seconds: what an operator looks at.
func (c *Client) Failed(ctx context.Context, limit int) ([]*rivertype.JobRow, error) {
	return c.List(ctx, ListParams{States: []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateCancelled, rivertype.JobStateRetryable}, Limit: limit})
}

// Counts returns the number of jobs in each state (River keeps finished
// jobs for a day, then deletes them).
func (c *Client) Counts(ctx context.Context) (map[rivertype.JobState]int64, error) {
	rows, err := c.db.Read().Query(ctx, "SELECT CAST(state AS TEXT), COUNT(*) FROM river_job GROUP BY state")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[rivertype.JobState]int64{}
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		out[rivertype.JobState(state)] = n
	}
	return out, rows.Err()
}

// Kinds returns the kinds of the jobs in the given states, sorted.
func (c *Client) Kinds(ctx context.Context, states ...rivertype.JobState) ([]string, error) {
	query := "SELECT DISTINCT kind FROM river_job"
	var args []any
	if len(states) > 0 {
		ph := make([]string, len(states))
		for i, st := range states {
			ph[i] = fmt.Sprintf("CAST($%d AS TEXT)", i+1)
			args = append(args, string(st))
		}
		query += " WHERE CAST(state AS TEXT) IN (" + strings.Join(ph, ", ") + ")"
	}
	return store.QueryAll(ctx, c.db.Read(), func(row store.Row) (string, error) {
		var k string
		return k, row.Scan(&k)
	}, query+" ORDER BY kind", args...)
}

// Get returns one job.
func (c *Client) Get(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if c.sq != nil {
		return c.sq.JobGet(ctx, id)
	}
	return c.pg.JobGet(ctx, id)
}

// Retry makes a failed or discarded job run again now.
func (c *Client) Retry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if c.sq != nil {
		return c.sq.JobRetry(ctx, id)
	}
	return c.pg.JobRetry(ctx, id)
}

// Subscribe returns a channel of job events (completed, failed, …) for
// tests and metrics, and a function to stop it.
func (c *Client) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	if c.sq != nil {
		return c.sq.Subscribe(kinds...)
	}
	return c.pg.Subscribe(kinds...)
}

// Stats returns the job outcome counters.
func (c *Client) Stats() *Stats { return c.stats }

// errorHandler logs job failures with their kind and attempt.
type errorHandler struct{ logger *slog.Logger }

func (h *errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	level := slog.LevelWarn
	if job.Attempt >= job.MaxAttempts {
		level = slog.LevelError
	}
	h.logger.Log(ctx, level, "job failed", "job_id", job.ID, "kind", job.Kind, "attempt", job.Attempt, "max_attempts", job.MaxAttempts, "error", err)
	return nil
}

func (h *errorHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.logger.ErrorContext(ctx, "job panicked", "job_id", job.ID, "kind", job.Kind, "attempt", job.Attempt, "panic", fmt.Sprint(panicVal), "trace", trace)
	return nil
}

// quietRiver passes River's own logs through at warning level and above.
func quietRiver(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{l.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{f.Handler.WithAttrs(a), f.min}
}

func (f levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{f.Handler.WithGroup(name), f.min}
}

// shutdownFilter drops River's reports of a cancelled context once Stop has
// begun: stopping cancels its maintenance services, and one caught between
// two queries logs an error that says only that the hub is stopping. The
// same report at any other time passes through.
type shutdownFilter struct {
	slog.Handler
	stopping *atomic.Bool
}

func (f shutdownFilter) Handle(ctx context.Context, r slog.Record) error {
	if f.stopping.Load() && recordMentions(r, context.Canceled.Error()) {
		return nil
	}
	return f.Handler.Handle(ctx, r)
}

func (f shutdownFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return shutdownFilter{f.Handler.WithAttrs(a), f.stopping}
}

func (f shutdownFilter) WithGroup(name string) slog.Handler {
	return shutdownFilter{f.Handler.WithGroup(name), f.stopping}
}

// recordMentions reports whether the record's message or an attribute's
// value contains s.
func recordMentions(r slog.Record, s string) bool {
	found := strings.Contains(r.Message, s)
	r.Attrs(func(a slog.Attr) bool {
		if strings.Contains(a.Value.String(), s) {
			found = true
		}
		return !found
	})
	return found
}
