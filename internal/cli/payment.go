package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

const paymentUsage = `Usage: ocpihub payment <command> [flags]

  list [--status S] [--attention]
                        list UPI payments (newest changes last); --attention: those an operator must look at
  show ID               show a payment with its chain: order, command, session, CDR, refunds, receipt, audit
  resolve ID --note TEXT [--settle-on cdr|hub]
                        clear a payment's attention flag once dealt with (the note is audited);
                        a payment held on a CDR cost mismatch needs --settle-on: the CDR's total or the hub's price
  refund ID --amount RUPEES [--refund-id ID] [--reason TEXT]
                        refund part of a payment; the running hub sends it to the payment gateway
                        (--refund-id is the idempotency key: repeating the command refunds once)

Every command takes the serve flags (--db, …) and --json.
`

func cmdPayment(ctx context.Context, e env, args []string) error {
	if asked, err := helpAsked(e, args, paymentUsage, "payment needs a command"); asked {
		return err
	}
	sub, rest := args[0], args[1:]
	fs, cfg, apply := newFlagSet(e, "payment "+sub, "payment "+sub+" [flags]")
	asJSON := fs.Bool("json", false, "print one JSON object")
	var status, note, amount, refundID, reason, settleOn *string
	var attention *bool
	switch sub {
	case "list":
		status = fs.String("status", "", "only payments in this state ("+strings.Join(paymentrow.Statuses, ", ")+")")
		attention = fs.Bool("attention", false, "only payments that need the operator")
	case "show":
	case "resolve":
		note = fs.String("note", "", "what was done (required)")
		settleOn = fs.String("settle-on", "", "settle a payment held on a CDR cost mismatch on the CDR's total (cdr) or the hub's price (hub)")
	case "refund":
		amount = fs.String("amount", "", "amount in rupees, e.g. 120.50 (required)")
		refundID = fs.String("refund-id", "", "idempotency key (default: generated; repeat it to retry safely)")
		reason = fs.String("reason", "", "why, for the audit trail and the PG")
	default:
		return usageError{fmt.Sprintf("unknown payment command %q\n\n%s", sub, paymentUsage)}
	}
	need := "payment " + sub + " needs a payment ID (see ocpihub payment list)"
	if sub == "list" {
		need = ""
	}
	id, err := parseSubcommand(fs, rest, need, apply)
	if err != nil {
		return err
	}
	var paise int64
	if sub == "refund" {
		p, err := pg.ParseRupees(*amount)
		if err != nil || p <= 0 {
			return usageError{"payment refund needs --amount in rupees, e.g. 120.50"}
		}
		paise = p
		if *refundID == "" {
			*refundID = "op-" + strings.ToLower(id) + "-" + strings.ReplaceAll(pg.FormatRupees(p), ".", "")
		}
	}
	return withUPI(ctx, *cfg, func(u *upi.Service) error {
		switch sub {
		case "list":
			f := upi.PaymentFilter{Status: strings.ToUpper(*status), Attention: *attention}
			return printAll(e, *asJSON, "payments", func(page ocpi.PageRequest) ([]*paymentview.PaymentView, ocpi.Page, error) {
				return u.ListPayments(ctx, f, page)
			}, "ID\tSTATUS\tAMOUNT\tCAPTURED\tCOST\tREFUNDED\tQR\tATTENTION\tUPDATED", func(w io.Writer, p *paymentview.PaymentView) {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Status, p.Amount, p.Captured, p.Cost, p.Refunded, p.QRRef,
					p.Attention, ago(p.LastUpdated.Time, e.clock.Now()))
			})
		case "show":
			p, err := u.Payment(ctx, id)
			if err != nil {
				return err
			}
			return printPayment(e, *asJSON, p)
		case "resolve":
			p, err := u.Resolve(ctx, id, upi.Resolution{Note: *note, SettleOn: *settleOn})
			if err != nil {
				return err
			}
			return printPayment(e, *asJSON, p)
		case "refund":
			r, isNew, err := u.CreateRefund(ctx, refunds.RefundRequest{RefundID: *refundID, PaymentID: id, Paise: paise, Reason: *reason})
			if err != nil {
				return err
			}
			head := "Refund queued: the running hub sends it to the payment gateway.\n"
			if !isNew {
				head = "This refund exists already (same refund id); nothing new was sent.\n"
			}
			return print(e, *asJSON, r, fmt.Sprintf("%s  refund_id: %s\n  payment:   %s\n  amount:    %s %s\n  status:    %s\n",
				head, r.RefundID, r.PaymentID, r.Amount, r.Currency, r.Status))
		}
		return nil
	})
}

