// Package webhook is ocpihub's outgoing webhooks: subscriptions, the event
// Emitter every domain service writes events through, signed delivery on
// the delivery engine (internal/delivery), the delivery log and replay, and
// Verify for receivers.
//
// An event is stored, with a delivery row per matching subscription, in the
// transaction of its cause (Emit), so it exists exactly when its cause
// committed, and is delivered at least once. Deliveries to a subscription
// leave in order, one at a time (deliver.go); a slow or failing subscriber
// holds up only its own queue.
//
// Who receives what (the contract of internal/event): subscriptions of the
// operator get every event; a partner platform's subscriptions get Public
// events and events naming one of the platform's parties; nobody gets events
// of other partners.
package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/delivery"
	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultSchedule returns the retry schedule of upi.md §8: the delay before
// each attempt of a delivery, counted from the previous failed attempt (the
// first attempt is immediate): 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h,
// eight attempts over about 27.6 hours. Each delay is moved by up to ±10 % of
// itself so that the retries of many deliveries do not come back in step.
func DefaultSchedule() []time.Duration {
	return []time.Duration{
		0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
}

// Defaults of Config.
const (
	DefaultTimeout          = 15 * time.Second
	DefaultDisableAfter     = 5 * 24 * time.Hour
	DefaultMaxSubscriptions = 50
	DefaultRetention        = 30 * 24 * time.Hour
)

// Config tunes the service. Zero values mean the defaults.
type Config struct {
	// DevMode allows http:// URLs on loopback hosts (a laptop, a test).
	DevMode bool
	// Guard is the outbound address guard every delivery dials through, to
	// the operator's receivers and partners' alike (nil: netguard.New(),
	// which refuses every internal address). Which internal addresses may
	// be reached is the operator's allow-list, not the subscription's
	// owner.
	Guard *netguard.Guard
	// Timeout bounds one delivery attempt (15 s).
	Timeout time.Duration
	// Schedule is the delay before each attempt (DefaultSchedule); its
	// length is the number of attempts a delivery gets.
	Schedule []time.Duration
	// DisableAfter disables a subscription whose deliveries have failed
	// without a success for this long (5 days).
	DisableAfter time.Duration
	// MaxSubscriptions caps the subscriptions of one owner (50).
	MaxSubscriptions int
	// Retention is how long finished deliveries and their events are kept
	// (30 days).
	Retention time.Duration
	// Registerer receives the delivery metrics (none when nil).
	Registerer prometheus.Registerer
	// Box seals the subscriptions' signing secrets at rest (nil: stored
	// marked plain). The hub reads them back to sign, so they cannot be
	// hashed; SealStored seals those stored in clear.
	Box *sealbox.Box
	// Instance names this process in the leases it takes on deliveries
	// (instance.New() when empty).
	Instance instance.ID
	// Poll is how often the delivery engine looks for deliveries it was
	// not woken for: queued by another process, or due again after a
	// retry (delivery.DefaultPoll).
	Poll time.Duration
}

// Service manages subscriptions, records events and delivers them.
type Service struct {
	db      *store.DB
	jobs    *jobs.Client
	clock   clock.Clock
	logger  *slog.Logger
	cfg     Config
	metrics *metrics
	// client sends deliveries through cfg.Guard (a partner must not make
	// the hub call into its network).
	client *http.Client
	// engine sends the deliveries (Start); subIDs caches the subscription
	// id of each receiver number, which never changes.
	engine *delivery.Engine
	subIDs sync.Map
	// subscribed is what this process knows of the events subscriptions
	// name (Emit on PostgreSQL).
	subscribed subscribed
}

// New returns a Service and registers its maintenance job on jc. Start runs
// its deliveries.
func New(db *store.DB, jc *jobs.Client, clk clock.Clock, logger *slog.Logger, cfg Config) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	clk = clock.OrReal(clk)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if len(cfg.Schedule) == 0 {
		cfg.Schedule = DefaultSchedule()
	}
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	if cfg.MaxSubscriptions <= 0 {
		cfg.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Instance == "" {
		cfg.Instance = instance.New()
	}
	s := &Service{db: db, jobs: jc, clock: clk, logger: logger, cfg: cfg, metrics: newMetrics(cfg.Registerer)}
	if s.cfg.Guard == nil {
		s.cfg.Guard = netguard.New()
	}
	s.client = newHTTPClient(s.cfg.Guard)
	db.OnNotify(notifySubscriptions, s.forgetNames)
	q := queue{s: s}
	s.engine = delivery.New(q, delivery.Config{Name: "webhooks", Poll: cfg.Poll, Renew: leaseFor / 3, Now: clk.Now,
		Background: store.Background, Known: q.known}, logger, cfg.Registerer)
	if jc != nil {
		jobs.AddWorker(jc, jobs.CountedTask[retentionArgs](s.Prune))
		addRetired(jc, s)
	}
	return s
}

// Schedule adds the periodic retention cleanup (hourly). Call it once,
// before the job client starts, on hubs that work jobs.
func (s *Service) Schedule() {
	s.jobs.Every(time.Hour, retentionArgs{}, "")
}

// Start runs delivery in this process until Stop. Every serving process
// runs it: the engine's workers share the deliveries through their leases.
func (s *Service) Start(ctx context.Context) { s.engine.Start(ctx) }

// Stop ends delivery in this process: attempts in flight finish and are
// recorded (or, cut short, left leased for the next holder).
func (s *Service) Stop() { s.engine.Stop() }

// wake tells the engine, once tx has committed, that these receivers have
// new deliveries.
func (s *Service) wake(tx *store.Tx, receivers []int64) {
	if len(receivers) == 0 {
		return
	}
	tx.AfterCommit(func() {
		for _, r := range receivers {
			s.engine.Wake(r)
		}
	})
}

func (s *Service) now() time.Time { return s.clock.Now() }

// newHTTPClient returns the client deliveries are sent with: no redirects
// (a 3xx is a failed attempt), no shared cookie jar, every connection through
// the address guard g.
func newHTTPClient(g *netguard.Guard) *http.Client {
	tr := g.Transport()
	tr.MaxIdleConns = 200
	tr.MaxIdleConnsPerHost = 8
	tr.ExpectContinueTimeout = time.Second
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// metrics are the delivery metrics.
type metrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	lag      prometheus.Histogram
	disabled prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_webhook_attempts_total",
			Help: "Webhook delivery attempts by result (delivered, http_error, timeout, network, gone).",
		}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ocpihub_webhook_attempt_seconds",
			Help:    "Duration of webhook delivery attempts.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ocpihub_webhook_delivery_lag_seconds",
			Help:    "Time from an event to its successful delivery.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600},
		}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ocpihub_webhook_subscriptions_disabled_total",
			Help: "Subscriptions disabled by a 410 answer or by failing for too long.",
		}),
	}
	// Every result exists from the start, at 0.
	for _, r := range []string{"delivered", "http_error", "timeout", "network", "gone"} {
		m.attempts.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.attempts, m.latency, m.lag, m.disabled)
	}
	return m
}
