package routing

import (
	"context"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Owned names a table of party-owned objects whose owner a request may
// leave out: the object's id column, and the owner's country_code and
// party_id columns.
type Owned string

// The tables whose objects are looked up by id alone (a directory GET or
// a command naming a location without OCPI-to).
const (
	Locations Owned = "locations"
	Tariffs   Owned = "tariffs"
)

// Owners returns the owners (up to two, in party order) of the objects of
// table with id: none is an unknown object, one is its owner, two mean the
// id is ambiguous and the request must name the owner with OCPI-to. Each
// module words its own errors; the decision is the same for all.
func Owners(ctx context.Context, q store.Querier, table Owned, id string) ([]Party, error) {
	rows, err := q.Query(ctx, "SELECT country_code, party_id FROM "+string(table)+
		" WHERE id = $1 ORDER BY country_code, party_id LIMIT 2", ocpi.Key(id))
	if err != nil {
		return nil, fmt.Errorf("owners of %s %s: %w", table, id, err)
	}
	defer rows.Close()
	var out []Party
	for rows.Next() {
		var p Party
		if err := rows.Scan(&p.CountryCode, &p.PartyID); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
