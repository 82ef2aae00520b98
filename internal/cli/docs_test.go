package cli

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// These tests keep the README true: its metric names, its configuration
// table and the endpoints it names are checked against the code.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeMetricsExistFromTheStart: every metric the README names is on
// /metrics of a fresh hub (one partner registered, nothing happened yet),
// and every ocpihub_ metric there is named in the README (a name ending in
// _* covers a family).
func TestReadmeMetricsExistFromTheStart(t *testing.T) {
	t.Parallel()
	doc := readme(t)
	h := hubtest.Start(t, store.SQLite)
	hubtest.Add(t, h, sim.StartEMSP, "Volt", "DE", "VLT")
	resp, err := http.Get(h.PublicURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var exposed []string
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (ocpihub_[a-z0-9_]+) `).FindAllStringSubmatch(string(body), -1) {
		exposed = append(exposed, m[1])
	}
	var named, families []string
	for _, m := range regexp.MustCompile(`ocpihub_[a-z0-9_]+(\*)?`).FindAllString(doc, -1) {
		if strings.HasSuffix(m, "*") {
			families = append(families, strings.TrimSuffix(m, "*"))
			continue
		}
		if !slices.Contains(named, m) {
			named = append(named, m)
		}
	}
	// The one metric whose label values are not known up front (README).
	later := []string{"ocpihub_legacy_fields_dropped_total"}
	for _, n := range named {
		if !slices.Contains(exposed, n) && !slices.Contains(later, n) {
			t.Errorf("README names %s; a fresh hub's /metrics lacks it", n)
		}
	}
	for _, f := range families {
		if !slices.ContainsFunc(exposed, func(e string) bool { return strings.HasPrefix(e, f) }) {
			t.Errorf("README names %s*; a fresh hub has none", f)
		}
	}
	for _, e := range exposed {
		if !slices.Contains(named, e) && !slices.ContainsFunc(families, func(f string) bool { return strings.HasPrefix(e, f) }) {
			t.Errorf("/metrics has %s; the README does not name it", e)
		}
	}
}

// TestReadmeConfigurationTable: every setting is a row of the README's
// configuration table with its flag and environment variable, and every
// flag and variable the table names exists.
func TestReadmeConfigurationTable(t *testing.T) {
	t.Parallel()
	doc := readme(t)
	start := strings.Index(doc, "| Flag | Environment | Default |")
	if start < 0 {
		t.Fatal("no configuration table in the README")
	}
	table := doc[start:]
	table = table[:strings.Index(table, "\n\n")]
	flags, envs := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("bad row %q", line)
		}
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(cells[1], -1) {
			flags[m[1]] = true
		}
		for _, m := range regexp.MustCompile("`(OCPIHUB_[A-Z0-9_]+)`").FindAllStringSubmatch(cells[2], -1) {
			envs[m[1]] = true
		}
	}
	cfg := app.Defaults()
	known := map[string]bool{}
	for _, s := range settings(&cfg) {
		known[s.name], known[s.env] = true, true
		if !flags[s.name] {
			t.Errorf("--%s is not in the README's configuration table", s.name)
		}
		// Families written with an ellipsis (OCPIHUB_PG_…) are checked by
		// their flags.
		if !envs[s.env] && !strings.Contains(table, strings.SplitN(strings.TrimPrefix(s.env, "OCPIHUB_"), "_", 2)[0]+"_…") {
			t.Errorf("%s is not in the README's configuration table", s.env)
		}
	}
	for f := range flags {
		if !known[f] {
			t.Errorf("the README lists --%s, which does not exist", f)
		}
	}
	for e := range envs {
		if !known[e] {
			t.Errorf("the README lists %s, which does not exist", e)
		}
	}
}
