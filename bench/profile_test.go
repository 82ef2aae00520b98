package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// profileTarget profiles the measured requests of t alone when
// OCPIHUB_BENCH_PROFILE names a directory: it sets cfg.Phase so that a CPU
// profile runs while t's requests run and stops while the no-op's do
// (Compare alternates them), and returns what writes the profile, to
// <dir>/<benchmark name>.cpu.pprof (slashes as dashes), and logs where a
// request's processor time went, part by part (cpuParts). Go's own
// -cpuprofile covers the whole process' run: the no-op's rounds, and the
// seeding (at a million EVSEs the seed and its checkpoint are most of it).
func profileTarget(b *testing.B, cfg *Config, t Target) (done func(res Result)) {
	dir := os.Getenv("OCPIHUB_BENCH_PROFILE")
	if dir == "" {
		return func(Result) {}
	}
	// Compare runs its batches one after another, each ending in the
	// goroutine that began it: parts needs no lock.
	var parts []*bytes.Buffer
	cfg.Phase = func(x Target) func() {
		if x.Name != t.Name {
			return func() {}
		}
		buf := new(bytes.Buffer)
		if err := pprof.StartCPUProfile(buf); err != nil {
			b.Error(err)
			return func() {}
		}
		return func() {
			pprof.StopCPUProfile()
			parts = append(parts, buf)
		}
	}
	return func(res Result) {
		var profs []*profile.Profile
		for _, buf := range parts {
			p, err := profile.Parse(buf)
			if err != nil {
				b.Fatal(err)
			}
			profs = append(profs, p)
		}
		if len(profs) == 0 {
			return
		}
		merged, err := profile.Merge(profs)
		if err != nil {
			b.Fatal(err)
		}
		if len(merged.Sample) == 0 {
			// The benchmark's first call, with one request: nothing to
			// tell, and the file is the measured run's.
			return
		}
		name := filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "-")+".cpu.pprof")
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := merged.Write(f); err != nil {
			f.Close()
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.Logf("CPU profile of the measured requests: %s\n%s", name, cpuParts(merged, res.Requests))
	}
}

// cpuPart names a part of the process by a function its samples' stacks
// hold. The first part whose function a stack holds takes the sample, and
// the last, which names none, what no other holds. So the order matters:
// a simulator's handler runs under net/http's server like the hub's, and
// the hub's handler under the benchmark's no-op middleware.
type cpuPart struct{ name, fn string }

var cpuPartsInOrder = []cpuPart{
	{"partner simulators (their handlers)", "ocpihub/internal/sim."},
	{"hub: request handler", "ocpihub/internal/httpapi.(*Server).ServeHTTP"},
	{"load generator", "ocpihub/bench."},
	{"hub: delivery", "ocpihub/internal/delivery."},
	{"hub: traffic recorder", "ocpihub/internal/traffic."},
	{"hub: WAL checkpoint (SQLite)", "ocpihub/internal/store.(*checkpointer)"},
	{"hub: other background work", "ocpihub/internal/"},
	{"database driver outside the hub's calls", "jackc/pgx"},
	{"garbage collector", "runtime.gcBgMarkWorker"},
	{"HTTP servers outside handlers (hub's and simulators')", "net/http.(*conn).serve"},
	{"HTTP client connections (load generator's and hub's)", "net/http.(*persistConn)"},
	{"runtime: scheduler, network poller, timers", ""},
}

// cpuParts tells, for a profile of n requests, the processor time a
// request took in each part of the process (cpuPartsInOrder).
func cpuParts(p *profile.Profile, n int) string {
	if n == 0 {
		return ""
	}
	ci := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			ci = i
		}
	}
	if ci < 0 {
		return ""
	}
	took := make([]int64, len(cpuPartsInOrder))
	var total int64
	for _, s := range p.Sample {
		v := s.Value[ci]
		total += v
		took[partOf(s)] += v
	}
	var sb strings.Builder
	perReq := func(ns int64) time.Duration { return time.Duration(ns / int64(n)) }
	fmt.Fprintf(&sb, "processor time a request (profiled): %v\n", perReq(total).Round(time.Microsecond))
	order := make([]int, len(took))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(took[b] - took[a]) })
	for _, i := range order {
		if took[i] == 0 {
			continue
		}
		fmt.Fprintf(&sb, "  %-55s %7v  %5.1f %%\n", cpuPartsInOrder[i].name, perReq(took[i]).Round(time.Microsecond),
			100*float64(took[i])/float64(total))
	}
	return sb.String()
}

// partOf is the index in cpuPartsInOrder of the part a sample belongs to:
// the last part when no other holds it.
func partOf(s *profile.Sample) int {
	for i, part := range cpuPartsInOrder[:len(cpuPartsInOrder)-1] {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.Contains(line.Function.Name, part.fn) {
					return i
				}
			}
		}
	}
	return len(cpuPartsInOrder) - 1
}
