// Package demo runs ocpihub end to end on one machine with nothing else
// installed: a hub on a fresh SQLite file with its built-in payment gateway
// simulator, simulated partners on loopback ports speaking the real
// protocol (two CPOs, two eMSPs, a PTP on OCPI 2.3.0, the operator's webhook
// receiver), and a series of stories — registration, hub client info,
// directory broadcast, token authorization, remote start/stop and CDR, a
// UPI QR payment, a Direct Payment, webhooks — printed as a timeline with
// links into the console and the driver's pages.
//
// # Adding a story
//
// A story is one file, story_<name>.go, returning a Story, and one line in
// Stories. A story gets the Env (the hub, the partners, links) and a
// Timeline; it performs its flow through the simulators as a partner would,
// checks the outcome, and writes what happened as steps:
//
//	func refundStory() Story {
//		return Story{Name: "Refund", Needs: []string{"UPI QR payment"},
//			Run: func(ctx context.Context, env *Env, tl *Timeline) error {
//				… drive the PG simulator and the CPO, poll with until …
//				tl.Step("refund %s of %s processed", id, pg.FormatINR(paise))
//				tl.Link("receipt", receiptURL)
//				return nil // or an error: the story fails, the next ones still run
//			}}
//	}
//
// A story that needs partners the Env lacks adds them to Env and starts
// them in startPartners. Stories run in order, each within a minute; one
// whose Needs failed is skipped. The demo runs on the real clock: a story
// waits for the hub's background work by polling (until) or on a
// simulator's request log (WaitFor, Until), never by sleeping.
package demo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/console"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
)

// Options configure a demo run.
type Options struct {
	// Addr is where the hub listens (default 127.0.0.1:8080; a free port
	// when that one is taken).
	Addr string
	// Dir holds the SQLite file (default: a new temporary directory,
	// removed at the end). It must not hold one already: the demo starts
	// from nothing.
	Dir string
	// KeepRunning leaves the hub and the partners up after the stories,
	// until ctx ends (Ctrl-C).
	KeepRunning bool
	// Out receives the timeline.
	Out io.Writer
	// Logger receives the hub's and the simulators' logs (default: warnings
	// and errors on stderr).
	Logger  *slog.Logger
	Version string
	// AfterStories, when set, is called after the stories with everything
	// still up (tests inspect what the run left behind).
	AfterStories func(ctx context.Context, env *Env)
}

// Env is what stories work with.
type Env struct {
	Hub   *app.App
	CPOs  []*sim.CPO
	EMSPs []*sim.EMSP
	// PTP is a payment terminal provider speaking OCPI 2.3.0.
	PTP *ptpsim.PTP
	// Webhooks is the operator's webhook receiver.
	Webhooks   *webhooksim.Receiver
	AdminToken string
	Logger     *slog.Logger
	// Parties is every simulated partner, in the order they started.
	Parties []Partner
}

// Partner is a simulated partner with the party it plays.
type Partner struct {
	*sim.Platform
	Role, CountryCode, PartyID string
}

// ConsoleURL returns the absolute URL of a console page ("/parties/3").
func (e *Env) ConsoleURL(path string) string { return e.Hub.Console.URL(path) }

// Story is one flow of the demo.
type Story struct {
	Name string
	// Needs names stories that must have succeeded first.
	Needs []string
	Run   func(ctx context.Context, env *Env, tl *Timeline) error
}

// Result is how a story ended.
type Result struct {
	Story   string
	OK      bool
	Skipped bool
	Err     error
	Took    time.Duration
}

