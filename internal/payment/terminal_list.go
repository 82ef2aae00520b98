package payment

import (
	"context"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TerminalFilter selects the terminals of the whole hub for the operator.
type TerminalFilter struct {
	// PTP keeps the terminals of one PTP party (zero: every PTP).
	PTP Party
	// CPO keeps the terminals serving one CPO party (zero: any CPO, the
	// unclaimed ones included).
	CPO Party
	// After is the keyset cursor: the RecordID of the last terminal of the
	// previous page (0: the first page).
	After int64
	// Limit is the page size (default 50, at most 500).
	Limit int
}

// TerminalTarget is one thing a terminal serves: a whole location (EVSEUID
// "") or one EVSE of a location.
type TerminalTarget struct {
	LocationID string `json:"location_id"`
	EVSEUID    string `json:"evse_uid,omitempty"`
}

// TerminalSummary is a terminal as the operator lists it.
type TerminalSummary struct {
	// RecordID is the hub's key of the terminal, the paging cursor.
	RecordID   int64  `json:"record_id"`
	TerminalID string `json:"terminal_id"`
	PTP        Party  `json:"ptp"`
	// CPO is the customer the terminal serves; nil while unclaimed.
	CPO *Party `json:"cpo,omitempty"`
	// Locations are the locations it serves whole; EVSEs the single EVSEs
	// it is assigned to, each with the location it was found in.
	Locations   []string         `json:"locations"`
	EVSEs       []TerminalTarget `json:"evses"`
	City        string           `json:"city,omitempty"`
	LastUpdated time.Time        `json:"last_updated"`
}

// Terminals lists every PTP's terminals for the operator, the most
// recently created first, a page at a time by keyset on the record id (no
// count: the list is meant to scale with the hub, and the console pages it
// forward). more reports that a next page exists. Unlike ListTerminals it
// is not an OCPI view: no party restriction applies.
func (s *Service) Terminals(ctx context.Context, f TerminalFilter) (list []*TerminalSummary, more bool, err error) {
	f.Limit = store.PageLimit(f.Limit, 50)
	var conds []string
	var args []any
	if !f.PTP.IsZero() {
		conds = append(conds, partyCond("ptp", []Party{f.PTP}, &args))
	}
	if !f.CPO.IsZero() {
		conds = append(conds, partyCond("cpo", []Party{f.CPO}, &args))
	}
	if f.After > 0 {
		args = append(args, f.After)
		conds = append(conds, "pk < $"+itoa(len(args)))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	args = append(args, f.Limit+1)
	q := s.db.Read()
	rows, err := q.Query(ctx, "SELECT "+terminalColumns+", last_updated FROM terminals"+where+" ORDER BY pk DESC LIMIT $"+itoa(len(args)), args...)
	if err != nil {
		return nil, false, err
	}
	byPK := map[int64]*TerminalSummary{}
	list = []*TerminalSummary{}
	for rows.Next() {
		var t storedTerminal
		var lu int64
		if err := rows.Scan(&t.pk, &t.ptpPlatform, &t.ptp.CountryCode, &t.ptp.PartyID, &t.cpo.CountryCode, &t.cpo.PartyID, &t.body, &lu); err != nil {
			rows.Close()
			return nil, false, err
		}
		doc, err := ocpi.ParseObject(t.body)
		if err != nil {
			rows.Close()
			return nil, false, err
		}
		sum := &TerminalSummary{RecordID: t.pk, PTP: t.ptp, Locations: []string{}, EVSEs: []TerminalTarget{},
			LastUpdated: time.UnixMicro(lu).UTC()}
		sum.TerminalID, _ = doc["terminal_id"].(string)
		sum.City, _ = doc["city"].(string)
		if !t.cpo.IsZero() {
			cpo := t.cpo
			sum.CPO = &cpo
		}
		list = append(list, sum)
		byPK[t.pk] = sum
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(list) > f.Limit {
		delete(byPK, list[f.Limit].RecordID)
		list, more = list[:f.Limit], true
	}
	if len(list) == 0 {
		return list, more, nil
	}
	// The page's targets in one query, over its range of keys.
	rows, err = q.Query(ctx, `SELECT terminal_pk, location_id, evse_uid FROM terminal_targets
		WHERE terminal_pk >= $1 AND terminal_pk <= $2 ORDER BY terminal_pk, location_id, evse_uid`,
		list[len(list)-1].RecordID, list[0].RecordID)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var pk int64
		var tg TerminalTarget
		if err := rows.Scan(&pk, &tg.LocationID, &tg.EVSEUID); err != nil {
			return nil, false, err
		}
		sum := byPK[pk]
		if sum == nil {
			continue // a terminal of another filter inside the range
		}
		if tg.EVSEUID == "" {
			sum.Locations = append(sum.Locations, tg.LocationID)
		} else {
			sum.EVSEs = append(sum.EVSEs, tg)
		}
	}
	return list, more, rows.Err()
}
