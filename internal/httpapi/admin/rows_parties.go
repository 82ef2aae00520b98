package admin

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// adminRows are the operator API for platforms and invitations.
func (s *handlers) adminRows() route.Module {
	id := openapi.Parameter{Name: "id", In: "path", Description: "platform id", Schema: openapi.Schema{"type": "integer", "minimum": 1}}
	action := func(summary string) route.Doc {
		return route.Doc{Summary: summary, Data: &party.Platform{}, Params: []openapi.Parameter{id}}
	}
	return route.Module{
		Tag: openapi.Tag{Name: "admin", Description: "The operator's API (admin token): platforms, invitations. The console at /console does the same in a browser."},
		Rows: []route.Row{
			{Pattern: "GET /admin/parties", Access: route.Admin, Handler: s.handleAdminParties, Doc: route.Doc{
				Summary: "List platforms, newest first",
				Data:    []*party.Platform{},
				Params: []openapi.Parameter{{Name: "status", In: "query", Description: "only platforms with this status (repeatable)",
					Schema: openapi.Schema{"type": "string", "enum": platformStatuses()}}},
			}},
			{Pattern: "GET /admin/parties/{id}", Access: route.Admin, Handler: s.handleAdminParty, Doc: route.Doc{Summary: "One platform: status, connection, endpoints, roles, last seen, last error (never tokens)", Data: &party.Platform{}, Params: []openapi.Parameter{id}}},
			{Pattern: "POST /admin/parties/{id}/suspend", Access: route.Admin, Handler: s.handleAdminPartyAction("suspend"), Doc: action("Suspend a platform: its tokens get 401 everywhere, its parties are announced SUSPENDED")},
			{Pattern: "POST /admin/parties/{id}/resume", Access: route.Admin, Handler: s.handleAdminPartyAction("resume"), Doc: action("Resume a suspended platform")},
			{Pattern: "POST /admin/parties/{id}/rotate", Access: route.Admin, Handler: s.handleAdminPartyAction("rotate"), Doc: action("Replace the credentials tokens of a platform (credentials PUT to the partner)")},
			{Pattern: "DELETE /admin/parties/{id}", Access: route.Admin, Handler: s.handleAdminPartyAction("disconnect"), Doc: route.Doc{
				Summary:     "Disconnect a platform: credentials DELETE to the partner, then UNREGISTERED here",
				Description: "The partner's failure to answer does not stop the disconnection; it is reported in a Warning header.",
				Data:        &party.Platform{}, Params: []openapi.Parameter{id},
			}},
			{Pattern: "POST /admin/parties/connect", Access: route.Admin, Handler: s.handleAdminConnect, Doc: route.Doc{
				Summary: "Register with a partner that gave us its token A (hub-initiated handshake)",
				Request: connectRequest{}, Data: &party.Platform{}, Created: true,
			}},
			{Pattern: "POST /admin/invitations", Access: route.Admin, Handler: s.handleAdminInvite, Options: []route.Option{route.WithoutReplay}, Doc: route.Doc{
				Summary:     "Create a registration token (token A) for a partner; the token is in this answer only",
				Description: "expires is a duration such as 72h (default 72h); parties binds the token to parties, announced as PLANNED until they register.",
				Request:     inviteRequest{}, Data: &party.Invitation{}, Created: true,
			}},
			{Pattern: "GET /admin/invitations", Access: route.Admin, Handler: s.handleAdminInvitations, Doc: route.Doc{
				Summary:     "List invitations, newest first (at most 500; never their tokens)",
				Description: "A revoked invitation is listed as REVOKED. Sandbox invitations are listed by the sandbox's admin API.",
				Data:        []party.InvitationInfo{},
				Params: []openapi.Parameter{{Name: "state", In: "query", Description: "only invitations in this state (repeatable)",
					Schema: openapi.Schema{"type": "string", "enum": invitationStates()}}},
			}},
			{Pattern: "POST /admin/invitations/{id}/revoke", Access: route.Admin, Handler: s.handleAdminRevokeInvitation, Doc: route.Doc{
				Summary: "Revoke an open invitation: its token A stops working, the parties only it planned are withdrawn",
				Description: "Answers the invitation, now REVOKED. An unknown invitation, or one used or expired already, " +
					"answers NOT_FOUND (HTTP 404): only an open invitation can be revoked.",
				Data: &party.InvitationInfo{},
				Params: []openapi.Parameter{{Name: "id", In: "path", Description: "invitation id",
					Schema: openapi.Schema{"type": "integer", "minimum": 1}}},
			}},
		},
		Schemas: func(s *openapi.Schemas) {
			s.Field(party.Platform{}, "status", openapi.Schema{"enum": platformStatuses()})
			s.Field(party.Platform{}, "connection", openapi.Schema{"enum": []any{party.ClientConnected, party.ClientOffline}})
			s.Field(party.Platform{}, "versions_url", openapi.Schema{"maxLength": 255})
			s.Field(party.PartyRef{}, "role", openapi.Schema{"enum": route.AnyOf(party.Roles)})
			s.Field(party.PartyRef{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(party.PartyRef{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(party.Invitation{}, "versions_url", openapi.Schema{"format": "uri"})
			s.Field(connectRequest{}, "versions_url", openapi.Schema{"format": "uri"})
			s.Field(party.InvitationInfo{}, "state", openapi.Schema{"enum": invitationStates()})
			s.Field(inviteRequest{}, "name", openapi.Schema{"minLength": 1, "maxLength": 100})
		},
	}
}

func platformStatuses() []any {
	return []any{string(party.StatusPending), string(party.StatusConnected), string(party.StatusSuspended), string(party.StatusUnregistered)}
}

func invitationStates() []any {
	return []any{party.InvitationOpen, party.InvitationUsed, party.InvitationExpired, party.InvitationRevoked}
}
