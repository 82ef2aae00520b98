package app

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Versions are the OCPI versions the hub speaks, newest first, and those it
// picks from when it starts a handshake itself: 2.3.0 carries only the
// Payments module, for PTPs; 2.1.1 and 2.0 are deprecated, for legacy
// partners (internal/legacy).
var (
	Versions        = []string{ocpi.Version230, "2.2.1", "2.2", v211.V211, v211.V20}
	ConnectVersions = []string{"2.2.1", "2.2", v211.V211, v211.V20}
)

// versionRoles reserves 2.3.0 to PTPs (httpapi serves only credentials,
// payments and commands in 2.3.0).
func versionRoles() map[string][]party.Role {
	return map[string][]party.Role{ocpi.Version230: {party.RolePTP}}
}

// wirePayments builds Direct Payment on the directory, the commands,
// sessions and CDRs: the payment service sees every session and CDR in the
// transaction that stores it.
func (a *App) wirePayments() {
	a.Payments = payment.New(a.DB, a.Hub, a.Parties, directory{a.Locations}, records{a.Commands, a.Sessions, a.CDRs}, a.Events,
		a.Clock, a.Logger, a.Registry)
	a.Sessions.Observe(func(ctx context.Context, tx *store.Tx, u session.Update) error {
		st := u.Session
		return a.Payments.SessionChanged(ctx, tx, payment.Change{
			CPO: ocpiclient.Party{CountryCode: st.CountryCode, PartyID: st.PartyID}, ID: st.ID, Owner: st.Owner,
			AuthorizationReference: st.AuthorizationReference, LocationID: st.Session.LocationID, EVSEUID: st.Session.EVSEUID,
			ConnectorID: st.Session.ConnectorID, Body: st.Body,
		})
	})
	a.CDRs.Observe(func(ctx context.Context, tx *store.Tx, c *cdr.Stored) error {
		d := &c.CDR
		ch := payment.CDRChange{Change: payment.Change{CPO: ocpiclient.Party{CountryCode: c.CountryCode, PartyID: c.PartyID}, ID: c.ID,
			Owner: c.Owner, AuthorizationReference: d.AuthorizationReference, Body: c.Body},
			Currency: d.Currency, Credit: d.Credit != nil && *d.Credit}
		if d.CdrLocation != nil {
			ch.LocationID, ch.EVSEUID, ch.ConnectorID = d.CdrLocation.ID, d.CdrLocation.EVSEUID, d.CdrLocation.ConnectorID
		}
		if d.TotalCost != nil {
			ch.TotalCost = *d.TotalCost
		}
		return a.Payments.CDRCreated(ctx, tx, ch)
	})
}

// EVSELocations implements payment.Directory.
func (d directory) EVSELocations(ctx context.Context, cc, pid, evseUID string) ([]string, error) {
	return d.l.EVSELocations(ctx, cc, pid, evseUID)
}

// records gives the payment service the commands, sessions and CDRs of a
// payment's chain.
type records struct {
	commands *command.Service
	sessions *session.Service
	cdrs     *cdr.Service
}

// Command implements payment.Records.
func (r records) Command(ctx context.Context, id string) (any, error) { return r.commands.Get(ctx, id) }

// Session implements payment.Records.
func (r records) Session(ctx context.Context, cpo ocpiclient.Party, id string) (json.RawMessage, error) {
	return r.sessions.Get(ctx, session.Ref{CountryCode: cpo.CountryCode, PartyID: cpo.PartyID, ID: id})
}

// CDR implements payment.Records.
func (r records) CDR(ctx context.Context, cpo ocpiclient.Party, id string) (json.RawMessage, error) {
	c, err := r.cdrs.Find(ctx, cdr.Ref{CountryCode: cpo.CountryCode, PartyID: cpo.PartyID, ID: id})
	if err != nil {
		return nil, err
	}
	return c.Body, nil
}

// ReferenceInUse implements payment.Records: a command that reached (or may
// have reached) a CPO, or a session, carries the reference. Commands the
// hub refused or could not deliver do not use it up.
func (r records) ReferenceInUse(ctx context.Context, reference string) (bool, error) {
	cmds, _, err := r.commands.List(ctx, command.ListFilter{AuthorizationReference: reference, Limit: 20})
	if err != nil {
		return false, err
	}
	for _, c := range cmds {
		if c.State != command.StateRejected && c.State != command.StateFailed {
			return true, nil
		}
	}
	sessions, err := r.sessions.FindByAuthorizationReference(ctx, reference)
	return len(sessions) > 0, err
}
