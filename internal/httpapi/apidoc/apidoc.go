// Package apidoc turns the description of a route (a row's Doc) into an
// OpenAPI operation: parameters, the request body, the OCPI envelope around
// the success data, and the error answers every route may give.
package apidoc

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/openapi"
)

// Doc describes a route (its row's Doc) in the OpenAPI document served at
// /openapi.json. Every row with a method has one with a summary
// (TestRowsComplete fails otherwise):
//
//	{Pattern: "GET /ocpi/2.2.1/emsp/locations", Access: platform, Handler: s.handleEMSPLocations,
//		Doc: apidoc.Doc{
//			Summary: "List the directory (locations of every CPO)",
//			Data:    []ocpi.Location{}, // the type the handler puts in data
//			Paged:   true,
//			Spec:    "mod_locations.asciidoc",
//		}},
//
// The document derives the schemas from the Go types by reflection, wraps
// them in the OCPI envelope, and adds the error answers every route may give
// (401 on authenticated routes, 400/413/415 with a body, 404 with path
// parameters and on partners' routes, 429, 500, 503); Errors lists the others a handler gives (405,
// 409…). Enums and lengths Go types cannot say go in the module's Schemas
// function.
type Doc struct {
	Summary     string
	Description string
	// Tag groups the operation; default: the module named by the path.
	Tag string
	// Request is a value of the request body's type; nil: no body.
	Request any
	// BodyOptional: the request body may be left out.
	BodyOptional bool
	// Data is a value of the type of data in a success envelope; nil: the
	// envelope carries no data.
	Data any
	// DataSchema describes data when no Go type does (an enum string).
	DataSchema openapi.Schema
	// ErrorData is a value of the type of data an error envelope may carry
	// (a CommandResponse with REJECTED next to 2003 unknown location).
	ErrorData any
	// Created: success is HTTP 201.
	Created bool
	// Stored: a PUT of a client-owned object, 201 when it was new and 200
	// when it replaced one, without data either way.
	Stored bool
	// Paged: OCPI paging parameters (offset, limit, date_from, date_to) and
	// headers (Link, X-Total-Count, X-Limit).
	Paged bool
	// Params are query and header parameters, and path parameters whose
	// schema is not a plain string (they replace the generated ones).
	Params []openapi.Parameter
	// Errors are HTTP statuses the handler answers beyond the common ones.
	Errors []int
	// Raw replaces the envelope: the HTTP 200 answer's schema by media type
	// (health, metrics, this document).
	Raw map[string]openapi.Schema
	// Also adds media types to the envelope's success answer (GeoJSON).
	Also map[string]openapi.Schema
	// Relayed marks routes the hub forwards when OCPI-to-* names another
	// party: the addressed partner's answer is relayed as it is, whatever
	// its status (a "default" response).
	Relayed bool
	// RawErrors are other statuses of a Raw route, with the same media types
	// (the 503 of /readyz).
	RawErrors []int
	// Deprecated marks the legacy versions' routes.
	Deprecated bool
	// Spec names the OCPI 2.2.1 document of the module
	// (https://github.com/ocpi/ocpi/blob/2.2.1/<Spec>).
	Spec string
}

var wildcardRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

// Template returns the OpenAPI path template of a ServeMux path pattern
// ("{name...}" becomes "{name}").
func Template(path string) string { return wildcardRE.ReplaceAllString(path, "{$1}") }

