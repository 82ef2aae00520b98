package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
)

// handleClientInfoPut is the HubClientInfo receiver: a peer hub (a partner
// with the HUB role) tells us about one party behind it. Anyone else gets
// 404; a copy older than the one stored is acknowledged and ignored.
func (s *Server) handleClientInfoPut(w http.ResponseWriter, r *http.Request) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Parties.PutClientInfo(r.Context(), party.CallerFrom(r.Context()), r.PathValue("country_code"), r.PathValue("party_id"), raw); err != nil {
		return err
	}
	return s.kit.OK(w, nil)
}

// handleClientInfoGet is the HubClientInfo receiver's GET: a peer hub reads
// one party as we hold it.
func (s *Server) handleClientInfoGet(w http.ResponseWriter, r *http.Request) error {
	ci, err := s.cfg.Parties.GetClientInfo(r.Context(), party.CallerFrom(r.Context()), r.PathValue("country_code"), r.PathValue("party_id"))
	if err != nil {
		return err
	}
	ci.Role = string(party.RoleFor(kit.VersionOf(r), party.Role(ci.Role)))
	return s.kit.OK(w, ci)
}

// handleAdminPeers lists every peer hub with the parties behind it and their
// reachability.
func (s *Server) handleAdminPeers(w http.ResponseWriter, r *http.Request) error {
	peers, err := s.cfg.Parties.Peers(r.Context())
	if err != nil {
		return err
	}
	return s.kit.OK(w, peers)
}

// peeringRows are the routes of hub peering: the HubClientInfo receiver a
// peer hub pushes its parties to, and the operator's view of the peers.
func (s *Server) peeringRows() route.Module {
	return route.Module{
		Tag: openapi.Tag{Name: "hubclientinfo", Description: "Hub client info: the parties reachable through a hub. The hub is a sender to every platform, and a receiver for peer hubs (partners with the HUB role) that list the parties behind them."},
		Rows: []route.Row{
			{Pattern: "PUT /ocpi/2.2.1/clientinfo/{country_code}/{party_id}", Access: route.Platform, Handler: s.handleClientInfoPut, Listed: route.Listing{Identifier: "hubclientinfo", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/clientinfo"}, Schema: route.Data(""), Doc: route.Doc{
				Summary:     "A peer hub reports one party behind it and its connection status",
				Description: "Only platforms registered with the HUB role may call it (HTTP 404 otherwise); a body naming another party than the URL gets 2001. The party becomes reachable through the peer hub unless it is connected directly or another peer hub listed it first (a conflict shown in GET /admin/peers). An older copy is ignored.",
				Tag:         "hubclientinfo", Request: clientinfo.ClientInfo{}, Spec: "mod_hub_client_info.asciidoc", Errors: []int{404},
			}},
			{Pattern: "GET /ocpi/2.2.1/clientinfo/{country_code}/{party_id}", Access: route.Platform, Handler: s.handleClientInfoGet, Listed: route.Listing{Identifier: "hubclientinfo", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/clientinfo"}, Schema: route.Data("ClientInfo"), Doc: route.Doc{
				Summary:     "A peer hub reads one party as this hub holds it",
				Description: "Only platforms registered with the HUB role may call it (HTTP 404 otherwise). A party the calling peer hub lists is answered as that hub reported it; any other party as this hub's own HubClientInfo lists it; an unknown party is HTTP 404.",
				Tag:         "hubclientinfo", Data: clientinfo.ClientInfo{}, Spec: "mod_hub_client_info.asciidoc", Errors: []int{404},
			}},
			{Pattern: "GET /admin/peers", Access: route.Admin, Handler: s.handleAdminPeers, Doc: route.Doc{
				Summary: "Peer hubs with the parties behind them: status, reachability, conflicts", Tag: "admin",
				Data: []party.Peer{},
			}},
		},
	}
}
