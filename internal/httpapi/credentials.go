package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// versionOf returns the OCPI version in a request path (/ocpi/{version}/…).
func versionOf(r *http.Request) string {
	rest, _ := strings.CutPrefix(r.URL.Path, "/ocpi/")
	v, _, _ := strings.Cut(rest, "/")
	return v
}

// handleCredentialsGet returns our credentials, with the token the caller
// used.
func (s *Server) handleCredentialsGet(w http.ResponseWriter, r *http.Request) error {
	c := party.CallerFrom(r.Context())
	if c.Kind == party.CallerAdmin {
		return &ocpi.Error{Code: ocpi.EMETHOD, Message: "the admin token has no credentials; see /admin/parties"}
	}
	creds, err := s.cfg.Parties.CredentialsFor(r.Context(), versionOf(r), c.Token, c.PlatformID)
	if err != nil {
		return err
	}
	return s.ok(w, creds)
}

// handleCredentialsPost registers a partner (token A).
func (s *Server) handleCredentialsPost(w http.ResponseWriter, r *http.Request) error {
	var in ocpi.Credentials
	if err := decode(r, &in); err != nil {
		return err
	}
	out, err := s.cfg.Parties.Register(r.Context(), party.CallerFrom(r.Context()), versionOf(r), in)
	if err != nil {
		return err
	}
	return s.ok(w, out)
}

// handleCredentialsPut updates a registration (new token B, new endpoints or
// version) and issues a new token C.
func (s *Server) handleCredentialsPut(w http.ResponseWriter, r *http.Request) error {
	var in ocpi.Credentials
	if err := decode(r, &in); err != nil {
		return err
	}
	out, err := s.cfg.Parties.Update(r.Context(), party.CallerFrom(r.Context()), versionOf(r), in)
	if err != nil {
		return err
	}
	return s.ok(w, out)
}

// handleCredentialsDelete unregisters the caller.
func (s *Server) handleCredentialsDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Parties.Unregister(r.Context(), party.CallerFrom(r.Context())); err != nil {
		return err
	}
	return s.ok(w, nil)
}

// handleHubClientInfo is the HubClientInfo sender: every party reachable
// through the hub and its connection status, paged.
func (s *Server) handleHubClientInfo(w http.ResponseWriter, r *http.Request) error {
	req, err := ocpi.ParsePageRequest(r.URL.Query(), ocpi.MaxLimit)
	if err != nil {
		return err
	}
	items, page, err := s.cfg.Parties.ListClientInfo(r.Context(), senderOf(r), req)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Role = string(party.RoleFor(versionOf(r), party.Role(items[i].Role)))
	}
	return s.page(w, r, req, items, len(items), page)
}

// Admin API for parties.

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, ocpi.Invalid("id", "must be a positive integer")
	}
	return id, nil
}

func (s *Server) handleAdminParties(w http.ResponseWriter, r *http.Request) error {
	var f party.Filter
	for _, st := range r.URL.Query()["status"] {
		f.Status = append(f.Status, party.Status(strings.ToUpper(st)))
	}
	ps, err := s.cfg.Parties.List(r.Context(), f)
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []*party.Platform{}
	}
	if err := s.cfg.Parties.AttachHealth(r.Context(), ps...); err != nil {
		return err
	}
	return s.ok(w, ps)
}

func (s *Server) handleAdminParty(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := s.cfg.Parties.Find(r.Context(), id)
	if err != nil {
		return err
	}
	if err := s.cfg.Parties.AttachHealth(r.Context(), p); err != nil {
		return err
	}
	return s.ok(w, p)
}

func (s *Server) handleAdminPartyAction(action string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		ctx := r.Context()
		var warning string
		switch action {
		case "suspend":
			err = s.cfg.Parties.Suspend(ctx, id)
		case "resume":
			err = s.cfg.Parties.Resume(ctx, id)
		case "rotate":
			_, err = s.cfg.Parties.Rotate(ctx, id)
		case "disconnect":
			warning, err = s.cfg.Parties.Disconnect(ctx, id)
		}
		if err != nil {
			return err
		}
		p, err := s.cfg.Parties.Find(ctx, id)
		if err != nil {
			return err
		}
		if warning != "" {
			w.Header().Set("Warning", `199 ocpihub "`+strings.ReplaceAll(warning, `"`, `'`)+`"`)
		}
		return s.ok(w, p)
	}
}

// inviteRequest is the body of POST /admin/invitations.
type inviteRequest struct {
	Name    string `json:"name"`
	Expires string `json:"expires,omitempty"` // a Go duration, e.g. "72h"
	Sandbox bool   `json:"sandbox,omitempty"`
	// Parties binds the invitation to parties (announced as PLANNED).
	Parties []party.PartyRef `json:"parties,omitempty"`
}

