package legacyapi

import (
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// legacyRows are the deprecated OCPI 2.1.1 and 2.0 surfaces (legacy.go)
// and the per-role versions lists. 2.1.1 bodies
// are described by the 2.1.1 types; 2.0 bodies, which the hub writes by
// rewriting 2.1.1 ones (decimals as strings, renamed fields), as OCPI
// objects.
func (s *handlers) legacyRows() route.Module {
	var rows []route.Row
	add := func(r route.Row, d route.Doc) {
		r.Doc, r.Listed = d, legacyListing(r.Pattern)
		rows = append(rows, r)
	}
	for _, role := range []party.Role{party.RoleCPO, party.RoleEMSP} {
		add(route.Row{Pattern: "GET /ocpi/" + RoleSegment(role) + "/versions", Access: route.Registering, Handler: s.cfg.RoleVersions(role)}, route.Doc{Summary: "The versions list for a " + string(role) + " (the seed's per-role form)",
			Data: []ocpi.Version{}, Tag: "versions", Spec: "version_information_endpoint.asciidoc"})
	}

	party3 := func(id string) []openapi.Parameter {
		return []openapi.Parameter{
			{Name: "country_code", In: "path", Schema: openapi.Schema{"type": "string", "minLength": 2, "maxLength": 2}},
			{Name: "party_id", In: "path", Schema: openapi.Schema{"type": "string", "minLength": 3, "maxLength": 3}},
			{Name: id, In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 39}},
		}
	}
	for _, v := range []string{v211.V211, v211.V20} {
		// v211Data names the 2.1.1 schema of data; the 2.0 routes are checked
		// for the 2.1.1 envelope only: their decimals are strings and their
		// locations lack last_updated, which the 2.1.1 schemas refuse.
		v211Data := func(name string) *route.DataSchema { return v211DataOr(v, name, "") }
		// obj returns the type of a 2.1.1 body, or a plain object for 2.0.
		obj := func(t any) any {
			if v == v211.V20 {
				return map[string]any{}
			}
			return t
		}
		list := func(t any) any {
			if v == v211.V20 {
				return []map[string]any{}
			}
			return t
		}
		doc := func(d route.Doc) route.Doc {
			d.Tag, d.Deprecated = "legacy "+v, true
			d.Description = "Deprecated: OCPI " + v + ", converted to and from the hub's 2.2.1 model. " + d.Description
			return d
		}
		add(route.Row{Pattern: "GET /ocpi/" + v, Access: route.Registering, Handler: s.handleLegacyDetails(v, ""), Schema: v211Data("version")}, doc(route.Doc{Summary: v + " version details", Data: ocpi.VersionDetails{}}))
		for _, role := range party.LegacyRoles {
			add(route.Row{Pattern: "GET /ocpi/" + v + "/" + RoleSegment(role), Access: route.Registering, Handler: s.handleLegacyDetails(v, role), Schema: v211Data("version")}, doc(route.Doc{Summary: v + " version details for a " + string(role), Data: ocpi.VersionDetails{}}))
		}
		for _, prefix := range []string{"/ocpi/" + v, "/ocpi/" + v + "/cpo", "/ocpi/" + v + "/emsp"} {
			add(route.Row{Pattern: "GET " + prefix + "/credentials", Access: route.Registering, Handler: s.handleLegacyCredentialsGet, Schema: v211Data("credentials")}, doc(route.Doc{Summary: "The hub's " + v + " credentials", Data: v211.Credentials{}, Errors: []int{405}}))
			add(route.Row{Pattern: "POST " + prefix + "/credentials", Access: route.Registering, Handler: s.handleLegacyCredentialsPost, Schema: v211Data("credentials")}, doc(route.Doc{Summary: "Register over " + v + " with token A", Request: v211.Credentials{}, Data: v211.Credentials{}, Errors: []int{405}}))
			add(route.Row{Pattern: "PUT " + prefix + "/credentials", Access: route.Registering, Handler: s.handleLegacyCredentialsPut, Schema: v211Data("credentials")}, doc(route.Doc{Summary: "Update a " + v + " registration", Request: v211.Credentials{}, Data: v211.Credentials{}, Errors: []int{405}}))
			add(route.Row{Pattern: "DELETE " + prefix + "/credentials", Access: route.Registering, Handler: s.cfg.CredentialsDelete, Schema: v211Data("")}, doc(route.Doc{Summary: "Unregister", Errors: []int{405}}))
		}
		cpoLoc := "/ocpi/" + v + "/cpo/locations/{country_code}/{party_id}/{location_id}"
		for _, level := range []struct {
			suffix, schema string
			obj            any
		}{{"", "location", v211.Location{}}, {"/{evse_uid}", "evse", v211.EVSE{}}, {"/{evse_uid}/{connector_id}", "connector", v211.Connector{}}} {
			p := cpoLoc + level.suffix
			add(route.Row{Pattern: "GET " + p, Access: route.Platform, Handler: s.handleLegacyCPOLocationGet, Needs: route.NeedLocations, Schema: v211Data(level.schema)}, doc(route.Doc{Summary: "The hub's copy of a location, EVSE or connector", Data: obj(level.obj), Params: party3("location_id")}))
			add(route.Row{Pattern: "PUT " + p, Access: route.Platform, Handler: s.handleLegacyCPOLocationPut, Needs: route.NeedLocations, Schema: v211Data("")}, doc(route.Doc{Summary: "Push a location, EVSE or connector", Request: obj(level.obj), Stored: true, Params: party3("location_id")}))
			add(route.Row{Pattern: "PATCH " + p, Access: route.Platform, Handler: s.handleLegacyCPOLocationPatch, Needs: route.NeedLocations, Schema: v211Data("")}, doc(route.Doc{Summary: "Update fields of a location, EVSE or connector", Request: map[string]any{}, Params: party3("location_id")}))
		}
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/locations", Access: route.Platform, Handler: s.handleLegacyEMSPLocations, Needs: route.NeedLocations, Schema: v211Data("[]location")}, doc(route.Doc{Summary: "The directory, converted", Data: list([]v211.Location{}), Paged: true}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/locations/{location_id}", Access: route.Platform, Handler: s.handleLegacyEMSPLocation, Needs: route.NeedLocations, Schema: v211Data("location")}, doc(route.Doc{Summary: "One location of the directory", Data: obj(v211.Location{})}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/locations/{location_id}/{evse_uid}", Access: route.Platform, Handler: s.handleLegacyEMSPLocation, Needs: route.NeedLocations, Schema: v211Data("evse")}, doc(route.Doc{Summary: "One EVSE of the directory", Data: obj(v211.EVSE{})}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/locations/{location_id}/{evse_uid}/{connector_id}", Access: route.Platform, Handler: s.handleLegacyEMSPLocation, Needs: route.NeedLocations, Schema: v211Data("connector")}, doc(route.Doc{Summary: "One connector of the directory", Data: obj(v211.Connector{})}))
		tar := "/ocpi/" + v + "/cpo/tariffs/{country_code}/{party_id}/{tariff_id}"
		add(route.Row{Pattern: "GET " + tar, Access: route.Platform, Handler: s.handleLegacyCPOTariffGet, Needs: route.NeedTariffs, Schema: v211Data("tariff")}, doc(route.Doc{Summary: "The hub's copy of a tariff", Data: obj(v211.Tariff{}), Params: party3("tariff_id")}))
		add(route.Row{Pattern: "PUT " + tar, Access: route.Platform, Handler: s.handleLegacyCPOTariffPut, Needs: route.NeedTariffs, Schema: v211Data("")}, doc(route.Doc{Summary: "Push a tariff", Request: obj(v211.Tariff{}), Stored: true, Params: party3("tariff_id")}))
		add(route.Row{Pattern: "PATCH " + tar, Access: route.Platform, Handler: s.handleLegacyCPOTariffPatch, Needs: route.NeedTariffs, Schema: v211Data("")}, doc(route.Doc{Summary: "Update fields of a tariff", Request: map[string]any{}, Params: party3("tariff_id")}))
		add(route.Row{Pattern: "DELETE " + tar, Access: route.Platform, Handler: s.handleLegacyCPOTariffDelete, Needs: route.NeedTariffs, Schema: v211Data("")}, doc(route.Doc{Summary: "Delete a tariff", Params: party3("tariff_id")}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/tariffs", Access: route.Platform, Handler: s.handleLegacyEMSPTariffs, Needs: route.NeedTariffs, Schema: v211Data("[]tariff")}, doc(route.Doc{Summary: "Every CPO's tariffs, converted", Data: list([]v211.Tariff{}), Paged: true}))
		tok := "/ocpi/" + v + "/emsp/tokens/{country_code}/{party_id}/{token_uid}"
		add(route.Row{Pattern: "GET " + tok, Access: route.Platform, Handler: s.handleLegacyEMSPTokenGet, Needs: route.NeedTokens, Schema: v211Data("token")}, doc(route.Doc{Summary: "The hub's copy of a token", Data: obj(v211.Token{}), Params: party3("token_uid")}))
		add(route.Row{Pattern: "PUT " + tok, Access: route.Platform, Handler: s.handleLegacyEMSPTokenPut, Needs: route.NeedTokens, Schema: v211Data("")}, doc(route.Doc{Summary: "Push a token", Request: obj(v211.Token{}), Stored: true, Params: party3("token_uid")}))
		add(route.Row{Pattern: "PATCH " + tok, Access: route.Platform, Handler: s.handleLegacyEMSPTokenPatch, Needs: route.NeedTokens, Schema: v211Data("")}, doc(route.Doc{Summary: "Update a token", Request: map[string]any{}, Params: party3("token_uid")}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/cpo/tokens", Access: route.Platform, Handler: s.handleLegacyCPOTokens, Needs: route.NeedTokens, Schema: v211Data("[]token")}, doc(route.Doc{Summary: "Every eMSP's tokens, converted", Data: list([]v211.Token{}), Paged: true}))
		ses := "/ocpi/" + v + "/cpo/sessions/{country_code}/{party_id}/{session_id}"
		add(route.Row{Pattern: "GET " + ses, Access: route.Platform, Handler: s.handleLegacyCPOSessionGet, Needs: route.NeedSessions, Schema: v211Data("session")}, doc(route.Doc{Summary: "The hub's copy of a session", Data: obj(v211.Session{}), Params: party3("session_id")}))
		add(route.Row{Pattern: "PUT " + ses, Access: route.Platform, Handler: s.handleLegacyCPOSessionPut, Needs: route.NeedSessions, Schema: v211Data("")}, doc(route.Doc{Summary: "Push a session (the token is found by its auth_id)", Request: obj(v211.Session{}), Stored: true, Params: party3("session_id")}))
		add(route.Row{Pattern: "PATCH " + ses, Access: route.Platform, Handler: s.handleLegacyCPOSessionPatch, Needs: route.NeedSessions, Schema: v211Data("")}, doc(route.Doc{Summary: "Update a session", Request: map[string]any{}, Params: party3("session_id")}))
		if v == v211.V20 {
			add(route.Row{Pattern: "DELETE " + ses, Access: route.Platform, Handler: s.handleLegacyCPOSessionDelete, Needs: route.NeedSessions}, doc(route.Doc{Summary: "2.0: delete a session", Params: party3("session_id")}))
		}
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/sessions", Access: route.Platform, Handler: s.handleLegacyEMSPSessions, Needs: route.NeedSessions, Schema: v211Data("[]session")}, doc(route.Doc{Summary: "The sessions of the eMSP's tokens, converted", Data: list([]v211.Session{}), Paged: true}))
		add(route.Row{Pattern: "POST /ocpi/" + v + "/cpo/cdrs", Access: route.Platform, Handler: s.handleLegacyCPOCDRPost, Needs: route.NeedCDRs, Schema: v211Data("")}, doc(route.Doc{Summary: "Push a CDR", Request: obj(v211.CDR{}), Stored: true}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/cpo/cdrs/{country_code}/{party_id}/{cdr_id}", Access: route.Platform, Handler: s.handleLegacyCPOCDRGet, Needs: route.NeedCDRs, Schema: v211Data("cdr")}, doc(route.Doc{Summary: "A CDR at the URL its POST answered with", Data: obj(v211.CDR{}), Params: party3("cdr_id")}))
		add(route.Row{Pattern: "GET /ocpi/" + v + "/emsp/cdrs", Access: route.Platform, Handler: s.handleLegacyEMSPCDRs, Needs: route.NeedCDRs, Schema: v211Data("[]cdr")}, doc(route.Doc{Summary: "The CDRs of the eMSP's tokens, converted", Data: list([]v211.CDR{}), Paged: true}))
		if v == v211.V211 {
			add(route.Row{Pattern: "POST /ocpi/" + v + "/cpo/tokens/{token_uid}/authorize", Access: route.Platform, Handler: s.handleLegacyCPOAuthorize, Needs: route.NeedTokens, Schema: v211Data("authorization_info")}, doc(route.Doc{Summary: "Real-time authorization", Request: v211.LocationReferences{}, BodyOptional: true,
				Data: v211.AuthorizationInfo{}, Relayed: true}))
			add(route.Row{Pattern: "POST /ocpi/" + v + "/emsp/commands/{command}", Access: route.Platform, Handler: s.handleLegacyEMSPCommand, Needs: route.NeedCommands, Schema: v211DataOr(v, "command_response", "?command_response")}, doc(route.Doc{Summary: "Send a command to a CPO through the hub", Request: map[string]any{},
				Data: v211.CommandResponse{}, ErrorData: v211.CommandResponse{}, Relayed: true}))
			add(route.Row{Pattern: "POST /ocpi/" + v + "/cpo/commands/{command}/{id}", Access: route.Platform, Handler: s.handleLegacyCPOCommandResult, Needs: route.NeedCommands, Schema: v211Data("")}, doc(route.Doc{Summary: "A command's result from the CPO", Request: map[string]any{}}))
		}
	}
	return route.Module{
		Tag:  openapi.Tag{Name: "legacy 2.1.1", Description: "Deprecated: partners on OCPI 2.1.1 (and 2.0), converted to and from 2.2.1."},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			s.Type(v211.DateTime{}, openapi.Schema{"type": "string", "format": "date-time"})
		},
	}
}

// v211DataOr names the 2.1.1 schemas of a legacy route's data in version v
// (nil for 2.0).
func v211DataOr(v, success, errData string) *route.DataSchema {
	if v != v211.V211 {
		return nil
	}
	return route.DataOr(success, errData)
}

// legacyListing is the version details entry of a legacy route: the module
// its path names after the role segment (/ocpi/2.1.1/cpo/locations/…
// is the CPO's locations), without an interface role, which 2.1.1 and 2.0
// endpoints do not carry. Routes outside a role's paths are not listed.
func legacyListing(pattern string) route.Listing {
	_, path, _ := strings.Cut(pattern, " ")
	parts := strings.SplitN(strings.TrimPrefix(path, "/ocpi/"), "/", 4)
	if len(parts) < 3 || !v211.IsLegacy(parts[0]) || (parts[1] != "cpo" && parts[1] != "emsp") {
		return route.Listing{}
	}
	return route.Listing{Identifier: parts[2], Path: "/ocpi/" + strings.Join(parts[:3], "/")}
}