// Run starts the hub and the partners, runs every story, prints the
// timeline and, with KeepRunning, waits for ctx to end. It returns the
// stories' results; err is set when the demo could not start or a story
// failed.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	tl := newTimeline(opts.Out)
	dir := opts.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "ocpihub-demo-")
		if err != nil {
			return nil, err
		}
		dir = d
		defer os.RemoveAll(d)
	}
	if _, err := os.Stat(filepath.Join(dir, "ocpihub.db")); err == nil {
		return nil, fmt.Errorf("%s already holds a demo database; give an empty directory", dir)
	}
	env, stop, err := start(ctx, opts, dir, tl)
	if err != nil {
		return nil, err
	}
	defer stop()

	results := runStories(ctx, env, tl, Stories())
	if opts.AfterStories != nil {
		opts.AfterStories(ctx, env)
	}
	failed := summary(tl, env, results, opts.KeepRunning && ctx.Err() == nil)
	if opts.KeepRunning && ctx.Err() == nil {
		tl.Printf("\nEverything stays up: the hub at %s, the partners on their ports. Ctrl-C stops it.\n", env.Hub.PublicURL())
		<-ctx.Done()
		tl.Printf("Stopping…\n")
	}
	if failed > 0 {
		return results, fmt.Errorf("%d of %d stories failed", failed, len(results))
	}
	return results, nil
}

