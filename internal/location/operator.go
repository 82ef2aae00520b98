package location

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Summary is a location as the operator's console lists it: where it is,
// whose it is, and how its EVSEs are doing.
type Summary struct {
	Key         int64 // the row key, for keyset paging
	CountryCode string
	PartyID     string
	ID          string
	Name        string
	City        string
	Publish     bool
	// Latitude and Longitude are decimal strings (7 decimals).
	Latitude, Longitude string
	// EVSEs counts the location's EVSEs by status.
	EVSEs       map[string]int
	LastUpdated ocpi.DateTime
}

// Status sums a location up for a map: AVAILABLE when a driver can charge
// there now, CHARGING when every working EVSE is busy (charging, blocked,
// reserved), OUTOFORDER when none works, REMOVED when all are removed,
// UNKNOWN otherwise.
func (s Summary) Status() string {
	n := func(st ...string) (c int) {
		for _, x := range st {
			c += s.EVSEs[x]
		}
		return c
	}
	switch {
	case n("AVAILABLE") > 0:
		return "AVAILABLE"
	case n("CHARGING", "BLOCKED", "RESERVED") > 0:
		return "CHARGING"
	case n("OUTOFORDER", "INOPERATIVE") > 0:
		return "OUTOFORDER"
	case n("REMOVED") > 0 && n("REMOVED") == s.total():
		return "REMOVED"
	}
	return "UNKNOWN"
}

func (s Summary) total() (t int) {
	for _, n := range s.EVSEs {
		t += n
	}
	return t
}

// SummaryFilter selects locations for Summaries.
type SummaryFilter struct {
	// CountryCode and PartyID restrict the list to one CPO.
	CountryCode, PartyID string
	// EVSEStatus keeps locations with at least one EVSE in that status.
	EVSEStatus string
	// Before continues after the location with this key (newest first).
	Before int64
	Limit  int
}

