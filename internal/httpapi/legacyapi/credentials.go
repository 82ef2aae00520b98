package legacyapi

import (
	"context"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
)

// handleLegacyCredentialsGet returns our credentials in the legacy form,
// with the token the caller used.
func (s *handlers) handleLegacyCredentialsGet(w http.ResponseWriter, r *http.Request) error {
	c, err := kit.CredentialsCaller(r)
	if err != nil {
		return err
	}
	return s.legacyOK(w, s.cfg.Parties.LegacyCredentials(urlRole(r), c.Token))
}

// handleLegacyCredentialsPost registers a legacy partner: its one party in
// the role of the URL it registered through.
func (s *handlers) handleLegacyCredentialsPost(w http.ResponseWriter, r *http.Request) error {
	return s.legacyCredentialsWrite(w, r, s.cfg.Parties.Register)
}

// handleLegacyCredentialsPut updates a registration, or switches a partner
// to this legacy version (its one party then has the role of the URL).
func (s *handlers) handleLegacyCredentialsPut(w http.ResponseWriter, r *http.Request) error {
	return s.legacyCredentialsWrite(w, r, s.cfg.Parties.Update)
}

func (s *handlers) legacyCredentialsWrite(w http.ResponseWriter, r *http.Request,
	fn func(context.Context, *party.Caller, string, ocpi.Credentials) (*ocpi.Credentials, error)) error {
	version := Version(r.URL.Path)
	var in v211.Credentials
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	if err := ocpi.Decode(raw, &in); err != nil {
		return err
	}
	if err := in.Check(); err != nil {
		return err
	}
	role := urlRole(r)
	if role == "" {
		return s.errLegacyRole(version)
	}
	out, err := fn(r.Context(), party.CallerFrom(r.Context()), version, in.To221(string(role)))
	if err != nil {
		return err
	}
	return s.legacyOK(w, s.cfg.Parties.LegacyCredentials(role, out.Token))
}
