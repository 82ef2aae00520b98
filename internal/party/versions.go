package party

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party/ident"
)

// What differs by the OCPI version a partner speaks with us, decided here:
//
//   - 2.3.0 credentials carry hub_party_id (our HUB party's country code and
//     party id) and, instead of the HUB role 2.3.0 removed, every party
//     reachable through the hub (credentials.md §1, 2.3.0 delta): our own
//     non-HUB parties and those of the other connected platforms.
//   - PTP is not a Role of 2.2.1 (nor of the 2.3.0 enum, but the 2.3.0
//     Payments module names it and 2.3.0 forbids rejecting unknown values;
//     gaps.md §5). Partners on 2.3.0 see PTP parties as PTP; partners on any
//     older version see them as OTHER, the value those versions have for
//     parties outside their roles. Version, not a per-partner flag, decides:
//     a 2.2.1 partner validating Role strictly would reject PTP, and one that
//     does not gains nothing from it.
//   - A version may be reserved to some roles (Config.VersionRoles): ocpihub
//     serves only the Payments module in 2.3.0, so only PTPs register on it.

// RoleFor returns role as a partner speaking version sees it: PTP is OTHER
// before 2.3.0 (ident.RoleFor).
func RoleFor(version string, role Role) Role { return ident.RoleFor(version, role) }

// checkVersionRoles fails when a partner registers on a version reserved to
// other roles.
func (s *Service) checkVersionRoles(version string, roles []ocpi.CredentialsRole) error {
	allowed, ok := s.cfg.VersionRoles[version]
	if !ok {
		return nil
	}
	for i, r := range roles {
		if !slices.Contains(allowed, Role(r.Role)) {
			names := make([]string, len(allowed))
			for j, a := range allowed {
				names[j] = string(a)
			}
			return &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Field: fmt.Sprintf("roles[%d]", i),
				Issue: "role " + r.Role + " cannot register on OCPI " + version,
				Message: fmt.Sprintf("ocpihub serves OCPI %s for the %s role only (the Payments module); register your %s party on %s",
					version, strings.Join(names, ", "), r.Role, s.fallbackVersion(version))}
		}
	}
	return nil
}

// fallbackVersion names the versions a partner refused on version should
// use instead.
func (s *Service) fallbackVersion(version string) string {
	var out []string
	for _, v := range s.cfg.Versions {
		if _, reserved := s.cfg.VersionRoles[v]; v != version && !reserved {
			out = append(out, v)
		}
	}
	return orNone(out)
}

// CredentialsFor returns the credentials object we present to a partner
// speaking version, with token (the token it calls us with). self is the
// partner's platform (0: none yet); its own parties are not listed as
// reachable through us.
func (s *Service) CredentialsFor(ctx context.Context, version, token string, self int64) (ocpi.Credentials, error) {
	if !ocpi.IsVersion230(version) {
		return s.OurCredentials(token), nil
	}
	c := ocpi.Credentials{Token: token, URL: s.VersionsURL()}
	for _, r := range s.cfg.Own {
		if Role(r.Role) == RoleHUB {
			c.HubPartyID = strings.ToUpper(r.CountryCode + r.PartyID)
			continue
		}
		c.Roles = append(c.Roles, r)
	}
	rows, err := s.db.ReadIn(ctx).Query(ctx, `SELECT r.role, r.country_code, r.party_id, r.business_details FROM platform_roles r
		JOIN platforms p ON p.id = r.platform_id WHERE p.status = $1 AND p.id <> $2 AND r.role <> $3
		ORDER BY r.country_code, r.party_id, r.role`, string(StatusConnected), self, string(RoleHUB))
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var r ocpi.CredentialsRole
		var bd []byte
		if err := rows.Scan(&r.Role, &r.CountryCode, &r.PartyID, &bd); err != nil {
			return c, err
		}
		if err := json.Unmarshal(bd, &r.BusinessDetails); err != nil {
			return c, err
		}
		c.Roles = append(c.Roles, r)
	}
	return c, rows.Err()
}

// connectVersions are the versions the hub picks from when it starts a
// handshake.
func (s *Service) connectVersions() []string {
	if len(s.cfg.ConnectVersions) > 0 {
		return s.cfg.ConnectVersions
	}
	return s.cfg.Versions
}
