package app

import (
	"context"
	"encoding/json"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"time"

	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/token"
)

// wireLegacy makes the hub speak OCPI 2.1.1 and 2.0 to the partners that
// use them: one dialect per version, converting what the hub sends them at
// delivery time, with the lookups legacy objects need (a session's whole
// location, the token of an authorization). The services it reads are built
// after it; the lookups reach them when they run.
func (a *App) wireLegacy() {
	look := legacy.Lookups{
		LocationFunc: func(ctx context.Context, cc, pid, id string) (*ocpi.Location, bool, error) {
			raw, err := a.Locations.Get(ctx, location.Ref{CountryCode: cc, PartyID: pid, LocationID: id})
			if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			var l ocpi.Location
			return &l, true, json.Unmarshal(raw, &l)
		},
		SessionFunc: func(ctx context.Context, cc, pid, id string) (*ocpi.Session, bool, error) {
			raw, err := a.Sessions.Get(ctx, session.Ref{CountryCode: cc, PartyID: pid, ID: id})
			if ocpi.IsNotFound(err) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			var s ocpi.Session
			return &s, true, json.Unmarshal(raw, &s)
		},
		TokenFunc: func(ctx context.Context, cc, pid, uid, typ string) (*ocpi.Token, bool, error) {
			t, err := a.Tokens.Find(ctx, token.Ref{CountryCode: cc, PartyID: pid, UID: uid, Type: typ})
			if ocpi.IsNotFound(err) {
				return nil, false, nil
			}
			return t, err == nil, err
		},
		CommandWait: int(a.commandWait().Seconds()),
	}
	for _, v := range []string{v211.V211, v211.V20} {
		a.Hub.Speak(v, legacy.NewDialect(v, a.Legacy, a.Clock.Now, look))
	}
	// OCPI 2.2 partners get the 2.2.1 messages with 2.2's signed data limit.
	a.Hub.Speak("2.2", cdr.Dialect22{})
}

// commandWait is how long the hub waits for a command result when the CPO
// names no timeout (command.Config.DefaultTimeout).
func (a *App) commandWait() time.Duration {
	if a.Config.CommandTimeout > 0 {
		return a.Config.CommandTimeout
	}
	return 60 * time.Second
}
