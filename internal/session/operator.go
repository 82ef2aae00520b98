package session

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/store"
)

// BrowseFilter selects sessions for the operator's console.
type BrowseFilter struct {
	// Status keeps sessions in that status.
	Status string
	// Party keeps the sessions of a party on either side: the CPO that
	// runs them or the eMSP that owns the token.
	Party         ocpiclient.Party
	Limit, Offset int
}

// Browse returns a page of every session the hub holds, the live ones
// first (ACTIVE and PENDING, then the rest), each group most recently
// updated first, and how many the filter keeps.
func (s *Service) Browse(ctx context.Context, f BrowseFilter) ([]*Stored, int64, error) {
	f.Limit = store.PageLimit(f.Limit, 50)
	var w store.Conds
	if f.Status != "" {
		w.And("status = " + w.Arg(f.Status))
	}
	if !f.Party.IsZero() {
		w.And(EitherSide(f.Party, w.Arg))
	}
	return store.CountedPage(ctx, s.db.Read(), storedColumns, "sessions", w.Where(),
		"CASE WHEN status IN ('ACTIVE', 'PENDING') THEN 0 ELSE 1 END, last_updated DESC, pk DESC",
		f.Limit, f.Offset, w.Args(), scanStored)
}

// Day is one day of Daily: the sessions that started that day and the
// energy they have delivered so far, in Wh.
type Day struct {
	Date     time.Time // midnight in the requested zone
	Sessions int64
	EnergyWh int64
}

// dailyCap bounds the sessions Daily reads; beyond it the figures are a
// lower bound (the console says "last 30 days" of a hub, not a report).
const dailyCap = 100_000

// Daily counts the sessions that started on each of the n days ending with
// the day of now (in loc), with their energy (kwh, rounded to the Wh).
// A session counts on the day of its start_date_time; INVALID sessions
// are left out (nothing was charged). It reads the sessions changed since
// the first day (a session that started then was changed no earlier),
// newest first, at most dailyCap of them.
func (s *Service) Daily(ctx context.Context, now time.Time, n int, loc *time.Location) ([]Day, error) {
	if loc == nil {
		loc = time.UTC
	}
	t := now.In(loc)
	first := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -(n - 1))
	days := make([]Day, n)
	index := map[string]int{}
	for i := range days {
		days[i].Date = first.AddDate(0, 0, i)
		index[days[i].Date.Format(time.DateOnly)] = i
	}
	rows, err := s.db.Read().Query(ctx, "SELECT body FROM sessions WHERE last_updated >= $1 AND status <> 'INVALID' ORDER BY last_updated DESC LIMIT "+
		strconv.Itoa(dailyCap), first.UnixMicro())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	thousand := decimal.NewFromInt(1000)
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		var head struct {
			Start ocpi.DateTime `json:"start_date_time"`
			KWh   ocpi.Number   `json:"kwh"`
		}
		if err := json.Unmarshal(body, &head); err != nil {
			return nil, err
		}
		i, ok := index[head.Start.In(loc).Format(time.DateOnly)]
		if !ok {
			continue
		}
		days[i].Sessions++
		days[i].EnergyWh += head.KWh.Decimal().Mul(thousand).Round(0).IntPart()
	}
	return days, rows.Err()
}

// EitherSide is the condition keeping the rows of party p on either side:
// the CPO (country_code, party_id) or the token's owner
// (token_country_code, token_party_id), which the sessions and cdrs tables
// name alike. arg numbers an argument.
func EitherSide(p ocpiclient.Party, arg func(any) string) string {
	cc, pid := arg(ocpi.Key(p.CountryCode)), arg(ocpi.Key(p.PartyID))
	return "((country_code = " + cc + " AND party_id = " + pid + ") OR (token_country_code = " + cc + " AND token_party_id = " + pid + "))"
}
