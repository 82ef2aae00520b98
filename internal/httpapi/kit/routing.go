package kit

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
)

// OwnsParty checks a request's URL owner against the caller's parties with
// the shared isolation rule (party.Caller.CheckOwner): a partner never reads
// or writes another party's objects, and learns nothing about them (404).
func OwnsParty(r *http.Request, role party.Role, cc, pid string) error {
	_, err := party.CallerFrom(r.Context()).CheckOwner(role, cc, pid)
	return err
}

// RoutingTo returns the party a request addresses with OCPI-to-* headers,
// when they are present (routing.To).
func RoutingTo(r *http.Request) (ocpiclient.Party, bool) { return routing.To(r.Header) }

// RoutingFrom returns the requesting party: OCPI-from-* when the caller owns
// it, else the caller's first party (routing.Requester).
func RoutingFrom(r *http.Request) ocpiclient.Party {
	return routing.Requester(party.CallerFrom(r.Context()), r.Header)
}

// AddressedElsewhere reports whether the request names, in OCPI-to-*, a
// party other than the hub's own and the caller's own
// (routing.Router.Addressed): the request is then forwarded, or a list
// restricted to that party.
func (k *Kit) AddressedElsewhere(r *http.Request) (ocpiclient.Party, bool) {
	to, ok := RoutingTo(r)
	if !ok || k.Hub == nil {
		return ocpiclient.Party{}, false
	}
	return k.Hub.Routing().Addressed(party.CallerFrom(r.Context()), to)
}

// SetHubRouting writes the routing headers of an answer the hub gives
// itself: to the requester, from the hub (transport.md §9.3, GET ALL via
// hub and broadcast pushes).
func (k *Kit) SetHubRouting(w http.ResponseWriter, r *http.Request) {
	if k.Hub == nil {
		return
	}
	routing.SetHeaders(w.Header(), RoutingFrom(r), k.Hub.Self())
}

// Forward passes a request on to the party it is addressed to and writes the
// answer back as it came (transport.md §11, open and addressed routing).
// module and iface select the receiver's endpoint; suffix follows it.
func (k *Kit) Forward(w http.ResponseWriter, r *http.Request, to ocpiclient.Party, module, iface, suffix string, body []byte) error {
	out, err := k.Hub.Forward(r.Context(), hub.ForwardRequest{
		From: RoutingFrom(r), To: to, Module: module, Interface: iface,
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

// LocalTo reports whether OCPI-to names the hub itself or the caller itself
// (routing.Router.IsLocal): the request is then answered by the hub, as if
// OCPI-to were absent.
func (k *Kit) LocalTo(r *http.Request, cc, pid string) bool {
	c, to := party.CallerFrom(r.Context()), ocpiclient.Party{CountryCode: cc, PartyID: pid}
	if k.Hub != nil {
		return k.Hub.Routing().IsLocal(c, to)
	}
	return routing.CallerOwns(c, to)
}
