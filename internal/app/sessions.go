package app

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/token"
)

// wireSessions builds the tokens, sessions, CDRs and commands services on
// the hub and the location directory.
func (a *App) wireSessions(pub *url.URL, backoff func(int) time.Duration) {
	dir := directory{a.Locations}
	a.Tokens = token.New(a.DB, a.Hub, a.Parties, dir, a.Events, a.Clock, a.Logger, token.Config{})
	a.Sessions = session.New(a.DB, a.Hub, a.Parties, dir, a.Events, a.Clock, a.Logger)
	a.CDRs = cdr.New(a.DB, a.Hub, a.Parties, a.Sessions, a.Events, a.Clock, a.Logger, a.Registry)
	if t := a.Config.CDRPriceTolerance; t != nil {
		a.CDRs.SetTolerance(*t)
	}
	a.Commands = command.New(command.Deps{DB: a.DB, Jobs: a.Jobs, Hub: a.Hub, Parties: a.Parties, Sessions: a.Sessions, Dir: dir,
		Client: a.Client, Events: a.Events, Clock: a.Clock, Logger: a.Logger}, command.Config{
		PublicURL:      pub.String(),
		TimeoutMargin:  a.Config.CommandTimeoutMargin,
		DefaultTimeout: a.Config.CommandTimeout,
		RelayAttempts:  a.Config.PushMaxAttempts,
		RelayBackoff:   backoff,
	})
}

// directory answers the location lookups of tokens, sessions and commands
// from the location service.
type directory struct{ l *location.Service }

// CheckLocation implements token.Directory and command.Directory.
func (d directory) CheckLocation(ctx context.Context, cc, pid, locationID, evseUID, connectorID string) error {
	return d.l.Check(ctx, location.Ref{CountryCode: cc, PartyID: pid, LocationID: locationID, EVSEUID: evseUID, ConnectorID: connectorID})
}

// CheckEVSEsWith implements token.EVSEDirectory: one read of the location,
// its EVSE uids compared where they lie (CiString: without case).
func (d directory) CheckEVSEsWith(rs *store.Reads, cc, pid, locationID string, evseUIDs []string) func() (int, error) {
	return d.l.HasEVSEsWith(rs, location.Ref{CountryCode: cc, PartyID: pid, LocationID: locationID}, evseUIDs)
}

// Locate implements command.Directory.
func (d directory) Locate(ctx context.Context, locationID, evseUID, connectorID string) (string, string, bool, error) {
	return d.l.Locate(ctx, locationID, evseUID, connectorID)
}

// LocationOwner implements payment.Directory.
func (d directory) LocationOwner(ctx context.Context, locationID string) (string, string, error) {
	return d.l.Lookup(ctx, locationID)
}

// EVSEID implements session.Directory.
func (d directory) EVSEID(ctx context.Context, cc, pid, locationID, evseUID string) string {
	raw, err := d.l.Get(ctx, location.Ref{CountryCode: cc, PartyID: pid, LocationID: locationID, EVSEUID: evseUID})
	if err != nil {
		return ""
	}
	var e struct {
		EVSEID string `json:"evse_id"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.EVSEID
}
