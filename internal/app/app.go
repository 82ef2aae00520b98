// Package app assembles a hub from its parts: the store, the job queue, the
// domain services and the HTTP server. The CLI and the end-to-end tests both
// build hubs through it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/console"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/idempotency"
	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/sandbox"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tariff"
	"github.com/ocpihub/ocpihub/internal/token"
	"github.com/ocpihub/ocpihub/internal/tracing"
	"github.com/ocpihub/ocpihub/internal/traffic"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// Options are the parts a caller may supply instead of the defaults.
type Options struct {
	Logger *slog.Logger
	Clock  clock.Clock
	// Listener, when set, is used instead of listening on Config.Addr.
	Listener net.Listener
	// SandboxListener is the sandbox's Listener (Config.SandboxAddr).
	SandboxListener net.Listener
	// JobsConfig overrides job queue settings (tests shorten polling).
	JobsConfig *jobs.Config
	// InsertOnly builds a hub that enqueues jobs but never works them and
	// serves nothing: the CLI acting on a running hub's database.
	InsertOnly bool
	// Middleware, when set, wraps the HTTP handler (tests check every
	// response against the OCPI schemas with it).
	Middleware func(http.Handler) http.Handler
	// Version is the build's version (the OpenAPI document and the console
	// show it).
	Version string
	// Events, when set, also records the domain events (tests assert on
	// them); the webhook service records them all the same.
	Events event.Emitter
	// Simulators start the simulated gateways of dev mode and the
	// sandbox; the production binary passes none.
	Simulators Simulators
}

// App is an assembled hub.
type App struct {
	Config   Config
	Logger   *slog.Logger
	Clock    clock.Clock
	DB       *store.DB
	Jobs     *jobs.Client
	Client   *ocpiclient.Client
	Registry *prometheus.Registry
	Parties  *party.Service
	// Events records domain events: the webhook service (Webhooks), and
	// Options.Events too when a test set it.
	Events    event.Emitter
	Webhooks  *webhook.Service
	Hub       *hub.Hub
	Locations *location.Service
	Tariffs   *tariff.Service
	Syncer    *location.Syncer
	// PG is the payment gateway (nil when none is configured); UPI is QR
	// charging.
	PG *PaymentGateway
	// SMSSim is the SMS simulator (dev mode without a provider, when
	// Options.Simulators can start one); devgw.SMS gives it with its type.
	SMSSim Closer
	UPI    *upi.Service
	// Tokens, Sessions, CDRs and Commands are the tokens, sessions, CDRs,
	// commands and charging profiles modules.
	Tokens   *token.Service
	Sessions *session.Service
	CDRs     *cdr.Service
	Commands *command.Service
	// Payments is Direct Payment: PTPs' terminals, pre-authorised sessions
	// and financial advice confirmations.
	Payments *payment.Service
	// Legacy counts OCPI 2.1.1 and 2.0 traffic and what conversions drop.
	Legacy *legacy.Recorder
	Server *httpapi.Server
	// Console is the operator console served at /console.
	Console *console.Console
	// RateLimiter limits each token's requests; Idempotency answers repeated
	// write requests from the store.
	RateLimiter *ratelimit.Limiter
	Idempotency *idempotency.Store
	// MetricsAddr is where the metrics server listens (Config.MetricsAddr
	// resolved), once started.
	MetricsAddr string
	// AuthGuard throttles failed authentication per client (admin API,
	// OCPI, console sign-in).
	AuthGuard *authguard.Guard
	// Sandbox is the sandbox instance (nil without --sandbox-addr); a
	// sandbox has a Resetter instead.
	Sandbox  *App
	Resetter *sandbox.Resetter

	// Tracer exports OpenTelemetry spans (nil: no OTLP endpoint, tracing
	// off).
	Tracer *tracing.Tracer

	// Traffic records OCPI exchanges and answers the traffic inspector;
	// with Config.TrafficOff it only reads what is stored.
	Traffic *traffic.Recorder

	// Guard is the outbound address guard of every connection to a
	// partner-supplied or configured address (Config.OutboundGuard).
	Guard *netguard.Guard

	// GeneratedAdminToken is set when this start generated the admin token; it
	// is shown once.
	GeneratedAdminToken string

	publicURL  *url.URL
	middleware func(http.Handler) http.Handler
	listener   net.Listener
	httpServer *http.Server
	// metricsServer serves /metrics on Config.MetricsAddr.
	metricsServer *http.Server
	insertOnly    bool
	started       bool
	sims          Simulators
	// Instance names this process in the leases it takes on shared queues.
	Instance    instance.ID
	stopRecover func()
	// stopListening ends hearing other replicas' changes (store.Listen).
	stopListening func()
}

