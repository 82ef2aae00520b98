package httpapi

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/admin"
	"github.com/ocpihub/ocpihub/internal/httpapi/charging"
	"github.com/ocpihub/ocpihub/internal/httpapi/legacyapi"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/httpapi/upiapi"
)

// serves reports whether the hub is configured with n.
func (s *Server) serves(n route.Service) bool {
	c := &s.cfg
	switch n {
	case route.NeedLocations:
		return c.Locations != nil
	case route.NeedTariffs:
		return c.Tariffs != nil
	case route.NeedTokens:
		return c.Tokens != nil
	case route.NeedSessions:
		return c.Sessions != nil
	case route.NeedCDRs:
		return c.CDRs != nil
	case route.NeedCommands:
		return c.Commands != nil
	case route.NeedPayments:
		return c.Payments != nil
	case route.NeedPaymentCommands:
		return c.Payments != nil && c.Commands != nil
	case route.NeedUPI:
		return c.UPI != nil
	case route.NeedTraffic:
		return c.Traffic != nil && c.DB != nil
	case route.NeedHub:
		return c.Hub != nil
	}
	return true
}

// modules lists every module of the route table. A new module adds its
// rows function here.
func (s *Server) modules() []route.Module {
	c := &s.cfg
	mods := []route.Module{
		s.operationRows(),
		s.coreRows(),
		s.peeringRows(),
		s.locationRows(),
	}
	mods = append(mods, charging.Modules(s.kit, charging.Services{Tokens: c.Tokens, Sessions: c.Sessions, CDRs: c.CDRs,
		Commands: c.Commands, Payments: c.Payments})...)
	mods = append(mods, upiapi.Module(s.kit, c.UPI),
		legacyapi.Module(s.kit, legacyapi.Services{Parties: c.Parties, Locations: c.Locations, Tariffs: c.Tariffs,
			Tokens: c.Tokens, Sessions: c.Sessions, CDRs: c.CDRs, Commands: c.Commands, LegacyRecorder: c.LegacyRecorder,
			Listings: s.listings, RoleVersions: s.handleRoleVersions, CredentialsDelete: s.handleCredentialsDelete,
			DirectoryLocation: s.directoryLocation}))
	mods = append(mods, admin.Modules(s.kit, admin.Services{Parties: c.Parties, SandboxParties: c.SandboxParties,
		Sandbox: c.Sandbox, ResetSandboxFunc: c.ResetSandboxFunc, Webhooks: c.Webhooks, RateLimiter: c.RateLimiter,
		DB: c.DB, Version: c.Version, Hub: c.Hub})...)
	return append(mods, s.fallbackRows())
}

// served returns the rows of the route table this hub serves, in order.
func (s *Server) served() []route.Row {
	var out []route.Row
	for _, m := range s.modules() {
		for _, r := range m.Rows {
			if s.serves(r.Needs) {
				out = append(out, r)
			}
		}
	}
	return out
}

// Rows returns every row of the route table, whether or not a hub is
// configured to serve it (the schema contract tests read them).
func Rows() []Route {
	s := &Server{}
	var out []route.Row
	for _, m := range s.modules() {
		out = append(out, m.Rows...)
	}
	return routesOf(out)
}

// listings returns the version details entries of version, in the order
// of the rows, once each.
func (s *Server) listings(version string) []route.Listing {
	var out []route.Listing
	seen := map[route.Listing]bool{}
	for _, r := range s.routeList {
		l := r.Listed
		if l.Identifier == "" || l.Version() != version || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out
}

// fallbackRows answer paths no route matches with an envelope, not a text
// 404.
func (s *Server) fallbackRows() route.Module {
	rows := make([]route.Row, 0, len(fallbacks))
	for _, p := range fallbacks {
		rows = append(rows, route.Row{Pattern: p, Access: route.Public, Handler: s.handleNoRoute})
	}
	return route.Module{Rows: rows}
}
