package routing

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/party"
)

// The routing headers of OCPI 2.2 (transport.md §9.3).
const (
	HeaderToCountryCode   = "OCPI-to-country-code"
	HeaderToPartyID       = "OCPI-to-party-id"
	HeaderFromCountryCode = "OCPI-from-country-code"
	HeaderFromPartyID     = "OCPI-from-party-id"
)

// To returns the party a request (or answer) names in OCPI-to-*; ok is
// false unless both headers are present.
func To(h http.Header) (Party, bool) {
	p := Party{CountryCode: h.Get(HeaderToCountryCode), PartyID: h.Get(HeaderToPartyID)}
	return p, p.CountryCode != "" && p.PartyID != ""
}

// From returns the party a request names in OCPI-from-*; ok is false unless
// both headers are present.
func From(h http.Header) (Party, bool) {
	p := Party{CountryCode: h.Get(HeaderFromCountryCode), PartyID: h.Get(HeaderFromPartyID)}
	return p, p.CountryCode != "" && p.PartyID != ""
}

// Requester is the party a request comes from: OCPI-from when the caller
// owns it, else the caller's first party. Before the caller is known (c
// nil: an answer to a request that failed authentication) it is the
// request's OCPI-from, as sent.
func Requester(c *party.Caller, h http.Header) Party {
	p, both := From(h)
	if c == nil && both {
		return p
	}
	if c != nil && p.CountryCode != "" && c.Owns("", p.CountryCode, p.PartyID) {
		return p
	}
	if c != nil && len(c.Roles) > 0 {
		return Party{CountryCode: c.Roles[0].CountryCode, PartyID: c.Roles[0].PartyID}
	}
	return Party{}
}

// SetHeaders writes the routing headers of a message: OCPI-to and
// OCPI-from, each only when not zero.
func SetHeaders(h http.Header, to, from Party) {
	if !to.IsZero() {
		h.Set(HeaderToCountryCode, to.CountryCode)
		h.Set(HeaderToPartyID, to.PartyID)
	}
	if !from.IsZero() {
		h.Set(HeaderFromCountryCode, from.CountryCode)
		h.Set(HeaderFromPartyID, from.PartyID)
	}
}