// New opens the database, migrates it and builds every service. It listens
// (so the public URL is known) but serves nothing until Start.
func New(ctx context.Context, cfg Config, opts Options) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Logger: opts.Logger, Clock: opts.Clock, insertOnly: opts.InsertOnly, middleware: opts.Middleware, sims: opts.Simulators}
	if a.Logger == nil {
		lc := cfg
		if opts.InsertOnly && !strings.EqualFold(cfg.LogLevel, "debug") && !strings.EqualFold(cfg.LogLevel, "error") {
			// A command's own output is its answer: only warnings and
			// errors of the hub's machinery go with it (on stderr).
			lc.LogLevel = "warn"
		}
		a.Logger = NewLogger(lc, os.Stderr)
	}
	if a.Clock == nil {
		a.Clock = clock.Real{}
	}
	ok := false
	defer func() {
		if !ok {
			a.closeQuietly()
		}
	}()

	if !opts.InsertOnly {
		a.listener = opts.Listener
		if a.listener == nil {
			l, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
			}
			a.listener = l
		}
	}
	var listenAddr net.Addr
	if a.listener != nil {
		listenAddr = a.listener.Addr()
	}
	pub, err := cfg.publicURL(listenAddr)
	if err != nil {
		return nil, err
	}
	a.publicURL = pub

	a.DB, err = store.Open(ctx, cfg.DB, store.Options{Logger: a.Logger})
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, a.DB, a.Logger); err != nil {
		return nil, err
	}
	if opts.InsertOnly {
		// A command beside a running hub speaks of the hub's addresses as
		// the hub itself does (serve stores the public URL it serves at).
		if pub, err = a.servedURL(ctx, cfg, pub); err != nil {
			return nil, err
		}
		a.publicURL = pub
	}

	a.Instance = instance.New()
	a.Registry = prometheus.NewRegistry()
	if !opts.InsertOnly {
		a.Tracer = newTracer(cfg, a.Clock, a.Logger, a.Registry)
	}
	jc := jobs.Config{}
	if opts.JobsConfig != nil {
		jc = *opts.JobsConfig
	}
	jc.Middleware = append(jc.Middleware[:len(jc.Middleware):len(jc.Middleware)], a.Tracer.JobMiddleware()...)
	jc.Logger, jc.InsertOnly, jc.Instance = a.Logger, opts.InsertOnly, a.Instance
	jc.JobTimeout = cmp.Or(jc.JobTimeout, cfg.JobTimeout)
	jc.RescueAfter = cmp.Or(jc.RescueAfter, cfg.JobRescueAfter)
	if tg, ok := a.Clock.(rivertype.TimeGenerator); ok && jc.Time == nil {
		// A fake clock drives the job queue too: scheduled jobs (command
		// timeouts, retries) come due when the test moves the clock.
		jc.Time = tg
	}
	if a.Jobs, err = jobs.New(a.DB, jc); err != nil {
		return nil, err
	}
	a.Guard = cfg.OutboundGuard()
	if allowed := a.Guard.Allowed(); len(allowed) > 0 && !opts.InsertOnly {
		a.Logger.Info("outbound address guard: these internal addresses may be reached", "allowed", allowed)
	}
	a.Client = ocpiclient.NewGuarded(a.Logger, a.Guard)
	a.Client.HTTP.Transport = a.Tracer.Transport(a.Client.HTTP.Transport)
	a.Traffic = traffic.New(a.DB, a.Clock, a.Logger, a.Registry, traffic.Config{Retention: cfg.TrafficRetention, MaxBytes: cfg.TrafficMaxBytes})
	a.Traffic.SetRecording(!cfg.TrafficOff)
	if !opts.InsertOnly {
		// Retention runs with recording off too: what was stored expires.
		a.Traffic.Schedule(a.Jobs, 0)
		a.Client.Observer = a.Traffic
	}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.Registry.MustRegister(jobsCollector{a.Jobs})

	if cfg.SecretKey == "" && !opts.InsertOnly {
		a.Logger.Warn("no secret key configured: tokens for calling partners and webhook signing secrets are stored unencrypted; set OCPIHUB_SECRET_KEY")
	}
	box, err := sealbox.New(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	// Webhooks first: every domain service writes its events through them.
	a.Webhooks = webhook.New(a.DB, a.Jobs, a.Clock, a.Logger, webhook.Config{DevMode: cfg.DevMode, Guard: a.Guard, Timeout: cfg.WebhookTimeout, Registerer: a.Registry, Box: box,
		Instance: a.Instance})
	a.Events = a.Webhooks
	if opts.Events != nil {
		a.Events = tee{a.Webhooks, opts.Events}
	}
	a.RateLimiter = ratelimit.New(a.DB, a.Clock, cfg.RateLimit)
	a.AuthGuard = authguard.New(a.DB, a.Clock, cfg.AuthFailures, authguard.DefaultWindow)
	proxies, err := authguard.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	a.Idempotency = idempotency.New(a.DB, a.Jobs, a.Clock, box)
	if !opts.InsertOnly {
		a.Webhooks.Schedule()
		a.Idempotency.Schedule(a.Jobs)
	}

	a.Parties, err = party.New(a.DB, a.Jobs, a.Client, a.Clock, a.Logger, party.Config{
		PublicURL:       pub,
		Versions:        Versions,
		ConnectVersions: ConnectVersions,
		VersionRoles:    versionRoles(),
		Own:             a.ownRoles(),
		SecretKey:       cfg.SecretKey,
		AdminToken:      cfg.AdminToken,
		AdminTokenHash:  cfg.adminTokenHash,
		Sandbox:         cfg.Sandbox,
		Events:          a.Events,
	})
	if err != nil {
		return nil, err
	}
	if !opts.InsertOnly {
		// Only a serving hub generates the admin token: it is the one that
		// prints it. (A CLI command run before the first serve would store a
		// hash of a token nobody ever saw.)
		if a.GeneratedAdminToken, err = a.Parties.Init(ctx); err != nil {
			return nil, err
		}
		n, err := a.Parties.SealStored(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			a.Logger.Info("sealed partner tokens stored in clear with the secret key", "count", n)
		}
		if n, err = a.Webhooks.SealStored(ctx); err != nil {
			return nil, err
		}
		if n > 0 {
			a.Logger.Info("sealed webhook signing secrets stored in clear with the secret key", "count", n)
		}
		if err := a.Parties.SeedOwn(ctx); err != nil {
			return nil, err
		}
		a.Parties.ScheduleLiveness()
		a.Parties.SchedulePlannedSweep()
	}

	a.Legacy = legacy.NewRecorder(a.Logger, a.Registry)
	hc := hub.Config{MaxAttempts: cfg.PushMaxAttempts, ForwardTimeout: cfg.ForwardTimeout, Instance: a.Instance,
		NoInitialLoad: cfg.NoInitialLoad, LoadBatch: cfg.InitialLoadBatch, LoadPace: cfg.InitialLoadPace, LoadDelay: cfg.InitialLoadDelay,
		Poll: cfg.PushPoll, Tracer: a.Tracer, CollapseAfter: cfg.PushCollapseAfter}
	if base := cfg.PushBackoff; base > 0 {
		hc.Backoff = func(attempt int) time.Duration { return min(base<<min(attempt-1, 20), time.Hour) }
	}
	a.Hub = hub.New(a.DB, a.Jobs, a.Parties, a.Client, a.Clock, a.Logger, a.Registry, hc)
	a.wireLegacy()
	a.Locations = location.New(a.DB, a.Hub, a.Events, a.Clock, a.Logger)
	a.Tariffs = tariff.New(a.DB, a.Hub, a.Clock, a.Logger)
	syncer := location.NewSyncer(a.DB, a.Jobs, a.Hub, a.Parties, a.Locations, a.Tariffs, a.Clock, a.Logger, a.Registry)
	if !opts.InsertOnly {
		a.Hub.Schedule()
		if cfg.SyncInterval > 0 {
			syncer.Schedule(cfg.SyncInterval)
		}
	}
	a.Syncer = syncer
	a.wireSessions(pub, hc.Backoff)
	a.wirePulls()
	a.wirePayments()
	if err := a.buildUPI(opts.InsertOnly, box); err != nil {
		return nil, err
	}

	a.Console = console.New(console.Config{
		DB:             a.DB,
		AuthGuard:      a.AuthGuard,
		TrustedProxies: proxies,
		Unencrypted:    cfg.SecretKey == "",
		Parties:        a.Parties,
		Jobs:           a.Jobs,
		Locations:      a.Locations,
		Commands:       a.Commands,
		Sessions:       a.Sessions,
		CDRs:           a.CDRs,
		Tokens:         a.Tokens,
		UPI:            a.UPI,
		Payments:       a.Payments,
		Webhooks:       a.Webhooks,
		Clock:          a.Clock,
		Logger:         a.Logger,
		PublicURL:      pub,
		Version:        opts.Version,
		Dev:            cfg.DevMode,
		MapTiles:       cfg.ConsoleMapTiles,
		MapAttribution: cfg.ConsoleMapAttribution,
	})
	sc := httpapi.Config{
		PublicURL:    pub,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Logger:       a.Logger,
		Clock:        a.Clock,
		Registry:     a.Registry,
		DB:           a.DB,
		Auth:         a.Parties,
		Parties:      a.Parties,
		Hub:          a.Hub,
		Locations:    a.Locations,
		Tariffs:      a.Tariffs,
		UPI:          a.UPI,
		Tokens:       a.Tokens,
		Sessions:     a.Sessions,
		CDRs:         a.CDRs,
		Commands:     a.Commands,
		Payments:     a.Payments,
		Legacy: httpapi.LegacyConfig{Deprecated: cfg.LegacyDeprecated, Sunset: cfg.LegacySunset,
			PolicyURL: cfg.LegacyPolicyURL},
		LegacyRecorder:   a.Legacy,
		Version:          opts.Version,
		Console:          a.Console,
		Webhooks:         a.Webhooks,
		RateLimiter:      a.RateLimiter,
		MetricsToken:     cfg.MetricsToken,
		MetricsElsewhere: cfg.MetricsAddr != "",
		AuthGuard:        a.AuthGuard,
		TrustedProxies:   proxies,
		Idempotency:      a.Idempotency,
		Sandbox:          cfg.Sandbox,
		Traffic:          a.Traffic,
	}
	if cfg.Sandbox {
		a.Resetter = sandbox.NewResetter(a.DB, a.Jobs, a.Clock, a.Logger, cfg.SandboxResetHour)
		if !opts.InsertOnly {
			a.Resetter.Schedule(a.Jobs)
		}
		sc.SandboxBanner = a.Resetter.Banner()
		sc.ResetSandboxFunc = a.Resetter.ResetNow
	} else if cfg.SandboxAddr != "" && !opts.InsertOnly {
		if a.Sandbox, err = a.newSandbox(ctx, cfg, opts); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		sc.SandboxParties = a.Sandbox.Parties
	}
	a.Server = httpapi.New(sc)
	ok = true
	return a, nil
}

