// Package hubtest starts real hubs for end-to-end tests: an assembled
// ocpihub (app.App) on a fresh database of either engine, listening on
// 127.0.0.1 with a random port, with fast job polling, and helpers to register
// simulated partners and to call the admin API.
//
// Every response the hub sends during a test passes the hub's Checks (by
// default DefaultChecks: each /ocpi and /admin response is a well-formed OCPI
// envelope, and each OCPI 2.2.1 response is valid against the spec's JSON
// schemas, see internal/schematest). A failed check fails the test that
// caused it.
package hubtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/capture"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
	v211 "github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// AdminToken is the operator token of every test hub.
const AdminToken = "test-admin-token-0123456789"

// Exchange is one request the hub answered, as a Check sees it.
type Exchange struct {
	Method string
	Path   string // as the client sent it (before alias rewriting)
	Query  string
	Status int
	Header http.Header
	Body   []byte
	// API is the OpenAPI document of the hub that answered, compiled (nil
	// for exchanges made up by hand: CheckOpenAPI then uses the route table
	// of a bare server).
	API *openapi.Validator
}

// Check inspects one exchange and reports problems with t.Errorf.
type Check func(t testing.TB, ex Exchange)

// Options tune Start.
type Options struct {
	// Clock is the hub's clock (default: the real one).
	Clock clock.Clock
	// Config edits the configuration before the hub is built.
	Config func(*app.Config)
	// Checks run on every response in addition to DefaultChecks().
	Checks []Check
	// NoDefaultChecks turns DefaultChecks off.
	NoDefaultChecks bool
	// Logger receives the hub's logs (default: discarded unless
	// OCPIHUB_TEST_LOG=1, then stderr at debug level).
	Logger *slog.Logger
	// DBURL reuses a database (a restart); default: a fresh one.
	DBURL string
	// Sandbox starts the hub's sandbox too, on its own fresh database.
	Sandbox bool
	// RateLimits turns the product's rate limits on (cfg.RateLimit, and the
	// failed-authentication guard, cfg.AuthFailures); test
	// hubs run without limits unless asked, so tests can make bursts.
	RateLimits bool
	// InitialLoad turns the initial load of a new receiver on: test hubs
	// run without it unless asked (or a test's Config clears
	// NoInitialLoad), so a partner registered in a set-up gets only what a
	// test sends, and counts of pushes are the test's own.
	InitialLoad bool
	// Jobs edits the job queue settings (e.g. MaxAttempts 1, so a failing
	// job is discarded at once).
	Jobs func(*jobs.Config)
	// Events receives the hub's domain events (a *Recorder lets tests
	// assert on them); default: discarded.
	Events event.Emitter
}

// Hub is a running hub.
type Hub struct {
	*app.App
	Engine store.Engine
	DBURL  string
	// SandboxDBURL is the sandbox's database when Options.Sandbox is set.
	SandboxDBURL string
	// Client calls the hub (admin API, raw requests).
	Client *ocpiclient.Client
	// Events is Options.Events when a test set one (a *Recorder to assert
	// on), else the hub's own emitter; the hub emits through the webhook
	// service and hands every event to Options.Events too.
	Events event.Emitter

	t      testing.TB
	opts   Options
	addr   string
	closed bool
	mu     sync.Mutex
	api    atomic.Pointer[openapi.Validator]
}

// Each runs fn once per engine as parallel subtests, each with its own hub.
func Each(t *testing.T, fn func(t *testing.T, h *Hub), opts ...func(*Options)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) { fn(t, Start(t, engine, opts...)) })
}

// EachWith is Each for tests that start from a fixture: setup builds it on
// each hub, and fn receives it.
func EachWith[F any](t *testing.T, setup func(*testing.T, *Hub) F, fn func(*testing.T, F), opts ...func(*Options)) {
	t.Helper()
	Each(t, func(t *testing.T, h *Hub) { fn(t, setup(t, h)) }, opts...)
}

// EachFake is Each with a fake clock driving each hub (Options.Clock);
// opts apply after it. The clock starts at the real time, truncated to the
// second: River's maintenance (the rescuer, the queue cleaner) compares
// some stamps with real time.
func EachFake(t *testing.T, fn func(t *testing.T, h *Hub, clk *clock.Fake), opts ...func(*Options)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		clk := clock.NewFake(time.Now().Truncate(time.Second))
		withClock := append([]func(*Options){func(o *Options) { o.Clock = clk }}, opts...)
		fn(t, Start(t, engine, withClock...), clk)
	})
}

