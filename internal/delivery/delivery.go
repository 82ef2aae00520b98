// Package delivery is the engine that sends queued work to receivers: hub
// pushes to OCPI partners and outgoing webhooks. It owns what every
// such queue needs and nothing of what is sent:
//
//   - one worker per receiver, started when the receiver has work and ended
//     when it has none, so a receiver that is down never slows the others;
//   - per-key order: a Queue claims at most one item per ordering key (an
//     object) at a time, and items of different keys to one receiver travel
//     in parallel, at most Window of them at once;
//   - batches: one Claim and one Settle (one write transaction each) for up
//     to Batch items;
//   - leases renewed while a batch is in flight;
//   - backoff: a receiver whose whole batch failed pauses until the earliest
//     retry the Queue asked for, and is then probed with one item at a time
//     until one succeeds;
//   - polling for work queued by other replicas, or due again after a retry;
//   - metrics: lag (commit to the receiver's 2xx) and backlog, per receiver.
//
// A Queue supplies the storage and the meaning: what an item is, how it is
// sent, and what each outcome changes.
package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/lease"
)

// Defaults of Config.
const (
	DefaultWindow = 8
	DefaultBatch  = 64
	DefaultPoll   = time.Second
	DefaultRenew  = 3 * time.Second
)

// Item is one unit of work a Queue claimed (leased) for a receiver.
type Item struct {
	// Key orders items: a Queue never hands out two items of one key at
	// once, and hands them out in order.
	Key string
	// Committed is when the change the item carries was committed: lag is
	// measured from it.
	Committed time.Time
	// Value is the Queue's own.
	Value any
}

// Outcome is how an attempt ended.
type Outcome int

// Outcomes.
const (
	// Delivered: the receiver accepted it (its 2xx). Lag is observed.
	Delivered Outcome = iota
	// Ended: the item is closed without delivery (refused, skipped,
	// dropped, given up).
	Ended
	// Retry: the attempt failed; the item waits for RetryAt.
	Retry
)

// Result is the outcome of sending one item.
type Result struct {
	Item    Item
	Outcome Outcome
	// RetryAt is when a Retry item is due again.
	RetryAt time.Time
	// Value is the Queue's own (what Settle must record).
	Value any
}

// Claim is what Queue.Claim found for a receiver.
type Claim struct {
	Items []Item
	// Backlog is how many items the receiver has open (queued or in
	// flight), as far as the claim looked.
	Backlog int
	// Next is when something not claimable now becomes due (a retry, a
	// foreign lease running out); zero when nothing waits.
	Next time.Time
	// Again asks for another claim at once (the claim changed the queue,
	// e.g. coalesced an object, without handing out what it made).
	Again bool
}

// Queue is the storage and meaning of one kind of delivery.
type Queue interface {
	// Claim leases up to n due items of a receiver, at most one per key,
	// each the oldest open item of its key.
	Claim(ctx context.Context, receiver int64, n int) (Claim, error)
	// Send makes one attempt. It must not write to the store: Settle does.
	Send(ctx context.Context, receiver int64, it Item) Result
	// Settle records the results of a batch (one transaction) and runs
	// what follows a commit (hooks).
	Settle(ctx context.Context, receiver int64, rs []Result) error
	// Renew extends the leases of items in flight.
	Renew(ctx context.Context, receiver int64, items []Item) error
	// Due lists the receivers that have claimable work now.
	Due(ctx context.Context) ([]int64, error)
	// Label names a receiver in metrics.
	Label(receiver int64) string
}

// Releaser is a Queue that holds a receiver while its worker runs (a lease
// of the receiver rather than of each item): the worker calls Release as it
// ends, after Config.Linger without work.
type Releaser interface {
	Release(ctx context.Context, receiver int64)
}

