package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/party"
)

const partyUsage = `Usage: ocpihub party <command> [flags]

  invite --name NAME [--expires 72h] [--party ROLE/CC/PID]... [--sandbox]
                        create a one-time registration token (token A) for a partner;
                        --party binds it to parties (e.g. CPO/NL/ACM), announced as PLANNED;
                        --sandbox issues sandbox credentials (they register with the sandbox)
  connect --versions-url URL --token TOKEN_A [--name NAME] [--role CPO|EMSP]
                        register with a partner that gave us its token A (we start the handshake;
                        the hub must be running on the same database to answer the partner's callbacks);
                        --role is needed when the partner speaks OCPI 2.1.1 or 2.0 only
  invitations [--state OPEN|USED|EXPIRED|REVOKED]
                        list invitations, newest first (never their tokens)
  revoke ID             revoke an open invitation: its token A stops working, the parties only it
                        bound are withdrawn from the hub's client info
  list                  list platforms
  show ID               show one platform
  suspend ID | resume ID
                        stop / restart traffic with a platform
  rotate ID             replace the credentials tokens of a platform (credentials PUT)
  disconnect ID         unregister a platform (credentials DELETE)

Every command takes the serve flags (--db, --public-url, …), --json, and --sandbox to act on
the sandbox's database (--sandbox-addr must be set, as for serve).
`

func cmdParty(ctx context.Context, e env, args []string) error {
	if asked, err := helpAsked(e, args, partyUsage, "party needs a command"); asked {
		return err
	}
	sub, rest := args[0], args[1:]
	fs, cfg, apply := newFlagSet(e, "party "+sub, "party "+sub+" [flags]")
	asJSON := fs.Bool("json", false, "print one JSON object")
	var name, expires, versionsURL, token, role *string
	sandbox := fs.Bool("sandbox", false, "act on the sandbox (invite: issue sandbox credentials: unlimited rate limits, data reset daily)")
	var parties []party.PartyRef
	var state *string
	switch sub {
	case "invite":
		name = fs.String("name", "", "partner name (required)")
		expires = fs.String("expires", "72h", "how long the token stays valid")
		fs.Func("party", "a party the partner may register, ROLE/COUNTRY_CODE/PARTY_ID (e.g. CPO/NL/ACM); repeat for more", func(v string) error {
			ref, err := party.ParsePartyRef(v)
			if err != nil {
				return err
			}
			parties = append(parties, ref)
			return nil
		})
	case "connect":
		name = fs.String("name", "", "partner name (default: its business name)")
		versionsURL = fs.String("versions-url", "", "the partner's versions URL (required)")
		token = fs.String("token", "", "the token A the partner gave us (required)")
		role = fs.String("role", "", "the partner's role, CPO or EMSP, when its highest version shared with us is 2.1.1 or 2.0 (their credentials do not say)")
	case "invitations":
		state = fs.String("state", "", "only invitations in this state: OPEN, USED, EXPIRED or REVOKED")
	case "list", "show", "suspend", "resume", "rotate", "disconnect", "revoke":
	default:
		return usageError{fmt.Sprintf("unknown party command %q\n\n%s", sub, partyUsage)}
	}
	// Flags may follow the ID: parse, take the ID, parse the rest.
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	var id int64
	if sub != "invite" && sub != "connect" && sub != "list" && sub != "invitations" {
		what, article, listCmd := "platform", "a", "list"
		if sub == "revoke" {
			what, article, listCmd = "invitation", "an", "invitations"
		}
		if fs.NArg() == 0 {
			return usageError{"party " + sub + " needs " + article + " " + what + " ID (see ocpihub party " + listCmd + ")"}
		}
		n, err := strconv.ParseInt(fs.Arg(0), 10, 64)
		if err != nil || n <= 0 {
			return usageError{what + " ID " + strconv.Quote(fs.Arg(0)) + " is not a number"}
		}
		id = n
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	if state != nil {
		*state = strings.ToUpper(*state)
		if *state != "" && *state != party.InvitationOpen && *state != party.InvitationUsed && *state != party.InvitationExpired && *state != party.InvitationRevoked {
			return usageError{"--state: want OPEN, USED, EXPIRED or REVOKED"}
		}
	}
	if err := apply(); err != nil {
		return err
	}
	if *sandbox {
		sc, err := cfg.SandboxConfig()
		if err != nil {
			return usageError{err.Error()}
		}
		*cfg = sc
	}
	a, err := app.New(ctx, *cfg, app.Options{InsertOnly: true})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	ps := a.Parties

	switch sub {
	case "invite":
		ttl, err := time.ParseDuration(*expires)
		if err != nil || ttl <= 0 {
			return usageError{"--expires: want a duration such as 72h"}
		}
		if *name == "" {
			return usageError{"party invite needs --name"}
		}
		inv, err := ps.Invite(ctx, *name, ttl, *sandbox, parties...)
		if err != nil {
			return err
		}
		legacyURLs := map[string]string{"CPO": ps.VersionsURLFor(party.RoleCPO), "EMSP": ps.VersionsURLFor(party.RoleEMSP)}
		out := map[string]any{"token": inv.Token, "versions_url": inv.VersionsURL, "expires_at": inv.ExpiresAt}
		var bound string
		if len(inv.Parties) > 0 {
			out["parties"] = inv.Parties
			refs := make([]string, len(inv.Parties))
			for i, p := range inv.Parties {
				refs[i] = string(p.Role) + " " + party.Notation(p.CountryCode, p.PartyID)
			}
			bound = "  parties:      " + strings.Join(refs, ", ") + " (the only ones it may register)\n"
		}
		return print(e, *asJSON, out,
			fmt.Sprintf("Registration token (token A) for %s, valid until %s:\n\n  token:        %s\n  versions URL: %s\n%s\nGive both to the partner over a secure channel. The partner calls GET versions with\n\"Authorization: Token <base64 of the token>\" and then POSTs its credentials.\nA partner that speaks only OCPI 2.1.1 or 2.0 (raw token, no Base64) uses the versions URL of its role:\n  CPO:  %s\n  eMSP: %s\n",
				inv.Name, inv.ExpiresAt, inv.Token, inv.VersionsURL, bound, legacyURLs["CPO"], legacyURLs["EMSP"]))
	case "connect":
		if *versionsURL == "" || *token == "" {
			return usageError{"party connect needs --versions-url and --token"}
		}
		p, err := ps.ConnectWith(ctx, party.ConnectRequest{Name: *name, VersionsURL: *versionsURL, Token: *token,
			Role: party.Role(strings.ToUpper(*role))})
		if err != nil {
			return err
		}
		return printPlatform(e, *asJSON, p, "Connected.\n")
	case "list":
		list, err := ps.List(ctx, party.Filter{})
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []*party.Platform{}
			}
			return print(e, true, map[string]any{"platforms": list}, "")
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tCONNECTION\tVERSION\tROLES\tLAST SEEN")
		for _, p := range list {
			seen := "never"
			if p.LastSeenAt != nil {
				seen = ago(p.LastSeenAt.Time, e.clock.Now())
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Status, p.Connection, p.Version, rolesText(p), seen)
		}
		return tw.Flush()
	case "invitations":
		all, err := ps.Invitations(ctx, 500)
		if err != nil {
			return err
		}
		list := []party.InvitationInfo{}
		for _, inv := range all {
			if *state == "" || inv.State == *state {
				list = append(list, inv)
			}
		}
		if *asJSON {
			return print(e, true, map[string]any{"invitations": list}, "")
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATE\tPARTIES\tEXPIRES\tPLATFORM")
		for _, inv := range list {
			refs := make([]string, len(inv.Parties))
			for i, p := range inv.Parties {
				refs[i] = string(p.Role) + " " + party.Notation(p.CountryCode, p.PartyID)
			}
			platform := ""
			if inv.PlatformID != 0 {
				platform = strconv.FormatInt(inv.PlatformID, 10)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", inv.ID, inv.Name, inv.State, strings.Join(refs, ", "), inv.ExpiresAt, platform)
		}
		return tw.Flush()
	case "revoke":
		if err := ps.RevokeInvitation(ctx, id); err != nil {
			return err
		}
		inv, err := ps.FindInvitation(ctx, id)
		if err != nil {
			return err
		}
		return print(e, *asJSON, inv, fmt.Sprintf("Invitation %d (%s) is revoked: its token no longer works.\n", inv.ID, inv.Name))
	case "show":
		p, err := ps.Find(ctx, id)
		if err != nil {
			return err
		}
		return printPlatform(e, *asJSON, p, "")
	case "suspend", "resume", "rotate", "disconnect":
		var warning string
		switch sub {
		case "suspend":
			err = ps.Suspend(ctx, id)
		case "resume":
			err = ps.Resume(ctx, id)
		case "rotate":
			_, err = ps.Rotate(ctx, id)
		case "disconnect":
			warning, err = ps.Disconnect(ctx, id)
		}
		if err != nil {
			return err
		}
		if warning != "" {
			fmt.Fprintln(e.stderr, "warning:", warning)
		}
		p, err := ps.Find(ctx, id)
		if err != nil {
			return err
		}
		return printPlatform(e, *asJSON, p, "")
	}
	return nil
}

// parseFlags parses args: -h or --help prints the command's help (its
// fs.Usage) on stdout; a bad flag is a usage error, reported once on stderr
// (exit status 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return err
	}
	if err != nil {
		return usageError{err.Error() + " (see ocpihub " + fs.Name() + " --help)"}
	}
	return nil
}

