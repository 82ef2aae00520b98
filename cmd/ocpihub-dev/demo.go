package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/ocpihub/ocpihub/internal/cli"
	"github.com/ocpihub/ocpihub/internal/demo"
)

// cmdDemo runs the demo (see internal/demo).
func cmdDemo(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := fs.String("addr", "", "address the hub listens on (default 127.0.0.1:8080, or a free port when it is taken)")
	dir := fs.String("dir", "", "directory for the SQLite file (default: a temporary one, removed at the end)")
	keep := fs.Bool("keep-running", false, "leave the hub and the partners up after the stories; Ctrl-C stops them")
	logLevel := fs.String("log-level", "warn", "log level of the hub and the simulators on stderr: debug, info, warn, error")
	cli.HelpOn(fs, stdout, func() {
		fmt.Fprint(fs.Output(), "Usage: ocpihub-dev demo [flags]\n\nRuns the hub on a fresh SQLite file with simulated CPOs and eMSPs, registers them,\nplays the stories and prints a timeline with links to the console.\n\nFlags:\n")
		fs.PrintDefaults()
	})
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError("unexpected argument " + fs.Arg(0))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		return cli.UsageError("--log-level: want debug, info, warn or error")
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	_, err := demo.Run(ctx, demo.Options{Addr: *addr, Dir: *dir, KeepRunning: *keep, Out: stdout, Logger: logger, Version: cli.VersionName()})
	return err
}
