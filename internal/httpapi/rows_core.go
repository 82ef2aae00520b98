package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
)

// operationRows are the operations endpoints (not OCPI envelopes).
func (s *Server) operationRows() route.Module {
	status := func(props openapi.Schema, required ...any) openapi.Schema {
		return openapi.Schema{"type": "object", "required": required, "properties": props}
	}
	str := openapi.Schema{"type": "string"}
	return route.Module{
		Tag: openapi.Tag{Name: "operations", Description: "Health, readiness, metrics and this document; no token needed."},
		Rows: []route.Row{
			{Pattern: "GET /healthz", Access: route.Public, Plain: http.HandlerFunc(s.handleHealthz), Doc: route.Doc{
				Summary: "Liveness: the process answers",
				Raw:     map[string]openapi.Schema{"application/json": status(openapi.Schema{"status": openapi.Schema{"const": "ok"}}, "status")},
			}},
			{Pattern: "GET /readyz", Access: route.Public, Plain: http.HandlerFunc(s.handleReadyz), Doc: route.Doc{
				Summary:     "Readiness: the database answers, migrations are done, the server is not draining",
				Description: "HTTP 503 while shutting down, when the database is unreachable or its schema is behind: a load balancer takes the replica out of rotation.",
				Raw: map[string]openapi.Schema{"application/json": status(openapi.Schema{
					"status":         str,
					"engine":         openapi.Schema{"enum": []any{"sqlite", "postgres"}},
					"schema_version": openapi.Schema{"type": "integer"},
					"current":        openapi.Schema{"type": "integer"},
					"latest":         openapi.Schema{"type": "integer"},
					"error":          str,
				}, "status")},
				RawErrors: []int{503},
			}},
			{Pattern: "GET /metrics", Access: route.Public, Plain: s.metricsHandler, Doc: route.Doc{
				Summary: "Prometheus metrics: requests by route and status, latencies, job outcomes, Go runtime",
				Raw:     map[string]openapi.Schema{"text/plain": str, "application/openmetrics-text": str},
			}},
			{Pattern: "GET /openapi.json", Access: route.Public, Plain: http.HandlerFunc(s.handleOpenAPI), Doc: route.Doc{
				Summary: "This document (OpenAPI 3.1)",
				Raw: map[string]openapi.Schema{"application/json": status(openapi.Schema{
					"openapi": openapi.Schema{"const": openapi.Version},
					"paths":   openapi.Schema{"type": "object"},
				}, "openapi", "info", "paths")},
			}},
		},
	}
}

