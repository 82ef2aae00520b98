// Package health is how each partner's receiving side is doing, judged by the outcome of the pushes delivered
// to it: the partner_health rows, the rule that makes a receiver DEGRADED or OK again, and the
// partner.degraded / partner.recovered events. party.Service carries a Tracker, so its methods are the registry's.
package health

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Health states of a platform's receiving side.
const (
	// HealthOK: the last delivery attempt succeeded, or too few failed in a
	// row to say more.
	HealthOK = "OK"
	// HealthDegraded: pushes to the platform keep failing, or the push that
	// failed has waited longer than the lag limit.
	HealthDegraded = "DEGRADED"
)

// Health defaults: a receiver is DEGRADED after DefaultHealthFailures failed
// attempts in a row, or as soon as an attempt fails on a push older than
// DefaultHealthLag. With the push backoff (2 s doubling) a receiver that
// refuses connections is DEGRADED about 6 s after its first failure; one that
// hangs until the 30 s timeout is DEGRADED on its second failure, about a
// minute in.
const (
	DefaultHealthFailures = 3
	DefaultHealthLag      = time.Minute
)

// Health is how a platform's receiving side is doing, judged by the outcome
// of the pushes delivered to it (not by the liveness check, which only tells
// whether the partner calls us).
type Health struct {
	PlatformID int64  `json:"platform_id"`
	State      string `json:"state"`
	// ConsecutiveFailures counts delivery attempts failed since the last
	// success (an answer of the receiver, even a refusal, is a success here).
	ConsecutiveFailures int `json:"consecutive_failures"`
	// LagSeconds is the age of the push of the last attempt when it was made.
	LagSeconds    int64          `json:"lag_seconds"`
	LastSuccessAt *ocpi.DateTime `json:"last_success_at,omitempty"`
	LastFailureAt *ocpi.DateTime `json:"last_failure_at,omitempty"`
	LastError     string         `json:"last_error,omitempty"`
	// Since is when the state last changed.
	Since ocpi.DateTime `json:"since"`
}

// Degraded reports whether the receiver is failing.
func (h *Health) Degraded() bool { return h != nil && h.State == HealthDegraded }

// DeliveryOutcome is one delivery attempt to a platform's receiver, as the
// hub's push workers report it.
type DeliveryOutcome struct {
	PlatformID int64
	// Answered is true when the receiver gave an OCPI answer (accepted or
	// refused); false for network errors, timeouts, HTTP 5xx, 401 and 429.
	Answered bool
	// Lag is the age of the push when it was attempted.
	Lag time.Duration
	// Error describes a failed attempt.
	Error string
}

// healthEvent is the data of partner.degraded and partner.recovered.
type healthEvent struct {
	Health
	Name    string `json:"name"`
	Parties any    `json:"parties"`
}

// Config is what the tracker needs besides the store.
type Config struct {
	// Failures and Lag judge a receiver DEGRADED (defaults
	// DefaultHealthFailures and DefaultHealthLag).
	Failures int
	Lag      time.Duration
	// Events receives partner.degraded and partner.recovered.
	Events event.Emitter
	// Describe names a platform and its parties for those events (the
	// registry reads them in the same transaction).
	Describe func(ctx context.Context, tx *store.Tx, platformID int64) (name string, parties any, err error)
}

// Tracker records delivery outcomes and answers what the health of each
// receiver is.
type Tracker struct {
	db     *store.DB
	clock  clock.Clock
	logger *slog.Logger
	cfg    Config
	// ok remembers, per platform, when this process last wrote a success
	// of it (see dirty).
	mu sync.Mutex
	ok map[int64]int64
}

// New returns a tracker on db.
func New(db *store.DB, clk clock.Clock, logger *slog.Logger, cfg Config) *Tracker {
	if cfg.Failures <= 0 {
		cfg.Failures = DefaultHealthFailures
	}
	if cfg.Lag <= 0 {
		cfg.Lag = DefaultHealthLag
	}
	if cfg.Events == nil {
		cfg.Events = event.Discard{}
	}
	return &Tracker{db: db, clock: clk, logger: logger, cfg: cfg, ok: map[int64]int64{}}
}

