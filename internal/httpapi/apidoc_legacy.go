package httpapi

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// legacyDocs describes the deprecated OCPI 2.1.1 and 2.0 surfaces, the
// 2.3.0 version entry (PTPs) and the per-role versions lists. 2.1.1 bodies
// are described by the 2.1.1 types; 2.0 bodies, which the hub writes by
// rewriting 2.1.1 ones (decimals as strings, renamed fields), as OCPI
// objects.
func legacyDocs() apiDocs {
	routes := map[string]Doc{}
	for _, role := range []party.Role{party.RoleCPO, party.RoleEMSP} {
		routes["GET /ocpi/"+roleSegment(role)+"/versions"] = Doc{Summary: "The versions list for a " + string(role) + " (the seed's per-role form)",
			Data: []ocpi.Version{}, Tag: "versions", Spec: "version_information_endpoint.asciidoc"}
	}
	routes["GET /ocpi/2.3.0"] = Doc{Summary: "2.3.0 version details (Payment Terminal Providers: credentials, payments, commands)",
		Data: ocpi.VersionDetails{}, Tag: "versions", Spec: "version_information_endpoint.asciidoc"}
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		d := coreDocs().Routes[m+" /ocpi/2.2.1/credentials"]
		d.Summary = "2.3.0: " + d.Summary
		routes[m+" /ocpi/2.3.0/credentials"] = d
	}
	v22Docs(routes)
	for _, m := range []string{"POST", "PUT"} {
		routes[m+" /ocpi/{version}/credentials"] = Doc{Summary: "Credentials of a version the hub does not speak: 3002 unsupported version",
			Tag: "credentials", Request: map[string]any{}, Params: []openapi.Parameter{{Name: "version", In: "path", Schema: openapi.Schema{"type": "string"}}}}
	}

	party3 := func(id string) []openapi.Parameter {
		return []openapi.Parameter{
			{Name: "country_code", In: "path", Schema: openapi.Schema{"type": "string", "minLength": 2, "maxLength": 2}},
			{Name: "party_id", In: "path", Schema: openapi.Schema{"type": "string", "minLength": 3, "maxLength": 3}},
			{Name: id, In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 39}},
		}
	}
	for _, v := range []string{v211.V211, v211.V20} {
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
		doc := func(d Doc) Doc {
			d.Tag, d.Deprecated = "legacy "+v, true
			d.Description = "Deprecated: OCPI " + v + ", converted to and from the hub's 2.2.1 model. " + d.Description
			return d
		}
		routes["GET /ocpi/"+v] = doc(Doc{Summary: v + " version details", Data: ocpi.VersionDetails{}})
		for _, role := range party.LegacyRoles {
			routes["GET /ocpi/"+v+"/"+roleSegment(role)] = doc(Doc{Summary: v + " version details for a " + string(role), Data: ocpi.VersionDetails{}})
		}
		for _, prefix := range []string{"/ocpi/" + v, "/ocpi/" + v + "/cpo", "/ocpi/" + v + "/emsp"} {
			routes["GET "+prefix+"/credentials"] = doc(Doc{Summary: "The hub's " + v + " credentials", Data: v211.Credentials{}, Errors: []int{405}})
			routes["POST "+prefix+"/credentials"] = doc(Doc{Summary: "Register over " + v + " with token A", Request: v211.Credentials{}, Data: v211.Credentials{}, Errors: []int{405}})
			routes["PUT "+prefix+"/credentials"] = doc(Doc{Summary: "Update a " + v + " registration", Request: v211.Credentials{}, Data: v211.Credentials{}, Errors: []int{405}})
			routes["DELETE "+prefix+"/credentials"] = doc(Doc{Summary: "Unregister", Errors: []int{405}})
		}
		cpoLoc := "/ocpi/" + v + "/cpo/locations/{country_code}/{party_id}/{location_id}"
		for _, level := range []struct {
			suffix string
			obj    any
		}{{"", v211.Location{}}, {"/{evse_uid}", v211.EVSE{}}, {"/{evse_uid}/{connector_id}", v211.Connector{}}} {
			p := cpoLoc + level.suffix
			routes["GET "+p] = doc(Doc{Summary: "The hub's copy of a location, EVSE or connector", Data: obj(level.obj), Params: party3("location_id")})
			routes["PUT "+p] = doc(Doc{Summary: "Push a location, EVSE or connector", Request: obj(level.obj), Stored: true, Params: party3("location_id")})
			routes["PATCH "+p] = doc(Doc{Summary: "Update fields of a location, EVSE or connector", Request: map[string]any{}, Params: party3("location_id")})
		}
		routes["GET /ocpi/"+v+"/emsp/locations"] = doc(Doc{Summary: "The directory, converted", Data: list([]v211.Location{}), Paged: true})
		routes["GET /ocpi/"+v+"/emsp/locations/{location_id}"] = doc(Doc{Summary: "One location of the directory", Data: obj(v211.Location{})})
		routes["GET /ocpi/"+v+"/emsp/locations/{location_id}/{evse_uid}"] = doc(Doc{Summary: "One EVSE of the directory", Data: obj(v211.EVSE{})})
		routes["GET /ocpi/"+v+"/emsp/locations/{location_id}/{evse_uid}/{connector_id}"] = doc(Doc{Summary: "One connector of the directory", Data: obj(v211.Connector{})})
		tar := "/ocpi/" + v + "/cpo/tariffs/{country_code}/{party_id}/{tariff_id}"
		routes["GET "+tar] = doc(Doc{Summary: "The hub's copy of a tariff", Data: obj(v211.Tariff{}), Params: party3("tariff_id")})
		routes["PUT "+tar] = doc(Doc{Summary: "Push a tariff", Request: obj(v211.Tariff{}), Stored: true, Params: party3("tariff_id")})
		routes["PATCH "+tar] = doc(Doc{Summary: "Update fields of a tariff", Request: map[string]any{}, Params: party3("tariff_id")})
		routes["DELETE "+tar] = doc(Doc{Summary: "Delete a tariff", Params: party3("tariff_id")})
		routes["GET /ocpi/"+v+"/emsp/tariffs"] = doc(Doc{Summary: "Every CPO's tariffs, converted", Data: list([]v211.Tariff{}), Paged: true})
		ses := "/ocpi/" + v + "/cpo/sessions/{country_code}/{party_id}/{session_id}"
		routes["GET "+ses] = doc(Doc{Summary: "The hub's copy of a session", Data: obj(v211.Session{}), Params: party3("session_id")})
		routes["PUT "+ses] = doc(Doc{Summary: "Push a session (the token is found by its auth_id)", Request: obj(v211.Session{}), Stored: true, Params: party3("session_id")})
		routes["PATCH "+ses] = doc(Doc{Summary: "Update a session", Request: map[string]any{}, Params: party3("session_id")})
		if v == v211.V20 {
			routes["DELETE "+ses] = doc(Doc{Summary: "2.0: delete a session", Params: party3("session_id")})
		}
		routes["GET /ocpi/"+v+"/emsp/sessions"] = doc(Doc{Summary: "The sessions of the eMSP's tokens, converted", Data: list([]v211.Session{}), Paged: true})
		routes["POST /ocpi/"+v+"/cpo/cdrs"] = doc(Doc{Summary: "Push a CDR", Request: obj(v211.CDR{}), Stored: true})
		routes["GET /ocpi/"+v+"/cpo/cdrs/{country_code}/{party_id}/{cdr_id}"] = doc(Doc{Summary: "A CDR at the URL its POST answered with", Data: obj(v211.CDR{}), Params: party3("cdr_id")})
		routes["GET /ocpi/"+v+"/emsp/cdrs"] = doc(Doc{Summary: "The CDRs of the eMSP's tokens, converted", Data: list([]v211.CDR{}), Paged: true})
		tok := "/ocpi/" + v + "/emsp/tokens/{country_code}/{party_id}/{token_uid}"
		routes["GET "+tok] = doc(Doc{Summary: "The hub's copy of a token", Data: obj(v211.Token{}), Params: party3("token_uid")})
		routes["PUT "+tok] = doc(Doc{Summary: "Push a token", Request: obj(v211.Token{}), Stored: true, Params: party3("token_uid")})
		routes["PATCH "+tok] = doc(Doc{Summary: "Update a token", Request: map[string]any{}, Params: party3("token_uid")})
		routes["GET /ocpi/"+v+"/cpo/tokens"] = doc(Doc{Summary: "Every eMSP's tokens, converted", Data: list([]v211.Token{}), Paged: true})
		if v == v211.V211 {
			routes["POST /ocpi/"+v+"/cpo/tokens/{token_uid}/authorize"] = doc(Doc{Summary: "Real-time authorization", Request: v211.LocationReferences{}, BodyOptional: true,
				Data: v211.AuthorizationInfo{}, Relayed: true})
			routes["POST /ocpi/"+v+"/emsp/commands/{command}"] = doc(Doc{Summary: "Send a command to a CPO through the hub", Request: map[string]any{},
				Data: v211.CommandResponse{}, ErrorData: v211.CommandResponse{}, Relayed: true})
			routes["POST /ocpi/"+v+"/cpo/commands/{command}/{id}"] = doc(Doc{Summary: "A command's result from the CPO", Request: map[string]any{}})
		}
	}
	return apiDocs{
		Tag:    openapi.Tag{Name: "legacy 2.1.1", Description: "Deprecated: partners on OCPI 2.1.1 (and 2.0), converted to and from 2.2.1."},
		Routes: routes,
		Schemas: func(s *openapi.Schemas) {
			s.Type(v211.DateTime{}, openapi.Schema{"type": "string", "format": "date-time"})
		},
	}
}
