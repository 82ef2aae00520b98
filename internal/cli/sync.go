package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

const syncUsage = `Usage: ocpihub sync locations|tariffs|tokens|sessions|cdrs --party CC/PID [--since 2026-01-01T00:00:00Z] [--all] [--json]

Pulls a partner's objects from its SENDER interface (following Link pages) into the hub: the
recovery path when pushes were missed. Locations, tariffs, sessions and CDRs are pulled from a
CPO, tokens from an eMSP; a peer hub is asked for every party behind it (name any of them).
Each object is validated like a push; invalid ones are logged and counted, not stored. Real
changes are sent on by the running hub (the command enqueues the pushes in the shared database).

  --party CC/PID   the CPO or eMSP, e.g. NL/TNM (NL-TNM and NL*TNM are read too)
  --since TIME     pull objects changed since TIME (default: the last successful pull)
  --all            pull everything, ignoring the last successful pull

Takes the serve flags (--db, …) too.
`

// syncModules are the modules `ocpihub sync` pulls (those of the hub's
// Syncer).
var syncModules = []string{"locations", "tariffs", "tokens", "sessions", "cdrs"}

func cmdSync(ctx context.Context, e env, args []string) error {
	if asked, err := helpAsked(e, args, syncUsage, "sync needs a module: locations, tariffs, tokens, sessions or cdrs"); asked {
		return err
	}
	module, rest := args[0], args[1:]
	if !slices.Contains(syncModules, module) {
		return usageError{fmt.Sprintf("unknown module %q: want one of %s", module, strings.Join(syncModules, ", "))}
	}
	fs, cfg, apply := newFlagSet(e, "sync "+module, "sync "+module+" --party CC/PID [flags]")
	asJSON := fs.Bool("json", false, "print one JSON object")
	partyFlag := fs.String("party", "", "the CPO or eMSP as COUNTRY_CODE/PARTY_ID, e.g. NL/TNM (required)")
	sinceFlag := fs.String("since", "", "pull objects changed since this time (RFC 3339)")
	all := fs.Bool("all", false, "pull everything")
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if err := apply(); err != nil {
		return err
	}
	cc, pid, err := party.ParseParty(*partyFlag)
	if err != nil {
		return usageError{"--party: " + err.Error()}
	}
	var since time.Time
	if *sinceFlag != "" {
		dt, err := ocpi.ParseDateTime(*sinceFlag)
		if err != nil {
			return usageError{"--since: " + err.Error()}
		}
		since = dt.Time
	}
	a, err := app.New(ctx, *cfg, app.Options{InsertOnly: true})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	role := party.RoleCPO
	if module == "tokens" {
		role = party.RoleEMSP
	}
	p, err := a.Parties.FindByParty(ctx, role, cc, pid)
	if err != nil {
		return err
	}
	if *sinceFlag == "" && !*all {
		if since, err = a.Syncer.LastSync(ctx, p.ID, module); err != nil {
			return err
		}
	}
	res, err := a.Syncer.Sync(ctx, module, p.ID, since)
	if err != nil {
		return err
	}
	from := "the beginning"
	if !since.IsZero() {
		from = ocpi.NewDateTime(since).String()
	}
	return print(e, *asJSON, res, fmt.Sprintf("Pulled %s of %s since %s: %d received, %d changed, %d unchanged, %d invalid (see the log).\n",
		module, strings.ToUpper(*partyFlag), from, res.Received, res.Changed, res.Unchanged, res.Invalid))
}
