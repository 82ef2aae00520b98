// Package route declares a route row: the single declaration of one route
// (pattern, who may call it, handler, version details entry, OpenAPI
// description, answer schemas). Module packages declare their rows with
// these types without importing httpapi, which assembles them into the mux,
// the version details, /openapi.json and the contract tests.
package route

import (
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/apidoc"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// Func is an OCPI handler: it writes a success response itself and returns
// an error for the caller to answer with an envelope.
type Func func(w http.ResponseWriter, r *http.Request) error

// Doc describes a route in the OpenAPI document (package apidoc).
type Doc = apidoc.Doc

// Row is one route, declared once: its pattern, who may call it, its
// handler, the version details entry it is listed under, its description
// in the OpenAPI document (with its request and response types) and the
// OCPI JSON schemas of its answers. The mux, the version details
// endpoints, /openapi.json, the schema contract tests (internal/schematest)
// and the isolation test all read the rows; TestRowsComplete fails when a
// row lacks what one of them needs.
type Row struct {
	// Pattern is the ServeMux pattern, "METHOD /path/{wildcard}"; the
	// no-route fallbacks have no method.
	Pattern string
	Access  Access
	// Handler answers with an OCPI envelope; Plain replaces it on the
	// operations routes (health, metrics, this document), which answer
	// without one.
	Handler Func
	Plain   http.Handler
	Options []Option
	// Needs is the service the route serves: the route exists only when
	// the hub is configured with it.
	Needs Service
	// Listed is the version details entry of the module the route belongs
	// to (zero: none, e.g. admin routes).
	Listed Listing
	// Doc describes the route in the OpenAPI document.
	Doc Doc
	// Schema names the OCPI JSON schemas (internal/schematest) of data in
	// the route's answers; nil: the answers are checked for the envelope
	// only.
	Schema *DataSchema
}

// Module is one part of the route table: its rows and what the OpenAPI
// document says about it beyond them.
type Module struct {
	Tag openapi.Tag
	// Rows are the module's routes, in the order they are listed in
	// version details.
	Rows []Row
	// Schemas adds what Go types cannot say (enums, lengths) to the schemas
	// of the module's types.
	Schemas func(*openapi.Schemas)
}

// DataSchema names the schemas of data in a route's answers (the schema
// sets of internal/schematest).
type DataSchema struct {
	// Success is the schema of data in a 1xxx answer; "" means data must be
	// absent (the 2.2.1-d2 erratum: omit data where the spec defines none).
	Success string
	// Error is the schema of data in any other answer; "" means data must
	// be absent. A schema prefixed with "?" may also be absent: the hub's
	// own 2003 answer to a command carries a CommandResponse REJECTED, its
	// 4002/4003 answers none.
	Error string
}

// Data checks a route's success data against schema ("": no data) and its
// errors for absent data.
func Data(success string) *DataSchema { return &DataSchema{Success: success} }

// DataOr checks success and error data against their schemas.
func DataOr(success, errData string) *DataSchema {
	return &DataSchema{Success: success, Error: errData}
}

// Listing is one line of version details: a module, the interface role we
// play for it, and its path (whose version segment names the version
// details it is listed in). 2.1.1 and 2.0 endpoints carry no role.
type Listing struct {
	Identifier string
	Role       string // SENDER or RECEIVER
	Path       string
}

// Version returns the OCPI version whose details list l.
func (l Listing) Version() string {
	rest, _ := strings.CutPrefix(l.Path, "/ocpi/")
	v, _, _ := strings.Cut(rest, "/")
	return v
}

// Access says who may call a route.
type Access int

const (
	// Public routes need no token (health, metrics, PG webhooks, driver pages).
	Public Access = iota
	// Registering routes accept token A too (versions, credentials).
	Registering
	// Platform routes need a registered partner's token (functional modules).
	Platform
	// Admin routes need the operator's admin token.
	Admin
	// Subscriber routes (webhook subscriptions, our own API) take a connected
	// partner's token or the admin token: each manages its own.
	Subscriber
)

func (a Access) String() string {
	switch a {
	case Public:
		return "public"
	case Registering:
		return "registering"
	case Platform:
		return "platform"
	case Admin:
		return "admin"
	case Subscriber:
		return "subscriber"
	}
	return "unknown"
}

// Service names a part of the hub a route needs configured.
type Service int

const (
	Always Service = iota
	NeedLocations
	NeedTariffs
	NeedTokens
	NeedSessions
	NeedCDRs
	NeedCommands
	NeedPayments
	// NeedPaymentCommands: Direct Payment and commands (a PTP's
	// START_SESSION).
	NeedPaymentCommands
	NeedUPI
	NeedTraffic
	// NeedHub: the hub's delivery (its backlog).
	NeedHub
)

// Options are the options of one route.
type Options struct {
	// IdempotencyKey: the route accepts the Idempotency-Key header (our own
	// JSON APIs: webhooks, refunds, QR mappings).
	IdempotencyKey bool
	// NoReplay: a repeated X-Request-ID is not answered from the store (the
	// route's answers carry secrets that must not be kept).
	NoReplay bool
}

// Option sets an option of a route.
type Option func(*Options)

// WithIdempotencyKey declares that a route accepts Idempotency-Key.
func WithIdempotencyKey(o *Options) { o.IdempotencyKey = true }

// WithoutReplay declares that a route's answers are never stored for
// X-Request-ID replays.
func WithoutReplay(o *Options) { o.NoReplay = true }

// AnyOf converts a string list for an enum.
func AnyOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
