package httpapi

import (
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
)

// The OCPI-to rules of a request to a functional module (transport.md §9.3),
// decided here where the spec is silent:
//
//   - OCPI-to naming the hub (or one of its own parties) or the caller itself
//     (one of the caller's parties) is a request to the hub: it is answered
//     locally, as without OCPI-to. Clients that always send OCPI-to = their
//     own party (the community command-line client does) get what they would
//     get without it, never a list filtered down to nothing.
//   - OCPI-to naming a party the hub does not know is 4001 (unknown
//     receiver), on every functional module, lists included: an empty list
//     would tell a full-sync client to delete its copy.
//   - Every answer of a functional module carries OCPI-from/OCPI-to, errors
//     included: the hub's own answers (and its forwarding failures, 4000 to
//     4003) come from the hub's party and go to the requesting party; a
//     receiver's forwarded answer keeps the receiver's.
//
// Configuration modules (versions, credentials, hubclientinfo), legacy
// versions (2.1.1 has no routing headers) and the hub's own APIs are left
// alone.

// functionalModule reports whether a (canonical) path is a functional module
// of a 2.2-or-later version: /ocpi/{version}/{cpo|emsp|ptp|payments}/….
func functionalModule(path string) bool {
	rest, ok := strings.CutPrefix(path, "/ocpi/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || !isVersion(parts[0]) || v211.IsLegacy(parts[0]) {
		return false
	}
	switch parts[1] {
	case "cpo", "emsp", "ptp", "payments":
		return true
	}
	return false
}

// checkRoutingTo is 4001 when a functional-module request's OCPI-to names a
// party the hub does not know (routing.Router.CheckTo).
func (s *Server) checkRoutingTo(r *http.Request) error {
	to, ok := kit.RoutingTo(r)
	if !ok || s.cfg.Parties == nil || !functionalModule(r.URL.Path) || s.kit.LocalTo(r, to.CountryCode, to.PartyID) {
		return nil
	}
	return routing.New(s.cfg.Parties).CheckTo(r.Context(), party.CallerFrom(r.Context()), to)
}

// setErrorRouting gives an error answer of a functional module the routing
// headers of an answer from the hub, unless the handler set them already.
func (s *Server) setErrorRouting(w http.ResponseWriter, r *http.Request) {
	if !functionalModule(r.URL.Path) || w.Header().Get("OCPI-from-party-id") != "" {
		return
	}
	s.kit.SetHubRouting(w, r)
}
