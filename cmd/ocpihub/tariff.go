package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	_ "time/tzdata" // --time-zone names zones on machines without zoneinfo

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

const tariffUsage = `Usage: ocpihub tariff price --tariff T.json (--cdr C.json | --session S.json) [flags]

Prices a session from a tariff with the hub's cost engine and prints JSON: total_cost (excl_vat,
incl_vat), the cost per dimension and per price component, and the difference to the CDR's or
session's own total_cost. A 2.1.1 tariff (no country_code) is converted first.

Flags:
  --tariff FILE      the tariff (repeat for several; a period's tariff_id picks one). Without it,
                     a CDR is priced from the tariffs it carries.
  --cdr FILE         a CDR (2.2.1)
  --session FILE     a session (2.2.1); a live one is priced until --now
  --time-zone ZONE   the location's time zone, e.g. Asia/Kolkata (default UTC)
  --now TIME         the end of a live session's last period (default: the current time)
  --explain          also print which element priced which part of which period, and why
`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func cmdTariff(_ context.Context, e env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(e.stdout, tariffUsage)
		if len(args) == 0 {
			return usageError{"tariff needs a command"}
		}
		return nil
	}
	if args[0] != "price" {
		return usageError{fmt.Sprintf("unknown tariff command %q\n\n%s", args[0], tariffUsage)}
	}
	fs := flag.NewFlagSet("tariff price", flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.Usage = func() { fmt.Fprint(e.stdout, tariffUsage) }
	var tariffs repeated
	fs.Var(&tariffs, "tariff", "tariff file")
	cdrPath := fs.String("cdr", "", "CDR file")
	sessionPath := fs.String("session", "", "session file")
	zone := fs.String("time-zone", "", "the location's time zone")
	nowFlag := fs.String("now", "", "end of a live session")
	explain := fs.Bool("explain", false, "explain every decision")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"unexpected argument " + fs.Arg(0)}
	}
	if (*cdrPath == "") == (*sessionPath == "") {
		return usageError{"tariff price needs one of --cdr and --session"}
	}
	tz := time.UTC
	if *zone != "" {
		var err error
		if tz, err = time.LoadLocation(*zone); err != nil {
			return usageError{"--time-zone: " + err.Error()}
		}
	}
	now := time.Now()
	if *nowFlag != "" {
		d, err := ocpi.ParseDateTime(*nowFlag)
		if err != nil {
			return usageError{"--now: " + err.Error()}
		}
		now = d.Time
	}
	var in tariff.Input
	var own *ocpi.Price
	var cc, pid string
	if *cdrPath != "" {
		var c ocpi.CDR
		if err := readJSON(*cdrPath, &c); err != nil {
			return err
		}
		cc, pid, own = c.CountryCode, c.PartyID, c.TotalCost
		in = tariff.ForCDR(&c, nil, tz)
	} else {
		var s ocpi.Session
		if err := readJSON(*sessionPath, &s); err != nil {
			return err
		}
		cc, pid, own = s.CountryCode, s.PartyID, s.TotalCost
		in = tariff.ForSession(&s, nil, tz, now)
	}
	if len(tariffs) > 0 {
		in.Tariffs = nil
		for _, path := range tariffs {
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			t, err := tariff.DecodeTariff(raw, cc, pid)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			in.Tariffs = append(in.Tariffs, t)
		}
	}
	in.Explain = *explain
	cost, err := tariff.Price(in)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(tariff.NewReport(cost, own))
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := ocpi.Decode(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
