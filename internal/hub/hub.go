// Package hub decides who receives what: the ordered push outbox that
// broadcasts CPO data to every connected receiver, the full-object resync of
// receivers that missed pushes, the forwarding of requests addressed to
// another party (OCPI-to-*), and the pull of a partner's sender endpoints.
//
// It is generic over modules: a domain package hands it Pushes (a module, an
// object key, a method, a path suffix and a body) inside the transaction of
// its change, and registers a Source that gives the current state of an
// object for resyncs. Locations and tariffs use it; tokens, sessions and CDRs
// reuse it unchanged.
package hub

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/delivery"
	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// Config tunes the hub. Zero values mean the defaults.
type Config struct {
	// MaxAttempts of one push before the object is marked for a full resync
	// (default 10: with the jobs backoff, about half an hour).
	MaxAttempts int
	// Backoff is the delay before retry number attempt (default
	// jobs.BackoffDelay: 2 s doubling, capped at an hour, with jitter).
	Backoff func(attempt int) time.Duration
	// Lease is how long a process holds a receiver (lease.go) without
	// renewing it (default DefaultLease). The holder renews it every third
	// of it while a delivery is in flight, so a slow receiver keeps its
	// holder and a killed process's receivers are free again soon after (or
	// at once, when Instance can tell its holder is gone).
	Lease time.Duration
	// Instance names this process in the leases it takes (default
	// instance.New()).
	Instance instance.ID
	// Timeout bounds one delivery attempt (default 30 s).
	Timeout time.Duration
	// ForwardTimeout bounds a forwarded request (default 30 s); past it the
	// requester gets 4002.
	ForwardTimeout time.Duration
	// Keep is how long delivered pushes stay in the outbox for inspection
	// (default 7 days).
	Keep time.Duration
	// NoInitialLoad turns the initial load of new receivers off: a platform
	// that gains a receiver then gets only the changes after it joined.
	NoInitialLoad bool
	// LoadBatch is how many objects one step of an initial load queues
	// (default DefaultLoadBatch).
	LoadBatch int
	// LoadPace is the pause between two steps of an initial load (default
	// DefaultLoadPace).
	LoadPace time.Duration
	// LoadDelay is how long after the handshake an initial load starts
	// (default DefaultLoadDelay).
	LoadDelay time.Duration
	// Tracer makes each push attempt a span of the trace that recorded its
	// change (nil: tracing off).
	Tracer *tracing.Tracer
	// Poll is how often the expansion of changes and the delivery engine
	// look for work they were not woken for (default: fanoutPoll and
	// delivery.DefaultPoll).
	Poll time.Duration
	// Window is how many pushes of different objects travel to one
	// receiver at once (default delivery.DefaultWindow).
	Window int
	// CoalesceRows and CoalesceAge: an object with at least CoalesceRows
	// queued pushes to a receiver, the oldest queued for CoalesceAge, is
	// sent as one full push of its current state (defaults
	// DefaultCoalesceRows, DefaultCoalesceAge).
	CoalesceRows int
	CoalesceAge  time.Duration
	// CollapseAfter: a queued push that has waited this long is dropped
	// (superseded) when a later queued push of the same object to the same
	// receiver rewrites everything it would change (see collapseFront).
	// Zero: DefaultCollapseAfter; negative: never, every state is sent.
	CollapseAfter time.Duration
}

// Hub routes OCPI objects between parties.
type Hub struct {
	db      *store.DB
	jobs    *jobs.Client
	parties *party.Service
	route   *routing.Router
	client  *ocpiclient.Client
	clock   clock.Clock
	logger  *slog.Logger
	cfg     Config
	metrics *metrics
	sources map[string]Source
	// delivered are the OnDelivered callbacks by module.
	delivered map[string][]func(ctx context.Context, d Delivery)
	// adapters rewrite push bodies for the receiver's version, by module.
	adapters map[string][]AdaptFunc
	// dialects convert traffic for partners of other versions (Speak).
	dialects map[string]Dialect

	// table is the cached routing table the expansion resolves receivers
	// with; engine delivers the outbox (delivery.Engine).
	table      *routing.Table
	engine     *delivery.Engine
	fanoutWake chan struct{}
	// leases are the receivers this process delivers to (lease.go).
	leases *receiverLeases
	// labels name receivers in metrics, by platform id (pushQueue.Label).
	labels sync.Map
	stop   func()
}

