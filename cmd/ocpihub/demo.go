package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ocpihub/ocpihub/internal/demo"
)

func cmdDemo(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := fs.String("addr", "", "address the hub listens on (default 127.0.0.1:8080, or a free port when it is taken)")
	dir := fs.String("dir", "", "directory for the SQLite file (default: a temporary one, removed at the end)")
	keep := fs.Bool("keep-running", false, "leave the hub and the partners up after the stories; Ctrl-C stops them")
	logLevel := fs.String("log-level", "warn", "log level of the hub and the simulators on stderr: debug, info, warn, error")
	helpOn(fs, e.stdout, func() {
		fmt.Fprint(fs.Output(), "Usage: ocpihub demo [flags]\n\nRuns the hub on a fresh SQLite file with simulated CPOs and eMSPs, registers them,\nplays the stories and prints a timeline with links to the console.\n\nFlags:\n")
		fs.PrintDefaults()
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"unexpected argument " + fs.Arg(0)}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		return usageError{"--log-level: want debug, info, warn or error"}
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	_, err := demo.Run(ctx, demo.Options{Addr: *addr, Dir: *dir, KeepRunning: *keep, Out: e.stdout, Logger: logger, Version: versionName()})
	return err
}
