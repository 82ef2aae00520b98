package location

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// EVSELocations returns the ids (as stored, upper case) of a CPO's
// locations that have an EVSE with the uid: the EVSE uid is unique within a
// CPO (locations.md §5), so it is usually one. Direct Payment resolves the
// EVSEs a terminal serves with it.
func (s *Service) EVSELocations(ctx context.Context, cc, pid, evseUID string) ([]string, error) {
	rows, err := s.db.ReadIn(ctx).Query(ctx, `SELECT l.id FROM evses e JOIN locations l ON l.pk = e.location_pk
		WHERE l.country_code = $1 AND l.party_id = $2 AND e.uid = $3 ORDER BY l.id LIMIT 20`,
		ocpi.Key(cc), ocpi.Key(pid), ocpi.Key(evseUID))
	if err != nil {
		return nil, err
	}
	return store.Collect(rows, scanID)
}

// scanID reads a row of one id.
func scanID(r store.Row) (id string, err error) {
	err = r.Scan(&id)
	return id, err
}