// Source gives the current state of an object as the Push that replaces it
// in full at a receiver (a PUT, or a DELETE when the object is gone). ok is
// false when there is nothing to send. It must lock the object's row in tx
// (as a write of it would) so the push is ordered after every committed
// change of the object.
type Source interface {
	Current(ctx context.Context, tx *store.Tx, objectKey string) (p Push, ok bool, err error)
}

// PartySource is a Source of objects keyed by their party and id
// (ObjectKey(countryCode, partyID, id)): locations, tariffs, sessions and
// CDRs. A key of another shape has nothing to send.
type PartySource func(ctx context.Context, tx *store.Tx, countryCode, partyID, id string) (p Push, ok bool, err error)

// Current implements Source.
func (f PartySource) Current(ctx context.Context, tx *store.Tx, objectKey string) (Push, bool, error) {
	parts := SplitKey(objectKey)
	if len(parts) != 3 {
		return Push{}, false, nil
	}
	return f(ctx, tx, parts[0], parts[1], parts[2])
}

// Push is one change to deliver to a receiver.
type Push struct {
	// Module is the OCPI module identifier (locations, tariffs, tokens…); the
	// receiver's RECEIVER endpoint of that module is the base URL.
	Module string
	// ObjectKey identifies the object whose pushes are ordered (and
	// coalesced) together, e.g. "NL/TNM/LOC1" for a location and all its
	// EVSEs and connectors.
	ObjectKey string
	Method    string
	// Path is appended to the endpoint URL: "/NL/TNM/LOC1/EVSE1".
	Path string
	// Body is the JSON body (nil for DELETE).
	Body []byte
	// Full marks a push that carries the whole object (PUT of the top-level
	// object, or DELETE): it supersedes earlier undelivered pushes of the
	// same object to the same receiver.
	Full bool
	// First marks the first push of an object that did not exist before the
	// change that queued it (a new CDR: CDRs are stored once and never
	// deleted), so no earlier push of it can be waiting: a Full push skips
	// its supersede.
	First bool
	// CorrelationID continues the request chain that caused the push.
	CorrelationID string
	// To and From address a push that is not a broadcast (OCPI-to and
	// OCPI-from): a session goes to the eMSP owning its token, from the CPO
	// that sent it. Zero To means the receiving platform's party in the
	// broadcast audience; zero From means the hub.
	To, From ocpiclient.Party
	// Interface is the interface role of the receiving endpoint: RECEIVER
	// (the default), or SENDER for the updates a Receiver sends back to a
	// Sender's endpoint (ActiveChargingProfile).
	Interface string
}

// Delivery is a push a receiver accepted, as OnDelivered callbacks see it.
type Delivery struct {
	PlatformID int64
	Module     string
	ObjectKey  string
	Method     string
	Path       string
	// Header is the receiver's answer's headers (a CDR receiver's Location).
	Header http.Header
}

// New returns a Hub and registers its workers on jc.
func New(db *store.DB, jc *jobs.Client, parties *party.Service, client *ocpiclient.Client, clk clock.Clock,
	logger *slog.Logger, reg prometheus.Registerer, cfg Config) *Hub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 10
	}
	if cfg.Backoff == nil {
		cfg.Backoff = jobs.BackoffDelay
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Instance == "" {
		cfg.Instance = instance.New()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = ocpiclient.DefaultTimeout
	}
	if cfg.ForwardTimeout <= 0 {
		cfg.ForwardTimeout = ocpiclient.DefaultTimeout
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 7 * 24 * time.Hour
	}
	if cfg.LoadBatch <= 0 {
		cfg.LoadBatch = DefaultLoadBatch
	}
	if cfg.LoadPace <= 0 {
		cfg.LoadPace = DefaultLoadPace
	}
	if cfg.LoadDelay < 0 {
		cfg.LoadDelay = 0
	} else if cfg.LoadDelay == 0 {
		cfg.LoadDelay = DefaultLoadDelay
	}
	if cfg.CoalesceRows <= 0 {
		cfg.CoalesceRows = DefaultCoalesceRows
	}
	if cfg.CoalesceAge <= 0 {
		cfg.CoalesceAge = DefaultCoalesceAge
	}
	if cfg.CollapseAfter == 0 {
		cfg.CollapseAfter = DefaultCollapseAfter
	}
	h := &Hub{db: db, jobs: jc, parties: parties, route: routing.New(parties), client: client, clock: clk, logger: logger, cfg: cfg,
		metrics: newMetrics(reg), sources: map[string]Source{}, dialects: map[string]Dialect{},
		delivered: map[string][]func(ctx context.Context, d Delivery){}, adapters: map[string][]AdaptFunc{},
		table: routing.NewTable(db), fanoutWake: make(chan struct{}, 1), leases: newReceiverLeases(cfg.Instance)}
	h.engine = delivery.New(pushQueue{h: h}, delivery.Config{Name: "hub", Window: cfg.Window, Renew: cfg.Lease / 3, Poll: cfg.Poll,
		Linger: ReleaseAfter,
		Now:    clk.Now, Background: store.Background, Known: h.receiverIDs}, logger, reg)
	if jc != nil {
		jobs.AddWorker(jc, jobs.Func(h.pushJob))
		jobs.AddWorker(jc, jobs.Func(h.dispatchJob))
		jobs.AddWorker(jc, jobs.Func(h.resyncJob))
		jobs.AddWorker(jc, jobs.Task[CleanupArgs](h.cleanup))
		jobs.AddWorker(jc, jobs.Func(h.initialLoadJob))
	}
	if reg != nil {
		reg.MustRegister(&pushCollector{h: h})
		if parties != nil {
			reg.MustRegister(newHealthCollector(parties))
		}
	}
	if parties != nil {
		parties.ReconnectFuncs = append(parties.ReconnectFuncs, h.reconnected)
		if jc != nil {
			parties.ConnectedFuncs = append(parties.ConnectedFuncs, h.planInitialLoad)
		}
	}
	return h
}