// RecordDelivery updates the health of o.PlatformID with one delivery
// attempt. On a change of state it emits partner.degraded or
// partner.recovered (to the operator's webhooks only: the partner is the one
// failing) and logs it, DEGRADED at WARN, in the transaction of the change, so
// of several replicas recording at once exactly one reports the change.
func (t *Tracker) RecordDelivery(ctx context.Context, o DeliveryOutcome) error {
	now := t.clock.Now().UnixMicro()
	if o.Answered && !t.dirty(o.PlatformID, now) {
		return nil
	}
	var changed *Health
	err := t.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		changed = nil
		var fails int
		var state string
		var err error
		if o.Answered {
			err = tx.QueryRow(ctx, `INSERT INTO partner_health (platform_id, state, consecutive_failures, lag_us, last_success_at, changed_at)
				VALUES ($1, $2, 0, $3, $4, $4)
				ON CONFLICT (platform_id) DO UPDATE SET consecutive_failures = 0, lag_us = excluded.lag_us, last_success_at = excluded.last_success_at
				RETURNING consecutive_failures, state`, o.PlatformID, HealthOK, o.Lag.Microseconds(), now).Scan(&fails, &state)
		} else {
			err = tx.QueryRow(ctx, `INSERT INTO partner_health (platform_id, state, consecutive_failures, lag_us, last_failure_at, last_error, changed_at)
				VALUES ($1, $2, 1, $3, $4, $5, $4)
				ON CONFLICT (platform_id) DO UPDATE SET consecutive_failures = partner_health.consecutive_failures + 1,
					lag_us = excluded.lag_us, last_failure_at = excluded.last_failure_at, last_error = excluded.last_error
				RETURNING consecutive_failures, state`, o.PlatformID, HealthOK, o.Lag.Microseconds(), now, truncateError(o.Error)).Scan(&fails, &state)
		}
		if err != nil {
			return err
		}
		want := HealthOK
		if !o.Answered && (fails >= t.cfg.Failures || o.Lag >= t.cfg.Lag) {
			want = HealthDegraded
		}
		if want == state {
			return nil
		}
		// The guarded update makes the change once, whoever races us.
		n, err := tx.Exec(ctx, "UPDATE partner_health SET state = $1, changed_at = $2 WHERE platform_id = $3 AND state = $4",
			want, now, o.PlatformID, state)
		if err != nil || n != 1 {
			return err
		}
		h, err := findHealth(ctx, tx, o.PlatformID)
		if err != nil {
			return err
		}
		platformName, parties, err := t.cfg.Describe(ctx, tx, o.PlatformID)
		if err != nil {
			return err
		}
		name := event.PartnerRecovered
		if want == HealthDegraded {
			name = event.PartnerDegraded
		}
		changed = h
		return t.cfg.Events.Emit(ctx, tx, event.Event{Name: name, Data: healthEvent{Health: *h, Name: platformName, Parties: parties}})
	})
	if err != nil {
		return err
	}
	t.seen(o.PlatformID, now, o.Answered && changed == nil)
	if changed != nil {
		if changed.Degraded() {
			t.logger.WarnContext(ctx, "partner receiver is failing: pushes to it are not delivered", "platform_id", o.PlatformID,
				"consecutive_failures", changed.ConsecutiveFailures, "lag_seconds", changed.LagSeconds, "error", changed.LastError)
		} else {
			t.logger.InfoContext(ctx, "partner receiver recovered: pushes to it are delivered again", "platform_id", o.PlatformID)
		}
	}
	return nil
}

// dirty reports whether a success of platformID must be written: the
// last write this process made of it was not a success, or is older than
// healthQuiet. Successes of a healthy receiver are the common case; they are
// written at most once per healthQuiet per process.
func (t *Tracker) dirty(platformID, now int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.ok[platformID]
	return !ok || now-at >= healthQuiet.Microseconds()
}

func (t *Tracker) seen(platformID, now int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ok == nil {
		t.ok = map[int64]int64{}
	}
	if ok {
		t.ok[platformID] = now
	} else {
		delete(t.ok, platformID)
	}
}

// healthQuiet bounds how long a replica skips writing successes: a receiver
// that another replica saw fail recovers within it.
const healthQuiet = 5 * time.Second

// Health returns the health of every platform pushes were attempted to, by
// platform id.
func (t *Tracker) Health(ctx context.Context) (map[int64]*Health, error) {
	rows, err := t.db.Read().Query(ctx, "SELECT "+healthColumns+" FROM partner_health")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]*Health{}
	for rows.Next() {
		h, err := scanHealth(rows)
		if err != nil {
			return nil, err
		}
		out[h.PlatformID] = h
	}
	return out, rows.Err()
}

// HealthOf returns the health of one platform; found is false when nothing
// was pushed to it yet.
func (t *Tracker) HealthOf(ctx context.Context, platformID int64) (h *Health, found bool, err error) {
	h, err = findHealth(ctx, t.db.Read(), platformID)
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	return h, err == nil, err
}

const healthColumns = "platform_id, state, consecutive_failures, lag_us, last_success_at, last_failure_at, last_error, changed_at"

func findHealth(ctx context.Context, q store.Querier, platformID int64) (*Health, error) {
	return scanHealth(q.QueryRow(ctx, "SELECT "+healthColumns+" FROM partner_health WHERE platform_id = $1", platformID))
}

func scanHealth(r interface{ Scan(...any) error }) (*Health, error) {
	var h Health
	var lag, ok, failed, since int64
	if err := r.Scan(&h.PlatformID, &h.State, &h.ConsecutiveFailures, &lag, &ok, &failed, &h.LastError, &since); err != nil {
		return nil, err
	}
	h.LagSeconds = lag / 1e6
	if ok > 0 {
		t := ocpi.FromMicros(ok)
		h.LastSuccessAt = &t
	}
	if failed > 0 {
		t := ocpi.FromMicros(failed)
		h.LastFailureAt = &t
	}
	h.Since = ocpi.FromMicros(since)
	return &h, nil
}

func truncateError(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}
