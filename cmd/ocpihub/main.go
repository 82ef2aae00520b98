// Command ocpihub is the OCPI hub: `ocpihub serve` runs it; the other
// commands act on its database (parties, QR codes, migrations) or run the
// simulators and the demo.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// env is what a command sees of the world; tests pass their own.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

const usage = `ocpihub — an OCPI 2.2.1 roaming hub and eMSP

Usage:
  ocpihub serve [flags]          run the hub (SQLite file in the working directory by default)
  ocpihub migrate [flags]        bring the database schema up to date and exit
  ocpihub party <command>        onboard and manage partners (invite, connect, list, show,
                                 suspend, resume, rotate, disconnect)
  ocpihub qr <command>           QR stickers for UPI charging (create, list, show, disable, render)
  ocpihub payment <command>      UPI payments (list, show, resolve, refund)
  ocpihub sync locations|tariffs|tokens|sessions|cdrs --party CC/PID [--since TIME]
                                 pull a partner's objects (recovery after missed pushes)
  ocpihub tariff price --tariff T.json --cdr C.json [--explain]
                                 price a CDR or session with the cost engine (JSON)
  ocpihub admin-token --reset    replace the generated admin token
  ocpihub demo [--keep-running]  run the hub with simulated partners and play the stories
  ocpihub version [--json]       print the version, commit and build date

Run "ocpihub <command> --help" for the flags of a command. Every setting is also an
environment variable (OCPIHUB_*) and a line of the --config file.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	e := env{stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, e, args[1:])
	case "migrate":
		err = cmdMigrate(ctx, e, args[1:])
	case "party":
		err = cmdParty(ctx, e, args[1:])
	case "qr":
		err = cmdQR(ctx, e, args[1:])
	case "payment":
		err = cmdPayment(ctx, e, args[1:])
	case "sync":
		err = cmdSync(ctx, e, args[1:])
	case "tariff":
		err = cmdTariff(ctx, e, args[1:])
	case "admin-token":
		err = cmdAdminToken(ctx, e, args[1:])
	case "demo":
		err = cmdDemo(ctx, e, args[1:])
	case "version", "--version", "-version":
		err = cmdVersion(stdout, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "ocpihub:", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "ocpihub:", err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }
