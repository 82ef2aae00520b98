package httpapi

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// operationsDocs describes the operations endpoints (not OCPI envelopes).
func operationsDocs() apiDocs {
	status := func(props openapi.Schema, required ...any) openapi.Schema {
		return openapi.Schema{"type": "object", "required": required, "properties": props}
	}
	str := openapi.Schema{"type": "string"}
	return apiDocs{
		Tag: openapi.Tag{Name: "operations", Description: "Health, readiness, metrics and this document; no token needed."},
		Routes: map[string]Doc{
			"GET /healthz": {
				Summary: "Liveness: the process answers",
				Raw:     map[string]openapi.Schema{"application/json": status(openapi.Schema{"status": openapi.Schema{"const": "ok"}}, "status")},
			},
			"GET /readyz": {
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
			},
			"GET /metrics": {
				Summary: "Prometheus metrics: requests by route and status, latencies, job outcomes, Go runtime",
				Raw:     map[string]openapi.Schema{"text/plain": str, "application/openmetrics-text": str},
			},
			"GET /openapi.json": {
				Summary: "This document (OpenAPI 3.1)",
				Raw: map[string]openapi.Schema{"application/json": status(openapi.Schema{
					"openapi": openapi.Schema{"const": openapi.Version},
					"paths":   openapi.Schema{"type": "object"},
				}, "openapi", "info", "paths")},
			},
		},
	}
}

// coreDocs describes versions, credentials and hub client info.
func coreDocs() apiDocs {
	return apiDocs{
		Tag: openapi.Tag{Name: "credentials", Description: "Registration: the credentials handshake (token A → token B → token C), rotation and unregistration.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.2.1/credentials.asciidoc"}},
		Routes: map[string]Doc{
			"GET /ocpi/versions": {
				Summary: "List the OCPI versions the hub speaks", Tag: "versions",
				Data: []ocpi.Version{}, Spec: "version_information_endpoint.asciidoc",
			},
			"GET /ocpi/2.2.1": {
				Summary: "Version details: every 2.2.1 endpoint with its module identifier and interface role", Tag: "versions",
				Data: ocpi.VersionDetails{}, Spec: "version_information_endpoint.asciidoc",
			},
			"GET /ocpi/2.2.1/credentials": {
				Summary: "The hub's credentials, with the token the caller used",
				Data:    ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			},
			"POST /ocpi/2.2.1/credentials": {
				Summary:     "Register with token A: the hub reads the caller's versions with token B and answers with token C",
				Description: "Errors: 3001 the caller's versions or details could not be read with token B, 3002 no common version, 3003 a required endpoint is missing (credentials; tokens SENDER for an eMSP; a CPO without locations SENDER registers as push-only), 2001 invalid credentials or a party that is taken or not invited; HTTP 405 when already registered.",
				Request:     ocpi.Credentials{}, Data: ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			},
			"PUT /ocpi/2.2.1/credentials": {
				Summary: "Update a registration (new token B, URL or roles) and get a new token C; the old tokens stop working",
				Request: ocpi.Credentials{}, Data: ocpi.Credentials{}, Spec: "credentials.asciidoc", Errors: []int{405},
			},
			"DELETE /ocpi/2.2.1/credentials": {
				Summary: "Unregister: the caller's tokens stop working and its parties are released",
				Spec:    "credentials.asciidoc", Errors: []int{405},
			},
			"GET /ocpi/2.2.1/hubclientinfo": {
				Summary: "Every party reachable through the hub and its connection status", Tag: "hubclientinfo",
				Data: []party.ClientInfo{}, Paged: true, Spec: "mod_hub_client_info.asciidoc",
			},
		},
		Schemas: func(s *openapi.Schemas) {
			s.Field(ocpi.Endpoint{}, "role", openapi.Schema{"enum": []any{ocpi.InterfaceSender, ocpi.InterfaceReceiver}})
			s.Field(ocpi.Endpoint{}, "identifier", openapi.Schema{"maxLength": 255})
			s.Field(ocpi.Endpoint{}, "url", openapi.Schema{"format": "uri"})
			s.Field(ocpi.Version{}, "url", openapi.Schema{"format": "uri"})
			s.Field(ocpi.Credentials{}, "token", openapi.Schema{"maxLength": 64})
			s.Field(ocpi.Credentials{}, "url", openapi.Schema{"format": "uri", "maxLength": 255})
			s.Field(ocpi.CredentialsRole{}, "role", openapi.Schema{"enum": anyOf(party.Roles)})
			s.Field(ocpi.CredentialsRole{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(ocpi.CredentialsRole{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.BusinessDetails{}, "name", openapi.Schema{"maxLength": 100})
			s.Field(party.ClientInfo{}, "role", openapi.Schema{"enum": anyOf(party.Roles)})
			s.Field(party.ClientInfo{}, "status", openapi.Schema{"enum": []any{party.ClientConnected, party.ClientOffline, party.ClientPlanned, party.ClientSuspended}})
			s.Field(party.ClientInfo{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(party.ClientInfo{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
		},
	}
}

// anyOf converts a string list for an enum.
func anyOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
