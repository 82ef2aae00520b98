package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/party"
)

// ownerOf is the isolation check of every client-owned URL
// (`…/{country_code}/{party_id}/…`, transport.md §10): the party in the path
// must be one of the caller's registered parties in role ("" = any role). It
// returns the party as registered (upper case), or ENOTFOUND — HTTP 404 that
// discloses nothing — when it is anyone else's. Call it before reading the
// body or touching the store, so that a refused request stores nothing.
//
// Routes must name the wildcards {country_code} and {party_id}.
func ownerOf(r *http.Request, role party.Role) (party.PartyRef, error) {
	return party.CallerFrom(r.Context()).CheckOwner(role, r.PathValue("country_code"), r.PathValue("party_id"))
}