// newSandbox builds the sandbox instance beside production: its own
// database, address and job queue, production's admin token.
func (a *App) newSandbox(ctx context.Context, cfg Config, opts Options) (*App, error) {
	sc, err := cfg.SandboxConfig()
	if err != nil {
		return nil, err
	}
	if sc.AdminToken == "" {
		sc.adminTokenHash = a.Parties.AdminTokenHash()
	}
	so := opts
	so.Logger = a.Logger.With("instance", "sandbox")
	so.Listener, so.SandboxListener = opts.SandboxListener, nil
	return New(ctx, sc, so)
}

// tee records every event with two emitters.
type tee [2]event.Emitter

// Emit implements event.Emitter.
func (t tee) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	if err := t[0].Emit(ctx, tx, e); err != nil {
		return err
	}
	return t[1].Emit(ctx, tx, e)
}

// Migrate brings the database schema up to date: ocpihub's tables, then the
// job queue's.
func Migrate(ctx context.Context, db *store.DB, logger *slog.Logger) error {
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	return jobs.Migrate(ctx, db, logger)
}

func (a *App) ownRoles() []ocpi.CredentialsRole {
	c := a.Config
	return []ocpi.CredentialsRole{
		{Role: string(party.RoleHUB), CountryCode: c.CountryCode, PartyID: c.HubPartyID, BusinessDetails: ocpi.BusinessDetails{Name: c.HubName}},
		{Role: string(party.RoleEMSP), CountryCode: c.CountryCode, PartyID: c.EMSPPartyID, BusinessDetails: ocpi.BusinessDetails{Name: c.EMSPName}},
	}
}