// Config tunes an Engine. Zero values mean the defaults.
type Config struct {
	// Name labels the engine's metrics (hub, webhooks).
	Name string
	// Window is how many items of one receiver are in flight at once.
	Window int
	// Batch is how many items one claim takes.
	Batch int
	// Poll is how often idle receivers are looked for work.
	Poll time.Duration
	// Renew is how often leases in flight are renewed.
	Renew time.Duration
	// Linger is how long a worker that found nothing to do waits for more
	// before it ends (and, for a Releaser, releases its receiver); zero: it
	// ends at once.
	Linger time.Duration
	// Now is the clock the Queue's times are in (retries, commits).
	Now func() time.Time
	// Background marks the contexts of the engine's store work, so its
	// write transactions take their own share of the writer.
	Background func(context.Context) context.Context
	// Known lists the receivers whose metric series exist before their
	// first item (optional).
	Known func(context.Context) ([]int64, error)
}

// Engine runs a Queue's deliveries.
type Engine struct {
	q       Queue
	cfg     Config
	logger  *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	workers map[int64]*worker
	ctx     context.Context
	cancel  context.CancelFunc
	// sends is the context of attempts in flight: Stop lets them finish
	// (a receiver that got a push is recorded as having it) for up to
	// StopGrace before it cancels them.
	sends      context.Context
	cancelSend context.CancelFunc
	wg         sync.WaitGroup
	poke       chan struct{}
}

type worker struct {
	again bool // woken while working: claim again before exiting
	wake  chan struct{}
}

// New returns an Engine for q; Start runs it.
func New(q Queue, cfg Config, logger *slog.Logger, reg prometheus.Registerer) *Engine {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Renew <= 0 {
		cfg.Renew = DefaultRenew
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Background == nil {
		cfg.Background = func(ctx context.Context) context.Context { return ctx }
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{q: q, cfg: cfg, logger: logger, metrics: newMetrics(cfg.Name), workers: map[int64]*worker{},
		poke: make(chan struct{}, 1)}
	if reg != nil {
		reg.MustRegister(collector{e})
	}
	return e
}

// Start runs the engine until Stop: it looks for due receivers at once and
// then every Poll.
func (e *Engine) Start(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx != nil {
		return
	}
	e.ctx, e.cancel = context.WithCancel(e.cfg.Background(context.WithoutCancel(ctx)))
	e.sends, e.cancelSend = context.WithCancel(context.WithoutCancel(e.ctx))
	e.wg.Add(1)
	go e.poll()
}

// StopGrace is how long Stop lets the attempts in flight finish.
const StopGrace = 10 * time.Second

// Stop ends the engine: no new batch starts, the batches in flight finish
// and settle (their attempts are cancelled after StopGrace).
func (e *Engine) Stop() {
	e.mu.Lock()
	cancel, cancelSend := e.cancel, e.cancelSend
	e.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(StopGrace):
		cancelSend()
		<-done
	}
	cancelSend()
	// Stopped: Start may run it again.
	e.mu.Lock()
	e.ctx, e.cancel, e.sends, e.cancelSend = nil, nil, nil, nil
	e.mu.Unlock()
}

// Wake tells the engine that receiver has new work. It never blocks; before
// Start it does nothing (the first poll finds the work).
func (e *Engine) Wake(receiver int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil || e.ctx.Err() != nil {
		return
	}
	if w, ok := e.workers[receiver]; ok {
		w.again = true
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return
	}
	w := &worker{wake: make(chan struct{}, 1)}
	e.workers[receiver] = w
	e.wg.Add(1)
	go e.run(receiver, w)
}

// Poll asks for a look for due receivers now (another replica's work, a
// lease freed by recovery).
func (e *Engine) Poll() {
	select {
	case e.poke <- struct{}{}:
	default:
	}
}

func (e *Engine) poll() {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.Poll)
	defer t.Stop()
	for {
		ids, err := e.q.Due(e.ctx)
		if err != nil && e.ctx.Err() == nil {
			e.logger.WarnContext(e.ctx, "could not look for due deliveries", "engine", e.cfg.Name, "error", err)
		}
		for _, id := range ids {
			e.Wake(id)
		}
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		case <-e.poke:
		}
	}
}

