package schematest

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ocpihub/ocpihub/internal/httpapi"
)

// Route maps a hub route to the schema of the data in its answers (a row's
// Schema in the hub's route table).
type Route struct {
	Method  string // GET, POST, PUT, PATCH, DELETE
	Pattern string // path pattern in net/http.ServeMux syntax, as in the hub's route table
	// Success is the schema of data in a 1xxx answer; "" means data must be
	// absent (the 2.2.1-d2 erratum: omit data where the spec defines none).
	Success string
	// Error is the schema of data in any other answer; "" means data must be
	// absent (ocpihub never sends data with an error). A schema prefixed with
	// "?" may also be absent: the hub's own 2003 answer to a command carries
	// a CommandResponse REJECTED (commands.md §1), its 4002/4003 answers none.
	Error string
}

// Routes221 are the OCPI 2.2.1 and 2.3.0 routes of the hub with known
// schemas: the rows of the hub's route table (httpapi.Rows) that name them
// (Row.Schema). Routes not listed are checked for the envelope only.
var Routes221 = rowsWith(func(path string) bool { return legacyVersion(path) == "" })

// Routes211 are the OCPI 2.1.1 routes of the hub with known schemas (of
// the 2.1.1 set, see OCPI211), from the rows as Routes221. The 2.0 rows
// name none: their decimals are strings and their locations lack
// last_updated, which the 2.1.1 schemas refuse.
var Routes211 = rowsWith(func(path string) bool { return legacyVersion(path) == "2.1.1" })

// rowsWith returns the routes of the rows whose path keep accepts and that
// name their data's schemas.
func rowsWith(keep func(path string) bool) []Route {
	var out []Route
	for _, r := range httpapi.Rows() {
		method, path, ok := strings.Cut(r.Pattern, " ")
		if !ok || r.Schema == nil || !keep(path) {
			continue
		}
		out = append(out, Route{Method: method, Pattern: path, Success: r.Schema.Success, Error: r.Schema.Error})
	}
	return out
}

// legacyVersion returns the legacy version of a path, "" for a current one.
func legacyVersion(path string) string {
	for _, v := range []string{"2.1.1", "2.0"} {
		if strings.HasPrefix(path, "/ocpi/"+v+"/") || path == "/ocpi/"+v {
			return v
		}
	}
	return ""
}

// routeTable finds the Route of a request among routes the way the hub's
// ServeMux does.
type routeTable struct {
	routes []Route
	mux    *http.ServeMux
}

func newRouteTable(routes []Route) *routeTable {
	t := &routeTable{routes: routes, mux: http.NewServeMux()}
	for i, r := range routes {
		t.mux.Handle(r.Method+" "+r.Pattern, routeIndex(i))
	}
	return t
}

type routeIndex int

func (routeIndex) ServeHTTP(http.ResponseWriter, *http.Request) {}

// find returns the Route serving method and path (aliases included), if it
// is listed.
func (t *routeTable) find(method, path string) (Route, bool) {
	req, err := http.NewRequest(method, "http://hub.invalid"+httpapi.CanonicalPath(path), nil)
	if err != nil {
		return Route{}, false
	}
	h, pattern := t.mux.Handler(req)
	i, ok := h.(routeIndex)
	if pattern == "" || !ok {
		return Route{}, false
	}
	return t.routes[i], true
}

var (
	table221 = sync.OnceValue(func() *routeTable { return newRouteTable(Routes221) })
	table211 = sync.OnceValue(func() *routeTable { return newRouteTable(Routes211) })
)

// FindRoute returns the Route serving method and path (aliases included), if
// it is listed in Routes221.
func FindRoute(method, path string) (Route, bool) { return table221().find(method, path) }

// CheckResponse validates one answer of the hub. Every JSON answer to an
// OCPI path must be an envelope valid against the 2.2.1 envelope schema (the
// legacy 2.1.1 and 2.0 surfaces: the 2.1.1 envelope); on a listed route
// (Routes221, Routes211) its data must match the route's schema. Other paths and
// non-JSON answers (pages, receipts) are not checked.
func CheckResponse(method, path string, header http.Header, body []byte) error {
	if method == http.MethodHead {
		return nil
	}
	if !isOCPI221(path) {
		if strings.HasPrefix(httpapi.CanonicalPath(path), "/ocpi/") {
			// The legacy 2.1.1 and 2.0 surfaces: the 2.1.1 envelope always
			// (2.0's is the same), data on the 2.1.1 routes Routes211 lists.
			return checkAnswer(OCPI211(), "envelope", table211(), method, path, header, body)
		}
		return nil
	}
	return checkAnswer(OCPI221(), "Envelope", table221(), method, path, header, body)
}

// checkAnswer validates a JSON answer against the envelope schema of set
// and, on a route table lists, its data against the route's schema.
func checkAnswer(set *Set, envelope string, table *routeTable, method, path string, header http.Header, body []byte) error {
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: the body is not JSON: %w", method, path, err)
	}
	if err := set.ValidateValue(envelope, v); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	route, ok := table.find(method, path)
	if !ok {
		return nil
	}
	return checkData(set, route, v.(map[string]any), method, path, body) // the envelope schema requires an object
}

// checkData validates the data of an envelope against the route's schema
// for its status code.
func checkData(set *Set, route Route, env map[string]any, method, path string, body []byte) error {
	schema := route.Error
	if code, _ := env["status_code"].(interface{ String() string }); code != nil && strings.HasPrefix(code.String(), "1") && len(code.String()) == 4 {
		schema = route.Success
	}
	data, present := env["data"]
	if optional := strings.HasPrefix(schema, "?"); optional {
		schema = schema[1:]
		if !present {
			return nil
		}
	}
	switch {
	case schema == "" && present:
		return fmt.Errorf("%s %s (route %s %s): data must be absent, got %s", method, path, route.Method, route.Pattern, truncate(body))
	case schema == "":
		return nil
	case !present:
		return fmt.Errorf("%s %s (route %s %s): data is missing, want %s", method, path, route.Method, route.Pattern, schema)
	}
	if err := set.validateAt(schema, data, "data"); err != nil {
		return fmt.Errorf("%s %s (route %s %s): %w", method, path, route.Method, route.Pattern, err)
	}
	return nil
}

// isOCPI221 reports whether a path is answered by the OCPI 2.2.1 surface or
// the version-independent versions endpoint.
func isOCPI221(path string) bool {
	p := httpapi.CanonicalPath(path)
	if !strings.HasPrefix(p, "/ocpi/") && p != "/ocpi" {
		return false
	}
	for _, legacy := range []string{"/ocpi/2.1.1", "/ocpi/2.0"} {
		if p == legacy || strings.HasPrefix(p, legacy+"/") {
			return false
		}
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