// PublicURL returns the base URL partners reach the hub at.
func (a *App) PublicURL() string { return a.publicURL.String() }

// VersionsURL returns the hub's versions URL.
func (a *App) VersionsURL() string { return a.PublicURL() + "/ocpi/versions" }

// Start serves HTTP and works jobs until Close.
func (a *App) Start(ctx context.Context) error {
	if a.insertOnly {
		return errors.New("an insert-only hub cannot start")
	}
	if err := a.Jobs.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if a.Sandbox != nil {
		if err := a.Sandbox.Start(ctx); err != nil {
			return err
		}
	}
	var handler http.Handler = a.Tracer.Handler(a.Server)
	if a.middleware != nil {
		handler = a.middleware(handler)
	}
	a.httpServer = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := a.httpServer.Serve(a.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Logger.Error("HTTP server stopped", "error", err)
		}
	}()
	if err := a.serveMetrics(); err != nil {
		return err
	}
	a.started = true
	a.listen(ctx)
	a.Traffic.Start()
	a.Tracer.Start()
	a.Hub.Start(ctx)
	a.Webhooks.Start(ctx)
	a.Commands.Start(ctx)
	a.startRecovery()
	if err := a.recordServedURL(ctx); err != nil {
		a.Logger.Warn("could not record the public URL for the commands run beside the hub", "error", err)
	}
	a.Logger.Info("ocpihub is serving", "addr", a.listener.Addr().String(), "public_url", a.PublicURL(), "db", a.DB.Engine(), "sandbox", a.Config.Sandbox)
	return nil
}