// run is the worker of one receiver: claim, send (Window at a time),
// settle, until the receiver has nothing due.
func (e *Engine) run(receiver int64, w *worker) {
	defer e.wg.Done()
	ctx := e.ctx
	label := e.q.Label(receiver)
	// n is the claim size: one item (a probe) while the receiver is down,
	// so a down receiver costs one attempt per backoff, not a batch.
	n := e.cfg.Batch
	for {
		e.mu.Lock()
		w.again = false
		if ctx.Err() != nil {
			delete(e.workers, receiver)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		c, err := e.q.Claim(ctx, receiver, n)
		if err != nil {
			if ctx.Err() == nil {
				e.logger.WarnContext(ctx, "could not claim deliveries", "engine", e.cfg.Name, "receiver", label, "error", err)
			}
			c = Claim{Next: e.cfg.Now().Add(time.Second)}
		}
		e.metrics.backlog.WithLabelValues(label).Set(float64(c.Backlog))
		if len(c.Items) > 0 {
			rs := e.send(e.sends, receiver, c.Items)
			if err := e.q.Settle(e.sends, receiver, rs); err != nil {
				// The leases run out and the items are claimed again.
				e.logger.WarnContext(ctx, "could not record deliveries", "engine", e.cfg.Name, "receiver", label, "error", err)
			}
			failed, retryAt := 0, time.Time{}
			for _, r := range rs {
				switch r.Outcome {
				case Delivered:
					e.metrics.lag.WithLabelValues(label).Observe(max(0, e.cfg.Now().Sub(r.Item.Committed)).Seconds())
				case Retry:
					failed++
					if retryAt.IsZero() || r.RetryAt.Before(retryAt) {
						retryAt = r.RetryAt
					}
				}
			}
			if failed < len(rs) {
				n = e.cfg.Batch
				continue
			}
			n = 1
			// Everything failed: the receiver is down; wait for the
			// earliest retry instead of claiming what it cannot take.
			c.Next = retryAt
		} else if c.Again {
			continue
		}
		if !e.idle(ctx, receiver, w, c.Next) {
			return
		}
	}
}

// idle waits for a wake or for next; it returns false when the worker
// should end (nothing waits and nothing woke it, or the engine stops).
// With nothing waiting it lingers for Linger first, and a Releaser's
// receiver is released as the worker ends: a wake that came meanwhile
// keeps the worker (its next claim holds the receiver again).
func (e *Engine) idle(ctx context.Context, receiver int64, w *worker, next time.Time) bool {
	e.mu.Lock()
	if w.again {
		e.mu.Unlock()
		return true
	}
	if next.IsZero() && e.cfg.Linger <= 0 {
		delete(e.workers, receiver)
		e.mu.Unlock()
		return false
	}
	e.mu.Unlock()
	if next.IsZero() {
		t := time.NewTimer(e.cfg.Linger)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-w.wake:
			return true
		case <-t.C:
			if r, ok := e.q.(Releaser); ok {
				r.Release(ctx, receiver)
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if w.again && ctx.Err() == nil {
			return true
		}
		delete(e.workers, receiver)
		return false
	}
	// Next is in the Queue's clock; a fake clock in tests does not move
	// by itself, so the wait is bounded by Poll and claims again.
	d := min(max(next.Sub(e.cfg.Now()), 0), e.cfg.Poll)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		e.mu.Lock()
		delete(e.workers, receiver)
		e.mu.Unlock()
		return false
	case <-w.wake:
	case <-t.C:
	}
	return true
}

// send attempts items, Window at a time, renewing their leases meanwhile.
func (e *Engine) send(ctx context.Context, receiver int64, items []Item) []Result {
	rs := make([]Result, len(items))
	stop := e.keep(ctx, receiver, items)
	sem := make(chan struct{}, e.cfg.Window)
	var wg sync.WaitGroup
	for i, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			rs[i] = e.q.Send(ctx, receiver, it)
			rs[i].Item = it
		}()
	}
	wg.Wait()
	stop()
	return rs
}

// keep renews the leases of items every Renew until stop.
func (e *Engine) keep(ctx context.Context, receiver int64, items []Item) (stop func()) {
	return lease.Keep(ctx, e.cfg.Renew, func(ctx context.Context) error { return e.q.Renew(ctx, receiver, items) },
		func(ctx context.Context, err error) {
			e.logger.WarnContext(ctx, "could not renew delivery leases", "engine", e.cfg.Name, "receiver", e.q.Label(receiver), "error", err)
		})
}

// Busy reports whether receiver has a worker (for tests and recovery).
func (e *Engine) Busy(receiver int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.workers[receiver]
	return ok
}
