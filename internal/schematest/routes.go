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

// Route maps a hub route to the schema of the data in its answers. A module
// that adds routes to the hub adds its rows to Routes221.
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

// Routes221 are the OCPI 2.2.1 routes of the hub with known schemas. Routes
// not listed are checked for the envelope only.
var Routes221 = []Route{
	{Method: "GET", Pattern: "/ocpi/versions", Success: "[]Version"},
	{Method: "GET", Pattern: "/ocpi/2.2.1", Success: "VersionDetail"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/credentials", Success: "Credentials"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/credentials", Success: "Credentials"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/credentials", Success: "Credentials"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/credentials"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/hubclientinfo", Success: "[]ClientInfo"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/clientinfo/{country_code}/{party_id}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/clientinfo/{country_code}/{party_id}", Success: "ClientInfo"},

	// Locations and tariffs: the CPO receivers (GET returns the hub's copy;
	// PUT, PATCH and DELETE answer without data) and the eMSP directory.
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}", Success: "Location"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}", Success: "EVSE"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}", Success: "Connector"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/locations/{location_id}", Success: "Location"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/locations/{location_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/locations/{location_id}"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}", Success: "Tariff"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/tariffs/{tariff_id}", Success: "Tariff"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/tariffs/{tariff_id}"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/cpo/tariffs/{tariff_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/locations", Success: "[]Location"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/locations/{location_id}", Success: "Location"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}", Success: "EVSE"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}/{connector_id}", Success: "Connector"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/tariffs", Success: "[]Tariff"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/tariffs/{tariff_id}", Success: "Tariff"},

	// Tokens: the eMSP receiver, the CPOs' pull and real-time authorization
	// (the owning eMSP's answer is passed back as it came).
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}", Success: "Token"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/tokens", Success: "[]Token"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/cpo/tokens/{uid}/authorize", Success: "AuthorizationInfo"},

	// Sessions and CDRs: the CPO receivers and the eMSP senders.
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}", Success: "Session"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/sessions", Success: "[]Session"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/emsp/sessions/{session_id}/charging_preferences", Success: "ChargingPreferencesResponse"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/cpo/cdrs"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/cpo/cdrs/{cc}/{pid}/{id}", Success: "CDR"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/cdrs", Success: "[]CDR"},

	// Commands and charging profiles: the requests (answered with the
	// CPO's response or the hub's own), the CPO's results and updates.
	{Method: "POST", Pattern: "/ocpi/2.2.1/emsp/commands/{command}", Success: "CommandResponse", Error: "?CommandResponse"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/cpo/commands/{command}/{id}"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Success: "ChargingProfileResponse"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Success: "ChargingProfileResponse"},
	{Method: "DELETE", Pattern: "/ocpi/2.2.1/emsp/chargingprofiles/{session_id}", Success: "ChargingProfileResponse"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/cpo/chargingprofiles/{command}/{id}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/cpo/chargingprofiles/{session_id}"},

	// Direct Payment under 2.2.1 (prices in the 2.2.1 shape) and the 2.3.0
	// surface (credentials, payments with the 2.3.0 Price, commands), with
	// ocpihub's own schemas (ours/). Terminal writes and confirmations
	// answer without data; an activation passes the PTP's answer back.
	{Method: "GET", Pattern: "/ocpi/2.3.0", Success: "VersionDetail"},
	{Method: "GET", Pattern: "/ocpi/2.3.0/credentials", Success: "Credentials230"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/credentials", Success: "Credentials230"},
	{Method: "PUT", Pattern: "/ocpi/2.3.0/credentials", Success: "Credentials230"},
	{Method: "DELETE", Pattern: "/ocpi/2.3.0/credentials"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/ptp/commands/{command}", Success: "CommandResponse", Error: "?CommandResponse"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/payments/terminals", Success: "[]Terminal"},
	{Method: "GET", Pattern: "/ocpi/2.3.0/payments/terminals", Success: "[]Terminal"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/payments/terminals/{terminal_id}", Success: "Terminal"},
	{Method: "GET", Pattern: "/ocpi/2.3.0/payments/terminals/{terminal_id}", Success: "Terminal"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/terminals"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/payments/terminals"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/terminals/{terminal_id}"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/payments/terminals/{terminal_id}"},
	{Method: "PUT", Pattern: "/ocpi/2.2.1/payments/terminals/{terminal_id}"},
	{Method: "PUT", Pattern: "/ocpi/2.3.0/payments/terminals/{terminal_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.2.1/payments/terminals/{terminal_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.3.0/payments/terminals/{terminal_id}"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/terminals/{terminal_id}/deactivate"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/payments/terminals/{terminal_id}/deactivate"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/payments/financial-advice-confirmations", Success: "[]FinancialAdviceConfirmation"},
	{Method: "GET", Pattern: "/ocpi/2.3.0/payments/financial-advice-confirmations", Success: "[]FinancialAdviceConfirmation230"},
	{Method: "GET", Pattern: "/ocpi/2.2.1/payments/financial-advice-confirmations/{financial_advice_confirmation_id}", Success: "FinancialAdviceConfirmation"},
	{Method: "GET", Pattern: "/ocpi/2.3.0/payments/financial-advice-confirmations/{financial_advice_confirmation_id}", Success: "FinancialAdviceConfirmation230"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/financial-advice-confirmations"},
	{Method: "POST", Pattern: "/ocpi/2.3.0/payments/financial-advice-confirmations"},

	// UPI: the PG's webhook is acknowledged without data. The operator's UPI
	// API (QR mappings, refunds, payments) is ocpihub's own, with no OCPI
	// schema: its envelopes are checked, its data by the module's tests.
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/upi/webhook"},
	{Method: "POST", Pattern: "/ocpi/2.2.1/payments/upi/sms/reports"},
}

// routeMux finds the Route of a request the way the hub's ServeMux does.
var routeMux = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for i, r := range Routes221 {
		mux.Handle(r.Method+" "+r.Pattern, routeIndex(i))
	}
	return mux
})

type routeIndex int

func (routeIndex) ServeHTTP(http.ResponseWriter, *http.Request) {}

// FindRoute returns the Route serving method and path (aliases included), if
// it is listed.
func FindRoute(method, path string) (Route, bool) {
	req, err := http.NewRequest(method, "http://hub.invalid"+httpapi.CanonicalPath(path), nil)
	if err != nil {
		return Route{}, false
	}
	h, pattern := routeMux().Handler(req)
	i, ok := h.(routeIndex)
	if pattern == "" || !ok {
		return Route{}, false
	}
	return Routes221[i], true
}

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
			return checkLegacy(method, path, header, body)
		}
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return nil
	}
	set := OCPI221()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: the body is not JSON: %w", method, path, err)
	}
	if err := set.ValidateValue("Envelope", v); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	route, ok := FindRoute(method, path)
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
