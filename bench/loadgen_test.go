package bench

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunCountsAndTimesEveryRequest: warmup plus measured requests reach the
// server exactly, and the percentiles come from the measured ones.
func TestRunCountsAndTimesEveryRequest(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-Test") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	r, err := Run(context.Background(), Config{Workers: 4, Requests: 200, Warmup: 20}, Get("ok", srv.URL, http.Header{"X-Test": {"yes"}}))
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 220 || r.Requests != 200 {
		t.Errorf("server saw %d requests, result counts %d; want 220 and 200", hits.Load(), r.Requests)
	}
	if r.RPS <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 || !strings.Contains(r.String(), "req/s") {
		t.Errorf("result %+v", r)
	}
	if _, err := Run(context.Background(), Config{Workers: 2, Requests: 10}, Get("bad", srv.URL, nil)); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("a 400 answer did not fail the run: %v", err)
	}
}

// TestCompareAlternates measures both targets fully: every request of both
// reaches the server and is counted. How the two compare in time is what the
// benchmarks report, not something a test may assert on a shared machine.
func TestCompareAlternates(t *testing.T) {
	t.Parallel()
	var fast, slow atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			slow.Add(1)
			return
		}
		fast.Add(1)
	}))
	t.Cleanup(srv.Close)
	base, res, err := Compare(context.Background(), Config{Workers: 2, Requests: 101, Warmup: 2}, Get("fast", srv.URL+"/fast", nil), Get("slow", srv.URL+"/slow", nil), 4)
	if err != nil {
		t.Fatal(err)
	}
	if base.Requests != 101 || res.Requests != 101 || fast.Load() != 103 || slow.Load() != 103 {
		t.Errorf("requests %d/%d, server saw %d/%d", base.Requests, res.Requests, fast.Load(), slow.Load())
	}
	if base.Name != "fast" || res.Name != "slow" || base.P50 <= 0 || res.P50 <= 0 {
		t.Errorf("results %+v and %+v", base, res)
	}
}

// TestRatio relates a result to its baseline.
func TestRatio(t *testing.T) {
	t.Parallel()
	base := Result{P50: 2 * time.Millisecond, RPS: 1000}
	got := Result{P50: 5 * time.Millisecond, RPS: 250}
	if p50x, share := got.Ratio(base); p50x != 2.5 || share != 0.25 {
		t.Errorf("Ratio = %v, %v; want 2.5, 0.25", p50x, share)
	}
	if p50x, share := got.Ratio(Result{}); p50x != 0 || share != 0 {
		t.Errorf("Ratio against an empty baseline = %v, %v; want 0, 0", p50x, share)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if percentile(d, 0.5) != 50 || percentile(d, 0.99) != 99 || percentile(d[:1], 0.99) != 1 {
		t.Errorf("percentiles %v %v", percentile(d, 0.5), percentile(d, 0.99))
	}
}

// burn does a fixed amount of work: about a millisecond of one core.
func burn() {
	buf := make([]byte, 64<<10)
	for range 8 {
		sum := sha256.Sum256(buf)
		buf[0] = sum[0]
	}
}

// TestCompareCountsProcessorTime: each target's requests are charged the
// processor time spent while they ran, and Phase frames every measured
// batch of both. Not parallel: the process' time is counted, so the
// package's other tests must not run meanwhile.
func TestCompareCountsProcessorTime(t *testing.T) {
	t0 := processCPU()
	for range 50 {
		burn()
	}
	work := (processCPU() - t0) / 50
	if work <= 0 {
		t.Fatal("processCPU did not move over 50 rounds of work")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/heavy" {
			burn()
		}
	}))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	open := map[string]int{}
	phases := map[string]int{}
	cfg := Config{Workers: 2, Requests: 200, Warmup: 2, Phase: func(x Target) func() {
		mu.Lock()
		open[x.Name]++
		phases[x.Name]++
		mu.Unlock()
		return func() {
			mu.Lock()
			open[x.Name]--
			mu.Unlock()
		}
	}}
	base, res, err := Compare(context.Background(), cfg, Get("light", srv.URL+"/light", nil), Get("heavy", srv.URL+"/heavy", nil), 4)
	if err != nil {
		t.Fatal(err)
	}
	if phases["light"] != 4 || phases["heavy"] != 4 || open["light"] != 0 || open["heavy"] != 0 {
		t.Errorf("phases begun %v, still open %v; want 4 each, none open", phases, open)
	}
	extra := res.CPUPerRequest() - base.CPUPerRequest()
	if extra < work/2 {
		t.Errorf("a heavy request took %v of processor time and a light one %v: want at least %v more (half the work's %v)",
			res.CPUPerRequest(), base.CPUPerRequest(), work/2, work)
	}
	if res.Host > 0 && res.HostPerRequest() < res.CPUPerRequest()/2 {
		t.Errorf("the machine's time a heavy request %v, less than half the process' %v", res.HostPerRequest(), res.CPUPerRequest())
	}
}