// Start runs delivery in this process until Stop: the expansion of
// changes into per-receiver pushes, and the delivery engine.
func (h *Hub) Start(ctx context.Context) {
	if h.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(store.Background(context.WithoutCancel(ctx)))
	done := make(chan struct{})
	go func() { defer close(done); h.fanoutLoop(ctx) }()
	h.engine.Start(ctx)
	h.wakeFanout()
	h.stop = func() { cancel(); <-done; h.engine.Stop(); h.releaseLeases(ctx) }
}

// Stop ends delivery in this process: what is in flight is settled (an
// attempt cancelled after delivery.StopGrace does not count), then the
// receivers' leases are handed back so that another replica, or this
// process restarted, takes them at once.
func (h *Hub) Stop() {
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// Register makes src the Source of module's objects for resyncs. Call it
// while wiring, before Start.
func (h *Hub) Register(module string, src Source) { h.sources[module] = src }

// OnDelivered registers fn to run after a push of module was delivered
// (outside any transaction). It is for bookkeeping that may be lost in a
// crash, such as remembering the URL a CDR receiver stored the CDR at. Call
// it while wiring, before Start.
func (h *Hub) OnDelivered(module string, fn func(ctx context.Context, d Delivery)) {
	h.delivered[module] = append(h.delivered[module], fn)
}

// AdaptFunc rewrites the body of a push for a receiver that speaks OCPI
// version (the outbox stores one body for every receiver; a 2.3.0 receiver
// needs the 2.3.0 Price, for instance). It returns body itself when nothing
// changes.
type AdaptFunc func(version, method, path string, body []byte) []byte

// Adapt registers fn to rewrite every push body of module just before it is
// sent (broadcasts, addressed pushes and resyncs alike). Call it while
// wiring, before Start.
func (h *Hub) Adapt(module string, fn AdaptFunc) {
	h.adapters[module] = append(h.adapters[module], fn)
}

// Schedule adds the hub's periodic jobs (outbox cleanup) on the leader.
func (h *Hub) Schedule() {
	h.jobs.Every(time.Hour, CleanupArgs{}, "hub_cleanup")
}

// Self is the hub's own party: OCPI-from of broadcasts (routing.Router.Self).
func (h *Hub) Self() ocpiclient.Party { return h.route.Self() }

// IsSelf reports whether cc/pid names the hub itself (or one of its own
// parties: the hub's eMSP answers through the same directory;
// routing.Router.IsOwn).
func (h *Hub) IsSelf(cc, pid string) bool { return h.route.IsOwn(cc, pid) }

// Routing returns the router the hub decides receivers and addresses with.
func (h *Hub) Routing() *routing.Router { return h.route }

func (h *Hub) now() int64 { return h.clock.Now().UnixMicro() }

// ObjectKey joins the parts of an object's identity into a key: upper case
// (CiString), each part path-escaped, joined by "/".
func ObjectKey(parts ...string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = url.PathEscape(strings.ToUpper(p))
	}
	return strings.Join(out, "/")
}

// SplitKey is the inverse of ObjectKey.
func SplitKey(key string) []string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	return parts
}

// PathOf builds a push path from segments, each path-escaped: "/a/b/c".
func PathOf(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}
