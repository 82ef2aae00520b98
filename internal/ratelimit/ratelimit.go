// Package ratelimit limits the requests of each token in three fixed windows
// at once (seed §8): a burst per second, a number per minute and per hour.
// Counters reset at the start of each window. A refused request does not
// count.
//
// On SQLite (one node) the counters live in process. On PostgreSQL every
// replica of a hub shares them through one row per token in
// rate_limit_counters, updated by a single upsert per check, so N replicas
// enforce one limit with no extra service.
package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Limits are the requests a token may make per window; 0 is no limit in
// that window.
type Limits struct {
	PerSecond int `json:"per_second"`
	PerMinute int `json:"per_minute"`
	PerHour   int `json:"per_hour"`
}

// Defaults returns the seed's limits: 20 per second, 100 per minute, 1000 per
// hour.
func Defaults() Limits { return Limits{PerSecond: 20, PerMinute: 100, PerHour: 1000} }

// Unlimited reports whether no window is limited.
func (l Limits) Unlimited() bool { return l.PerSecond <= 0 && l.PerMinute <= 0 && l.PerHour <= 0 }

// Override is a party's own limits (the platforms.rate_limits column): a
// field left out takes the hub's default.
type Override struct {
	PerSecond *int `json:"per_second,omitempty"`
	PerMinute *int `json:"per_minute,omitempty"`
	PerHour   *int `json:"per_hour,omitempty"`
}

// Apply returns def with the override's fields.
func (o Override) Apply(def Limits) Limits {
	if o.PerSecond != nil {
		def.PerSecond = *o.PerSecond
	}
	if o.PerMinute != nil {
		def.PerMinute = *o.PerMinute
	}
	if o.PerHour != nil {
		def.PerHour = *o.PerHour
	}
	return def
}

// Check validates the override: each limit between 0 (none) and 1,000,000.
func (o Override) Check() error {
	c := ocpi.NewCheck("")
	for _, f := range []struct {
		name string
		v    *int
	}{{"per_second", o.PerSecond}, {"per_minute", o.PerMinute}, {"per_hour", o.PerHour}} {
		if f.v != nil && (*f.v < 0 || *f.v > 1_000_000) {
			c.Fail(f.name, "must be between 0 (no limit) and 1000000")
		}
	}
	return c.Err()
}

// Window is the state of one window after a check.
type Window struct {
	Name   string // second, minute or hour
	Length time.Duration
	Limit  int
	// Used counts the requests allowed in the window, this one included
	// when it was allowed.
	Used  int
	Reset time.Time // when the window ends
}

// Remaining returns the requests left in the window.
func (w Window) Remaining() int { return max(w.Limit-w.Used, 0) }

// Decision is the outcome of a check.
type Decision struct {
	Allowed bool
	// Windows are the limited windows, shortest first.
	Windows []Window
}

// Report returns the window the response headers describe: when refused, the
// exhausted window that resets last (what Retry-After waits for); when
// allowed, the window nearest exhaustion (fewest requests left; of equals,
// the longest). ok is false when no window is limited.
func (d Decision) Report() (w Window, ok bool) {
	for _, x := range d.Windows {
		switch {
		case !ok:
			w, ok = x, true
		case !d.Allowed:
			if x.Remaining() == 0 && (w.Remaining() > 0 || x.Reset.After(w.Reset)) {
				w = x
			}
		case x.Remaining() <= w.Remaining():
			w = x
		}
	}
	return w, ok
}

// RetryAfter returns how long a refused client must wait, in whole seconds
// (at least one).
func (d Decision) RetryAfter(now time.Time) time.Duration {
	w, ok := d.Report()
	if !ok || d.Allowed {
		return 0
	}
	return max(time.Duration(math.Ceil(w.Reset.Sub(now).Seconds()))*time.Second, time.Second)
}

// windowSeconds are the lengths of the three windows, in seconds.
func windowSeconds() [3]int64 { return [3]int64{1, 60, 3600} }

func windowNames() [3]string { return [3]string{"second", "minute", "hour"} }