// Operation returns the operation of a route: method and path as in its
// pattern ("{name...}" wildcards allowed), access as httpapi.Route.Access
// says, with the schemas of its types added to sch.
func Operation(sch *openapi.Schemas, method, path, access string, doc Doc) *openapi.Operation {
	op := &openapi.Operation{
		OperationID: operationID(method, path),
		Summary:     doc.Summary,
		Description: doc.Description,
		Tags:        []string{doc.Tag},
		Security:    []map[string][]string{},
		Responses:   map[string]*openapi.Response{},
		Deprecated:  doc.Deprecated,
	}
	if doc.Tag == "" {
		op.Tags = []string{tagOf(path)}
	}
	if doc.Spec != "" {
		op.ExternalDocs = &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.2.1/" + doc.Spec, Description: "OCPI 2.2.1"}
	}
	switch access {
	case "admin":
		op.Security = []map[string][]string{{"adminToken": {}}}
	case "platform", "registering":
		op.Security = []map[string][]string{{"ocpiToken": {}}}
	case "subscriber":
		op.Security = []map[string][]string{{"ocpiToken": {}}, {"adminToken": {}}}
	}
	if access != "public" && access != "registering" && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch) {
		// A repeated X-Request-ID whose first request is still running
		// after the wait (idempotency.go).
		doc.Errors = append(doc.Errors, http.StatusConflict)
	}

	// Parameters: path wildcards, paging, then the route's own.
	overrides := map[string]openapi.Parameter{}
	for _, p := range doc.Params {
		if p.In == "path" {
			overrides[p.Name] = p
		}
	}
	for _, m := range wildcardRE.FindAllStringSubmatch(path, -1) {
		p, ok := overrides[m[1]]
		if !ok {
			p = openapi.Parameter{Name: m[1], In: "path", Schema: openapi.Schema{"type": "string"}}
		}
		p.Required = true
		op.Parameters = append(op.Parameters, p)
	}
	if doc.Paged {
		op.Parameters = append(op.Parameters, pagingParams...)
	}
	for _, p := range doc.Params {
		if p.In != "path" {
			op.Parameters = append(op.Parameters, p)
		}
	}
	if doc.Request != nil {
		op.RequestBody = &openapi.RequestBody{Required: !doc.BodyOptional, Content: map[string]openapi.MediaType{
			"application/json": {Schema: openapi.NotNull(sch.Of(doc.Request))},
		}}
	}

	if doc.Raw != nil {
		content := map[string]openapi.MediaType{}
		for mt, s := range doc.Raw {
			content[mt] = openapi.MediaType{Schema: s}
		}
		op.Responses["200"] = &openapi.Response{Description: "OK", Content: content}
		for _, st := range doc.RawErrors {
			op.Responses[strconv.Itoa(st)] = &openapi.Response{Description: http.StatusText(st), Content: content}
		}
		// Raw answers under /ocpi and /admin still fail with envelopes (an
		// OCPI error may come with HTTP 200).
		if strings.HasPrefix(path, "/ocpi/") || strings.HasPrefix(path, "/admin/") {
			if _, ok := content["application/json"]; !ok {
				content["application/json"] = openapi.MediaType{Schema: openapi.Ref("OcpiErrorResponse")}
			}
			addErrors(op, path, access, doc, openapi.Ref("OcpiErrorResponse"))
		}
		return op
	}

	var success openapi.Schema
	if doc.Data != nil || doc.DataSchema != nil {
		data := doc.DataSchema
		if data == nil {
			data = openapi.NotNull(sch.Of(doc.Data))
		}
		success = openapi.Schema{"allOf": []any{openapi.Ref("OcpiSuccess"), openapi.Schema{
			"required":   []any{"data"},
			"properties": openapi.Schema{"data": data},
		}}}
	} else {
		success = openapi.Schema{"allOf": []any{openapi.Ref("OcpiSuccess"), openapi.Schema{"properties": openapi.Schema{"data": false}}}}
	}
	ok := &openapi.Response{Description: "OCPI success (status_code 1xxx)", Content: jsonContent(success)}
	for mt, sch := range doc.Also {
		ok.Content[mt] = openapi.MediaType{Schema: sch}
	}
	if doc.Paged {
		ok.Headers = pagingHeaders
	}
	// HTTP 200 also carries the OCPI errors mapped to it (2001 invalid
	// request, 3001 partner API error, 4xxx hub errors).
	errorEnvelope := openapi.Ref("OcpiErrorResponse")
	if doc.ErrorData != nil {
		errorEnvelope = openapi.Schema{"allOf": []any{openapi.Ref("OcpiErrorBase"),
			openapi.Schema{"properties": openapi.Schema{"data": openapi.NotNull(sch.Of(doc.ErrorData))}}}}
	}
	ok200 := &openapi.Response{Description: "OCPI success (1xxx), or an OCPI error answered with HTTP 200 (2001, 2002, 3001, 400x)",
		Headers: ok.Headers, Content: jsonContent(openapi.Schema{"anyOf": []any{success, errorEnvelope}})}
	for mt, sch := range doc.Also {
		ok200.Content[mt] = openapi.MediaType{Schema: sch}
	}
	switch {
	case doc.Created:
		op.Responses["201"] = ok
		op.Responses["200"] = &openapi.Response{Description: "OCPI error answered with HTTP 200 (2001 invalid request, 3001 partner API error…)", Content: jsonContent(errorEnvelope)}
	case doc.Stored:
		op.Responses["201"] = &openapi.Response{Description: "stored: the object is new", Headers: ok.Headers, Content: ok.Content}
		ok200.Description = "stored: the object replaced an existing one; or an OCPI error answered with HTTP 200 (2001…)"
		op.Responses["200"] = ok200
	default:
		op.Responses["200"] = ok200
	}
	addErrors(op, path, access, doc, errorEnvelope)
	if doc.Relayed {
		op.Responses["default"] = &openapi.Response{Description: "the addressed partner's answer (OCPI-to-* names another party), relayed as it is",
			Content: jsonContent(openapi.Ref("OcpiAnyResponse"))}
		op.Parameters = append(op.Parameters, RoutingHeaders...)
	}
	return op
}