// Start starts a hub on a fresh database of engine; it is closed when the
// test ends.
func Start(t testing.TB, engine store.Engine, opts ...func(*Options)) *Hub {
	t.Helper()
	var o Options
	for _, fn := range opts {
		fn(&o)
	}
	if o.DBURL == "" {
		o.DBURL = storetest.MigratedURL(t, engine)
	}
	h := &Hub{Engine: engine, DBURL: o.DBURL, t: t, opts: o}
	if o.Sandbox {
		h.SandboxDBURL = storetest.MigratedURL(t, engine)
	}
	h.start(t)
	t.Cleanup(func() { h.Close() })
	return h
}

// Logger returns the logger test hubs and simulators use.
func Logger() *slog.Logger {
	if os.Getenv("OCPIHUB_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func (h *Hub) start(t testing.TB) {
	t.Helper()
	cfg := app.Defaults()
	cfg.DB = h.DBURL
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminToken = AdminToken
	cfg.DevMode = true
	// The simulators listen on loopback: allowed explicitly, so tests that
	// turn dev mode off still reach them (a test of the guard clears it).
	cfg.OutboundAllow = netguard.Loopback
	cfg.ShutdownTimeout = 5 * time.Second
	if !h.opts.RateLimits {
		cfg.RateLimit = ratelimit.Limits{}
		cfg.AuthFailures = 0
	}
	if !h.opts.InitialLoad {
		cfg.NoInitialLoad = true
	}
	if h.SandboxDBURL != "" {
		cfg.SandboxAddr = "127.0.0.1:0"
		cfg.SandboxDB = h.SandboxDBURL
	}
	if h.opts.Config != nil {
		h.opts.Config(&cfg)
	}
	logger := h.opts.Logger
	if logger == nil {
		logger = Logger()
	}
	// A restart listens where the hub was, so partners' stored URLs still
	// reach it.
	addr := "127.0.0.1:0"
	if h.addr != "" {
		addr = h.addr
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h.addr = l.Addr().String()
	checks := h.opts.Checks
	if !h.opts.NoDefaultChecks {
		checks = append(DefaultChecks(), checks...)
	}
	jc := &jobs.Config{PollInterval: 20 * time.Millisecond, Queues: map[string]int{jobs.QueueDefault: 4, jobs.QueuePush: 8, jobs.QueueWebhooks: 4, jobs.QueueMoney: 2}}
	if h.opts.Jobs != nil {
		h.opts.Jobs(jc)
	}
	a, err := app.New(context.Background(), cfg, app.Options{
		Logger:     logger,
		Clock:      h.opts.Clock,
		Listener:   l,
		JobsConfig: jc,
		Middleware: checking(t, checks, h.api.Load),
		Events:     h.opts.Events,
		Simulators: devgw.Simulators(),
	})
	if err != nil {
		t.Fatalf("start hub on %s: %v", h.Engine, err)
	}
	// Retries of outgoing calls (a partner that is down) back off in
	// milliseconds, not seconds.
	a.Client.BackoffBase = 5 * time.Millisecond
	if err := a.Start(context.Background()); err != nil {
		a.Close(context.Background())
		t.Fatalf("start hub on %s: %v", h.Engine, err)
	}
	h.App = a
	h.Events = a.Events
	if h.opts.Events != nil {
		h.Events = h.opts.Events
	}
	v, err := validatorFor(a.Server)
	if err != nil {
		t.Fatalf("the hub's OpenAPI document does not compile: %v", err)
	}
	h.api.Store(v)
	h.Client = ocpiclient.New(logger)
	h.closed = false
}

// Close stops the hub (idempotent).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.App == nil {
		return
	}
	h.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if n := h.App.DB.Violations(); n > 0 {
		h.t.Errorf("%d pooled connections were requested inside a write transaction (store.ErrTxHeld; see the log)", n)
	}
	if err := h.App.Close(ctx); err != nil {
		h.t.Logf("closing hub: %v", err)
	}
}

// Restart stops the hub and starts a new one on the same database and the
// same address: what a partner sees of a process restart.
func (h *Hub) Restart(t testing.TB) {
	t.Helper()
	h.Close()
	h.start(t)
}

// Register onboards a simulated platform: an invitation (token A) and the
// partner-initiated handshake.
func (h *Hub) Register(t testing.TB, p *sim.Platform) {
	t.Helper()
	register(t, h.App, p, false)
}

