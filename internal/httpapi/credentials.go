package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
)

// handleCredentialsGet returns our credentials, with the token the caller
// used.
func (s *Server) handleCredentialsGet(w http.ResponseWriter, r *http.Request) error {
	c, err := kit.CredentialsCaller(r)
	if err != nil {
		return err
	}
	creds, err := s.cfg.Parties.CredentialsFor(r.Context(), kit.VersionOf(r), c.Token, c.PlatformID)
	if err != nil {
		return err
	}
	return s.kit.OK(w, creds)
}

// handleCredentialsPost registers a partner (token A).
func (s *Server) handleCredentialsPost(w http.ResponseWriter, r *http.Request) error {
	return s.credentialsWrite(w, r, s.cfg.Parties.Register)
}

// handleCredentialsPut updates a registration (new token B, new endpoints or
// version) and issues a new token C.
func (s *Server) handleCredentialsPut(w http.ResponseWriter, r *http.Request) error {
	return s.credentialsWrite(w, r, s.cfg.Parties.Update)
}

// credentialsWrite hands the caller's credentials to write (a registration
// or its update) and answers with ours.
func (s *Server) credentialsWrite(w http.ResponseWriter, r *http.Request,
	write func(context.Context, *party.Caller, string, ocpi.Credentials) (*ocpi.Credentials, error)) error {
	var in ocpi.Credentials
	if err := kit.Decode(r, &in); err != nil {
		return err
	}
	out, err := write(r.Context(), party.CallerFrom(r.Context()), kit.VersionOf(r), in)
	if err != nil {
		return err
	}
	return s.kit.OK(w, out)
}

// handleCredentialsDelete unregisters the caller.
func (s *Server) handleCredentialsDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Parties.Unregister(r.Context(), party.CallerFrom(r.Context())); err != nil {
		return err
	}
	return s.kit.OK(w, nil)
}

// handleHubClientInfo is the HubClientInfo sender: every party reachable
// through the hub and its connection status, paged.
func (s *Server) handleHubClientInfo(w http.ResponseWriter, r *http.Request) error {
	return kit.ListPage(s.kit, w, r, func(req ocpi.PageRequest) ([]clientinfo.ClientInfo, ocpi.Page, error) {
		items, page, err := s.cfg.Parties.ListClientInfo(r.Context(), kit.SenderOf(r), req)
		for i := range items {
			items[i].Role = string(party.RoleFor(kit.VersionOf(r), party.Role(items[i].Role)))
		}
		return items, page, err
	})
}

// handleUnsupportedVersion answers a credentials POST or PUT on a version we
// do not speak: 3002, and the versions we do.
func (s *Server) handleUnsupportedVersion(w http.ResponseWriter, r *http.Request) error {
	versions := []string{DefaultVersion}
	if s.cfg.Parties != nil {
		versions = s.cfg.Parties.Versions()
	}
	return &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: "OCPI " + printableVersion(r.PathValue("version")) +
		" is not supported by this hub; it speaks " + strings.Join(versions, ", ") + ": see " + s.kit.PublicURL("/ocpi/versions")}
}

// printableVersion returns a version from a URL for a message: at most 10
// characters of digits and dots.
func printableVersion(v string) string {
	var b strings.Builder
	for i := 0; i < len(v) && b.Len() < 10; i++ {
		if v[i] == '.' || (v[i] >= '0' && v[i] <= '9') {
			b.WriteByte(v[i])
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
