// Package bench is ocpihub's load generator: N concurrent workers send
// requests to a server on loopback, after a warmup, timing each request, and
// report throughput and latency percentiles, alone or next to a baseline
// measured on the same server in the same run (a no-op handler), so that
// numbers from a busy shared machine stay comparable.
//
// The scenarios live in hub_test.go and run under `go test -bench`.
package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Target is one kind of request to measure.
type Target struct {
	Name string
	// NewRequest returns a fresh request; it is called once per request.
	NewRequest func(ctx context.Context) (*http.Request, error)
	// WantStatus is the HTTP status every answer must have (default 200).
	WantStatus int
}

// Get returns a Target for a GET of url with the given headers.
func Get(name, url string, header http.Header) Target {
	return Target{Name: name, NewRequest: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		return req, nil
	}}
}

// Config sets the load.
type Config struct {
	// Workers send requests concurrently (default 8).
	Workers int
	// Requests measured in total (default 1000).
	Requests int
	// Warmup requests are sent first and not measured (default Requests/10,
	// at least Workers).
	Warmup int
	// Client sends the requests (default: keep-alive connections, one per
	// worker).
	Client *http.Client
	// Phase, when set, is called as each measured batch of a target's
	// requests begins, and what it returns as the batch ends: Compare
	// alternates targets, and a CPU profile of one of them alone starts and
	// stops here (profileTarget).
	Phase func(t Target) (end func())
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 8
	}
	if c.Requests <= 0 {
		c.Requests = 1000
	}
	if c.Warmup <= 0 {
		c.Warmup = max(c.Requests/10, c.Workers)
	}
	if c.Client == nil {
		c.Client = NewClient(c.Workers)
	}
	return c
}

