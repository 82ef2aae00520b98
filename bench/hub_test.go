package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// A scenario is one request measured against the hub, next to the no-op
// baseline. Adding one is adding an entry here: seed what the request needs
// (once per hub), and say what to request.
var scenarios = []scenario{
	{
		name:   "versions",
		target: func(h *benchHub) Target { return h.get("/ocpi/versions", h.cpoToken) },
	},
	{
		name: "hubclientinfo-page",
		seed: func(b testing.TB, h *benchHub) { seedClientInfo(b, h, 300) },
		target: func(h *benchHub) Target {
			return h.get("/ocpi/2.2.1/hubclientinfo?offset=100&limit=50", h.cpoToken)
		},
	},
}

type scenario struct {
	name   string
	seed   func(b testing.TB, h *benchHub)
	target func(h *benchHub) Target
	// seedLast runs seed after every other scenario's: it publishes objects
	// that every receiver, whichever seed registered it, must already have
	// (the bench hub does no initial load).
	seedLast bool
	// verify, when set, checks after a run that its n requests did the work
	// measured (since: when the run began), so that a target whose requests
	// turn into no-ops (a repeated id, an older last_updated) fails instead
	// of reporting a rate.
	verify func(b *testing.B, h *benchHub, since time.Time, n int)
	// paused stops delivery (expansion and sending) while the scenario is
	// measured and starts it again before verify: the request path alone,
	// without the CPU its deliveries take beside it.
	paused bool
}

// BenchmarkHub measures every scenario on both engines. Each sub-benchmark
// reports its own req/s and latency percentiles and, measured alternately in
// the same run on the same server, those of a no-op handler (noop-*), with
// the ratio of the medians (x-noop-p50).
//
// Delivery runs as in production while a scenario is measured (a status
// PATCH's pushes are delivered meanwhile), but each scenario starts from a
// drained hub: nothing from seeding or from the scenario before it is still
// being delivered. The hub does no initial load of new receivers, which
// would send them the 100 000 seeded directory locations; the delivery
// scenarios (BenchmarkDelivery) measure a backlog on purpose.
//
//	go test -run '^$' -bench Hub -benchtime 20000x ./bench/
func BenchmarkHub(b *testing.B) {
	engines(b, func(b *testing.B, engine store.Engine) {
		h := startHubWith(b, engine, func(c *app.Config) { c.NoInitialLoad = true })
		for _, last := range []bool{false, true} {
			for _, s := range scenarios {
				if s.seed != nil && s.seedLast == last {
					s.seed(b, h)
				}
			}
		}
		for _, s := range scenarios {
			b.Run(s.name, func(b *testing.B) {
				drain(b, h)
				since := time.Now()
				if s.paused {
					h.Hub.Stop()
				}
				measure(b, h, s.target(h))
				if s.paused {
					h.Hub.Start(context.Background())
				}
				if s.verify != nil {
					drain(b, h)
					s.verify(b, h, since, b.N)
				}
			})
		}
	})
}

// drainLimit bounds the wait for the delivery backlog before a scenario.
const drainLimit = 3 * time.Minute