// counter counts requests in the three windows starting at starts and
// returns the counts; it counts the request only if every count is below its
// limit.
type counter interface {
	take(ctx context.Context, key string, starts [3]int64, limits [3]int) (counts [3]int, allowed bool, err error)
}

// Limiter checks requests against limits.
type Limiter struct {
	db       *store.DB
	counter  counter
	clock    clock.Clock
	defaults Limits

	mu    sync.Mutex
	cache map[int64]cachedLimits
}

type cachedLimits struct {
	limits Limits
	until  time.Time
}

// overrideTTL is how long a party's limits are cached; a change made on
// another replica applies within it.
const overrideTTL = 10 * time.Second

// New returns a Limiter: shared counters on PostgreSQL, in-process counters
// on SQLite. defaults are the limits of every token without an override.
func New(db *store.DB, clk clock.Clock, defaults Limits) *Limiter {
	clk = clock.OrReal(clk)
	l := &Limiter{db: db, clock: clk, defaults: defaults, cache: map[int64]cachedLimits{}}
	if db != nil && db.Engine() == store.Postgres {
		l.counter = &postgresCounter{db: db}
	} else {
		l.counter = newMemoryCounter()
	}
	return l
}

// Defaults returns the hub-wide limits.
func (l *Limiter) Defaults() Limits { return l.defaults }

// Allow counts a request of key (a token's identity) against limits and
// says whether it may proceed. Unlimited limits are not counted.
func (l *Limiter) Allow(ctx context.Context, key string, limits Limits) (Decision, error) {
	if limits.Unlimited() {
		return Decision{Allowed: true}, nil
	}
	now := l.clock.Now()
	sec := now.Unix()
	var starts [3]int64
	var lim [3]int
	set := [3]int{limits.PerSecond, limits.PerMinute, limits.PerHour}
	for i, n := range windowSeconds() {
		starts[i] = sec - floorMod(sec, n)
		lim[i] = math.MaxInt32
		if set[i] > 0 {
			lim[i] = set[i]
		}
	}
	counts, allowed, err := l.counter.take(ctx, key, starts, lim)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: allowed}
	for i, n := range windowSeconds() {
		if set[i] <= 0 {
			continue
		}
		d.Windows = append(d.Windows, Window{
			Name: windowNames()[i], Length: time.Duration(n) * time.Second, Limit: set[i], Used: counts[i],
			Reset: time.Unix(starts[i]+n, 0).UTC(),
		})
	}
	return d, nil
}

func floorMod(a, b int64) int64 { return ((a % b) + b) % b }

// LimitsFor returns the limits of a platform: its override applied to the
// defaults (cached for a few seconds).
func (l *Limiter) LimitsFor(ctx context.Context, platformID int64) (Limits, error) {
	now := l.clock.Now()
	l.mu.Lock()
	c, ok := l.cache[platformID]
	l.mu.Unlock()
	if ok && now.Before(c.until) && !now.Before(c.until.Add(-overrideTTL)) {
		return c.limits, nil
	}
	o, err := l.Override(ctx, platformID)
	if err != nil {
		return Limits{}, err
	}
	limits := o.Apply(l.defaults)
	l.mu.Lock()
	l.cache[platformID] = cachedLimits{limits: limits, until: now.Add(overrideTTL)}
	l.mu.Unlock()
	return limits, nil
}

// Override returns a platform's own limits.
func (l *Limiter) Override(ctx context.Context, platformID int64) (Override, error) {
	var raw []byte
	err := l.db.Read().QueryRow(ctx, "SELECT rate_limits FROM platforms WHERE id = $1", platformID).Scan(&raw)
	if errors.Is(err, store.ErrNoRows) {
		return Override{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("platform %d not found", platformID)}
	}
	if err != nil {
		return Override{}, err
	}
	var o Override
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &o); err != nil {
			return Override{}, fmt.Errorf("platform %d rate_limits: %w", platformID, err)
		}
	}
	return o, nil
}

