package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	_ "time/tzdata" // --time-zone names zones on machines without zoneinfo

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
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
  --time-zone ZONE   the location's time zone, e.g. Asia/Kolkata. Default: the time_zone of
                     --location; else, with --db, the hub's copy of the CDR's or session's
                     location; else UTC. The output's time_zone and time_zone_from say which.
  --location FILE    the location (2.2.1) the session took place at: its time_zone
  --db URL           the hub's database (OCPIHUB_DB): the location's time zone is read from
                     the hub's directory. It is only read.
  --now TIME         the end of a live session's last period (default: the current time)
  --explain          also print which element priced which part of which period, and why
`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func cmdTariff(ctx context.Context, e env, args []string) error {
	if asked, err := helpAsked(e, args, tariffUsage, "tariff needs a command"); asked {
		return err
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
	locPath := fs.String("location", "", "location file")
	dbURL := fs.String("db", e.getenv("OCPIHUB_DB"), "the hub's database")
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
	now := e.clock.Now()
	if *nowFlag != "" {
		d, err := ocpi.ParseDateTime(*nowFlag)
		if err != nil {
			return usageError{"--now: " + err.Error()}
		}
		now = d.Time
	}
	var in tariff.Input
	var own *ocpi.Price
	var cc, pid, locID string
	var cdr *ocpi.CDR
	var sess *ocpi.Session
	if *cdrPath != "" {
		cdr = &ocpi.CDR{}
		if err := readJSON(*cdrPath, cdr); err != nil {
			return err
		}
		cc, pid, own = cdr.CountryCode, cdr.PartyID, cdr.TotalCost
		if cdr.CdrLocation != nil {
			locID = cdr.CdrLocation.ID
		}
	} else {
		sess = &ocpi.Session{}
		if err := readJSON(*sessionPath, sess); err != nil {
			return err
		}
		cc, pid, own, locID = sess.CountryCode, sess.PartyID, sess.TotalCost, sess.LocationID
	}
	tz, from, err := priceZone(ctx, *zone, *locPath, *dbURL, cc, pid, locID)
	if err != nil {
		return err
	}
	if cdr != nil {
		in = tariff.ForCDR(cdr, nil, tz)
	} else {
		in = tariff.ForSession(sess, nil, tz, now)
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
	rep := tariff.NewReport(cost, own)
	rep.TimeZone, rep.TimeZoneFrom = tz.String(), from
	return enc.Encode(rep)
}

// priceZone decides the time zone of tariff price: --time-zone, else the
// --location file's time_zone, else the hub's copy of the location (with a
// database), else UTC.
func priceZone(ctx context.Context, zone, locPath, dbURL, cc, pid, locID string) (*time.Location, string, error) {
	load := func(name, what string) (*time.Location, error) {
		tz, err := time.LoadLocation(name)
		if err != nil {
			return nil, usageError{what + ": " + err.Error()}
		}
		return tz, nil
	}
	switch {
	case zone != "":
		tz, err := load(zone, "--time-zone")
		return tz, "flag", err
	case locPath != "":
		var loc ocpi.Location
		if err := readJSON(locPath, &loc); err != nil {
			return nil, "", err
		}
		if loc.TimeZone == "" {
			return nil, "", usageError{"--location: " + locPath + " has no time_zone"}
		}
		tz, err := load(loc.TimeZone, "--location time_zone")
		return tz, "location file", err
	case dbURL != "" && locID != "":
		name, err := hubZone(ctx, dbURL, cc, pid, locID)
		if err != nil || name == "" {
			return time.UTC, "default", err
		}
		tz, err := load(name, "the hub's location time_zone")
		return tz, "hub", err
	}
	return time.UTC, "default", nil
}

// hubZone reads the time_zone of a location from the hub's database ("" when
// the hub does not hold the location). A SQLite file must exist: the command
// never creates a database.
func hubZone(ctx context.Context, dbURL, cc, pid, locID string) (string, error) {
	engine, target, err := store.ParseURL(dbURL)
	if err != nil {
		return "", usageError{"--db: " + err.Error()}
	}
	if engine == store.SQLite {
		if _, err := os.Stat(target); err != nil {
			return "", usageError{"--db: no database at " + target}
		}
	}
	db, err := store.Open(ctx, dbURL, store.Options{MaxConns: 1})
	if err != nil {
		return "", err
	}
	defer db.Close()
	var body []byte
	err = db.Read().QueryRow(ctx, "SELECT body FROM locations WHERE country_code = $1 AND party_id = $2 AND id = $3",
		ocpi.Key(cc), ocpi.Key(pid), ocpi.Key(locID)).Scan(&body)
	if errors.Is(err, store.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read location %s/%s/%s: %w", cc, pid, locID, err)
	}
	var loc struct {
		TimeZone string `json:"time_zone"`
	}
	if err := json.Unmarshal(body, &loc); err != nil {
		return "", err
	}
	return loc.TimeZone, nil
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