// listen hears the other replicas' changes to what this one remembers for
// a second (PostgreSQL: store.Listen), waiting up to listenWait for it to
// listen so that a change made once Start returns reaches it; if it cannot
// yet, it keeps trying in the background.
func (a *App) listen(ctx context.Context) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		a.DB.Listen(lctx, ready)
	}()
	a.stopListening = func() {
		cancel()
		<-done
	}
	select {
	case <-ready:
	case <-time.After(listenWait):
		a.Logger.Warn("not yet listening for other replicas' changes; they reach this one within a second meanwhile")
	}
}

// listenWait bounds how long Start waits for the listener.
const listenWait = 5 * time.Second

// Close shuts the hub down gracefully: readiness turns false, in-flight
// requests finish, running jobs finish (or are cancelled and retried later
// when the shutdown timeout passes), then the database closes.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	if a.Sandbox != nil {
		errs = append(errs, a.Sandbox.Close(ctx))
	}
	if a.Server != nil {
		a.Server.Drain()
	}
	if a.metricsServer != nil {
		errs = append(errs, a.metricsServer.Close())
	}
	if a.httpServer != nil {
		sctx, cancel := context.WithTimeout(ctx, a.shutdownTimeout())
		errs = append(errs, a.httpServer.Shutdown(sctx))
		cancel()
	} else if a.listener != nil {
		a.listener.Close()
	}
	if a.stopRecover != nil {
		a.stopRecover()
	}
	if a.stopListening != nil {
		a.stopListening()
	}
	if a.started {
		// Both delivery engines let their attempts in flight finish, side
		// by side, so shutdown waits for the slower one only.
		done := make(chan struct{})
		go func() { defer close(done); a.Webhooks.Stop() }()
		a.Hub.Stop()
		a.Commands.Stop()
		<-done
	}
	if a.Jobs != nil && a.started {
		sctx, cancel := context.WithTimeout(ctx, a.shutdownTimeout())
		errs = append(errs, a.Jobs.Stop(sctx))
		cancel()
	}
	// Stopped: what this instance still holds (leases, running jobs) is a
	// dead holder's now, for other instances too.
	a.Instance.Release()
	if a.Traffic != nil {
		// What is buffered is stored before the database closes.
		sctx, cancel := context.WithTimeout(ctx, a.shutdownTimeout())
		errs = append(errs, a.Traffic.Close(sctx))
		cancel()
	}
	if a.Tracer != nil {
		// The spans of the shutdown itself go too; a collector that is
		// down delays shutdown by the timeout at most, and fails nothing.
		sctx, cancel := context.WithTimeout(ctx, a.shutdownTimeout())
		if err := a.Tracer.Close(sctx); err != nil {
			a.Logger.Warn("spans not exported at shutdown", "error", err)
		}
		cancel()
	}
	if a.PG != nil {
		a.PG.Close()
	}
	if a.SMSSim != nil {
		a.SMSSim.Close()
	}
	if a.DB != nil {
		errs = append(errs, a.DB.Close())
	}
	return errors.Join(errs...)
}

func (a *App) shutdownTimeout() time.Duration {
	if a.Config.ShutdownTimeout > 0 {
		return a.Config.ShutdownTimeout
	}
	return 30 * time.Second
}

func (a *App) closeQuietly() {
	if a.Sandbox != nil {
		a.Sandbox.closeQuietly()
	}
	if a.listener != nil {
		a.listener.Close()
	}
	if a.PG != nil {
		a.PG.Close()
	}
	if a.SMSSim != nil {
		a.SMSSim.Close()
	}
	if a.DB != nil {
		a.DB.Close()
	}
}

// NewLogger returns the structured logger the configuration asks for.
func NewLogger(cfg Config, w *os.File) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(cfg.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// jobsCollector exports job outcome counts.
type jobsCollector struct{ c *jobs.Client }

var jobsDesc = prometheus.NewDesc("ocpihub_jobs_total", "Jobs finished, by kind and outcome.", []string{"kind", "outcome"}, nil)

func (j jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (j jobsCollector) Collect(ch chan<- prometheus.Metric) {
	j.c.Stats().Each(func(kind, outcome string, n int64) {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.CounterValue, float64(n), kind, outcome)
	})
}
