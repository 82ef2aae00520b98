package admin

import (
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// Admin API for parties.

func (s *handlers) handleAdminParties(w http.ResponseWriter, r *http.Request) error {
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
	return s.OK(w, ps)
}

func (s *handlers) handleAdminParty(w http.ResponseWriter, r *http.Request) error {
	id, err := kit.PathID(r)
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
	return s.OK(w, p)
}

func (s *handlers) handleAdminPartyAction(action string) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := kit.PathID(r)
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
		return s.OK(w, p)
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

func (s *handlers) handleAdminInvite(w http.ResponseWriter, r *http.Request) error {
	var in inviteRequest
	if err := kit.Decode(r, &in); err != nil {
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
	return s.Created(w, inv)
}

// adminInvitationsLimit caps GET /admin/invitations: the newest ones.
const adminInvitationsLimit = 500

// handleAdminInvitations lists the newest invitations (never their tokens),
// optionally only those in the given states (OPEN, USED, EXPIRED, REVOKED). A
// sandbox invitation lives in the sandbox's registry: the sandbox's admin
// API lists and revokes it.
func (s *handlers) handleAdminInvitations(w http.ResponseWriter, r *http.Request) error {
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
	return s.OK(w, out)
}

// handleAdminRevokeInvitation closes an open invitation: its token A stops
// working and the parties only it planned are withdrawn. It answers the
// invitation, now REVOKED. An invitation that is unknown, used or expired
// already is one error, NOT_FOUND (HTTP 404): only an open invitation can
// be revoked, and the message says so.
func (s *handlers) handleAdminRevokeInvitation(w http.ResponseWriter, r *http.Request) error {
	id, err := kit.PathID(r)
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
	return s.OK(w, inv)
}

// handleAdminSandboxReset wipes the sandbox's data now (the daily reset, on
// demand). Only the sandbox instance serves it.
func (s *handlers) handleAdminSandboxReset(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.Sandbox || s.cfg.ResetSandboxFunc == nil {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "this is not the sandbox; call the sandbox's admin API"}
	}
	if err := s.cfg.ResetSandboxFunc(r.Context()); err != nil {
		return err
	}
	return s.OK(w, nil)
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

func (s *handlers) handleAdminConnect(w http.ResponseWriter, r *http.Request) error {
	var in connectRequest
	if err := kit.Decode(r, &in); err != nil {
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
	return s.Created(w, p)
}
