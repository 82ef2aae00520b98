package kit

import (
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/token"
)

// OwnerOf is the isolation check of every client-owned URL
// (`…/{country_code}/{party_id}/…`, transport.md §10): the party in the path
// must be one of the caller's registered parties in role ("" = any role). It
// returns the party as registered (upper case), or ENOTFOUND — HTTP 404 that
// discloses nothing — when it is anyone else's. Call it before reading the
// body or touching the store, so that a refused request stores nothing.
//
// Routes must name the wildcards {country_code} and {party_id}.
func OwnerOf(r *http.Request, role party.Role) (party.PartyRef, error) {
	return party.CallerFrom(r.Context()).CheckOwner(role, r.PathValue("country_code"), r.PathValue("party_id"))
}

// CallerParties returns the caller's parties in role.
func CallerParties(r *http.Request, role party.Role) []party.PartyRef {
	c := party.CallerFrom(r.Context())
	if c == nil {
		return nil
	}
	var out []party.PartyRef
	for _, p := range c.Roles {
		if p.Role == role {
			out = append(out, p)
		}
	}
	return out
}

func AsParty(p party.PartyRef) ocpiclient.Party {
	return ocpiclient.Party{CountryCode: p.CountryCode, PartyID: p.PartyID}
}

// CallerParty returns the caller's party in role that a request acts for:
// OCPI-from-* when the caller owns it in that role, else its first party in
// the role. A caller without the role learns nothing (HTTP 404).
func CallerParty(r *http.Request, role party.Role) (party.PartyRef, error) {
	c := party.CallerFrom(r.Context())
	if c == nil || !c.HasRole(role) {
		return party.PartyRef{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "this endpoint serves parties in the " + string(role) + " role; your credentials name none"}
	}
	if cc, pid := r.Header.Get("OCPI-from-country-code"), r.Header.Get("OCPI-from-party-id"); cc != "" && c.Owns(role, cc, pid) {
		for _, p := range c.Roles {
			if p.Role == role && p.Matches(cc, pid) {
				return p, nil
			}
		}
	}
	p, _ := c.Party(role)
	return p, nil
}

// CallerAndBody reads what a write in role needs: the caller's party in
// role (CallerParty, checked first) and then the body.
func CallerAndBody(r *http.Request, role party.Role) (party.PartyRef, []byte, error) {
	return RefAndBody(r, func(r *http.Request) (party.PartyRef, error) { return CallerParty(r, role) })
}

// Owners returns the caller's eMSP parties as token Owners.
func Owners(r *http.Request) []ocpiclient.Party {
	var out []ocpiclient.Party
	for _, p := range CallerParties(r, party.RoleEMSP) {
		out = append(out, AsParty(p))
	}
	return out
}

// LocationRef reads {cc}/{pid}/{location_id}[/{evse_uid}[/{connector_id}]]
// and checks the lengths of the path parameters (locations.md §3).
func LocationRef(r *http.Request) (location.Ref, error) {
	ref := location.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), LocationID: r.PathValue("location_id"),
		EVSEUID: r.PathValue("evse_uid"), ConnectorID: r.PathValue("connector_id")}
	c := ocpi.NewCheck("")
	if ref.CountryCode != "" || ref.PartyID != "" {
		c.CountryCode("country_code", ref.CountryCode, true)
		c.PartyID("party_id", ref.PartyID, true)
	}
	c.CiString("location_id", ref.LocationID, 36, true)
	c.CiString("evse_uid", ref.EVSEUID, 36, false)
	c.CiString("connector_id", ref.ConnectorID, 36, false)
	return ref, c.Err()
}

// AuthorizeRequest reads what a real-time authorization says in either
// dialect, checked in this order: the calling CPO, the token type
// (typeOf reads and checks it), the token uid of the path parameter
// uidParam (at most 36 characters), and the body (LocationReferences or
// nothing), returned for the caller to decode.
func AuthorizeRequest(r *http.Request, typeOf func(*http.Request) (string, error), uidParam string) (token.AuthorizeRequest, []byte, error) {
	cpo, err := CallerParty(r, party.RoleCPO)
	if err != nil {
		return token.AuthorizeRequest{}, nil, err
	}
	typ, err := typeOf(r)
	if err != nil {
		return token.AuthorizeRequest{}, nil, err
	}
	uid := r.PathValue(uidParam)
	if len(uid) > 36 {
		return token.AuthorizeRequest{}, nil, ocpi.Invalid("token_uid", "is longer than 36 characters")
	}
	raw, err := ReadBody(r)
	if err != nil {
		return token.AuthorizeRequest{}, nil, err
	}
	return token.AuthorizeRequest{CPO: AsParty(cpo), CPOParties: CallerParties(r, party.RoleCPO), UID: uid, Type: typ,
		CorrelationID: CorrelationID(r.Context())}, raw, nil
}

// CredentialsCaller returns the caller of a credentials GET: a platform;
// the admin token has no credentials (EMETHOD).
func CredentialsCaller(r *http.Request) (*party.Caller, error) {
	c := party.CallerFrom(r.Context())
	if c.Kind == party.CallerAdmin {
		return nil, &ocpi.Error{Code: ocpi.EMETHOD, Message: "the admin token has no credentials; see /admin/parties"}
	}
	return c, nil
}

// TokenChange is the change a token write by the calling platform makes.
func TokenChange(r *http.Request) token.Change {
	c := party.CallerFrom(r.Context())
	return token.Change{PlatformID: c.PlatformID, CorrelationID: CorrelationID(r.Context())}
}

// SenderOf returns the caller's platform: the sender of a change, which
// never gets it routed back (loop guard).
func SenderOf(r *http.Request) int64 {
	if c := party.CallerFrom(r.Context()); c != nil {
		return c.PlatformID
	}
	return 0
}

// VersionOf returns the OCPI version in a request path (/ocpi/{version}/…).
func VersionOf(r *http.Request) string {
	rest, _ := strings.CutPrefix(r.URL.Path, "/ocpi/")
	v, _, _ := strings.Cut(rest, "/")
	return v
}
