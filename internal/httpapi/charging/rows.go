package charging

import (
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/apidoc"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// sessionRows are tokens (eMSPs push theirs to the receiver, CPOs pull them
// and ask for real-time authorization), sessions and CDRs (CPOs push them,
// eMSPs pull those of their own tokens and send charging preferences),
// commands and charging profiles (eMSPs and SCSPs send them to the hub as
// to a CPO; CPOs post the results to the hub's response_url), and the
// operator's view of commands.
func (s *handlers) sessionRows() route.Module {
	str := func(min, max int) openapi.Schema {
		return openapi.Schema{"type": "string", "minLength": min, "maxLength": max}
	}
	party := []openapi.Parameter{
		{Name: "cc", In: "path", Description: "country code of the owning party (one of the caller's)", Schema: str(2, 2)},
		{Name: "pid", In: "path", Description: "party id of the owning party", Schema: str(3, 3)},
	}
	tokenType := openapi.Parameter{Name: "type", In: "query", Description: "token type (default RFID)", Schema: openapi.Schema{"enum": route.AnyOf(ocpi.TokenTypes)}}
	tokenParams := append(append([]openapi.Parameter{}, party...), openapi.Parameter{Name: "uid", In: "path", Schema: str(1, 36)}, tokenType)
	sessionParams := append(append([]openapi.Parameter{}, party...), openapi.Parameter{Name: "id", In: "path", Schema: str(1, 36)})
	anyObject := map[string]any{}
	sessionID := openapi.Parameter{Name: "session_id", In: "path", Schema: str(1, 36)}
	responseURL := openapi.Parameter{Name: "response_url", In: "query", Description: "where the result is posted", Schema: openapi.Schema{"type": "string", "format": "uri"}}
	profile := route.Doc{Tag: "chargingprofiles", Data: ocpi.ChargingProfileResponse{}, ErrorData: ocpi.ChargingProfileResponse{}, Relayed: true,
		Spec: "mod_charging_profiles.asciidoc", Params: []openapi.Parameter{sessionID}}

	// The version details entries: a module under .../cpo/... is what a CPO
	// calls, under .../emsp/... what an eMSP (or SCSP) calls.
	tokEMSP := route.Listing{Identifier: "tokens", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/emsp/tokens"}
	tokCPO := route.Listing{Identifier: "tokens", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/cpo/tokens"}
	sesCPO := route.Listing{Identifier: "sessions", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/cpo/sessions"}
	sesEMSP := route.Listing{Identifier: "sessions", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/emsp/sessions"}
	cdrCPO := route.Listing{Identifier: "cdrs", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/cpo/cdrs"}
	cdrEMSP := route.Listing{Identifier: "cdrs", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/emsp/cdrs"}
	cmdEMSP := route.Listing{Identifier: "commands", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/emsp/commands"}
	cmdCPO := route.Listing{Identifier: "commands", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/cpo/commands"}
	profEMSP := route.Listing{Identifier: "chargingprofiles", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/emsp/chargingprofiles"}
	profCPO := route.Listing{Identifier: "chargingprofiles", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/cpo/chargingprofiles"}

	rows := []route.Row{
		// Tokens: the hub is the CPOs' sender and the eMSPs' receiver.
		{Pattern: "GET /ocpi/2.2.1/cpo/tokens", Access: route.Platform, Handler: s.handleCPOTokens, Needs: route.NeedTokens, Listed: tokCPO, Schema: route.Data("[]Token"), Doc: route.Doc{Summary: "Every eMSP's tokens (or one eMSP's, with OCPI-to-*), paged", Data: []ocpi.Token{}, Paged: true,
			Params: apidoc.RoutingHeaders, Tag: "tokens", Spec: "mod_tokens.asciidoc"}},
		{Pattern: "POST /ocpi/2.2.1/cpo/tokens/{uid}/authorize", Access: route.Platform, Handler: s.handleCPOTokenAuthorize, Needs: route.NeedTokens, Listed: tokCPO, Schema: route.Data("AuthorizationInfo"), Doc: route.Doc{
			Summary:     "Real-time authorization of a token at a location",
			Description: "Answered from the hub's own eMSP tokens, or routed to the owning eMSP (OCPI-to-*); WHITELIST tokens may be answered from the hub's copy. The body (LocationReferences) is optional.",
			Request:     ocpi.LocationReferences{}, BodyOptional: true, Data: ocpi.AuthorizationInfo{}, Relayed: true,
			Params: []openapi.Parameter{{Name: "uid", In: "path", Schema: str(1, 36)}, tokenType}, Tag: "tokens", Spec: "mod_tokens.asciidoc"}},
		{Pattern: "GET /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", Access: route.Platform, Handler: s.handleEMSPTokenGet, Needs: route.NeedTokens, Listed: tokEMSP, Schema: route.Data("Token"), Doc: route.Doc{Summary: "Read the hub's copy of a Token the eMSP pushed", Data: ocpi.Token{},
			Params: tokenParams, Tag: "tokens", Spec: "mod_tokens.asciidoc"}},
		{Pattern: "PUT /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", Access: route.Platform, Handler: s.handleEMSPTokenPut, Needs: route.NeedTokens, Listed: tokEMSP, Schema: route.Data(""), Doc: route.Doc{Summary: "Push a Token (created: 201, replaced: 200); the hub forwards it to CPOs",
			Request: ocpi.Token{}, Stored: true, Params: tokenParams, Tag: "tokens", Spec: "mod_tokens.asciidoc"}},
		{Pattern: "PATCH /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", Access: route.Platform, Handler: s.handleEMSPTokenPatch, Needs: route.NeedTokens, Listed: tokEMSP, Schema: route.Data(""), Doc: route.Doc{Summary: "Update fields of a Token (last_updated required)",
			Request: anyObject, Params: tokenParams, Tag: "tokens", Spec: "mod_tokens.asciidoc"}},

		// Sessions.
		{Pattern: "GET /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", Access: route.Platform, Handler: s.handleCPOSessionGet, Needs: route.NeedSessions, Listed: sesCPO, Schema: route.Data("Session"), Doc: route.Doc{Summary: "Read the hub's copy of a Session the CPO pushed", Data: ocpi.Session{},
			Params: sessionParams, Tag: "sessions", Spec: "mod_sessions.asciidoc"}},
		{Pattern: "PUT /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", Access: route.Platform, Handler: s.handleCPOSessionPut, Needs: route.NeedSessions, Listed: sesCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "Push a Session (created: 201, replaced: 200); routed to the token's eMSP",
			Request: ocpi.Session{}, Stored: true, Params: sessionParams, Tag: "sessions", Spec: "mod_sessions.asciidoc"}},
		{Pattern: "PATCH /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", Access: route.Platform, Handler: s.handleCPOSessionPatch, Needs: route.NeedSessions, Listed: sesCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "Update a Session (charging_periods are appended)",
			Request: anyObject, Params: sessionParams, Tag: "sessions", Spec: "mod_sessions.asciidoc"}},
		{Pattern: "GET /ocpi/2.2.1/emsp/sessions", Access: route.Platform, Handler: s.handleEMSPSessions, Needs: route.NeedSessions, Listed: sesEMSP, Schema: route.Data("[]Session"), Doc: route.Doc{Summary: "The sessions of the eMSP's own tokens, paged", Data: []ocpi.Session{}, Paged: true,
			Params: apidoc.RoutingHeaders, Tag: "sessions", Spec: "mod_sessions.asciidoc"}},
		{Pattern: "PUT /ocpi/2.2.1/emsp/sessions/{session_id}/charging_preferences", Access: route.Platform, Handler: s.handleEMSPChargingPreferences, Needs: route.NeedSessions, Listed: sesEMSP, Schema: route.Data("ChargingPreferencesResponse"), Doc: route.Doc{Summary: "Set a driver's charging preferences; relayed to the session's CPO",
			Request: ocpi.ChargingPreferences{}, DataSchema: openapi.Schema{"enum": route.AnyOf(ocpi.ChargingPreferencesResponses)}, Relayed: true,
			Params: []openapi.Parameter{sessionID}, Tag: "sessions", Spec: "mod_sessions.asciidoc"}},

		// CDRs.
		{Pattern: "POST /ocpi/2.2.1/cpo/cdrs", Access: route.Platform, Handler: s.handleCPOCDRPost, Needs: route.NeedCDRs, Listed: cdrCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "Push a CDR: 201 with its URL in Location; the same CDR again: 200 with the same Location",
			Request: ocpi.CDR{}, Stored: true, Tag: "cdrs", Spec: "mod_cdrs.asciidoc"}},
		{Pattern: "GET /ocpi/2.2.1/cpo/cdrs/{cc}/{pid}/{id}", Access: route.Platform, Handler: s.handleCPOCDRGet, Needs: route.NeedCDRs, Listed: cdrCPO, Schema: route.Data("CDR"), Doc: route.Doc{Summary: "Read a CDR at the URL its POST answered with", Data: ocpi.CDR{},
			Params: sessionParams, Tag: "cdrs", Spec: "mod_cdrs.asciidoc"}},
		{Pattern: "GET /ocpi/2.2.1/emsp/cdrs", Access: route.Platform, Handler: s.handleEMSPCDRs, Needs: route.NeedCDRs, Listed: cdrEMSP, Schema: route.Data("[]CDR"), Doc: route.Doc{Summary: "The CDRs of the eMSP's own tokens, paged", Data: []ocpi.CDR{}, Paged: true,
			Params: apidoc.RoutingHeaders, Tag: "cdrs", Spec: "mod_cdrs.asciidoc"}},

		// Commands.
		{Pattern: "POST /ocpi/2.2.1/emsp/commands/{command}", Access: route.Platform, Handler: s.handleEMSPCommand, Needs: route.NeedCommands, Listed: cmdEMSP, Schema: route.DataOr("CommandResponse", "?CommandResponse"), Doc: route.Doc{
			Summary:     "Send a command to a CPO through the hub; the result is posted later to the request's response_url",
			Description: "The body is the command's object (StartSession, StopSession, ReserveNow, CancelReservation, UnlockConnector). The hub checks the location, EVSE and connector, forwards the command with its own response_url and answers with the CPO's CommandResponse; errors carry one too (2003 unknown location with REJECTED).",
			Request:     anyObject, Data: ocpi.CommandResponse{}, ErrorData: ocpi.CommandResponse{}, Relayed: true, Tag: "commands", Spec: "mod_commands.asciidoc",
			Params: []openapi.Parameter{{Name: "command", In: "path", Schema: openapi.Schema{"enum": route.AnyOf(ocpi.CommandTypes)}}}}},
		{Pattern: "POST /ocpi/2.2.1/cpo/commands/{command}/{id}", Access: route.Platform, Handler: s.handleCPOCommandResult, Needs: route.NeedCommands, Listed: cmdCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "The CPO posts a command's result (the response_url the hub gave it); relayed to the eMSP",
			Request: ocpi.CommandResult{}, Tag: "commands", Spec: "mod_commands.asciidoc",
			Params: []openapi.Parameter{{Name: "command", In: "path", Schema: openapi.Schema{"enum": route.AnyOf(ocpi.CommandTypes)}}}}},

		// Charging profiles.
		{Pattern: "GET /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Access: route.Platform, Handler: s.handleEMSPChargingProfile, Needs: route.NeedCommands, Listed: profEMSP, Schema: route.Data("ChargingProfileResponse"), Doc: withProfile(profile, "Ask the CPO for a session's active charging profile (result posted to response_url)", nil, responseURL)},
		{Pattern: "PUT /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Access: route.Platform, Handler: s.handleEMSPChargingProfile, Needs: route.NeedCommands, Listed: profEMSP, Schema: route.Data("ChargingProfileResponse"), Doc: withProfile(profile, "Set a session's charging profile (result posted to response_url)", ocpi.SetChargingProfile{})},
		{Pattern: "DELETE /ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Access: route.Platform, Handler: s.handleEMSPChargingProfile, Needs: route.NeedCommands, Listed: profEMSP, Schema: route.Data("ChargingProfileResponse"), Doc: withProfile(profile, "Clear a session's charging profile (result posted to response_url)", nil, responseURL)},
		{Pattern: "POST /ocpi/2.2.1/cpo/chargingprofiles/{command}/{id}", Access: route.Platform, Handler: s.handleCPOProfileResult, Needs: route.NeedCommands, Listed: profCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "The CPO posts a charging profile result (the response_url the hub gave it)",
			Request: anyObject, Tag: "chargingprofiles", Spec: "mod_charging_profiles.asciidoc"}},
		{Pattern: "PUT /ocpi/2.2.1/cpo/chargingprofiles/{session_id}", Access: route.Platform, Handler: s.handleCPOActiveProfile, Needs: route.NeedCommands, Listed: profCPO, Schema: route.Data(""), Doc: route.Doc{Summary: "The CPO updates a session's active charging profile; relayed to who set one",
			Request: ocpi.ActiveChargingProfile{}, Params: []openapi.Parameter{sessionID}, Tag: "chargingprofiles", Spec: "mod_charging_profiles.asciidoc"}},

		// Operator.
		{Pattern: "GET /admin/commands", Access: route.Admin, Handler: s.handleAdminCommands, Needs: route.NeedCommands, Doc: route.Doc{
			Summary: "Commands with their lifecycle, newest first", Data: []*command.Record{},
			Params: []openapi.Parameter{
				{Name: "state", In: "query", Schema: openapi.Schema{"type": "string"}},
				{Name: "command", In: "query", Schema: openapi.Schema{"type": "string"}},
				{Name: "module", In: "query", Schema: openapi.Schema{"enum": []any{command.Module, command.ProfilesModule}}},
				{Name: "platform_id", In: "query", Schema: openapi.Schema{"type": "integer"}},
				{Name: "authorization_reference", In: "query", Schema: openapi.Schema{"type": "string"}},
				{Name: "limit", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
				{Name: "offset", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
			},
		}},
		{Pattern: "GET /admin/commands/{id}", Access: route.Admin, Handler: s.handleAdminCommand, Needs: route.NeedCommands, Doc: route.Doc{Summary: "One command: request, forwarded body, the CPO's answer, every result and its relay", Data: &command.Record{}}},
	}
	return route.Module{
		Tag: openapi.Tag{Name: "commands", Description: "Remote commands from eMSPs to CPOs, relayed by the hub with its own response_url; results relayed back or TIMEOUT.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.2.1/mod_commands.asciidoc"}},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			enum := func(v []string) openapi.Schema { return openapi.Schema{"enum": route.AnyOf(v)} }
			s.Field(ocpi.Token{}, "type", enum(ocpi.TokenTypes))
			s.Field(ocpi.Token{}, "whitelist", enum(ocpi.WhitelistTypes))
			s.Field(ocpi.Token{}, "uid", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.Token{}, "contract_id", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.Token{}, "default_profile_type", enum(ocpi.ProfileTypes))
			s.Field(ocpi.AuthorizationInfo{}, "allowed", enum(ocpi.AllowedTypes))
			s.Field(ocpi.Session{}, "status", enum(ocpi.SessionStatuses))
			s.Field(ocpi.Session{}, "auth_method", enum(ocpi.AuthMethods))
			s.Field(ocpi.Session{}, "id", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.CDR{}, "auth_method", enum(ocpi.AuthMethods))
			s.Field(ocpi.CDR{}, "id", openapi.Schema{"maxLength": 39})
			s.Field(ocpi.CommandResponse{}, "result", enum(ocpi.CommandResponseTypes))
			s.Field(ocpi.CommandResult{}, "result", enum(ocpi.CommandResultTypes))
			s.Field(ocpi.ChargingProfileResponse{}, "result", enum(ocpi.ChargingProfileResponseTypes))
		},
	}
}

// withProfile is a charging profile request's description.
func withProfile(d route.Doc, summary string, request any, params ...openapi.Parameter) route.Doc {
	d.Summary, d.Request = summary, request
	d.Params = append(append([]openapi.Parameter{}, d.Params...), params...)
	return d
}
