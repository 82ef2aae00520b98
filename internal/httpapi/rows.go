package httpapi

import (
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/openapi"
)

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
	Access  access
	// Handler answers with an OCPI envelope; Plain replaces it on the
	// operations routes (health, metrics, this document), which answer
	// without one.
	Handler apiFunc
	Plain   http.Handler
	Options []routeOption
	// Needs is the service the route serves: the route exists only when
	// the hub is configured with it.
	Needs service
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

// data checks a route's success data against schema ("": no data) and its
// errors for absent data.
func data(success string) *DataSchema { return &DataSchema{Success: success} }

// dataOr checks success and error data against their schemas.
func dataOr(success, errData string) *DataSchema {
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

// service names a part of the hub a route needs configured.
type service int

const (
	always service = iota
	needLocations
	needTariffs
	needTokens
	needSessions
	needCDRs
	needCommands
	needPayments
	// needPaymentCommands: Direct Payment and commands (a PTP's
	// START_SESSION).
	needPaymentCommands
	needUPI
	needTraffic
)

// serves reports whether the hub is configured with n.
func (s *Server) serves(n service) bool {
	c := &s.cfg
	switch n {
	case needLocations:
		return c.Locations != nil
	case needTariffs:
		return c.Tariffs != nil
	case needTokens:
		return c.Tokens != nil
	case needSessions:
		return c.Sessions != nil
	case needCDRs:
		return c.CDRs != nil
	case needCommands:
		return c.Commands != nil
	case needPayments:
		return c.Payments != nil
	case needPaymentCommands:
		return c.Payments != nil && c.Commands != nil
	case needUPI:
		return c.UPI != nil
	case needTraffic:
		return c.Traffic != nil && c.DB != nil
	}
	return true
}

// module is one part of the route table: its rows and what the OpenAPI
// document says about it beyond them.
type module struct {
	Tag openapi.Tag
	// Rows are the module's routes, in the order they are listed in
	// version details.
	Rows []Row
	// Schemas adds what Go types cannot say (enums, lengths) to the schemas
	// of the module's types.
	Schemas func(*openapi.Schemas)
}

// modules lists every module of the route table. A new module adds its
// rows function here.
func (s *Server) modules() []module {
	return []module{
		s.operationRows(),
		s.coreRows(),
		s.peeringRows(),
		s.locationRows(),
		s.sessionRows(),
		s.paymentRows(),
		s.legacyRows(),
		s.adminRows(),
		s.webhookRows(),
		s.trafficRows(),
		s.fallbackRows(),
	}
}

// served returns the rows of the route table this hub serves, in order.
func (s *Server) served() []Row {
	var out []Row
	for _, m := range s.modules() {
		for _, r := range m.Rows {
			if s.serves(r.Needs) {
				out = append(out, r)
			}
		}
	}
	return out
}

// Rows returns every row of the route table, whether or not a hub is
// configured to serve it (the schema contract tests read them).
func Rows() []Route {
	s := &Server{}
	var out []Row
	for _, m := range s.modules() {
		out = append(out, m.Rows...)
	}
	return routesOf(out)
}

// listings returns the version details entries of version, in the order
// of the rows, once each.
func (s *Server) listings(version string) []Listing {
	var out []Listing
	seen := map[Listing]bool{}
	for _, r := range s.routeList {
		l := r.Listed
		if l.Identifier == "" || l.Version() != version || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out
}

// fallbackRows answer paths no route matches with an envelope, not a text
// 404.
func (s *Server) fallbackRows() module {
	rows := make([]Row, 0, len(fallbacks))
	for _, p := range fallbacks {
		rows = append(rows, Row{Pattern: p, Access: public, Handler: s.handleNoRoute})
	}
	return module{Rows: rows}
}
