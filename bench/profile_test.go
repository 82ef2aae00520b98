package bench

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
)

// profileWindow starts a CPU profile of the measured requests alone when
// OCPIHUB_BENCH_PROFILE names a directory, and returns what stops it: the
// file is <dir>/<benchmark name>.cpu.pprof (slashes as dashes). Go's own
// -cpuprofile covers the whole process' run, seeding included: at a
// million EVSEs the seed and its checkpoint are most of it.
func profileWindow(b *testing.B) func() {
	dir := os.Getenv("OCPIHUB_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	name := filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "-")+".cpu.pprof")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.Logf("CPU profile of the measured requests: %s", name)
	}
}