// helpOn makes text (which writes to fs.Output()) the help of fs, printed
// on w.
func helpOn(fs *flag.FlagSet, w io.Writer, text func()) {
	fs.Usage = func() {
		fs.SetOutput(w)
		text()
		fs.SetOutput(io.Discard)
	}
}

func rolesText(p *party.Platform) string {
	parts := make([]string, len(p.Roles))
	for i, r := range p.Roles {
		parts[i] = string(r.Role) + " " + party.Notation(r.CountryCode, r.PartyID)
	}
	return strings.Join(parts, ", ")
}

func printPlatform(e env, asJSON bool, p *party.Platform, prefix string) error {
	var b strings.Builder
	b.WriteString(prefix)
	fmt.Fprintf(&b, "Platform %d: %s\n  status:     %s (%s)\n  version:    %s\n  versions:   %s\n  roles:      %s\n",
		p.ID, p.Name, p.Status, p.Connection, p.Version, p.VersionsURL, rolesText(p))
	if p.LastError != "" {
		fmt.Fprintf(&b, "  last error: %s\n", p.LastError)
	}
	b.WriteString("  endpoints:\n")
	for _, ep := range p.Endpoints {
		fmt.Fprintf(&b, "    %-16s %-8s %s\n", ep.Identifier, ep.Role, ep.URL)
	}
	return print(e, asJSON, p, b.String())
}
