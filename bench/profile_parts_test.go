package bench

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestCPUPartsAttribution: each sample goes to the first part whose
// function its stack holds, whatever the frame's depth, and the report
// gives each part's time a request, largest first.
func TestCPUPartsAttribution(t *testing.T) {
	t.Parallel()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	var id uint64
	loc := func(names ...string) []*profile.Location {
		var out []*profile.Location
		for _, n := range names {
			id++
			f := &profile.Function{ID: id, Name: n}
			p.Function = append(p.Function, f)
			l := &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, l)
			out = append(out, l)
		}
		return out
	}
	sample := func(ns int64, stack ...string) {
		p.Sample = append(p.Sample, &profile.Sample{Location: loc(stack...), Value: []int64{1, ns}})
	}
	const ms = int64(1e6)
	// A simulator's handler under net/http's server: the simulator's.
	sample(2*ms, "encoding/json.Unmarshal", "github.com/ocpihub/ocpihub/internal/sim.(*EMSP).handleCDR", "net/http.(*conn).serve")
	// The hub's handler under the benchmark's middleware: the hub's.
	sample(6*ms, "modernc.org/sqlite/lib._sqlite3VdbeExec", "github.com/ocpihub/ocpihub/internal/httpapi.(*Server).ServeHTTP",
		"github.com/ocpihub/ocpihub/bench.startApp.func1.noopMiddleware.1", "net/http.(*conn).serve")
	sample(1*ms, "github.com/ocpihub/ocpihub/bench.send.func1")
	sample(3*ms, "syscall.Syscall6", "github.com/ocpihub/ocpihub/internal/delivery.(*Engine).run")
	sample(1*ms, "github.com/ocpihub/ocpihub/internal/traffic.(*Recorder).run")
	sample(2*ms, "runtime.scanObject", "runtime.gcBgMarkWorker")
	sample(1*ms, "bufio.(*Reader).Read", "net/http.(*conn).serve")
	sample(1*ms, "runtime.findRunnable", "runtime.schedule")
	got := cpuParts(p, 2)
	want := []string{
		"processor time a request (profiled): 8.5ms",
		"hub: request handler", "3ms", "35.3 %",
		"hub: delivery", "1.5ms",
		"partner simulators (their handlers)", "1ms",
		"garbage collector", "1ms",
		"load generator", "500µs",
		"hub: traffic recorder", "500µs",
		"HTTP servers outside handlers", "500µs",
		"runtime: scheduler", "500µs",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("%q not found after byte %d of:\n%s", w, at, got)
		}
		at += i + len(w)
	}
	if strings.Contains(got, "WAL checkpoint") {
		t.Errorf("a part without samples is listed:\n%s", got)
	}
}
