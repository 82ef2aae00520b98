package routing

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// Address is where a party is reached: the platform that hosts it, or the
// peer hub that represents it, and that platform's endpoint.
type Address struct {
	// Platform is the platform the request is sent to.
	Platform *party.Platform
	// To is the party addressed (OCPI-to of the request).
	To Party
	// ViaPeer is true when Platform is a peer hub representing To.
	ViaPeer bool
	// URL is the platform's endpoint of the module's interface.
	URL string
}

// Address finds where to send a request to party to, in module's iface
// (role "" = any of the party's roles). The failures are the hub's own
// OCPI errors: 4001 when no platform hosts the party (or it offers no such
// interface), 4003 when the platform is not CONNECTED, is OFFLINE, or —
// behind a peer hub — the peer reported the party not CONNECTED.
func (r *Router) Address(ctx context.Context, role party.Role, to Party, module, iface string) (Address, error) {
	p, err := r.parties.FindByParty(ctx, role, to.CountryCode, to.PartyID)
	if errNotFound(err) {
		return Address{}, ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "no party %s/%s is connected to this hub", to.CountryCode, to.PartyID)
	}
	if err != nil {
		return Address{}, err
	}
	if p.Status != party.StatusConnected || p.Connection == party.ClientOffline {
		return Address{}, ocpi.Errorf(ocpi.ENOTCONNECTED, "party %s/%s is not connected (%s, %s)", to.CountryCode, to.PartyID, p.Status, p.Connection)
	}
	st := p.PartyStatus(to.CountryCode, to.PartyID)
	if st != "" && st != party.ClientConnected {
		return Address{}, ocpi.Errorf(ocpi.ENOTCONNECTED, "party %s/%s is %s at the hub %s it is connected to", to.CountryCode, to.PartyID, st, p.Name)
	}
	base, ok := p.Endpoint(module, iface)
	if !ok {
		return Address{}, ocpi.Errorf(ocpi.EUNKNOWNRECEIVER, "party %s/%s offers no %s %s interface", to.CountryCode, to.PartyID, module, iface)
	}
	return Address{Platform: p, To: to, ViaPeer: st != "", URL: base}, nil
}

// ReceivingParty is the party a push to platform p is addressed to
// (OCPI-to) when the push names none: its first party that is not a CPO,
// else its first party.
func ReceivingParty(p *party.Platform) Party {
	for _, r := range p.Roles {
		if r.Role != party.RoleCPO {
			return Party{CountryCode: r.CountryCode, PartyID: r.PartyID}
		}
	}
	if len(p.Roles) > 0 {
		return Party{CountryCode: p.Roles[0].CountryCode, PartyID: p.Roles[0].PartyID}
	}
	return Party{}
}

// Platform returns the platform that hosts cc/pid in role ("" = any role),
// or the peer hub that represents it, in any state; found is false when
// there is none.
func (r *Router) Platform(ctx context.Context, role party.Role, to Party) (p *party.Platform, found bool, err error) {
	p, err = r.parties.FindByParty(ctx, role, to.CountryCode, to.PartyID)
	if errNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}

// Enqueueable returns the platform a push of module's iface to party to
// (in role) is queued for: CONNECTED and offering the interface. An OFFLINE
// platform is one (the outbox holds its pushes back), unlike Address, which
// a request answered now needs. found is false when there is none.
func (r *Router) Enqueueable(ctx context.Context, role party.Role, to Party, module, iface string) (p *party.Platform, found bool, err error) {
	if to.IsZero() {
		return nil, false, nil
	}
	p, found, err = r.Platform(ctx, role, to)
	if err != nil || !found || p.Status != party.StatusConnected {
		return nil, false, err
	}
	if _, ok := p.Endpoint(module, iface); !ok {
		return nil, false, nil
	}
	return p, true, nil
}

// Connected lists the parties in role of the CONNECTED platforms (those a
// peer hub represents included): the candidates when a request names none and
// only one may exist (the PTP a terminal is activated with).
func (r *Router) Connected(ctx context.Context, role party.Role) ([]Party, error) {
	platforms, err := r.parties.List(ctx, party.Filter{Status: []party.Status{party.StatusConnected}})
	if err != nil {
		return nil, err
	}
	var out []Party
	for _, p := range platforms {
		for _, h := range p.Roles {
			if h.Role == role {
				out = append(out, Party{CountryCode: h.CountryCode, PartyID: h.PartyID})
			}
		}
	}
	return out, nil
}

// PulledParty is the OCPI-to of a pull of a platform's SENDER in role: its
// first party in role, or a peer hub's own HUB party — a peer hub is asked
// as a hub (GET ALL via hub, transport.md §11) and answers for every party
// behind it. It is zero when the platform has neither.
func PulledParty(p *party.Platform, role party.Role) Party {
	for _, r := range p.Roles {
		if r.Role == role || (r.Role == party.RoleHUB && !r.Represented) {
			return Party{CountryCode: r.CountryCode, PartyID: r.PartyID}
		}
	}
	return Party{}
}