// addErrors declares the error answers a route may give: 500 and 503
// always; 401 and 429 when it needs a token; 400, 413 and 415 with a body;
// 404 with path parameters and on partners' routes (an unknown object,
// another party's, or a module of a role the caller does not play); and
// the route's own.
func addErrors(op *openapi.Operation, path, access string, doc Doc, envelope openapi.Schema) {
	errs := []int{http.StatusInternalServerError, http.StatusServiceUnavailable}
	if access != "public" {
		errs = append(errs, http.StatusUnauthorized, http.StatusTooManyRequests)
	}
	if doc.Request != nil {
		errs = append(errs, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	if strings.Contains(path, "{") || access == "platform" {
		errs = append(errs, http.StatusNotFound)
	}
	errs = append(errs, doc.Errors...)
	for _, st := range errs {
		if _, set := op.Responses[strconv.Itoa(st)]; set {
			continue
		}
		r := &openapi.Response{Description: http.StatusText(st), Content: jsonContent(envelope)}
		if st == http.StatusUnauthorized {
			r.Headers = map[string]openapi.Header{"WWW-Authenticate": {Schema: openapi.Schema{"type": "string"}}}
		}
		if st == http.StatusTooManyRequests {
			r.Headers = map[string]openapi.Header{"Retry-After": {Description: "seconds", Schema: openapi.Schema{"type": "integer"}}}
			for name, desc := range rateLimitHeaderDocs() {
				r.Headers[name] = openapi.Header{Description: desc, Schema: openapi.Schema{"type": "integer"}}
			}
		}
		op.Responses[strconv.Itoa(st)] = r
	}
}

func jsonContent(s openapi.Schema) map[string]openapi.MediaType {
	return map[string]openapi.MediaType{"application/json": {Schema: s}}
}

// DefineEnvelope adds the OCPI envelope's component schemas.
func DefineEnvelope(sch *openapi.Schemas) {
	sch.Define("OcpiSuccess", openapi.Schema{
		"description": "OCPI response envelope of a success (status_code 1000–1999).",
		"type":        "object",
		"required":    []any{"status_code", "timestamp"},
		"properties": openapi.Schema{
			"status_code":    openapi.Schema{"type": "integer", "minimum": 1000, "maximum": 1999},
			"status_message": openapi.Schema{"type": "string"},
			"timestamp":      openapi.Schema{"type": "string", "format": "date-time"},
		},
		// No error object on a success.
		"not": openapi.Schema{"required": []any{"error"}},
	})
	sch.Define("OcpiAnyResponse", openapi.Schema{
		"description": "an OCPI response envelope of any kind",
		"type":        "object",
		"required":    []any{"status_code"},
		"properties":  openapi.Schema{"status_code": openapi.Schema{"type": "integer"}},
	})
	sch.Define("OcpiError", openapi.Schema{
		"type":     "object",
		"required": []any{"code", "description"},
		"properties": openapi.Schema{
			"code":        openapi.Schema{"type": "string", "description": "machine-readable error code, e.g. INVALID_REQUEST, NOT_FOUND, UNAUTHORIZED"},
			"description": openapi.Schema{"type": "string"},
			"details": openapi.Schema{
				"type":     "object",
				"required": []any{"field", "issue"},
				"properties": openapi.Schema{
					"field": openapi.Schema{"type": "string", "description": "JSON path of the offending field, or a parameter name"},
					"issue": openapi.Schema{"type": "string"},
				},
			},
		},
	})
	// errorEnvelope is an error's envelope; its properties are a fresh map
	// each time, so that one can forbid data.
	errorEnvelope := func(description string) openapi.Schema {
		return openapi.Schema{
			"description": description,
			"type":        "object",
			"required":    []any{"status_code", "timestamp", "error"},
			"properties": openapi.Schema{
				"status_code":    openapi.Schema{"type": "integer", "minimum": 2000, "maximum": 9999},
				"status_message": openapi.Schema{"type": "string"},
				"timestamp":      openapi.Schema{"type": "string", "format": "date-time"},
				"error":          openapi.Ref("OcpiError"),
			},
		}
	}
	sch.Define("OcpiErrorBase", errorEnvelope("OCPI response envelope of an error (status_code 2000 and up)."))
	response := errorEnvelope("OCPI response envelope of an error (status_code 2000 and up); never carries data.")
	response["properties"].(openapi.Schema)["data"] = false
	sch.Define("OcpiErrorResponse", response)
}

// RoutingHeaders address a request to another party through the hub
// (transport.md §8).
var RoutingHeaders = []openapi.Parameter{
	{Name: "OCPI-to-country-code", In: "header", Description: "the addressed party, when not the hub", Schema: openapi.Schema{"type": "string", "minLength": 2, "maxLength": 2}},
	{Name: "OCPI-to-party-id", In: "header", Schema: openapi.Schema{"type": "string", "minLength": 3, "maxLength": 3}},
	{Name: "OCPI-from-country-code", In: "header", Description: "the requesting party, when the platform hosts several", Schema: openapi.Schema{"type": "string", "minLength": 2, "maxLength": 2}},
	{Name: "OCPI-from-party-id", In: "header", Schema: openapi.Schema{"type": "string", "minLength": 3, "maxLength": 3}},
}

var pagingParams = []openapi.Parameter{
	{Name: "offset", In: "query", Description: "index of the first object (default 0)", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
	{Name: "limit", In: "query", Description: "maximum number of objects (capped by the server; X-Limit says by how much)", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
	{Name: "date_from", In: "query", Description: "only objects with last_updated at or after this time", Schema: openapi.Schema{"type": "string", "format": "date-time"}},
	{Name: "date_to", In: "query", Description: "only objects with last_updated before this time", Schema: openapi.Schema{"type": "string", "format": "date-time"}},
}

var pagingHeaders = map[string]openapi.Header{
	"Link":          {Description: `<url>; rel="next" when more objects follow`, Schema: openapi.Schema{"type": "string"}},
	"X-Total-Count": {Description: "number of objects matching the request", Schema: openapi.Schema{"type": "integer"}},
	"X-Limit":       {Description: "the page size applied", Schema: openapi.Schema{"type": "integer"}},
}

// operationID names an operation after its method and path:
// POST /admin/parties/{id}/suspend → postAdminPartiesByIdSuspend.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		if m := wildcardRE.FindStringSubmatch(seg); m != nil {
			b.WriteString("By")
			seg = m[1]
		}
		for _, word := range strings.FieldsFunc(seg, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// tagOf names the module a path belongs to.
func tagOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "admin":
		return "admin"
	case segs[0] != "ocpi":
		return "operations"
	case len(segs) <= 2:
		return "versions"
	}
	for _, s := range segs[2:] {
		if s != "cpo" && s != "emsp" && s != "ptp" && !strings.HasPrefix(s, "{") {
			return s
		}
	}
	return "versions"
}

// rateLimitHeaderDocs are the rate-limit headers of every limited answer.
func rateLimitHeaderDocs() map[string]string {
	return map[string]string{
		"X-RateLimit-Limit":     "requests allowed in the window nearest exhaustion (second, minute or hour)",
		"X-RateLimit-Remaining": "requests left in that window",
		"X-RateLimit-Reset":     "Unix time (seconds) when that window restarts",
	}
}