// drain waits until the hub has no change left to expand and no push left
// to deliver; a backlog that does not drain within drainLimit fails the
// benchmark (delivery not keeping up is a result, not noise).
func drain(b *testing.B, h *benchHub) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drainLimit)
	defer cancel()
	t0 := time.Now()
	var open int64
	for {
		err := h.DB.Read().QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM hub_change)
			+ (SELECT COUNT(*) FROM hub_push WHERE state IN ('pending', 'leased'))`).Scan(&open)
		if err == nil && open == 0 {
			break
		}
		select {
		case <-ctx.Done():
			b.Fatalf("the delivery backlog did not drain in %v: %d changes and pushes open (%v)", drainLimit, open, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if d := time.Since(t0); d > time.Second {
		b.Logf("drained the delivery backlog in %v", d.Round(100*time.Millisecond))
	}
}

// measure runs b.N requests of t and b.N of the no-op, alternating, and
// reports both.
func measure(b *testing.B, h *benchHub, t Target) {
	cfg := Config{Workers: workers(), Requests: b.N, Client: h.client}
	profiled := profileTarget(b, &cfg, t)
	b.ResetTimer()
	base, res, err := Compare(context.Background(), cfg, h.noop(), t, 4)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	profiled(res)
	reportVsNoop(b, base, res)
	_, share := res.Ratio(base)
	b.ReportMetric(base.RPS, "noop-req/s")
	b.ReportMetric(float64(base.P99.Microseconds()), "noop-p99-µs")
	b.ReportMetric(share, "share-of-noop-req/s")
}

// reportVsNoop reports a target's req/s and latency percentiles, the
// no-op's median and the ratio of the medians (x-noop-p50).
func reportVsNoop(b *testing.B, base, res Result) {
	p50x, _ := res.Ratio(base)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(res.RPS, "req/s")
	b.ReportMetric(float64(res.P50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(res.P99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(base.P50.Microseconds()), "noop-p50-µs")
	b.ReportMetric(p50x, "x-noop-p50")
	// The processor time a request took, this process' and the machine's
	// (PostgreSQL's server included), the target's and the no-op's: with
	// both cores busy the share of the no-op's requests a second is about
	// the ratio of the two.
	b.ReportMetric(float64(res.CPUPerRequest().Microseconds()), "cpu-µs/req")
	b.ReportMetric(float64(base.CPUPerRequest().Microseconds()), "noop-cpu-µs/req")
	if res.Host > 0 && base.Host > 0 {
		b.ReportMetric(float64(res.HostPerRequest().Microseconds()), "host-cpu-µs/req")
		b.ReportMetric(float64(base.HostPerRequest().Microseconds()), "noop-host-cpu-µs/req")
	}
}

// workers is the number of concurrent clients: OCPIHUB_BENCH_WORKERS, default 8.
func workers() int {
	if n, err := strconv.Atoi(os.Getenv("OCPIHUB_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 8
}

// benchHub is an assembled hub on loopback with a no-op route in front of it
// and a registered CPO.
type benchHub struct {
	*app.App
	client   *http.Client
	cpoToken string
	// deepPage is the Link path of the directory page at offset 90 000.
	deepPage string
	// The session scenarios: the CPO simulator, the eMSP's token, a
	// START_SESSION body, the token the hub calls the CPO with and the
	// CPO's commands URL.
	cpo         *sim.CPO
	emspToken   string
	startBody   func() []byte
	hubToCPO    string
	cpoCommands string
	// ptpToken is the Direct Payment scenarios' PTP's token.
	ptpToken string
}

// noopBody is what /bench/noop answers: a small OCPI envelope.
var noopBody = []byte(`{"status_code":1000,"status_message":"Success","timestamp":"2025-01-01T00:00:00Z"}`)

// noopMiddleware answers /bench/noop itself, so the baseline passes the
// same listener, connection handling and HTTP server as the hub's routes
// without touching the hub.
func noopMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bench/noop" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(noopBody)))
			_, _ = w.Write(noopBody)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// engines runs fn as a sub-benchmark per engine, named after it.
func engines(b *testing.B, fn func(b *testing.B, engine store.Engine)) {
	for _, engine := range storetest.Engines() {
		b.Run(string(engine), func(b *testing.B) { fn(b, engine) })
	}
}

func startHub(b testing.TB, engine store.Engine) *benchHub {
	b.Helper()
	return startHubWith(b, engine, nil)
}

// startApp starts a hub with cfg, one job worker per queue and no
// response checks, closed when the benchmark ends. mw, when given, wraps
// the hub and the no-op handler (a test's instrumentation).
func startApp(b testing.TB, cfg app.Config, mw ...func(http.Handler) http.Handler) *app.App {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{
		Logger:     hubtest.Logger(),
		Listener:   l,
		JobsConfig: &jobs.Config{PollInterval: time.Second, Queues: map[string]int{jobs.QueueDefault: 1, jobs.QueuePush: 1, jobs.QueueWebhooks: 1, jobs.QueueMoney: 1}},
		Middleware: func(next http.Handler) http.Handler {
			h := noopMiddleware(next)
			for _, m := range mw {
				h = m(h)
			}
			return h
		},
		Simulators: devgw.Simulators(), // the PG simulator of dev mode, for the hubs that run with DevMode
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		a.Close(ctx)
	})
	return a
}

// startHubWith is startHub with configure changing the configuration, and
// mw wrapping the hub as in startApp.
func startHubWith(b testing.TB, engine store.Engine, configure func(*app.Config), mw ...func(http.Handler) http.Handler) *benchHub {
	b.Helper()
	cfg := app.Defaults()
	cfg.DB = storetest.URL(b, engine)
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminToken = hubtest.AdminToken
	cfg.LogLevel = "error"
	// One token sends thousands of requests a second: the benchmark measures
	// serving them, not the 20-per-second limit (BenchmarkRateLimit measures
	// the limiter).
	cfg.RateLimit = ratelimit.Limits{}
	// The simulated partners listen on loopback.
	cfg.OutboundAllow = netguard.Loopback
	if configure != nil {
		configure(&cfg)
	}
	a := startApp(b, cfg, mw...)
	cpo := hubtest.AddTo(b, a, sim.StartCPO, "Bench CPO", "NL", "BCP")
	return &benchHub{App: a, client: NewClient(workers()), cpoToken: cpo.Token(), cpo: cpo}
}

// get is a Target for an authenticated GET of path, with the Base64 token
// encoding of 2.2.1.
func (h *benchHub) get(path, token string) Target {
	hdr := http.Header{"Authorization": {ocpi.EncodeToken(token, true)}}
	return Get("GET "+path, h.PublicURL()+path, hdr)
}

func (h *benchHub) noop() Target { return Get("noop", h.PublicURL()+"/bench/noop", nil) }

// seedClientInfo adds n parties to HubClientInfo.
func seedClientInfo(b testing.TB, h *benchHub, n int) {
	b.Helper()
	now := time.Now().UnixMicro()
	hubtest.SeedClientInfo(b, h.DB, n, "DE", func(i int) (string, int64) { return fmt.Sprintf("%03d", i), now + int64(i) })
}
