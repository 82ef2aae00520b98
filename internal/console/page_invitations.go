package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

type invitationsView struct {
	Invitations []party.InvitationInfo
	Pager       ui.Pager
	Expiries    []string
	// VersionsURL is what a partner is sent with its token A.
	VersionsURL string
}

type invitationCreatedView struct {
	*party.Invitation
}

// PageTitle names the page.
func (v invitationCreatedView) PageTitle() string { return "Invitation for " + v.Name }

// inviteExpiries are the lifetimes offered for a token A.
var inviteExpiries = []string{"24h", "72h", "168h", "720h"}

func (c *Console) invitationPages() ([]ui.Page, []ui.Action) {
	return []ui.Page{{
			Path: "/invitations", Title: "Invitations", Section: "Network", Nav: "Invitations", Template: "invitations",
			Load: func(r *http.Request) (any, error) {
				list, err := c.cfg.Parties.Invitations(r.Context(), 500)
				if err != nil {
					return nil, err
				}
				if st := r.URL.Query().Get("state"); st != "" {
					kept := list[:0]
					for _, inv := range list {
						if inv.State == st {
							kept = append(kept, inv)
						}
					}
					list = kept
				}
				page, pager := ui.Paginate(r, list, 25)
				return invitationsView{Invitations: page, Pager: pager, Expiries: inviteExpiries, VersionsURL: c.cfg.Parties.VersionsURL()}, nil
			},
		}}, []ui.Action{{
			Path: "/invitations",
			Do: func(r *http.Request) (ui.Result, error) {
				name := strings.TrimSpace(r.PostFormValue("name"))
				ttl, err := time.ParseDuration(r.PostFormValue("expires"))
				if err != nil || ttl <= 0 {
					return ui.Result{Redirect: "/invitations"}, ocpi.Invalid("expires", "must be a duration such as 72h")
				}
				parties, err := parsePartyRefs(r.PostFormValue("parties"))
				if err != nil {
					return ui.Result{Redirect: "/invitations"}, err
				}
				inv, err := c.cfg.Parties.Invite(r.Context(), name, ttl, r.PostFormValue("sandbox") == "on", parties...)
				if err != nil {
					return ui.Result{Redirect: "/invitations"}, err
				}
				c.logger.InfoContext(r.Context(), "console: invitation created", "invitation_id", inv.ID, "name", inv.Name)
				// The token exists in this answer only: render it, do not
				// redirect to a page that would have to store it.
				return ui.Result{Template: "invitation_created", Title: "Invitation for " + inv.Name, Data: invitationCreatedView{inv}}, nil
			},
		}, {
			// Revoke closes an open invitation: its token A stops working and
			// the parties only it planned are withdrawn from HubClientInfo.
			Path: "/invitations/{id}/revoke",
			Do: func(r *http.Request) (ui.Result, error) {
				id, err := ui.PathInt(r, "id")
				if err != nil {
					return ui.Result{Redirect: "/invitations"}, err
				}
				if err := c.cfg.Parties.RevokeInvitation(r.Context(), id); err != nil {
					return ui.Result{Redirect: "/invitations"}, err
				}
				c.logger.InfoContext(r.Context(), "console: invitation revoked", "invitation_id", id)
				return ui.Result{Redirect: "/invitations", Flash: "The invitation is revoked: its token no longer works."}, nil
			},
		}}
}

// parsePartyRefs reads "CPO/IN/ACM, EMSP/IN/VLT" (commas, spaces or new
// lines between them).
func parsePartyRefs(s string) ([]party.PartyRef, error) {
	var out []party.PartyRef
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == ';' }) {
		ref, err := party.ParsePartyRef(f)
		if err != nil {
			return nil, ocpi.Invalid("parties", "write each party as ROLE/COUNTRY_CODE/PARTY_ID, e.g. CPO/IN/ACM; got "+ui.Truncate(30, f))
		}
		out = append(out, ref)
	}
	return out, nil
}