// RegisterSandbox onboards a simulated platform with the hub's sandbox, on
// sandbox credentials.
func (h *Hub) RegisterSandbox(t testing.TB, p *sim.Platform) {
	t.Helper()
	if h.App.Sandbox == nil {
		t.Fatal("the hub runs no sandbox (hubtest.Options.Sandbox)")
	}
	register(t, h.App.Sandbox, p, true)
}

// partner is what registration needs of a simulator (every kind embeds
// *sim.Platform).
type partner interface {
	Name() string
	Role() string
	Versions() []string
	Register(ctx context.Context, hubVersionsURL, tokenA string) error
}

func register(t testing.TB, a *app.App, p partner, sandbox bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inv, err := a.Parties.Invite(ctx, p.Name(), 0, sandbox)
	if err != nil {
		t.Fatalf("invite %s: %v", p.Name(), err)
	}
	if err := p.Register(ctx, versionsURLOf(a, p), inv.Token); err != nil {
		t.Fatalf("register %s: %v", p.Name(), err)
	}
}

// VersionsURLOf returns the versions URL to give a simulated platform: the
// one of its role when it speaks only legacy versions (2.1.1 endpoints carry
// no role, so the hub has a set per role), the hub's otherwise.
func (h *Hub) VersionsURLOf(p *sim.Platform) string { return versionsURLOf(h.App, p) }

func versionsURLOf(a *app.App, p partner) string {
	for _, v := range p.Versions() {
		if !v211.IsLegacy(v) {
			return a.VersionsURL()
		}
	}
	return a.Parties.VersionsURLFor(party.Role(p.Role()))
}

// Admin calls the admin API with the admin token and requires an OCPI
// success; out receives data.
func (h *Hub) Admin(t testing.TB, method, path string, body, out any) *ocpiclient.Response {
	t.Helper()
	return h.adminAt(t, h.PublicURL(), method, path, body, out)
}

// SandboxAdmin is Admin on the hub's sandbox (same admin token).
func (h *Hub) SandboxAdmin(t testing.TB, method, path string, body, out any) *ocpiclient.Response {
	t.Helper()
	return h.adminAt(t, h.App.Sandbox.PublicURL(), method, path, body, out)
}

// AdminDo calls the hub's admin API and returns the answer whatever it is
// (an error answer too, for the test to check); the test fails only when
// there is no answer.
func (h *Hub) AdminDo(t testing.TB, method, path string, body any) *ocpiclient.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.Client.Do(ctx, ocpiclient.Request{Method: method, URL: h.PublicURL() + path, Token: AdminToken, Base64: true, Body: body, MaxAttempts: 1})
	if resp == nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (h *Hub) adminAt(t testing.TB, base, method, path string, body, out any) *ocpiclient.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.Client.Call(ctx, ocpiclient.Request{Method: method, URL: base + path, Token: AdminToken, Base64: true, Body: body, MaxAttempts: 1}, out)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// Do sends a request to the hub as it is and returns the answer whatever it
// is. token "" sends no Authorization header; raw headers go in header.
func (h *Hub) Do(t testing.TB, method, path, token string, body []byte, header http.Header) *ocpiclient.Response {
	t.Helper()
	return DoAt(t, h.PublicURL(), method, path, token, body, header)
}

// DoAt is Do against any base URL (a sandbox, a second replica).
func DoAt(t testing.TB, base, method, path, token string, body []byte, header http.Header) *ocpiclient.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := &ocpiclient.Response{HTTPStatus: resp.StatusCode, Header: resp.Header, Body: b}
	return out
}

// Ctx returns a context that ends with the test or after d.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func checking(t testing.TB, checks []Check, api func() *openapi.Validator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &capture.Writer{ResponseWriter: w, Keep: 4 << 20}
			method, path, query := r.Method, r.URL.Path, r.URL.RawQuery
			next.ServeHTTP(rec, r)
			if len(checks) == 0 || strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
				return
			}
			status := 0 // nothing written: no status to check
			if rec.Wrote() {
				status = rec.Status()
			}
			ex := Exchange{Method: method, Path: path, Query: query, Status: status, Header: rec.Header().Clone(), Body: rec.Body(), API: api()}
			for _, c := range checks {
				c(t, ex)
			}
		})
	}
}

// String describes an exchange in failure messages.
func (ex Exchange) String() string {
	body := string(ex.Body)
	if len(body) > 600 {
		body = body[:600] + "…"
	}
	q := ""
	if ex.Query != "" {
		q = "?" + ex.Query
	}
	return fmt.Sprintf("%s %s%s → HTTP %d %s", ex.Method, ex.Path, q, ex.Status, body)
}
