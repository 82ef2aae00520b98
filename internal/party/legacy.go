package party

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// Legacy partners (OCPI 2.1.1 and 2.0).
//
// A legacy connection carries one party and no role: neither the
// credentials object nor the endpoints of version details name one
// (legacy.md §1). The registry therefore learns the role from where the
// credentials were exchanged — the role segment of the hub's URL the partner
// registered through (/ocpi/2.1.1/cpo/credentials), the party a token A was
// issued for, or the operator's --role when the hub connects — and stores
// the partner's endpoints with the interface role that party plays through
// each module (legacyInterfaces), so the rest of the hub finds them as it
// finds a 2.2.1 partner's. Legacy tokens go raw in the Authorization header
// (transport.md §9.1).

// LegacyRoles are the roles a legacy connection can have: 2.1.1 and 2.0
// knew only CPOs and eMSPs.
var LegacyRoles = []Role{RoleCPO, RoleEMSP}

// legacyInterfaces is the interface a legacy partner in a role offers
// through each module: a CPO owns locations, tariffs, sessions and CDRs
// (senders) and receives tokens and commands; an eMSP the other way round.
var legacyInterfaces = map[Role]map[string]string{
	RoleCPO: {"credentials": ocpi.InterfaceSender, "locations": ocpi.InterfaceSender, "tariffs": ocpi.InterfaceSender,
		"sessions": ocpi.InterfaceSender, "cdrs": ocpi.InterfaceSender, "tokens": ocpi.InterfaceReceiver, "commands": ocpi.InterfaceReceiver},
	RoleEMSP: {"credentials": ocpi.InterfaceSender, "locations": ocpi.InterfaceReceiver, "tariffs": ocpi.InterfaceReceiver,
		"sessions": ocpi.InterfaceReceiver, "cdrs": ocpi.InterfaceReceiver, "tokens": ocpi.InterfaceSender, "commands": ocpi.InterfaceSender},
}

// LegacyEndpoints gives a legacy partner's endpoints the interface role its
// party plays through each module. Modules the table does not know keep no
// role.
func LegacyEndpoints(eps []ocpi.Endpoint, role Role) []ocpi.Endpoint {
	out := make([]ocpi.Endpoint, len(eps))
	for i, e := range eps {
		out[i] = ocpi.Endpoint{Identifier: e.Identifier, URL: e.URL, Role: legacyInterfaces[role][e.Identifier]}
	}
	return out
}

// checkLegacyRole fails unless a legacy registration names one CPO or EMSP
// party.
func checkLegacyRole(version string, roles []Role) error {
	if !v211.IsLegacy(version) {
		return nil
	}
	if len(roles) != 1 || (roles[0] != RoleCPO && roles[0] != RoleEMSP) {
		return &ocpi.Error{Code: ocpi.EINVALID, Field: "role", Issue: "must be CPO or EMSP",
			Message: "an OCPI " + version + " connection is one CPO or one eMSP: register through /ocpi/" + version + "/cpo or /ocpi/" + version + "/emsp"}
	}
	return nil
}

// VersionsURLFor returns our versions URL for a partner of role: legacy
// partners get the list whose legacy versions lead to the endpoints meant
// for their role (/ocpi/cpo/versions, /ocpi/emsp/versions).
func (s *Service) VersionsURLFor(role Role) string {
	if role != RoleCPO && role != RoleEMSP {
		return s.VersionsURL()
	}
	u := *s.cfg.PublicURL
	u.Path = strings.TrimRight(u.Path, "/") + "/ocpi/" + strings.ToLower(string(role)) + "/versions"
	return u.String()
}

// LegacyCredentials returns our credentials with token as a legacy partner
// of role sees them: one party (our HUB party: to a legacy partner the hub is
// its single counterpart) and the versions URL of its role.
func (s *Service) LegacyCredentials(role Role, token string) v211.Credentials {
	c, _ := v211.FromCredentials(s.OurCredentials(token), string(RoleHUB))
	c.URL = s.VersionsURLFor(role)
	return c
}

// credentialsBody is our credentials with token in the wire form of
// version, for a partner of role (legacy versions) on platform self.
func (s *Service) credentialsBody(ctx context.Context, version string, role Role, token string, self int64) (any, error) {
	if v211.IsLegacy(version) {
		return s.LegacyCredentials(role, token), nil
	}
	return s.CredentialsFor(ctx, version, token, self)
}

// readCredentials decodes a partner's credentials (the data of its answer)
// in the wire form of version; a legacy partner's single party is in role.
func readCredentials(version string, role Role, data json.RawMessage) (ocpi.Credentials, error) {
	if !v211.IsLegacy(version) {
		var c ocpi.Credentials
		if err := json.Unmarshal(data, &c); err != nil {
			return c, fmt.Errorf("the partner's credentials do not decode: %w", err)
		}
		return c, checkCredentials(c)
	}
	var lc v211.Credentials
	if err := json.Unmarshal(data, &lc); err != nil {
		return ocpi.Credentials{}, fmt.Errorf("the partner's %s credentials do not decode: %w", version, err)
	}
	if err := lc.Check(); err != nil {
		return ocpi.Credentials{}, err
	}
	return lc.To221(string(role)), nil
}

// legacyRole returns the role of a platform's single party (legacy
// connections have one).
func legacyRole(p *Platform) Role {
	for _, r := range p.Roles {
		if r.Role == RoleCPO || r.Role == RoleEMSP {
			return r.Role
		}
	}
	return ""
}