// start brings up the hub and the partners.
func start(ctx context.Context, opts Options, dir string, tl *Timeline) (*Env, func(), error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil && opts.Addr == "" && errors.Is(err, syscall.EADDRINUSE) {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	cfg := app.Defaults()
	cfg.Addr = l.Addr().String()
	cfg.DB = "sqlite:" + filepath.Join(dir, "ocpihub.db")
	cfg.DevMode = true
	// Partners' tokens are sealed as in production; the key lives as long
	// as the demo's database.
	cfg.SecretKey = rand.Text() + rand.Text()
	cfg.LogLevel = "warn"
	cfg.ShutdownTimeout = 5 * time.Second
	hub, err := app.New(ctx, cfg, app.Options{Logger: opts.Logger.With("component", "hub"), Listener: l, Version: opts.Version, Simulators: devgw.Simulators()})
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	env := &Env{Hub: hub, AdminToken: hub.GeneratedAdminToken, Logger: opts.Logger}
	var closers []func()
	stop := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { hub.Close(context.Background()) })
	if err := hub.Start(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	tl.Printf("ocpihub demo — everything on this machine, nothing else needed\n\n")
	tl.Event("hub", "ocpihub %s at %s (SQLite %s)", opts.Version, hub.PublicURL(), filepath.Join(dir, "ocpihub.db"))
	if sim := devgw.PG(hub); sim != nil {
		tl.Event("pg", "payment gateway simulator (Razorpay-compatible) at %s", sim.URL())
	}
	if sim := devgw.SMS(hub); sim != nil {
		tl.Event("sms", "SMS gateway simulator (MSG91-shaped, with DLT checks) at %s", sim.URL())
	}
	if err := startPartners(env, tl, &closers); err != nil {
		stop()
		return nil, nil, err
	}
	return env, stop, nil
}

// startPartners starts the simulated partners: two CPOs, two eMSPs, a PTP
// and the operator's webhook receiver (the PG simulator is the hub's own,
// started with it in dev mode).
func startPartners(env *Env, tl *Timeline, closers *[]func()) error {
	logger := env.Logger.With("component", "sim")
	for _, c := range []struct{ name, cc, pid string }{{"Volt Yatra Charging", "IN", "VYC"}, {"Surya Chargers", "IN", "SUR"}} {
		cpo, err := sim.StartCPO(c.name, c.cc, c.pid, logger)
		if err != nil {
			return err
		}
		*closers = append(*closers, cpo.Close)
		env.CPOs = append(env.CPOs, cpo)
		env.Parties = append(env.Parties, Partner{Platform: cpo.Platform, Role: "CPO", CountryCode: c.cc, PartyID: c.pid})
		tl.Event("cpo", "%s (CPO %s-%s) at %s", c.name, c.cc, c.pid, cpo.URL())
	}
	for _, e := range []struct{ name, cc, pid string }{{"Chalo EV", "IN", "CEV"}, {"Roam India", "IN", "RMI"}} {
		emsp, err := sim.StartEMSP(e.name, e.cc, e.pid, logger)
		if err != nil {
			return err
		}
		*closers = append(*closers, emsp.Close)
		env.EMSPs = append(env.EMSPs, emsp)
		env.Parties = append(env.Parties, Partner{Platform: emsp.Platform, Role: "EMSP", CountryCode: e.cc, PartyID: e.pid})
		tl.Event("emsp", "%s (eMSP %s-%s) at %s", e.name, e.cc, e.pid, emsp.URL())
	}
	ptp, err := ptpsim.Start("PayTerm India", "IN", "PTI", logger, func(o *sim.Options) { o.Versions = []string{"2.3.0"} })
	if err != nil {
		return err
	}
	*closers = append(*closers, ptp.Close)
	env.PTP = ptp
	env.Parties = append(env.Parties, Partner{Platform: ptp.Platform, Role: "PTP", CountryCode: "IN", PartyID: "PTI"})
	tl.Event("ptp", "PayTerm India (payment terminals, PTP IN-PTI, OCPI 2.3.0) at %s", ptp.URL())
	recv, err := webhooksim.Start()
	if err != nil {
		return err
	}
	*closers = append(*closers, recv.Close)
	env.Webhooks = recv
	tl.Event("hooks", "the operator's webhook receiver at %s", recv.URL())
	return nil
}

// runStories runs the stories in order, each with its own deadline.
func runStories(ctx context.Context, env *Env, tl *Timeline, stories []Story) []Result {
	ok := map[string]bool{}
	var results []Result
	for _, s := range stories {
		tl.Section(s.Name)
		var missing []string
		for _, n := range s.Needs {
			if !ok[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			tl.Skip("skipped: needs %s", strings.Join(missing, ", "))
			results = append(results, Result{Story: s.Name, Skipped: true})
			continue
		}
		start := time.Now() // elapsed wall time: how long the story took
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := s.Run(sctx, env, tl)
		cancel()
		r := Result{Story: s.Name, OK: err == nil, Err: err, Took: time.Since(start)}
		if err != nil {
			tl.Fail("%s failed: %v", s.Name, err)
		} else {
			tl.Done("%s (%s)", s.Name, r.Took.Round(time.Millisecond))
		}
		ok[s.Name] = err == nil
		results = append(results, r)
	}
	return results
}

// summary prints the outcome and, when the hub keeps running, the way into
// the console (a link to a hub about to stop would lead nowhere); it returns
// the number of stories that failed or were skipped.
func summary(tl *Timeline, env *Env, results []Result, keepRunning bool) int {
	tl.Printf("\nSummary\n")
	failed := 0
	for _, r := range results {
		switch {
		case r.OK:
			tl.Printf("  ✓ %-28s %s\n", r.Story, r.Took.Round(time.Millisecond))
		case r.Skipped:
			failed++
			tl.Printf("  – %-28s skipped\n", r.Story)
		default:
			failed++
			tl.Printf("  ✗ %-28s %v\n", r.Story, r.Err)
		}
	}
	if failed == 0 {
		tl.Printf("All %d stories succeeded.\n", len(results))
	} else {
		tl.Printf("%d of %d stories did not succeed.\n", failed, len(results))
	}
	if !keepRunning {
		tl.Printf("\nThe hub and the partners stop now and the demo's files are removed, so there is no console to\n" +
			"look at. To look around the console afterwards, run: ocpihub demo --keep-running\n")
		return failed
	}
	tl.Printf("\nConsole: %s\n", env.ConsoleURL("/"))
	if link, err := env.Hub.Console.LoginLink(context.Background()); err == nil {
		tl.Printf("  sign in with this one-time link (valid %d minutes): %s\n", int(console.LoginLinkTTL/time.Minute), link)
	}
	tl.Printf("  or with the admin token: %s\n", env.AdminToken)
	tl.Printf("API description: %s/openapi.json\n", env.Hub.PublicURL())
	return failed
}

// Admin calls the hub's operator API with the admin token and returns the
// answer whatever it is (err only when there is none).
func (e *Env) Admin(ctx context.Context, method, path string, body any) (*ocpiclient.Response, error) {
	resp, err := e.Hub.Client.Do(ctx, ocpiclient.Request{Method: method, URL: e.Hub.PublicURL() + path, Token: e.AdminToken,
		Base64: true, Body: body, MaxAttempts: 1})
	if resp == nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp, nil
}

// until polls cond every 50 ms until it holds, fails, or ctx ends (the
// story's deadline): what says what was awaited.
func until(ctx context.Context, what string, cond func() (bool, error)) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}