// SetOverride stores a platform's own limits (an empty override returns it
// to the defaults).
func (l *Limiter) SetOverride(ctx context.Context, platformID int64, o Override) error {
	if err := o.Check(); err != nil {
		return err
	}
	var value any
	if o != (Override{}) {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		value = string(b)
	}
	err := l.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, "UPDATE platforms SET rate_limits = $1, updated_at = $2 WHERE id = $3", value, l.clock.Now().UnixMicro(), platformID)
		if err == nil && n == 0 {
			err = &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("platform %d not found", platformID)}
		}
		return err
	})
	if err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.cache, platformID)
	l.mu.Unlock()
	return nil
}

// memoryCounter counts in process (one node).
type memoryCounter struct {
	mu    sync.Mutex
	state map[string]*memoryState
	calls int
}

type memoryState struct {
	starts [3]int64
	counts [3]int
}

func newMemoryCounter() *memoryCounter { return &memoryCounter{state: map[string]*memoryState{}} }

func (m *memoryCounter) take(_ context.Context, key string, starts [3]int64, limits [3]int) ([3]int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls%10000 == 0 {
		// Forget tokens idle for more than an hour.
		for k, st := range m.state {
			if st.starts[2] < starts[2] {
				delete(m.state, k)
			}
		}
	}
	st := m.state[key]
	if st == nil {
		st = &memoryState{}
		m.state[key] = st
	}
	var counts [3]int
	allowed := true
	for i := range starts {
		if starts[i] > st.starts[i] {
			st.starts[i], st.counts[i] = starts[i], 0
		}
		counts[i] = st.counts[i]
		if counts[i] >= limits[i] {
			allowed = false
		}
	}
	if allowed {
		for i := range counts {
			st.counts[i]++
			counts[i]++
		}
	}
	return counts, allowed, nil
}

// postgresCounter shares counters through rate_limit_counters: one upsert
// per check moves each window to its current start (a window that has
// passed restarts at zero), counts the request only if all three counts are
// below their limits, and returns the counts. A replica whose clock lags
// counts into the newest window rather than restarting it.
type postgresCounter struct{ db *store.DB }

const upsertCounters = `
INSERT INTO rate_limit_counters AS c (key, second_start, second_count, minute_start, minute_count, hour_start, hour_count, allowed)
VALUES ($1, $2, 1, $3, 1, $4, 1, TRUE)
ON CONFLICT (key) DO UPDATE SET
    second_start = GREATEST(c.second_start, excluded.second_start),
    minute_start = GREATEST(c.minute_start, excluded.minute_start),
    hour_start   = GREATEST(c.hour_start, excluded.hour_start),
    second_count = ` + usedSecond + ` + ` + increment + `,
    minute_count = ` + usedMinute + ` + ` + increment + `,
    hour_count   = ` + usedHour + ` + ` + increment + `,
    allowed      = ` + admit + `
RETURNING second_count, minute_count, hour_count, allowed`

const (
	usedSecond = `(CASE WHEN excluded.second_start <= c.second_start THEN c.second_count ELSE 0 END)`
	usedMinute = `(CASE WHEN excluded.minute_start <= c.minute_start THEN c.minute_count ELSE 0 END)`
	usedHour   = `(CASE WHEN excluded.hour_start <= c.hour_start THEN c.hour_count ELSE 0 END)`
	admit      = `(` + usedSecond + ` < $5 AND ` + usedMinute + ` < $6 AND ` + usedHour + ` < $7)`
	increment  = `(CASE WHEN ` + admit + ` THEN 1 ELSE 0 END)`
)

func (p *postgresCounter) take(ctx context.Context, key string, starts [3]int64, limits [3]int) ([3]int, bool, error) {
	var counts [3]int
	var allowed bool
	err := p.db.Pool().QueryRow(ctx, upsertCounters, key, starts[0], starts[1], starts[2], limits[0], limits[1], limits[2]).
		Scan(&counts[0], &counts[1], &counts[2], &allowed)
	if err != nil {
		return counts, false, fmt.Errorf("rate limit counters: %w", err)
	}
	return counts, allowed, nil
}
