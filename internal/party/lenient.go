package party

import (
	"slices"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Registration that real platforms pass. What the hub tolerates, decided
// here (the spec requires all of it, but a partner is usable without it):
//
//   - An empty business_details.name (2.2.1 requires one; CPO management
//     systems leave it empty until an operator fills it in). The party is
//     registered and the platform carries a warning (Platform.Warnings, in
//     party show, the admin API and the console) until its credentials
//     name it.
//   - A CPO without a locations SENDER endpoint: it is push-only. It is
//     registered, flagged (Platform.PushOnly and a warning), and the hub
//     never pulls from it (the periodic sync skips platforms without the
//     sender; a missed push is recovered only when the CPO pushes again).
//   - An empty 2xx answer to our credentials POST, when the partner then
//     registers back by itself with the token we sent it (connect.go).
//
// What stays refused, with the missing piece named: no credentials
// endpoint, no roles, an invalid token or versions URL, an eMSP without a
// tokens SENDER (the hub's CPOs need its tokens), and every field that is
// present but wrong.

// checkCredentials is Credentials.Check with empty business names
// tolerated.
func checkCredentials(in ocpi.Credentials) error {
	c := in
	c.Roles = slices.Clone(in.Roles)
	for i := range c.Roles {
		if strings.TrimSpace(c.Roles[i].BusinessDetails.Name) == "" {
			c.Roles[i].BusinessDetails.Name = "-"
		}
	}
	return c.Check(acceptedRoles())
}

// annotate fills the flags and warnings derived from what a platform
// registered.
func (p *Platform) annotate() {
	p.Warnings = nil
	p.PushOnly = false
	for _, r := range p.Roles {
		if strings.TrimSpace(r.BusinessDetails.Name) == "" {
			p.Warnings = append(p.Warnings, string(r.Role)+" "+r.CountryCode+"/"+r.PartyID+" has an empty business_details.name")
		}
	}
	if p.Status == StatusUnregistered {
		return
	}
	if slices.ContainsFunc(p.Roles, func(r HostedParty) bool { return r.Role == RoleCPO }) {
		if _, ok := p.Endpoint("locations", ocpi.InterfaceSender); !ok {
			p.PushOnly = true
			p.Warnings = append(p.Warnings, "push-only CPO: no locations SENDER endpoint, so the hub cannot pull its locations to recover missed pushes")
		}
	}
}