func (s *Server) handleAdminInvite(w http.ResponseWriter, r *http.Request) error {
	var in inviteRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	var ttl time.Duration
	if in.Expires != "" {
		d, err := time.ParseDuration(in.Expires)
		if err != nil || d <= 0 {
			return ocpi.Invalid("expires", "must be a positive duration such as 72h")
		}
		ttl = d
	}
	parties := s.cfg.Parties
	switch {
	case s.cfg.Sandbox:
		// Every credential of the sandbox is a sandbox credential.
		in.Sandbox = true
	case in.Sandbox && s.cfg.SandboxParties == nil:
		return ocpi.Invalid("sandbox", "this hub runs no sandbox (start it with --sandbox-addr)")
	case in.Sandbox:
		parties = s.cfg.SandboxParties
	}
	inv, err := parties.Invite(r.Context(), in.Name, ttl, in.Sandbox, in.Parties...)
	if err != nil {
		return err
	}
	return s.created(w, inv)
}

// adminInvitationsLimit caps GET /admin/invitations: the newest ones.
const adminInvitationsLimit = 500

// handleAdminInvitations lists the newest invitations (never their tokens),
// optionally only those in the given states (OPEN, USED, EXPIRED, REVOKED). A
// sandbox invitation lives in the sandbox's registry: the sandbox's admin
// API lists and revokes it.
func (s *Server) handleAdminInvitations(w http.ResponseWriter, r *http.Request) error {
	want := map[string]bool{}
	for _, st := range r.URL.Query()["state"] {
		st = strings.ToUpper(st)
		if st != party.InvitationOpen && st != party.InvitationUsed && st != party.InvitationExpired && st != party.InvitationRevoked {
			return ocpi.Invalid("state", "must be OPEN, USED, EXPIRED or REVOKED")
		}
		want[st] = true
	}
	list, err := s.cfg.Parties.Invitations(r.Context(), adminInvitationsLimit)
	if err != nil {
		return err
	}
	out := []party.InvitationInfo{}
	for _, inv := range list {
		if len(want) == 0 || want[inv.State] {
			out = append(out, inv)
		}
	}
	return s.ok(w, out)
}

// handleAdminRevokeInvitation closes an open invitation: its token A stops
// working and the parties only it planned are withdrawn. It answers the
// invitation, now REVOKED. An invitation that is unknown, used or expired
// already is one error, NOT_FOUND (HTTP 404): only an open invitation can
// be revoked, and the message says so.
func (s *Server) handleAdminRevokeInvitation(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.cfg.Parties.RevokeInvitation(r.Context(), id); err != nil {
		return err
	}
	inv, err := s.cfg.Parties.FindInvitation(r.Context(), id)
	if err != nil {
		return err
	}
	return s.ok(w, inv)
}

// handleAdminSandboxReset wipes the sandbox's data now (the daily reset, on
// demand). Only the sandbox instance serves it.
func (s *Server) handleAdminSandboxReset(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.Sandbox || s.cfg.ResetSandboxFunc == nil {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "this is not the sandbox; call the sandbox's admin API"}
	}
	if err := s.cfg.ResetSandboxFunc(r.Context()); err != nil {
		return err
	}
	return s.ok(w, nil)
}

// connectRequest is the body of POST /admin/parties/connect.
type connectRequest struct {
	Name        string `json:"name,omitempty"`
	VersionsURL string `json:"versions_url"`
	Token       string `json:"token"`
	// Role is needed when the partner speaks only OCPI 2.1.1 or 2.0: their
	// credentials do not say it (CPO or EMSP).
	Role string `json:"role"`
}

func (s *Server) handleAdminConnect(w http.ResponseWriter, r *http.Request) error {
	var in connectRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	c := ocpi.NewCheck("")
	c.URL("versions_url", in.VersionsURL, true)
	c.Required("token", in.Token != "")
	if err := c.Err(); err != nil {
		return err
	}
	p, err := s.cfg.Parties.ConnectWith(r.Context(), party.ConnectRequest{Name: in.Name, VersionsURL: in.VersionsURL, Token: in.Token,
		Role: party.Role(strings.ToUpper(in.Role))})
	if err != nil {
		return err
	}
	return s.created(w, p)
}

// handleUnsupportedVersion answers a credentials POST or PUT on a version we
// do not speak: 3002, and the versions we do.
func (s *Server) handleUnsupportedVersion(w http.ResponseWriter, r *http.Request) error {
	versions := []string{DefaultVersion}
	if s.cfg.Parties != nil {
		versions = s.cfg.Parties.Versions()
	}
	return &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: "OCPI " + printableVersion(r.PathValue("version")) +
		" is not supported by this hub; it speaks " + strings.Join(versions, ", ") + ": see " + s.publicURL("/ocpi/versions")}
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
