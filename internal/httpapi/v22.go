package httpapi

import (
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// OCPI 2.2, a third current version beside 2.2.1 (and 2.3.0 for PTPs).
//
// The 2.2 and 2.2.1 messages are the same but for two details (changelog
// "Changes between OCPI 2.2 and 2.2.1"): CdrLocation.postal_code was
// required in 2.2, and SignedValue.signed_data was at most 512 characters.
// What a 2.2 partner sends us is therefore valid 2.2.1 and goes to the
// 2.2.1 handlers unchanged: /ocpi/2.2/{cpo,emsp,ptp,payments,hubclientinfo,clientinfo}/…
// is served by the 2.2.1 route of the same path (CanonicalPath). Only
// versions and credentials have routes of their own, because the version a
// partner registers through is the version it speaks. What we send a 2.2
// partner goes through the 2.2 dialect (hub.Speak; app wiring), which
// drops signed data longer than 2.2 allows. A CDR without postal_code is
// sent as it is: 2.2.1 fixed that as an error of 2.2, and the hub invents
// nothing.
//
// Tokens: 2.2 did not say Base64 (transport.md §9.1); the hub accepts raw
// and Base64 tokens from everyone and, calling a 2.2 partner, keeps the
// encoding that worked during registration.

// Version22 is OCPI 2.2.
const Version22 = "2.2"

// v22Alias maps a 2.2 module path onto the 2.2.1 route that serves it;
// other paths are returned as they are.
func v22Alias(p string) string {
	rest, ok := strings.CutPrefix(p, "/ocpi/2.2/")
	if !ok {
		return p
	}
	seg, _, _ := strings.Cut(rest, "/")
	switch seg {
	case "cpo", "emsp", "ptp", "payments", "hubclientinfo", "clientinfo":
		return "/ocpi/2.2.1/" + rest
	}
	return p
}

// handleVersionDetails22 serves GET /ocpi/2.2: the 2.2.1 endpoints under
// /ocpi/2.2/ paths.
func (s *Server) handleVersionDetails22(w http.ResponseWriter, r *http.Request) error {
	d := ocpi.VersionDetails{Version: Version22}
	for _, e := range s.listings(DefaultVersion) {
		path := "/ocpi/2.2/" + strings.TrimPrefix(e.Path, "/ocpi/2.2.1/")
		d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, Role: e.Role, URL: s.kit.PublicURL(path)})
	}
	if s.cfg.Sandbox {
		return s.kit.OK(w, sandboxDetails{VersionDetails: d, Banner: s.cfg.SandboxBanner})
	}
	return s.kit.OK(w, d)
}
