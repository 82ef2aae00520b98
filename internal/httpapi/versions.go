package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// endpoint is one line of version details: a module, the interface role we
// play for it, and its path.
type endpoint struct {
	Identifier string
	Role       string // SENDER or RECEIVER
	Path       string
}

// endpoints221 lists every 2.2.1 endpoint we serve. Partners discover paths
// here and never guess them (DESIGN §4). The segment after the version names
// the caller's role: a CPO pushes to .../cpo/..., an eMSP pulls from
// .../emsp/....
var endpoints221 = []endpoint{
	{"credentials", "SENDER", "/ocpi/2.2.1/credentials"},
	{"hubclientinfo", "SENDER", "/ocpi/2.2.1/hubclientinfo"},
	// locations and tariffs appear twice, once per interface role (the spec
	// allows a module to be listed with both): CPOs push to the RECEIVER,
	// eMSPs pull the SENDER. A partner picks by role, never by URL.
	{"locations", "RECEIVER", "/ocpi/2.2.1/cpo/locations"},
	{"locations", "SENDER", "/ocpi/2.2.1/emsp/locations"},
	{"tariffs", "RECEIVER", "/ocpi/2.2.1/cpo/tariffs"},
	{"tariffs", "SENDER", "/ocpi/2.2.1/emsp/tariffs"},
	// Tokens: the hub is the CPOs' tokens sender (pull, real-time
	// authorization) and the eMSPs' tokens receiver.
	{"tokens", "SENDER", "/ocpi/2.2.1/cpo/tokens"},
	{"tokens", "RECEIVER", "/ocpi/2.2.1/emsp/tokens"},
	// Sessions and CDRs: CPOs push to the RECEIVER, eMSPs pull the SENDER
	// (and PUT charging preferences on it).
	{"sessions", "RECEIVER", "/ocpi/2.2.1/cpo/sessions"},
	{"sessions", "SENDER", "/ocpi/2.2.1/emsp/sessions"},
	{"cdrs", "RECEIVER", "/ocpi/2.2.1/cpo/cdrs"},
	{"cdrs", "SENDER", "/ocpi/2.2.1/emsp/cdrs"},
	// Commands and charging profiles: the hub is the eMSPs' (and SCSPs')
	// RECEIVER, as a CPO is; CPOs reach its SENDER side: command results
	// go to the response_url the hub gives them, under /cpo/commands, and
	// ActiveChargingProfile updates to /cpo/chargingprofiles/{session_id}.
	{"commands", "RECEIVER", "/ocpi/2.2.1/emsp/commands"},
	{"commands", "SENDER", "/ocpi/2.2.1/cpo/commands"},
	{"chargingprofiles", "RECEIVER", "/ocpi/2.2.1/emsp/chargingprofiles"},
	{"chargingprofiles", "SENDER", "/ocpi/2.2.1/cpo/chargingprofiles"},
}

// versions lists the versions we speak, newest first.
func (s *Server) versionList() []ocpi.Version {
	return []ocpi.Version{
		{Version: "2.2.1", URL: s.publicURL("/ocpi/2.2.1")},
	}
}

// handleVersions serves GET /ocpi/versions.
func (s *Server) handleVersions(w http.ResponseWriter, r *http.Request) error {
	return s.ok(w, s.versionList())
}

// handleVersionDetails221 serves GET /ocpi/2.2.1.
func (s *Server) handleVersionDetails221(w http.ResponseWriter, r *http.Request) error {
	d := ocpi.VersionDetails{Version: "2.2.1"}
	for _, e := range endpoints221 {
		d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, Role: e.Role, URL: s.publicURL(e.Path)})
	}
	return s.ok(w, d)
}
