package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// ownsParty checks a request's URL owner against the caller's parties with
// the shared isolation rule (party.Caller.CheckOwner): a partner never reads
// or writes another party's objects, and learns nothing about them (404).
func ownsParty(r *http.Request, role party.Role, cc, pid string) error {
	_, err := party.CallerFrom(r.Context()).CheckOwner(role, cc, pid)
	return err
}

// routingTo returns the party a request addresses with OCPI-to-* headers,
// when they are present.
func routingTo(r *http.Request) (ocpiclient.Party, bool) {
	p := ocpiclient.Party{CountryCode: r.Header.Get("OCPI-to-country-code"), PartyID: r.Header.Get("OCPI-to-party-id")}
	return p, p.CountryCode != "" && p.PartyID != ""
}

// routingFrom returns the requesting party: OCPI-from-* when the caller owns
// it, else the caller's first party. Before the caller is known (an answer
// to a request that failed authentication) it is the request's OCPI-from-*.
func routingFrom(r *http.Request) ocpiclient.Party {
	c := party.CallerFrom(r.Context())
	p := ocpiclient.Party{CountryCode: r.Header.Get("OCPI-from-country-code"), PartyID: r.Header.Get("OCPI-from-party-id")}
	if c == nil && p.CountryCode != "" && p.PartyID != "" {
		return p
	}
	if c != nil && p.CountryCode != "" && c.Owns("", p.CountryCode, p.PartyID) {
		return p
	}
	if c != nil && len(c.Roles) > 0 {
		return ocpiclient.Party{CountryCode: c.Roles[0].CountryCode, PartyID: c.Roles[0].PartyID}
	}
	return ocpiclient.Party{}
}

// addressedElsewhere reports whether the request names, in OCPI-to-*, a
// party other than the hub's own and the caller's own (ocpito.go): the
// request is then forwarded, or a list restricted to that party.
func (s *Server) addressedElsewhere(r *http.Request) (ocpiclient.Party, bool) {
	to, ok := routingTo(r)
	if !ok || s.cfg.Hub == nil || s.localTo(r, to.CountryCode, to.PartyID) {
		return ocpiclient.Party{}, false
	}
	return to, true
}

// setHubRouting writes the routing headers of an answer the hub gives
// itself: to the requester, from the hub (transport.md §9.3, GET ALL via
// hub and broadcast pushes).
func (s *Server) setHubRouting(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Hub == nil {
		return
	}
	to, from := routingFrom(r), s.cfg.Hub.Self()
	h := w.Header()
	if !to.IsZero() {
		h.Set("OCPI-to-country-code", to.CountryCode)
		h.Set("OCPI-to-party-id", to.PartyID)
	}
	if !from.IsZero() {
		h.Set("OCPI-from-country-code", from.CountryCode)
		h.Set("OCPI-from-party-id", from.PartyID)
	}
}

// forward passes a request on to the party it is addressed to and writes the
// answer back as it came (transport.md §11, open and addressed routing).
// module and iface select the receiver's endpoint; suffix follows it.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, to ocpiclient.Party, module, iface, suffix string, body []byte) error {
	out, err := s.cfg.Hub.Forward(r.Context(), hub.ForwardRequest{
		From: routingFrom(r), To: to, Module: module, Interface: iface,
		Method: r.Method, Suffix: suffix, Query: r.URL.RawQuery, Body: body,
		CorrelationID: CorrelationID(r.Context()),
	})
	if err != nil {
		return err
	}
	for k, vs := range out.Header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(out.HTTPStatus)
	_, _ = w.Write(out.Body)
	return nil
}
