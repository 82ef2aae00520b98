package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
)

// newFlagSet returns a flag set with every configuration setting.
func newFlagSet(e env, name, synopsis string) (*flag.FlagSet, *app.Config, func() error) {
	cfg := app.Defaults()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	binds, configPath := configFlags(fs, &cfg)
	helpOn(fs, e.stdout, func() {
		fmt.Fprintf(fs.Output(), "Usage: ocpihub %s\n\nFlags (each also an environment variable, in brackets, and a --config file line):\n", synopsis)
		fs.PrintDefaults()
	})
	apply := func() error {
		if fs.NArg() > 0 {
			return usageError{"unexpected argument " + fs.Arg(0)}
		}
		// A wrong value in the environment or the config file is a mistake
		// in how the command was called, as a wrong flag is.
		if err := applyConfig(fs, binds, *configPath, e.getenv); err != nil {
			return usageError{err.Error()}
		}
		if err := cfg.Validate(); err != nil {
			return usageError{err.Error()}
		}
		return nil
	}
	return fs, &cfg, apply
}

func cmdServe(ctx context.Context, e env, args []string) error {
	fs, cfg, apply := newFlagSet(e, "serve", "serve [flags]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := apply(); err != nil {
		return err
	}
	a, err := app.New(ctx, *cfg, app.Options{Version: versionName(), Simulators: e.sims})
	if err != nil {
		return err
	}
	if a.GeneratedAdminToken != "" {
		fmt.Fprintf(e.stderr, "\n  Admin token (shown once; keep it): %s\n  Use it as \"Authorization: Token <admin token>\" on /admin and to log in to the console.\n\n", a.GeneratedAdminToken)
	}
	if err := a.Start(ctx); err != nil {
		a.Close(context.Background())
		return err
	}
	fmt.Fprintf(e.stderr, "ocpihub %s serving %s (versions: %s)\n", versionName(), a.PublicURL(), a.VersionsURL())
	if a.Sandbox != nil {
		fmt.Fprintf(e.stderr, "sandbox serving %s (database %s; data reset daily at %02d:00 UTC)\n",
			a.Sandbox.VersionsURL(), a.Sandbox.DB.Engine(), cfg.SandboxResetHour)
	}
	<-ctx.Done()
	fmt.Fprintln(e.stderr, "shutting down: finishing requests and jobs…")
	return a.Close(context.Background())
}

func cmdMigrate(ctx context.Context, e env, args []string) error {
	fs, cfg, apply := newFlagSet(e, "migrate", "migrate [flags]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := apply(); err != nil {
		return err
	}
	a, err := app.New(ctx, *cfg, app.Options{InsertOnly: true})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	cur, latest, err := a.DB.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "database %s is at schema version %d (latest %d)\n", a.DB.Engine(), cur, latest)
	return nil
}

func cmdAdminToken(ctx context.Context, e env, args []string) error {
	fs, cfg, apply := newFlagSet(e, "admin-token", "admin-token --reset [flags]")
	reset := fs.Bool("reset", false, "generate a new admin token (the old one stops working)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := apply(); err != nil {
		return err
	}
	if !*reset {
		return usageError{"admin-token needs --reset (the token is only shown when it is generated)"}
	}
	if cfg.AdminToken != "" {
		return usageError{"the admin token is configured (OCPIHUB_ADMIN_TOKEN); change it there"}
	}
	a, err := app.New(ctx, *cfg, app.Options{InsertOnly: true})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	tok, err := a.Parties.ResetAdminToken(ctx)
	if err != nil {
		return err
	}
	return print(e, *asJSON, map[string]string{"admin_token": tok}, "Admin token: "+tok+"\nA running hub reads it at its next restart.\n")
}

// print writes v as one JSON object, or text.
func print(e env, asJSON bool, v any, text string) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		return enc.Encode(v)
	}
	_, err := fmt.Fprint(e.stdout, text)
	return err
}

// ago says how long before now t was, to the largest whole unit.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}