// Summaries returns locations newest first with their EVSE counts, for the
// operator (published or not).
func (s *Service) Summaries(ctx context.Context, f SummaryFilter) ([]Summary, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	var w store.Conds
	if f.CountryCode != "" {
		w.And("l.country_code = "+w.Arg(ocpi.Key(f.CountryCode)), "l.party_id = "+w.Arg(ocpi.Key(f.PartyID)))
	}
	if f.EVSEStatus != "" {
		w.And("EXISTS (SELECT 1 FROM evses e WHERE e.location_pk = l.pk AND e.status = " + w.Arg(f.EVSEStatus) + ")")
	}
	if f.Before > 0 {
		w.And("l.pk < " + w.Arg(f.Before))
	}
	q := "SELECT l.pk, l.country_code, l.party_id, l.id, l.publish, l.lat_e7, l.lon_e7, l.last_updated, l.body FROM locations l"
	q += w.Where() + " ORDER BY l.pk DESC LIMIT " + w.Arg(f.Limit)
	rows, err := s.db.Read().Query(ctx, q, w.Args()...)
	if err != nil {
		return nil, err
	}
	var out []Summary
	byKey := map[int64]int{}
	for rows.Next() {
		var sm Summary
		var lat, lon, lu int64
		var body []byte
		if err := rows.Scan(&sm.Key, &sm.CountryCode, &sm.PartyID, &sm.ID, &sm.Publish, &lat, &lon, &lu, &body); err != nil {
			rows.Close()
			return nil, err
		}
		var head struct {
			Name string `json:"name"`
			City string `json:"city"`
		}
		_ = json.Unmarshal(body, &head) // a body we stored is valid JSON
		sm.Name, sm.City = head.Name, head.City
		sm.Latitude, sm.Longitude = FromE7(lat), FromE7(lon)
		sm.LastUpdated = ocpi.FromMicros(lu)
		sm.EVSEs = map[string]int{}
		byKey[sm.Key] = len(out)
		out = append(out, sm)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	keys := make([]string, 0, len(out))
	var kargs store.Args
	for _, sm := range out {
		keys = append(keys, kargs.Add(sm.Key))
	}
	rows, err = s.db.Read().Query(ctx, "SELECT location_pk, status, COUNT(*) FROM evses WHERE location_pk IN ("+strings.Join(keys, ", ")+") GROUP BY location_pk, status", kargs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pk, n int64
		var st string
		if err := rows.Scan(&pk, &st, &n); err != nil {
			return nil, err
		}
		out[byKey[pk]].EVSEs[st] = int(n)
	}
	return out, rows.Err()
}

// EVSEStatusCounts counts every EVSE of the directory by status.
func (s *Service) EVSEStatusCounts(ctx context.Context) (map[string]int64, error) {
	return s.countByStatus(ctx, "SELECT status, COUNT(*) FROM evses GROUP BY status")
}

// countByStatus runs a query whose rows are (status, count).
func (s *Service) countByStatus(ctx context.Context, query string, args ...any) (map[string]int64, error) {
	rows, err := s.db.Read().Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// FromE7 writes a coordinate in units of 1e-7 degree as a decimal string
// with 7 decimals, exactly.
func FromE7(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%07d", sign, v/10_000_000, v%10_000_000)
}

// EVSE is one EVSE of the directory as the operator's console lists it,
// with its location.
type EVSE struct {
	CountryCode, PartyID string
	LocationID           string
	LocationName         string
	City                 string
	UID                  string
	EVSEID               string
	Status               string
	// MaxPowerW is the most powerful connector, in watts (0: unknown).
	MaxPowerW   int64
	LastUpdated ocpi.DateTime
}

// EVSEFilter selects EVSEs for EVSEs and EVSECounts.
type EVSEFilter struct {
	// CountryCode and PartyID restrict the list to one CPO.
	CountryCode, PartyID string
	// Status keeps EVSEs in that status (EVSECounts ignores it: it counts
	// every status).
	Status        string
	Limit, Offset int
}

func (f EVSEFilter) where(withStatus bool) (string, []any) {
	var w store.Conds
	if f.CountryCode != "" {
		w.And("l.country_code = "+w.Arg(ocpi.Key(f.CountryCode)), "l.party_id = "+w.Arg(ocpi.Key(f.PartyID)))
	}
	if withStatus && f.Status != "" {
		w.And("e.status = " + w.Arg(f.Status))
	}
	return w.Where(), w.Args()
}

// EVSEs returns a page of the directory's EVSEs, most recently updated
// first, and how many the filter keeps.
func (s *Service) EVSEs(ctx context.Context, f EVSEFilter) ([]EVSE, int64, error) {
	f.Limit = store.PageLimit(f.Limit, 50)
	where, args := f.where(true)
	const from = " FROM evses e JOIN locations l ON l.pk = e.location_pk"
	var total int64
	if err := s.db.Read().QueryRow(ctx, "SELECT COUNT(*)"+from+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.Read().Query(ctx, `SELECT l.country_code, l.party_id, l.id, l.body, e.uid, e.evse_id, e.status, e.max_power_w, e.last_updated`+
		from+where+" ORDER BY e.last_updated DESC, e.location_pk DESC, e.uid LIMIT "+strconv.Itoa(f.Limit)+" OFFSET "+strconv.Itoa(max(f.Offset, 0)), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []EVSE
	for rows.Next() {
		var e EVSE
		var body []byte
		var lu int64
		if err := rows.Scan(&e.CountryCode, &e.PartyID, &e.LocationID, &body, &e.UID, &e.EVSEID, &e.Status, &e.MaxPowerW, &lu); err != nil {
			return nil, 0, err
		}
		var head struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			City string `json:"city"`
			EVSE []struct {
				UID string `json:"uid"`
			} `json:"evses"`
		}
		_ = json.Unmarshal(body, &head) // a body we stored is valid JSON
		e.LocationID, e.LocationName, e.City = head.ID, head.Name, head.City
		for _, x := range head.EVSE {
			if strings.EqualFold(x.UID, e.UID) {
				e.UID = x.UID // as the CPO spells it
			}
		}
		e.LastUpdated = ocpi.FromMicros(lu)
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// EVSECounts counts the EVSEs of the filter's CPO (or of the whole
// directory) by status.
func (s *Service) EVSECounts(ctx context.Context, f EVSEFilter) (map[string]int64, error) {
	where, args := f.where(false)
	return s.countByStatus(ctx, "SELECT e.status, COUNT(*) FROM evses e JOIN locations l ON l.pk = e.location_pk"+where+" GROUP BY e.status", args...)
}
