// Package routing is the one place that decides where OCPI traffic goes:
// what the OCPI-to/OCPI-from headers mean, whether a party is the hub's own,
// the caller's, a partner's or one behind a peer hub, which platforms a
// broadcast reaches (and which objects it must not send back — the loop
// rule), who owns an object a request addresses, and the address a party is
// reached at. It reads the party registry (internal/party) and the store;
// it knows nothing of HTTP requests beyond their headers, so the HTTP
// handlers, the hub's outbox and forwarding, commands, tokens and payments
// all ask it the same questions and get the same answers.
//
// The decisions, where the spec (transport.md §9.3 and §11,
// hubclientinfo.md) is silent:
//
//   - OCPI-to naming one of the hub's own parties or one of the caller's own
//     parties is local: the hub answers, as without OCPI-to (IsLocal).
//   - OCPI-to naming a party no platform hosts and no peer hub represents
//     is 4001, unknown receiver (CheckTo). A party known but unreachable is
//     4003 when it is addressed (Address), not 4001.
//   - A party hosted directly is reached directly; one behind a peer hub is
//     reached through that hub with the party in OCPI-to (Address; the
//     registry's peering rules pick the representing hub).
//   - A broadcast goes to every CONNECTED platform other than the sender that
//     hosts a party in the audience's roles and offers the module's RECEIVER
//     interface, addressed to its first such party (Receivers); a peer hub is
//     in every audience, for the parties behind it.
//   - The loop rule: an object is never sent to the platform it came from
//     (Receivers excludes the sender), nor to a platform that hosts or
//     represents its owner (Hosts, for loads of stored objects).
//   - OCPI-to naming the hub itself where an owner is looked up (a command's
//     CPO, a token's eMSP) means "find the owner" (Owner).
package routing

import (
	"context"
	"errors"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Party addresses a party in OCPI-to/from headers.
type Party = ocpiclient.Party

// Router answers routing questions from the party registry. It holds no
// state of its own: every answer reads the registry (and so sees a
// registration change at once, in this process and on every replica).
type Router struct {
	parties *party.Service
}

// New returns a Router over the registry.
func New(parties *party.Service) *Router { return &Router{parties: parties} }

// Self is the hub's own HUB party: OCPI-from of its broadcasts and of the
// answers it gives itself. It is zero when the hub has no HUB party.
func (r *Router) Self() Party {
	if p, ok := r.parties.OwnParty(party.RoleHUB); ok {
		return Party{CountryCode: p.CountryCode, PartyID: p.PartyID}
	}
	return Party{}
}

// IsOwn reports whether cc/pid names the hub itself or one of its own
// parties (the hub's eMSP answers through the same directory).
func (r *Router) IsOwn(cc, pid string) bool {
	for _, o := range r.parties.Own() {
		if strings.EqualFold(o.CountryCode, cc) && strings.EqualFold(o.PartyID, pid) {
			return true
		}
	}
	return false
}

// OwnParty returns the hub's own party in role, when it has one.
func (r *Router) OwnParty(role party.Role) (party.PartyRef, bool) { return r.parties.OwnParty(role) }

// IsLocal reports whether OCPI-to names the hub itself or the caller itself
// (one of a registered platform's parties): the request is then answered by
// the hub, as if OCPI-to were absent. Clients that always send OCPI-to =
// their own party get what they would get without it.
func (r *Router) IsLocal(c *party.Caller, to Party) bool {
	return r.IsOwn(to.CountryCode, to.PartyID) || CallerOwns(c, to)
}

// CallerOwns reports whether to is one of the parties of c, a registered
// platform (an admin or token-A caller owns none).
func CallerOwns(c *party.Caller, to Party) bool {
	return c != nil && c.Kind == party.CallerPlatform && c.Owns("", to.CountryCode, to.PartyID)
}

// Addressed returns the party a request names in OCPI-to when it is
// neither the hub nor the caller (IsLocal): the request is then forwarded
// to it, or a list restricted to it. ok is false when OCPI-to is absent or
// local.
func (r *Router) Addressed(c *party.Caller, to Party) (Party, bool) {
	if to.IsZero() || r.IsLocal(c, to) {
		return Party{}, false
	}
	return to, true
}

// Known reports whether cc/pid is a party of a platform registered with the
// hub, or of a peer hub's, in any state: a known party that cannot be
// reached now is the forwarding's 4003, not 4001.
func (r *Router) Known(ctx context.Context, cc, pid string) (bool, error) {
	_, err := r.parties.FindByParty(ctx, "", cc, pid)
	if ocpi.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// CheckTo is 4001 (unknown receiver) when OCPI-to names a party that is not
// local and that the hub does not know; nil otherwise (absent OCPI-to
// included).
func (r *Router) CheckTo(ctx context.Context, c *party.Caller, to Party) error {
	if to.IsZero() || r.IsLocal(c, to) {
		return nil
	}
	known, err := r.Known(ctx, to.CountryCode, to.PartyID)
	if err != nil {
		return err
	}
	if !known {
		return ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "OCPI-to names %s/%s, a party this hub does not know; omit OCPI-to (or name the hub) to address the hub",
			strings.ToUpper(to.CountryCode), strings.ToUpper(to.PartyID))
	}
	return nil
}

// Owner is the party a request addresses as the owner of what it names (a
// command's CPO, a token's eMSP): OCPI-to, unless it names one of the hub's
// own parties other than the hub's own party in role — that is "the hub,
// find the owner", and Owner is zero (the caller looks the owner up). The
// hub's own eMSP stays the addressee of a token authorization sent to it.
func (r *Router) Owner(to Party, role party.Role) Party {
	if to.IsZero() || !r.IsOwn(to.CountryCode, to.PartyID) || r.IsOwnParty(role, to) {
		return to
	}
	return Party{}
}

// IsOwnParty reports whether to is the hub's own party in role (the hub's
// eMSP: a session or CDR of its tokens stays here, it goes to no platform).
func (r *Router) IsOwnParty(role party.Role, to Party) bool {
	own, ok := r.parties.OwnParty(role)
	return ok && own.Matches(to.CountryCode, to.PartyID)
}

// Hosts returns, for a platform, a test of whether cc/pid is one of its
// parties — its own roles and, for a peer hub, the parties it represents.
// It is the loop rule of a load of stored objects: what a platform owns
// (or speaks for) is never sent to it.
func (r *Router) Hosts(ctx context.Context, q store.Querier, platformID int64) (func(cc, pid string) bool, error) {
	return r.parties.HostsAny(ctx, q, platformID)
}

// HostsRole reports whether a platform hosts cc/pid in role (a direct party,
// not one behind a peer hub): one indexed read, for hot paths.
func (r *Router) HostsRole(ctx context.Context, role party.Role, cc, pid string) (bool, error) {
	return r.parties.Hosts(ctx, role, cc, pid)
}

// errNotFound reports whether err is the registry's "no such party".
func errNotFound(err error) bool { return ocpi.IsNotFound(err) || errors.Is(err, store.ErrNoRows) }
