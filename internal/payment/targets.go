package payment

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// customerOf decides the CPO a terminal serves (payment package doc).
func (s *Service) customerOf(ctx context.Context, t *ocpi.Terminal, cur *storedTerminal, to Party) (Party, error) {
	switch {
	case t.CountryCode != "":
		return keyParty(Party{CountryCode: t.CountryCode, PartyID: t.PartyID}), nil
	case cur != nil && !cur.cpo.IsZero():
		return cur.cpo, nil
	case !to.IsZero():
		if _, known, err := s.route.Platform(ctx, party.RoleCPO, to); err == nil && known {
			return keyParty(to), nil
		}
	}
	if len(t.LocationIDs) > 0 {
		cc, pid, err := s.dir.LocationOwner(ctx, t.LocationIDs[0])
		switch ocpi.ErrorCode(err) {
		case ocpi.EUNKNOWNLOCATION:
			return Party{}, ocpi.Invalid("location_ids[0]", fmt.Sprintf("%q is not in the hub's location directory", printable(t.LocationIDs[0])))
		case ocpi.EINVALID:
			return Party{}, ocpi.Invalid("location_ids[0]", "is used by several CPOs: name the terminal's CPO with country_code and party_id")
		}
		if err != nil {
			return Party{}, err
		}
		return keyParty(Party{CountryCode: cc, PartyID: pid}), nil
	}
	return Party{}, nil
}

// target is one thing a terminal serves: a whole location (evse "") or one
// EVSE of a location.
type target struct{ location, evse string }

// checkTargets checks that every location and EVSE a terminal is assigned to
// is the customer's, in the directory, and returns them. whose names the
// customer in messages.
func (s *Service) checkTargets(ctx context.Context, customer Party, locations, evses []string, whose string) ([]target, error) {
	if customer.IsZero() {
		if len(evses) > 0 {
			return nil, ocpi.Invalid("evse_uids[0]", "cannot be resolved: name the terminal's CPO with country_code and party_id, or list one of its location_ids")
		}
		return nil, nil
	}
	var out []target
	for i, loc := range locations {
		err := s.dir.CheckLocation(ctx, customer.CountryCode, customer.PartyID, loc, "", "")
		if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
			return nil, s.foreignLocation(ctx, "location_ids["+strconv.Itoa(i)+"]", loc, whose)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, target{location: ocpi.Key(loc)})
	}
	for i, uid := range evses {
		locs, err := s.dir.EVSELocations(ctx, customer.CountryCode, customer.PartyID, uid)
		if err != nil {
			return nil, err
		}
		if len(locs) == 0 {
			return nil, ocpi.Invalid("evse_uids["+strconv.Itoa(i)+"]", fmt.Sprintf("%q is not an EVSE of %s locations in the hub's directory", printable(uid), whose))
		}
		for _, l := range locs {
			out = append(out, target{location: ocpi.Key(l), evse: ocpi.Key(uid)})
		}
	}
	return out, nil
}

// foreignLocation explains why a location cannot be assigned: not in the
// directory at all, or another CPO's.
func (s *Service) foreignLocation(ctx context.Context, field, loc, whose string) error {
	_, _, err := s.dir.LocationOwner(ctx, loc)
	if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
		return ocpi.Invalid(field, fmt.Sprintf("%q is not in the hub's location directory", printable(loc)))
	}
	return ocpi.Invalid(field, fmt.Sprintf("%q is not one of %s locations", printable(loc), whose))
}