func printPayment(e env, asJSON bool, p *paymentview.PaymentView) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Payment %s: %s (PG %s, %s)\n", p.ID, p.Status, p.PGPaymentID, p.PGStatus)
	fmt.Fprintf(&b, "  amount %s %s · captured %s · cost %s · refunded %s (pending %s) · not refundable %s · shortfall %s\n",
		p.Amount, p.Currency, p.Captured, p.Cost, p.Refunded, p.RefundPending, p.NotRefundable, p.Shortfall)
	fmt.Fprintf(&b, "  QR %s → %s %s/%s/%s\n", p.QRRef, p.TenantID, p.LocationID, p.EVSEUID, p.ConnectorID)
	if p.Attention != "" {
		fmt.Fprintf(&b, "  ATTENTION: %s\n", p.Attention)
	}
	if c := p.Command; c != nil {
		fmt.Fprintf(&b, "  command  START_SESSION %s, response %s, result %s\n", c.SentAt, orDash(c.Response), orDash(c.Result))
	}
	if s := p.Session; s != nil {
		fmt.Fprintf(&b, "  session  %s/%s/%s %s, %s kWh, %s\n", s.CountryCode, s.PartyID, s.ID, s.Status, s.KWh, s.TotalCost)
	}
	if c := p.CDR; c != nil {
		fmt.Fprintf(&b, "  cdr      %s, %s kWh, %s\n", c.ID, c.TotalKWh, c.TotalCost)
	}
	if h := p.CostHold; h != nil {
		decision := "HELD: settle with payment resolve --settle-on cdr|hub"
		if h.SettledOn != "" {
			decision = "settled on " + h.SettledOn + " by the " + h.DecidedBy
		}
		fmt.Fprintf(&b, "  mismatch CDR %s total %s, hub's price %s: %s\n", h.CDRID, h.CDRTotal, orDash(h.HubTotal), decision)
	}
	for _, r := range p.Refunds {
		fmt.Fprintf(&b, "  refund   %s %s %s (%s) %s\n", r.RefundID, r.Amount, r.Status, r.Kind, r.Reason)
	}
	if r := p.Receipt; r != nil {
		fmt.Fprintf(&b, "  receipt  %s\n", r.URL)
	}
	for _, a := range p.Audit {
		fmt.Fprintf(&b, "  %s  %-6s %s → %s  %s\n", a.At, a.Actor, orDash(a.From), a.To, a.Note)
	}
	return print(e, asJSON, p, b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// allPages reads every page of a list, following each page's position, and
// returns the items (an empty slice, not nil, when there are none, so JSON
// shows []).
// helpAsked answers a command group called for help or without its
// subcommand: it prints usage, and a missing subcommand is the usage error
// missing. It reports whether it answered.
func helpAsked(e env, args []string, usage, missing string) (bool, error) {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "help" {
		return false, nil
	}
	fmt.Fprint(e.stdout, usage)
	if len(args) == 0 {
		return true, usageError{missing}
	}
	return true, nil
}

// printAll prints every item a paged listing holds: as one JSON object with
// the items under key, or as a table with header and one row an item.
func printAll[T any](e env, asJSON bool, key string, list func(ocpi.PageRequest) ([]T, ocpi.Page, error), header string, row func(io.Writer, T)) error {
	items, err := allPages(list)
	if err != nil {
		return err
	}
	if asJSON {
		return print(e, true, map[string]any{key: items}, "")
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		row(tw, it)
	}
	return tw.Flush()
}

// parseSubcommand parses a subcommand's flags and, when it takes a
// positional argument (need is the usage message when it is missing; ""
// when it takes none), that argument and the flags after it; then it
// applies the configuration the flags set (apply, from newFlagSet).
func parseSubcommand(fs *flag.FlagSet, rest []string, need string, apply func() error) (string, error) {
	if err := parseFlags(fs, rest); err != nil {
		return "", err
	}
	arg := ""
	if need != "" {
		if fs.NArg() == 0 {
			return "", usageError{need}
		}
		arg = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return "", err
		}
	}
	return arg, apply()
}

// withUPI runs fn on the UPI service of a hub assembled for a one-shot
// command (it inserts jobs and runs no workers), then closes the hub.
func withUPI(ctx context.Context, cfg app.Config, fn func(u *upi.Service) error) error {
	a, err := app.New(ctx, cfg, app.Options{InsertOnly: true})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	return fn(a.UPI)
}

func allPages[T any](list func(ocpi.PageRequest) ([]T, ocpi.Page, error)) ([]T, error) {
	out := []T{}
	page := ocpi.PageRequest{Limit: ocpi.MaxLimit}
	for {
		items, p, err := list(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if p.Last == nil || int64(p.Last.Offset) >= p.Total {
			return out, nil
		}
		page.Offset, page.After = p.Last.Offset, p.Last
	}
}
