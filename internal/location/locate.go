package location

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Locate finds the CPO publishing a location id, as Lookup does, and reports
// whether its location holds the EVSE and connector named ("" = not
// checked): one read of the location's row, for a command that names a
// location and an EVSE but no OCPI-to.
func (s *Service) Locate(ctx context.Context, locationID, evseUID, connectorID string) (cc, pid string, holds bool, err error) {
	rows, err := s.db.ReadIn(ctx).Query(ctx, "SELECT country_code, party_id, body FROM locations WHERE id = $1 ORDER BY country_code, party_id LIMIT 2",
		ocpi.Key(locationID))
	if err != nil {
		return "", "", false, fmt.Errorf("locate location %s: %w", locationID, err)
	}
	defer rows.Close()
	var owners []string
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&cc, &pid, &body); err != nil {
			return "", "", false, err
		}
		owners = append(owners, cc+"/"+pid)
		holds = contains(body, evseUID, connectorID)
	}
	if err := rows.Err(); err != nil {
		return "", "", false, err
	}
	switch len(owners) {
	case 0:
		return "", "", false, errUnknown(Ref{LocationID: locationID})
	case 1:
		return cc, pid, holds, nil
	}
	return "", "", false, ambiguous(locationID, owners)
}

// Check is nil when the location r names exists with its EVSE and
// connector (those r names), EUNKNOWNLOCATION otherwise: one read, the
// body searched where it lies.
func (s *Service) Check(ctx context.Context, r Ref) error {
	body, err := s.storedBody(ctx, r)
	if err != nil {
		return err
	}
	if !contains(body, r.EVSEUID, r.ConnectorID) {
		return errUnknown(r)
	}
	return nil
}

// HasEVSEs returns the index of the first of uids a location has no EVSE
// of (CiString), -1 when it has them all, or EUNKNOWNLOCATION when the
// location r names does not exist.
func (s *Service) HasEVSEs(ctx context.Context, r Ref, uids []string) (int, error) {
	rs := s.db.Reads()
	answer := s.HasEVSEsWith(rs, r, uids)
	if err := rs.Run(ctx); err != nil {
		return -1, err
	}
	return answer()
}

// HasEVSEsWith queues HasEVSEs' read of the location on rs; the function
// it returns gives HasEVSEs' answer once rs has run.
func (s *Service) HasEVSEsWith(rs *store.Reads, r Ref, uids []string) func() (int, error) {
	missing, err := -1, error(nil)
	rs.QueryRow(func(row store.Row) error {
		var body []byte
		switch e := row.Scan(&body); {
		case errors.Is(e, store.ErrNoRows):
			err = errUnknown(r)
		case e != nil:
			return e
		default:
			evses := gjson.GetBytes(body, "evses")
			for i, uid := range uids {
				if !findIn(evses, "uid", uid).Exists() {
					missing = i
					break
				}
			}
		}
		return nil
	}, "SELECT body FROM locations WHERE country_code = $1 AND party_id = $2 AND id = $3",
		ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.LocationID))
	return func() (int, error) { return missing, err }
}

// contains reports whether a location body holds the EVSE evseUID and, in
// it, the connector connectorID ("" = not checked), compared as CiStrings
// as pick compares them.
func contains(body []byte, evseUID, connectorID string) bool {
	if evseUID == "" {
		return true
	}
	evse := findIn(gjson.GetBytes(body, "evses"), "uid", evseUID)
	if !evse.Exists() {
		return false
	}
	return connectorID == "" || findIn(evse.Get("connectors"), "id", connectorID).Exists()
}

// findIn returns the object of a JSON list whose string field key equals id
// (CiString), or a Result that does not exist.
func findIn(list gjson.Result, key, id string) gjson.Result {
	var found gjson.Result
	if !list.IsArray() {
		return found
	}
	list.ForEach(func(_, v gjson.Result) bool {
		if !v.IsObject() {
			return true
		}
		if k := v.Get(key); k.Type == gjson.String && ocpi.EqualCI(k.Str, id) {
			found = v
			return false
		}
		return true
	})
	return found
}

// ambiguous is the error for a location id several CPOs use.
func ambiguous(locationID string, owners []string) error {
	return &ocpi.Error{Code: ocpi.EINVALID, Field: "location_id",
		Issue:   "is used by several CPOs; name the owner with OCPI-to-country-code and OCPI-to-party-id",
		Message: fmt.Sprintf("location %s exists at several CPOs (%s, …); send OCPI-to-country-code and OCPI-to-party-id", locationID, strings.Join(owners, ", "))}
}
