package location

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Filter selects locations of the directory.
type Filter struct {
	// CountryCode and PartyID restrict the list to one CPO (OCPI-to-*).
	CountryCode, PartyID string
}

// List returns a page of the directory: the locations of every CPO, ordered
// by last_updated, then by row; keyset paging through our own Link cursors.
// The total and a page asked for by offset come from the position index
// (store.Positions): neither scans the directory, and a status change costs
// the next list two bucket counts, not a COUNT of every location.
func (s *Service) List(ctx context.Context, f Filter, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	l := store.List{Table: "locations", Columns: "pk, last_updated, body", Positions: s.positions}.WithPage(p)
	if f.CountryCode != "" {
		// Served by the index on (country_code, party_id, last_updated, pk).
		l.Where = []string{"country_code = $1", "party_id = $2"}
		l.Args = []any{ocpi.Key(f.CountryCode), ocpi.Key(f.PartyID)}
	}
	return store.Documents(ctx, s.db.Read(), l)
}

// listed tells the position index, once tx commits, that the location left
// its old place in the directory's order and took the one of pk at its new
// last_updated (an insert only takes one).
func (s *Service) listed(tx *store.Tx, cur *stored, pk int64, loc *ocpi.Location) {
	next := store.Key{LastUpdated: loc.LastUpdated.Micros(), PK: pk}
	if cur == nil {
		tx.AfterCommit(func() { s.positions.Changed(nil, []store.Key{next}) })
		return
	}
	if cur.lu == next.LastUpdated {
		return // the same place: no count changes
	}
	old := store.Key{LastUpdated: cur.lu, PK: pk}
	tx.AfterCommit(func() { s.positions.Changed([]store.Key{old}, []store.Key{next}) })
}
