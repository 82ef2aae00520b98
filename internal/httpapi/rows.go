package httpapi

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/admin"
	"github.com/ocpihub/ocpihub/internal/httpapi/charging"
	"github.com/ocpihub/ocpihub/internal/httpapi/legacyapi"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/httpapi/upiapi"
)

// The row types are declared in package route, so that module packages
// declare rows without importing httpapi; these names keep the handlers
// that still live here short.
type (
	Row        = route.Row
	Listing    = route.Listing
	DataSchema = route.DataSchema
	access     = route.Access
	service    = route.Service
	module     = route.Module
	apiFunc    = route.Func
)

const (
	public      = route.Public
	registering = route.Registering
	platform    = route.Platform
	subscriber  = route.Subscriber

	needLocations       = route.NeedLocations
	needTariffs         = route.NeedTariffs
	needTokens          = route.NeedTokens
	needSessions        = route.NeedSessions
	needCDRs            = route.NeedCDRs
	needCommands        = route.NeedCommands
	needPayments        = route.NeedPayments
	needPaymentCommands = route.NeedPaymentCommands
	needUPI             = route.NeedUPI
	needTraffic         = route.NeedTraffic
)

var (
	data               = route.Data
	dataOr             = route.DataOr
	anyOf              = route.AnyOf
	withIdempotencyKey = route.WithIdempotencyKey
	withoutReplay      = route.WithoutReplay
)

type routeOption = route.Option

// serves reports whether the hub is configured with n.
func (s *Server) serves(n service) bool {
	c := &s.cfg
	switch n {
	case needLocations:
		return c.Locations != nil
	case needTariffs:
		return c.Tariffs != nil
	case needTokens:
		return c.Tokens != nil
	case needSessions:
		return c.Sessions != nil
	case needCDRs:
		return c.CDRs != nil
	case needCommands:
		return c.Commands != nil
	case needPayments:
		return c.Payments != nil
	case needPaymentCommands:
		return c.Payments != nil && c.Commands != nil
	case needUPI:
		return c.UPI != nil
	case needTraffic:
		return c.Traffic != nil && c.DB != nil
	}
	return true
}

// modules lists every module of the route table. A new module adds its
// rows function here.
func (s *Server) modules() []module {
	c := &s.cfg
	mods := []module{
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
		DB: c.DB, Version: c.Version})...)
	return append(mods, s.fallbackRows())
}

// served returns the rows of the route table this hub serves, in order.
func (s *Server) served() []Row {
	var out []Row
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
	var out []Row
	for _, m := range s.modules() {
		out = append(out, m.Rows...)
	}
	return routesOf(out)
}

// listings returns the version details entries of version, in the order
// of the rows, once each.
func (s *Server) listings(version string) []Listing {
	var out []Listing
	seen := map[Listing]bool{}
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
func (s *Server) fallbackRows() module {
	rows := make([]Row, 0, len(fallbacks))
	for _, p := range fallbacks {
		rows = append(rows, Row{Pattern: p, Access: public, Handler: s.handleNoRoute})
	}
	return module{Rows: rows}
}
