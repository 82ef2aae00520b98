package tariff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// ForCDR is the input that prices a CDR: its own tariffs (the snapshot the
// CDR carries, cdrs.md §8), or the given ones when it carries none (the
// connector's tariffs at the session's start).
func ForCDR(c *ocpi.CDR, fallback []ocpi.Tariff, tz *time.Location) Input {
	ts := c.Tariffs
	if len(ts) == 0 {
		ts = fallback
	}
	return Input{Tariffs: ts, Start: c.StartDateTime.Time, End: c.EndDateTime.Time, Periods: c.ChargingPeriods, TimeZone: tz}
}

// ForSession is the input that prices a session so far: a live session's
// last period lasts until now.
func ForSession(s *ocpi.Session, ts []ocpi.Tariff, tz *time.Location, now time.Time) Input {
	in := Input{Tariffs: ts, Start: s.StartDateTime.Time, Now: now, Periods: s.ChargingPeriods, TimeZone: tz}
	if s.EndDateTime != nil {
		in.End = s.EndDateTime.Time
	}
	return in
}

// Zone is the time zone a location names (IANA), UTC when it names none or
// one this machine does not know.
func Zone(name string) *time.Location {
	if name != "" {
		if z, err := LoadZone(name); err == nil {
			return z
		}
	}
	return time.UTC
}

// zones are the time zones loaded so far, by name. time.LoadLocation reads
// and parses the zone's file at every call (5 % of a CDR's handling, which
// prices the CDR in its location's zone); a zone loaded once is kept. Only
// names that load are kept, and at most maxZones of them: the zone
// database has about 600 names, but a file path spelled another way
// ("Asia//Kolkata") loads too, so the names partners send are not bounded.
// Past maxZones a new name is loaded at each call.
var zones = struct {
	sync.RWMutex
	m map[string]*time.Location
}{m: map[string]*time.Location{}}

const maxZones = 1024

// LoadZone is time.LoadLocation, remembered.
func LoadZone(name string) (*time.Location, error) {
	zones.RLock()
	z, ok := zones.m[name]
	zones.RUnlock()
	if ok {
		return z, nil
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Lock()
	if len(zones.m) < maxZones {
		zones.m[name] = z
	}
	zones.Unlock()
	return z, nil
}

// DecodeTariff reads a tariff in the 2.2.1 shape, or in the 2.1.1 one (no
// country_code; converted with the legacy converter, owned by cc/pid).
func DecodeTariff(raw []byte, cc, pid string) (ocpi.Tariff, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(raw), &probe); err != nil {
		return ocpi.Tariff{}, ocpi.Invalid("tariff", "is not a JSON object")
	}
	if _, ok := probe["country_code"]; ok {
		var t ocpi.Tariff
		if err := ocpi.Decode(raw, &t); err != nil {
			return t, err
		}
		return t, nil
	}
	var legacy v211.Tariff
	if err := ocpi.Decode(raw, &legacy); err != nil {
		return ocpi.Tariff{}, err
	}
	c := ocpi.NewCheck("")
	legacy.Check(c)
	if err := c.Err(); err != nil {
		return ocpi.Tariff{}, fmt.Errorf("2.1.1 tariff: %w", err)
	}
	return legacy.To221(cc, pid), nil
}

// Report is a priced CDR or session next to its own total: what
// `ocpihub tariff price` prints and the admin API answers.
type Report struct {
	Cost
	// OwnTotalCost is the CDR's or session's own total_cost, and
	// Difference that total − the engine's.
	OwnTotalCost *ocpi.Price `json:"own_total_cost,omitempty"`
	Difference   *ocpi.Price `json:"difference,omitempty"`
	// TimeZone is the zone restrictions were read in, and TimeZoneFrom
	// where it came from (the caller's choice, the location, or the UTC
	// default).
	TimeZone     string `json:"time_zone,omitempty"`
	TimeZoneFrom string `json:"time_zone_from,omitempty"`
}

// NewReport puts a cost beside the total the CDR or session gave.
func NewReport(c *Cost, own *ocpi.Price) *Report {
	r := &Report{Cost: *c, OwnTotalCost: own}
	if own != nil {
		r.Difference = Difference(*own, c.TotalCost)
	}
	return r
}
