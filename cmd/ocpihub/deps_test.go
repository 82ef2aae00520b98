package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// devEntryPoints are the commands that may bring simulators and the demo;
// every other command under cmd/ is a production entry point.
var devEntryPoints = map[string]bool{"github.com/ocpihub/ocpihub/cmd/ocpihub-dev": true}

// notInProduction are the packages (and their sub-packages) no production
// entry point may depend on: the simulators, and the demo that drives them.
var notInProduction = []string{"github.com/ocpihub/ocpihub/internal/sim", "github.com/ocpihub/ocpihub/internal/demo", "github.com/ocpihub/ocpihub/internal/devgw"}

// TestProductionHasNoSimulators: `go list -deps` of every production entry
// point holds no simulator, no demo and no dev gateway; the development
// entry point does hold them (so the check is not vacuous).
func TestProductionHasNoSimulators(t *testing.T) {
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
		}
		return strings.Fields(string(out))
	}
	forbidden := func(pkg string) bool {
		for _, p := range notInProduction {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return true
			}
		}
		return false
	}
	mains := list("-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "github.com/ocpihub/ocpihub/cmd/...")
	var prod int
	for _, m := range mains {
		var bad []string
		for _, dep := range list("-deps", m) {
			if forbidden(dep) {
				bad = append(bad, dep)
			}
		}
		switch {
		case devEntryPoints[m] && len(bad) == 0:
			t.Errorf("%s holds no simulator: is it still the development entry point?", m)
		case !devEntryPoints[m] && len(bad) > 0:
			t.Errorf("production entry point %s depends on %s", m, strings.Join(bad, ", "))
		case !devEntryPoints[m]:
			prod++
		}
	}
	if prod == 0 {
		t.Errorf("no production entry point among %v", mains)
	}
}
