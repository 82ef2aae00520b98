package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build information, set by release builds with
//
//	-ldflags "-X github.com/ocpihub/ocpihub/internal/cli.version=v1.2.0 -X …/cli.commit=$(git rev-parse --short HEAD) -X …/cli.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
//
// (see the Makefile). Without them, buildInfo reads what the Go toolchain
// stamped into the binary: the module version of `go install …@v1.2.0`, and
// the VCS revision, time and dirty flag of a build in a git checkout.
var (
	version = ""
	commit  = ""
	date    = ""
)

// build describes the running binary.
type build struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Date     string `json:"date,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// buildInfo combines the ldflags with the toolchain's build information
// (read by readBuildInfo; tests pass their own).
func buildInfo(readBuildInfo func() (*debug.BuildInfo, bool)) build {
	b := build{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := readBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
					if len(b.Commit) > 12 {
						b.Commit = b.Commit[:12]
					}
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true" && commit == ""
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// String is the one-line form: ocpihub v1.2.0 (commit 1a2b3c4d, 2025-03-01T10:00:00Z) go1.26 linux/amd64.
func (b build) String() string {
	s := "ocpihub " + b.Version
	var meta []string
	if b.Commit != "" {
		c := "commit " + b.Commit
		if b.Modified {
			c += "-dirty"
		}
		meta = append(meta, c)
	}
	if b.Date != "" {
		meta = append(meta, b.Date)
	}
	if len(meta) > 0 {
		s += " (" + strings.Join(meta, ", ") + ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

// cmdVersion prints the build: one line, or one JSON object with --json.
func cmdVersion(stdout io.Writer, args []string) error {
	b := buildInfo(debug.ReadBuildInfo)
	if len(args) > 0 && (args[0] == "--json" || args[0] == "-json") {
		return json.NewEncoder(stdout).Encode(b)
	}
	if len(args) > 0 {
		return usageError{"version takes only --json"}
	}
	_, err := fmt.Fprintln(stdout, b)
	return err
}

// versionName is the version the hub reports (OpenAPI, console, logs).
func versionName() string { return buildInfo(debug.ReadBuildInfo).Version }
