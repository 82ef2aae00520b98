package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildInfo: ldflags win; without them the version, commit, time and
// dirty flag come from what the toolchain stamped; with nothing, "dev".
func TestBuildInfo(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ocpihub/ocpihub", Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2025-03-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	devel := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }

	if got := buildInfo(stamped).String(); !strings.HasPrefix(got, "ocpihub v1.4.0 (commit 0123456789ab-dirty, 2025-03-01T10:00:00Z) go1.26.8 ") {
		t.Errorf("from build info: %q", got)
	}
	if got := buildInfo(devel); got.Version != "dev" || got.Commit != "" {
		t.Errorf("a development build: %+v", got)
	}
	if got := buildInfo(none); got.Version != "dev" || got.Go == "" || got.Platform == "" {
		t.Errorf("no build info: %+v", got)
	}

	version, commit, date = "v2.0.0", "feedbee", "2025-04-01T00:00:00Z"
	defer func() { version, commit, date = "", "", "" }()
	got := buildInfo(stamped)
	if got.Version != "v2.0.0" || got.Commit != "feedbee" || got.Date != "2025-04-01T00:00:00Z" || got.Modified {
		t.Errorf("ldflags: %+v", got)
	}
	var out bytes.Buffer
	if err := cmdVersion(&out, []string{"--json"}); err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j["version"] != "v2.0.0" || j["commit"] != "feedbee" {
		t.Errorf("version --json: %s", out.String())
	}
}
