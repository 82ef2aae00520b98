// Package openapi builds and checks OpenAPI 3.1 documents: the types of the
// document, JSON Schemas derived from Go types by reflection (so a schema
// cannot drift from the type a handler encodes), and a Validator that checks
// an HTTP exchange against the document (declared status, media type, body
// schema).
//
// The package knows nothing of ocpihub's routes: internal/httpapi describes
// its route table with it and serves the result at /openapi.json, and
// internal/hubtest validates every response of the test suite with a
// Validator.
package openapi

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Version is the OpenAPI version of the documents built here.
const Version = "3.1.0"

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), as
// JSON would decode it.
type Schema = map[string]any

// Document is an OpenAPI 3.1 document.
type Document struct {
	OpenAPI    string               `json:"openapi"`
	Info       Info                 `json:"info"`
	Servers    []Server             `json:"servers,omitempty"`
	Tags       []Tag                `json:"tags,omitempty"`
	Paths      map[string]*PathItem `json:"paths"`
	Components Components           `json:"components"`
}

// Info describes the API.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// Server is a base URL of the API.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Tag groups operations.
type Tag struct {
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	ExternalDocs *ExternalDocs `json:"externalDocs,omitempty"`
}

// ExternalDocs points to documentation elsewhere.
type ExternalDocs struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// PathItem holds the operations of one path, by lower-case HTTP method.
type PathItem map[string]*Operation

// Operation is one method on one path.
type Operation struct {
	OperationID string   `json:"operationId"`
	Summary     string   `json:"summary,omitempty"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Security lists the accepted schemes; an empty, non-nil list marks a
	// public operation.
	Security     []map[string][]string `json:"security"`
	Parameters   []Parameter           `json:"parameters,omitempty"`
	RequestBody  *RequestBody          `json:"requestBody,omitempty"`
	Responses    map[string]*Response  `json:"responses"`
	ExternalDocs *ExternalDocs         `json:"externalDocs,omitempty"`
	Deprecated   bool                  `json:"deprecated,omitempty"`
}

// Parameter is a path, query or header parameter.
type Parameter struct {
	Name        string `json:"name"`
	In          string `json:"in"` // path, query, header
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Schema      Schema `json:"schema"`
}

// RequestBody is the body an operation accepts.
type RequestBody struct {
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required"`
	Content     map[string]MediaType `json:"content"`
}

// Response is one declared answer.
type Response struct {
	Description string               `json:"description"`
	Headers     map[string]Header    `json:"headers,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// Header is a response header.
type Header struct {
	Description string `json:"description,omitempty"`
	Schema      Schema `json:"schema"`
}

// MediaType holds the schema of a body of one media type.
type MediaType struct {
	Schema Schema `json:"schema"`
}

// Components are the reusable parts.
type Components struct {
	Schemas         map[string]Schema         `json:"schemas,omitempty"`
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes,omitempty"`
}

// SecurityScheme is an authentication scheme.
type SecurityScheme struct {
	Type        string `json:"type"` // apiKey, http, …
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// New returns an empty document.
func New(info Info) *Document {
	return &Document{OpenAPI: Version, Info: info, Paths: map[string]*PathItem{},
		Components: Components{Schemas: map[string]Schema{}, SecuritySchemes: map[string]SecurityScheme{}}}
}

// Add puts an operation at method and path (an OpenAPI path template such as
// /admin/parties/{id}).
func (d *Document) Add(method, path string, op *Operation) {
	item, ok := d.Paths[path]
	if !ok {
		item = &PathItem{}
		d.Paths[path] = item
	}
	(*item)[strings.ToLower(method)] = op
}

// Operation returns the operation at method and path, if any.
func (d *Document) Operation(method, path string) (*Operation, bool) {
	item, ok := d.Paths[path]
	if !ok {
		return nil, false
	}
	op, ok := (*item)[strings.ToLower(method)]
	return op, ok
}

// Each calls fn for every operation, in path and method order.
func (d *Document) Each(fn func(method, path string, op *Operation)) {
	for _, p := range slices.Sorted(maps.Keys(d.Paths)) {
		item := *d.Paths[p]
		for _, m := range slices.Sorted(maps.Keys(item)) {
			fn(strings.ToUpper(m), p, item[m])
		}
	}
}

// JSON returns the document as indented JSON.
func (d *Document) JSON() ([]byte, error) {
	return json.MarshalIndent(d, "", "  ")
}

// Ref returns a schema referring to the component schema name.
func Ref(name string) Schema { return Schema{"$ref": "#/components/schemas/" + name} }
