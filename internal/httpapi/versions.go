package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
)

// versionList lists the versions we speak, newest first (2.3.0 only when
// the Payments module is served). A legacy version (2.1.1, 2.0) has one set
// of endpoints per role (2.1.1 endpoints carry no role): when the caller's
// role is known, its entry leads to the details for that role; otherwise to
// the generic details, which need the role too.
func (s *Server) versionList(role party.Role) []ocpi.Version {
	versions := []string{DefaultVersion}
	if s.cfg.Parties != nil {
		versions = s.cfg.Parties.Versions()
	}
	out := make([]ocpi.Version, 0, len(versions))
	for _, v := range versions {
		if v == ocpi.Version230 && s.cfg.Payments == nil {
			continue
		}
		path := "/ocpi/" + v
		if v211.IsLegacy(v) && role != "" {
			path += "/" + roleSegment(role)
		}
		out = append(out, ocpi.Version{Version: v, URL: s.kit.PublicURL(path)})
	}
	return out
}

// handleVersions serves GET /ocpi/versions. The list is read by partners of
// every version, so its timestamp is in whole seconds, the one form all of
// them accept.
func (s *Server) handleVersions(w http.ResponseWriter, r *http.Request) error {
	return s.legacyOK(w, s.versionList(legacyRoleOf(party.CallerFrom(r.Context()))))
}

// handleRoleVersions serves GET /ocpi/cpo/versions and /ocpi/emsp/versions:
// the versions list for a partner of that role, whose legacy entries lead to
// the endpoints meant for it. It is the versions URL to give a 2.1.1 or 2.0
// partner.
func (s *Server) handleRoleVersions(role party.Role) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.legacyOK(w, s.versionList(role))
	}
}

// handleVersionDetails221 serves GET /ocpi/2.2.1: every endpoint the rows
// served list under 2.2.1. Partners discover paths here and never guess
// them (DESIGN §4). The segment after the version names the caller's role:
// a CPO pushes to .../cpo/..., an eMSP pulls from .../emsp/...; a module
// may be listed with both interface roles, and a partner picks by role,
// never by URL.
func (s *Server) handleVersionDetails221(w http.ResponseWriter, r *http.Request) error {
	d := ocpi.VersionDetails{Version: "2.2.1"}
	for _, e := range s.listings(DefaultVersion) {
		d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, Role: e.Role, URL: s.kit.PublicURL(e.Path)})
	}
	if s.cfg.Sandbox {
		return s.kit.OK(w, sandboxDetails{VersionDetails: d, Banner: s.cfg.SandboxBanner})
	}
	return s.kit.OK(w, d)
}

// handleVersionDetails230 serves GET /ocpi/2.3.0: the Payments module, the
// credentials to register with, and the commands a PTP starts its
// pre-authorised sessions with. Other modules are served in 2.2.1 only, so
// only PTPs register on 2.3.0 (party.Config.VersionRoles).
func (s *Server) handleVersionDetails230(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Payments == nil {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "this hub does not serve OCPI 2.3.0; see GET /ocpi/versions"}
	}
	d := ocpi.VersionDetails{Version: ocpi.Version230}
	for _, e := range s.listings(ocpi.Version230) {
		d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, Role: e.Role, URL: s.kit.PublicURL(e.Path)})
	}
	if s.cfg.Sandbox {
		return s.kit.OK(w, sandboxDetails{VersionDetails: d, Banner: s.cfg.SandboxBanner})
	}
	return s.kit.OK(w, d)
}

// sandboxDetails are the version details of the sandbox: the endpoints and
// a banner saying what the sandbox is (an extra field partners may show).
type sandboxDetails struct {
	ocpi.VersionDetails
	Banner string `json:"banner"`
}