// NewClient returns an HTTP client that keeps one connection per worker
// alive, so the measurement is of the server, not of TCP handshakes.
func NewClient(workers int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = workers * 2
	t.MaxIdleConnsPerHost = workers * 2
	t.MaxConnsPerHost = 0
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// Result is the measurement of one target.
type Result struct {
	Name     string
	Requests int
	Elapsed  time.Duration // wall time of the measured requests
	RPS      float64       // requests per second
	P50, P99 time.Duration
	Max      time.Duration
	// CPU is the processor time this process used while the requests ran
	// (user and system, every goroutine: the server, the load generator,
	// simulators in the process); Host the same for the whole machine
	// (PostgreSQL's server included), when /proc/stat can be read.
	CPU, Host time.Duration

	latencies []time.Duration
}

// CPUPerRequest is the process' processor time a request took, on average.
func (r Result) CPUPerRequest() time.Duration { return perRequest(r.CPU, r.Requests) }

// HostPerRequest is the machine's processor time a request took, on average.
func (r Result) HostPerRequest() time.Duration { return perRequest(r.Host, r.Requests) }

func perRequest(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

// String is one line of a report.
func (r Result) String() string {
	return fmt.Sprintf("%-28s %8d req  %10.0f req/s  p50 %8s  p99 %8s  max %8s", r.Name, r.Requests, r.RPS,
		r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
}

// Ratio compares r with a baseline: how many times slower its median
// request is, and what share of the baseline's throughput it reaches.
func (r Result) Ratio(baseline Result) (p50x, rpsShare float64) {
	if baseline.P50 > 0 {
		p50x = float64(r.P50) / float64(baseline.P50)
	}
	if baseline.RPS > 0 {
		rpsShare = r.RPS / baseline.RPS
	}
	return p50x, rpsShare
}

// Run warms up, then sends cfg.Requests requests from cfg.Workers workers
// and measures each. Any transport error or unexpected status fails the run.
func Run(ctx context.Context, cfg Config, t Target) (Result, error) {
	cfg = cfg.withDefaults()
	if _, err := send(ctx, cfg, t, cfg.Warmup); err != nil {
		return Result{}, fmt.Errorf("%s: warmup: %w", t.Name, err)
	}
	r, err := sendMeasured(ctx, cfg, t, cfg.Requests)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	return r, nil
}

// Compare measures target next to baseline on the same server in the same
// run, alternating them over rounds so that a change in the machine's load
// affects both alike. Each gets cfg.Requests requests in total.
func Compare(ctx context.Context, cfg Config, baseline, target Target, rounds int) (base, res Result, err error) {
	cfg = cfg.withDefaults()
	rounds = max(1, min(rounds, cfg.Requests))
	for _, t := range []Target{baseline, target} {
		if _, err := send(ctx, cfg, t, cfg.Warmup); err != nil {
			return base, res, fmt.Errorf("%s: warmup: %w", t.Name, err)
		}
	}
	base.Name, res.Name = baseline.Name, target.Name
	for i := range rounds {
		n := cfg.Requests / rounds
		if i < cfg.Requests%rounds {
			n++
		}
		for _, x := range []struct {
			t   Target
			acc *Result
		}{{baseline, &base}, {target, &res}} {
			r, err := sendMeasured(ctx, cfg, x.t, n)
			if err != nil {
				return base, res, fmt.Errorf("%s: %w", x.t.Name, err)
			}
			x.acc.Elapsed += r.Elapsed
			x.acc.CPU += r.CPU
			x.acc.Host += r.Host
			x.acc.latencies = append(x.acc.latencies, r.latencies...)
		}
	}
	base.summarise()
	res.summarise()
	return base, res, nil
}

// sendMeasured is send with the processor time it took (Result.CPU and
// Host), inside cfg.Phase.
func sendMeasured(ctx context.Context, cfg Config, t Target, n int) (Result, error) {
	if cfg.Phase != nil {
		defer cfg.Phase(t)()
	}
	cpu0, host0 := processCPU(), hostCPU()
	r, err := send(ctx, cfg, t, n)
	r.CPU = processCPU() - cpu0
	if host1 := hostCPU(); host0 > 0 && host1 > 0 {
		r.Host = host1 - host0
	}
	return r, err
}

// processCPU is the processor time this process has used (user and
// system).
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// hostCPU is the processor time the machine has spent running anything
// (the first line of /proc/stat without idle, iowait and steal), or 0 where
// that cannot be read.
func hostCPU() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	// user nice system idle iowait irq softirq steal: idle (4), iowait (5)
	// and steal (8) are time not spent running this machine's work.
	for i, v := range f[1:9] {
		if i == 3 || i == 4 || i == 7 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTicks
}

// clockTicks is the unit of /proc/stat (USER_HZ), 100 on Linux.
const clockTicks = 100

// send runs n requests of t over cfg.Workers workers.
func send(ctx context.Context, cfg Config, t Target, n int) (Result, error) {
	want := t.WantStatus
	if want == 0 {
		want = http.StatusOK
	}
	var next atomic.Int64
	lat := make([][]time.Duration, cfg.Workers)
	errs := make(chan error, cfg.Workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, n/cfg.Workers+1)
			for next.Add(1) <= int64(n) {
				req, err := t.NewRequest(ctx)
				if err != nil {
					errs <- err
					return
				}
				t0 := time.Now()
				resp, err := cfg.Client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				if err != nil {
					errs <- err
					return
				}
				if resp.StatusCode != want {
					errs <- fmt.Errorf("HTTP %d, want %d", resp.StatusCode, want)
					return
				}
				mine = append(mine, d)
			}
			lat[w] = mine
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return Result{}, err
	}
	r := Result{Name: t.Name, Elapsed: time.Since(start), latencies: slices.Concat(lat...)}
	r.summarise()
	return r, nil
}

func (r *Result) summarise() {
	slices.Sort(r.latencies)
	r.Requests = len(r.latencies)
	if r.Requests == 0 {
		return
	}
	if r.Elapsed > 0 {
		r.RPS = float64(r.Requests) / r.Elapsed.Seconds()
	}
	r.P50 = percentile(r.latencies, 0.50)
	r.P99 = percentile(r.latencies, 0.99)
	r.Max = r.latencies[len(r.latencies)-1]
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
