package legacyapi

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/tariff"
	"github.com/ocpihub/ocpihub/internal/token"
)

// Services are what the legacy routes call: the hub's services (the fields
// of httpapi.Config of the same names) and the few answers httpapi gives
// for every version.
type Services struct {
	Parties        *party.Service
	Locations      *location.Service
	Tariffs        *tariff.Service
	Tokens         *token.Service
	Sessions       *session.Service
	CDRs           *cdr.Service
	Commands       *command.Service
	LegacyRecorder *legacy.Recorder
	// Listings returns the version details entries of a version, from the
	// rows the hub serves.
	Listings func(version string) []route.Listing
	// RoleVersions serves the versions list of a partner role;
	// CredentialsDelete unregisters the caller (the same in every version).
	RoleVersions      func(party.Role) route.Func
	CredentialsDelete route.Func
	// DirectoryLocation returns a location of the hub's directory (nil when
	// it has none).
	DirectoryLocation func(ctx context.Context, cc, pid, id string) (*ocpi.Location, error)
}

// handlers answer the legacy routes through the kit.
type handlers struct {
	*kit.Kit
	cfg Services
}

// Module returns the legacy module: the 2.1.1 and 2.0 routes and the
// per-role versions lists.
func Module(k *kit.Kit, svc Services) route.Module {
	s := &handlers{Kit: k, cfg: svc}
	return s.legacyRows()
}
