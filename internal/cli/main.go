// Package cli is the command line of ocpihub: the production binary
// (cmd/ocpihub: serve, migrate, party, qr, payment, sync, tariff,
// admin-token, version) and the development one (cmd/ocpihub-dev: the same
// commands, the payment and SMS simulators behind --dev and the sandbox, and
// the demo) are each a Program over it. The simulators and the demo are not
// imported here: a Program brings them, so the production binary's
// dependency graph holds none of them.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
)

// Program is one binary over the command line.
type Program struct {
	// Name is the binary's name in its usage text ("ocpihub").
	Name string
	// Simulators start the simulated gateways of dev mode and the
	// sandbox (none in production).
	Simulators app.Simulators
	// Commands are the binary's own commands beside the common ones.
	Commands []Command
}

// Command is a command a Program adds.
type Command struct {
	Name string
	// Usage is its line in the usage text, after the binary's name.
	Usage string
	Run   func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// Main runs the command line of os.Args and exits with its status.
func (p Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := p.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// env is what a command sees of the world; tests pass their own.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// sims are the Program's simulators.
	sims app.Simulators
	// clock is the time commands show ages against and price at.
	clock clock.Clock
}

const usageHead = `ocpihub — an OCPI 2.2.1 roaming hub and eMSP

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
  ocpihub version [--json]       print the version, commit and build date
`

const usageTail = `
Run "ocpihub <command> --help" for the flags of a command. Every setting is also an
environment variable (OCPIHUB_*) and a line of the --config file.
`

// usage is the Program's usage text: the common commands, then its own.
func (p Program) usage() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range p.Commands {
		fmt.Fprintf(&b, "  ocpihub %s\n", c.Usage)
	}
	b.WriteString(usageTail)
	return strings.ReplaceAll(b.String(), "ocpihub ", p.Name+" ")
}

// Run runs the command line args and returns the exit status.
func (p Program) Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if p.Name == "" {
		p.Name = "ocpihub"
	}
	usage := p.usage()
	e := env{stdout: stdout, stderr: stderr, getenv: getenv, sims: p.Simulators, clock: clock.Real{}}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	version := func(_ context.Context, e env, args []string) error { return cmdVersion(e.stdout, args) }
	common := map[string]func(ctx context.Context, e env, args []string) error{
		"serve":       cmdServe,
		"migrate":     cmdMigrate,
		"party":       cmdParty,
		"qr":          cmdQR,
		"payment":     cmdPayment,
		"sync":        cmdSync,
		"tariff":      cmdTariff,
		"admin-token": cmdAdminToken,
		"version":     version,
		"--version":   version,
		"-version":    version,
	}
	var err error
	switch run := common[args[0]]; {
	case run != nil:
		err = run(ctx, e, args[1:])
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		i := slices.IndexFunc(p.Commands, func(c Command) bool { return c.Name == args[0] })
		if i < 0 {
			fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
			return 2
		}
		err = p.Commands[i].Run(ctx, stdout, stderr, args[1:])
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, p.Name+":", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, p.Name+":", err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// UsageError is a mistake in the command line of a Program's own command:
// the exit status is 2.
func UsageError(msg string) error { return usageError{msg} }

// ParseFlags parses a Program's own command's flags as the common commands
// do theirs; HelpOn prints its help text on --help.
func ParseFlags(fs *flag.FlagSet, args []string) error { return parseFlags(fs, args) }

// HelpOn makes --help print text to w (see ParseFlags).
func HelpOn(fs *flag.FlagSet, w io.Writer, text func()) { helpOn(fs, w, text) }

// VersionName is the build's version ("dev" without one).
func VersionName() string { return versionName() }