// coreRows are versions, credentials and hub client info, in 2.2.1 and in
// the versions beside it (2.3.0 for PTPs, 2.2).
func (s *Server) coreRows() route.Module {
	cred := func(version string) []route.Row {
		l := route.Listing{Identifier: "credentials", Role: ocpi.InterfaceSender, Path: "/ocpi/" + version + "/credentials"}
		p := l.Path
		prefix, success, none := "", route.Data("Credentials"), route.Data("")
		switch version {
		case ocpi.Version230:
			prefix, success = "2.3.0: ", route.Data("Credentials230")
		case Version22:
			// 2.2 details are the 2.2.1 ones under /ocpi/2.2/; its answers
			// are checked for the envelope only.
			prefix, success, none, l = "2.2: ", nil, nil, route.Listing{}
		}
		return []route.Row{
			{Pattern: "GET " + p, Access: route.Registering, Handler: s.handleCredentialsGet, Listed: l, Schema: success, Doc: route.Doc{
				Summary: prefix + "The hub's credentials, with the token the caller used",
				Data:    ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			}},
			{Pattern: "POST " + p, Access: route.Registering, Handler: s.handleCredentialsPost, Listed: l, Schema: success, Doc: route.Doc{
				Summary:     prefix + "Register with token A: the hub reads the caller's versions with token B and answers with token C",
				Description: "Errors: 3001 the caller's versions or details could not be read with token B, 3002 no common version, 3003 a required endpoint is missing (credentials; tokens SENDER for an eMSP; a CPO without locations SENDER registers as push-only), 2001 invalid credentials or a party that is taken or not invited; HTTP 405 when already registered.",
				Request:     ocpi.Credentials{}, Data: ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			}},
			{Pattern: "PUT " + p, Access: route.Registering, Handler: s.handleCredentialsPut, Listed: l, Schema: success, Doc: route.Doc{
				Summary: prefix + "Update a registration (new token B, URL or roles) and get a new token C; the old tokens stop working",
				Request: ocpi.Credentials{}, Data: ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			}},
			{Pattern: "DELETE " + p, Access: route.Registering, Handler: s.handleCredentialsDelete, Listed: l, Schema: none, Doc: route.Doc{
				Summary: prefix + "Unregister: the caller's tokens stop working and its parties are released",
				Spec:    "credentials.asciidoc", Errors: []int{405},
			}},
		}
	}
	details := route.Doc{Tag: "versions", Data: ocpi.VersionDetails{}, Spec: "version_information_endpoint.asciidoc"}
	with := func(d route.Doc, summary string) route.Doc { d.Summary = summary; return d }
	rows := []route.Row{
		{Pattern: "GET /ocpi/versions", Access: route.Registering, Handler: s.handleVersions, Schema: route.Data("[]Version"), Doc: route.Doc{
			Summary: "List the OCPI versions the hub speaks", Tag: "versions",
			Data: []ocpi.Version{}, Spec: "version_information_endpoint.asciidoc",
		}},
		{Pattern: "GET /ocpi/2.2.1", Access: route.Registering, Handler: s.handleVersionDetails221, Schema: route.Data("VersionDetail"),
			Doc: with(details, "Version details: every 2.2.1 endpoint with its module identifier and interface role")},
		{Pattern: "GET /ocpi/2.3.0", Access: route.Registering, Handler: s.handleVersionDetails230, Schema: route.Data("VersionDetail"),
			Doc: with(details, "2.3.0 version details (Payment Terminal Providers: credentials, payments, commands)")},
		{Pattern: "GET /ocpi/2.2", Access: route.Registering, Handler: s.handleVersionDetails22,
			Doc: with(details, "2.2 version details (the 2.2.1 modules under /ocpi/2.2/)")},
	}
	rows = append(rows, cred(DefaultVersion)...)
	rows = append(rows, cred(ocpi.Version230)...)
	rows = append(rows, cred(Version22)...)
	rows = append(rows, route.Row{Pattern: "GET /ocpi/2.2.1/hubclientinfo", Access: route.Platform, Handler: s.handleHubClientInfo,
		Listed: route.Listing{Identifier: "hubclientinfo", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/hubclientinfo"}, Schema: route.Data("[]ClientInfo"), Doc: route.Doc{
			Summary: "Every party reachable through the hub and its connection status", Tag: "hubclientinfo",
			Data: []clientinfo.ClientInfo{}, Paged: true, Spec: "mod_hub_client_info.asciidoc",
		}})
	// Registrations in a version we do not speak: 3002 with the list of
	// those we do.
	for _, m := range []string{"POST", "PUT"} {
		rows = append(rows, route.Row{Pattern: m + " /ocpi/{version}/credentials", Access: route.Registering, Handler: s.handleUnsupportedVersion, Doc: route.Doc{
			Summary: "Credentials of a version the hub does not speak: 3002 unsupported version",
			Tag:     "credentials", Request: map[string]any{}, Params: []openapi.Parameter{{Name: "version", In: "path", Schema: openapi.Schema{"type": "string"}}}}})
	}
	return route.Module{
		Tag: openapi.Tag{Name: "credentials", Description: "Registration: the credentials handshake (token A → token B → token C), rotation and unregistration.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.2.1/credentials.asciidoc"}},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			s.Field(ocpi.Endpoint{}, "role", openapi.Schema{"enum": []any{ocpi.InterfaceSender, ocpi.InterfaceReceiver}})
			s.Field(ocpi.Endpoint{}, "identifier", openapi.Schema{"maxLength": 255})
			s.Field(ocpi.Endpoint{}, "url", openapi.Schema{"format": "uri"})
			s.Field(ocpi.Version{}, "url", openapi.Schema{"format": "uri"})
			s.Field(ocpi.Credentials{}, "token", openapi.Schema{"maxLength": 64})
			s.Field(ocpi.Credentials{}, "url", openapi.Schema{"format": "uri", "maxLength": 255})
			s.Field(ocpi.CredentialsRole{}, "role", openapi.Schema{"enum": route.AnyOf(party.Roles)})
			s.Field(ocpi.CredentialsRole{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(ocpi.CredentialsRole{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.BusinessDetails{}, "name", openapi.Schema{"maxLength": 100})
			s.Field(clientinfo.ClientInfo{}, "role", openapi.Schema{"enum": route.AnyOf(party.Roles)})
			s.Field(clientinfo.ClientInfo{}, "status", openapi.Schema{"enum": []any{party.ClientConnected, party.ClientOffline, clientinfo.Planned, clientinfo.Suspended}})
			s.Field(clientinfo.ClientInfo{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(clientinfo.ClientInfo{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
		},
	}
}
